package masking

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/exec"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

// Align takes how a plan showed the items (shown, by the keys it showed
// them under) as how specs, the items an apply rendered, are shown,
// where every shown item is a masking of its real one: what it shows in
// clear is what the item holds, and what it masks is there. Then the
// apply needs no shadow of the items: the plan compared the same inputs
// with their shadows, and a template that renders something else now (a
// random value) shows up as an item that does not align. label is the
// target an item shows when it is not masked. Align reports whether every
// item of specs aligned; only then does it record them (with the texts
// the masks cover as derived texts), else nothing.
func (t *Tree) Align(shown map[string]Item, specs map[string]engine.ItemSpec, label func(engine.ItemSpec) string) bool {
	if len(shown) == 0 && len(specs) > 0 {
		return false
	}
	keys, ok := shownKeys(shown, specs)
	if !ok {
		return false
	}
	items := make(map[string]Item, len(specs))
	var derived []string
	for key, spec := range specs {
		s := shown[keys[key]]
		it := Item{Key: keys[key], Type: s.Type, TargetMasked: s.TargetMasked, Config: s.Config, Influenced: keys[key] != key}
		if it.Influenced {
			_, name := splitKey(key)
			derived = append(derived, name)
		}
		switch {
		case s.Type == Mask:
			it.Influenced = true
			derived = append(derived, spec.Type)
		case s.Type != spec.Type:
			return false
		}
		switch {
		case s.TargetMasked:
			it.Influenced = true
			derived = append(derived, spec.TargetRef)
		case s.Target != label(spec):
			return false
		}
		it.Target = s.Target
		sv, okS := decode(s.Config)
		rv, okR := decode(compacted(spec.Config))
		if !okS || !okR {
			return false
		}
		// A Secret manifest's data is shown masked whatever it holds;
		// only masks beyond it say that a secret input influenced the
		// item (and so may be in all it exports).
		rv, found, _ := SecretData(rv)
		derived = append(derived, found...)
		d, changed, ok := matchMasked(sv, rv)
		if !ok {
			return false
		}
		it.Influenced = it.Influenced || changed
		derived = append(derived, d...)
		items[key] = it
	}
	if t.items == nil {
		t.items = make(map[string]Item, len(items))
	}
	maps.Copy(t.items, items)
	for _, d := range derived {
		t.lit.AddText(d)
	}
	return true
}

// Quoting reports whether an item shown with a part a secret influenced
// prints what it was given as it runs: an exec command's output is logged
// live and may quote any part of its config (a `set -x` trace of one
// line). Align knows the whole texts the plan masked, not the parts of
// them a secret made, so an apply with such an item renders the tree's
// shadows before it runs (Shadow), as an apply without a plan does.
func Quoting(shown map[string]Item) bool {
	for _, it := range shown {
		if (it.Type == exec.Type || it.Type == Mask) && strings.Contains(string(it.Config), Mask) {
			return true
		}
	}
	return false
}

// shownKeys finds the key every item of specs was shown under: its own,
// or, for the items of a node whose names the shown keys lack, the masked
// keys of that node in order (as Derive numbers them).
func shownKeys(shown map[string]Item, specs map[string]engine.ItemSpec) (map[string]string, bool) {
	keys := make(map[string]string, len(specs))
	lone := map[string][]string{}
	for key := range specs {
		if _, ok := shown[key]; ok {
			keys[key] = key
			continue
		}
		p, n := splitKey(key)
		lone[p] = append(lone[p], n)
	}
	for p, names := range lone {
		var masked []string
		for k := range shown {
			if sp, n := splitKey(k); sp == p {
				if _, ok := IsMaskedKey(n); ok {
					masked = append(masked, n)
				}
			}
		}
		if len(masked) < len(names) {
			return nil, false
		}
		slices.Sort(names)
		slices.SortFunc(masked, func(a, b string) int { return len(a) - len(b) })
		for i, n := range names {
			keys[installation.Join(p, n)] = installation.Join(p, masked[i])
		}
	}
	return keys, true
}

// matchMasked reports whether shown is a masking of actual (see Compare):
// equal, or Mask where actual has anything, or a string whose masks cover
// parts of actual's, a map whose masked keys stand for the keys it lacks.
// It returns the texts the masks cover, and whether anything is masked.
func matchMasked(shown, actual any) (derived []string, changed, ok bool) {
	var c Comparison
	ok = c.match(shown, actual)
	return c.Derived, c.Changed, ok
}

func (c *Comparison) match(shown, actual any) bool {
	if s, isStr := shown.(string); isStr && s == Mask {
		if r, same := actual.(string); !same || r != Mask {
			c.all(actual)
		}
		return true
	}
	switch r := actual.(type) {
	case map[string]any:
		s, ok := shown.(map[string]any)
		if !ok || len(s) != len(r) {
			return false
		}
		var lone, masked []string
		for k, v := range r {
			if sv, found := s[k]; found {
				if !c.match(sv, v) {
					return false
				}
				continue
			}
			lone = append(lone, k)
		}
		for k := range s {
			if _, found := r[k]; !found {
				if _, isMasked := IsMaskedKey(k); !isMasked {
					return false
				}
				masked = append(masked, k)
			}
		}
		if len(lone) != len(masked) {
			return false
		}
		slices.Sort(lone)
		slices.SortFunc(masked, func(a, b string) int { return len(a) - len(b) })
		for i, k := range lone {
			c.derived(k)
			if !c.match(s[masked[i]], r[k]) {
				return false
			}
		}
		return true
	case []any:
		s, ok := shown.([]any)
		if !ok || len(s) != len(r) {
			return false
		}
		for i := range r {
			if !c.match(s[i], r[i]) {
				return false
			}
		}
		return true
	case string:
		s, ok := shown.(string)
		if !ok {
			return false
		}
		if s == r {
			return true
		}
		spans, ok := maskedSpans(s, r)
		if !ok {
			return false
		}
		c.derived(r)
		for _, sp := range spans {
			if sp != r {
				c.derived(sp)
			}
		}
		return true
	case json.Number:
		s, ok := shown.(json.Number)
		return ok && s == r
	}
	return shown == actual
}

// maskedSpans matches actual against shown, a text with Mask in places:
// every part of shown between masks is in actual, in order, and each mask
// covers a non-empty part of actual. It returns the parts the masks cover.
func maskedSpans(shown, actual string) ([]string, bool) {
	parts := strings.Split(shown, Mask)
	if len(parts) < 2 || !strings.HasPrefix(actual, parts[0]) {
		return nil, false
	}
	rest := actual[len(parts[0]):]
	var spans []string
	for i, p := range parts[1:] {
		last := i == len(parts)-2
		var at int
		switch {
		case last && p == "":
			at = len(rest)
		case last:
			if !strings.HasSuffix(rest, p) || len(rest)-len(p) < 1 {
				return nil, false
			}
			at = len(rest) - len(p)
		default:
			at = strings.Index(rest[min(1, len(rest)):], p)
			if at < 0 {
				return nil, false
			}
			at++
		}
		if at < 1 {
			return nil, false
		}
		spans = append(spans, rest[:at])
		rest = rest[at+len(p):]
	}
	return spans, true
}
