package masking

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// Literal masks literal occurrences of known secret strings in text.
type Literal func(string) string

// Comparison is what Compare found in one rendered value.
type Comparison struct {
	// Masked is the real value with every derived part masked.
	Masked any
	// Derived are the real texts of derived string and number leaves
	// and map keys, for masking them where they appear as text (logs,
	// messages).
	Derived []string
	// Changed is set when anything was masked.
	Changed bool
}

// Compare masks every part of actual that differs from the same part of
// any of shadows, the same value rendered from stand-ins (one per round;
// shadowLiterals mask their stand-ins). A derived string that still reads
// the same once the literal secrets are masked in every rendering shows
// that way, so `admin:***` rather than `***`; anything else derived is
// Mask. Map keys are compared like values: a key that some shadow lacks
// is masked with its entry, and a map with another number of keys in
// some shadow, a list of another length, or another kind of value is
// masked whole, since its size or shape is derived too.
func Compare(actual any, shadows []any, literal Literal, shadowLiterals []Literal) Comparison {
	c := &Comparison{}
	c.Masked = c.compare(actual, shadows, literal, shadowLiterals)
	return *c
}

func (c *Comparison) compare(actual any, shadows []any, literal Literal, shadowLiterals []Literal) any {
	switch r := actual.(type) {
	case map[string]any:
		subs := make([]map[string]any, len(shadows))
		for i, s := range shadows {
			m, ok := s.(map[string]any)
			if !ok || len(m) != len(r) {
				return c.all(actual)
			}
			subs[i] = m
		}
		out := make(map[string]any, len(r))
		masked := 0
		// Sorted, so that masked keys are numbered the same every time.
		for _, k := range slices.Sorted(maps.Keys(r)) {
			vs := make([]any, len(subs))
			found := true
			for i, m := range subs {
				vs[i], found = m[k]
				if !found {
					break
				}
			}
			if !found {
				// A key derived from a secret: its name is one too.
				c.derived(k)
				out[MaskedKey(masked)] = c.all(r[k])
				masked++
				continue
			}
			out[k] = c.compare(r[k], vs, literal, shadowLiterals)
		}
		return out
	case []any:
		subs := make([][]any, len(shadows))
		for i, s := range shadows {
			l, ok := s.([]any)
			if !ok || len(l) != len(r) {
				return c.all(actual)
			}
			subs[i] = l
		}
		out := make([]any, len(r))
		vs := make([]any, len(subs))
		for j := range r {
			for i, l := range subs {
				vs[i] = l[j]
			}
			out[j] = c.compare(r[j], vs, literal, shadowLiterals)
		}
		return out
	case string:
		same := true
		for _, s := range shadows {
			same = same && s == actual
		}
		if same {
			return r
		}
		c.derived(r)
		m := literal(r)
		partial := m != r
		for i, s := range shadows {
			ss, ok := s.(string)
			switch {
			case !ok:
				partial = false
			case ss != r:
				c.derivedSpan(r, ss)
				partial = partial && shadowLiterals[i](ss) == m
			}
		}
		if partial {
			return m
		}
		return Mask
	case json.Number:
		same := true
		for _, s := range shadows {
			same = same && s == actual
		}
		if same {
			return r
		}
		c.derived(string(r))
		return Mask
	case bool, nil:
		same := true
		for _, s := range shadows {
			same = same && s == actual
		}
		if same {
			return actual
		}
		c.Changed = true
		return Mask
	}
	return actual
}

// MaskedKey is the i-th masked key of a map, or name of a node's items:
// "***", "****", and so on.
func MaskedKey(i int) string { return Mask + strings.Repeat("*", i) }

// IsMaskedKey reports whether k is a MaskedKey, and which.
func IsMaskedKey(k string) (int, bool) {
	if len(k) < len(Mask) || strings.Trim(k, "*") != "" {
		return 0, false
	}
	return len(k) - len(Mask), true
}

func (c *Comparison) derived(x string) {
	c.Changed = true
	if utf8.RuneCountInString(x) >= minSecret {
		c.Derived = append(c.Derived, x)
	}
}

// derivedSpan records the parts of a derived string that differ from
// its shadow: a command or a message may quote that part (a header's
// value) without the rest of the leaf. Where the leaf uses a secret more
// than once (a URL and an echo of the same password in one script), each
// use is recorded too: the span from the first to the last difference
// holds them all, but no output quotes it whole.
func (c *Comparison) derivedSpan(actual, shadow string) {
	span, ok := differingSpan(actual, shadow)
	if !ok {
		return
	}
	for _, part := range append(differingRuns(actual, shadow), span) {
		if part != actual && utf8.RuneCountInString(part) >= minSecret {
			c.Derived = append(c.Derived, part)
		}
	}
}

// runGap is how many equal characters in a row separate two uses of a
// secret (differingRuns): fewer are punctuation a stand-in keeps inside
// one use (the `&` of `p4ss&w0rd`, the `%26` that escapes it).
const runGap = 4

// differingRuns are the parts of actual that differ from shadow character
// by character, where both have the same number of characters (stand-ins
// keep a string's length, so most renderings do); runs of fewer than
// runGap equal characters join their neighbours.
func differingRuns(actual, shadow string) []string {
	a, s := []rune(actual), []rune(shadow)
	if len(a) != len(s) {
		return nil
	}
	var runs []string
	start, equal := -1, 0
	for i := range a {
		switch {
		case a[i] != s[i]:
			if start < 0 {
				start = i
			}
			equal = 0
		case start >= 0:
			equal++
			if equal == runGap {
				runs = append(runs, string(a[start:i-runGap+1]))
				start, equal = -1, 0
			}
		}
	}
	if start >= 0 {
		runs = append(runs, string(a[start:len(a)-equal]))
	}
	return runs
}

// differingSpan is the part of actual between the longest prefix and the
// longest suffix it shares with shadow, on rune boundaries; ok is false
// when the two are equal.
func differingSpan(actual, shadow string) (string, bool) {
	start, end := differingRange(actual, shadow)
	if start < 0 {
		return "", false
	}
	return actual[start:end], true
}

// differingRange is the byte range of actual that differs from shadow
// (see differingSpan); start is -1 when they are equal.
func differingRange(actual, shadow string) (int, int) {
	if actual == shadow {
		return -1, -1
	}
	start := 0
	for start < len(actual) && start < len(shadow) && actual[start] == shadow[start] {
		start++
	}
	for start > 0 && start < len(actual) && !utf8.RuneStart(actual[start]) {
		start--
	}
	end := 0
	for end < len(actual)-start && end < len(shadow)-start && actual[len(actual)-1-end] == shadow[len(shadow)-1-end] {
		end++
	}
	stop := len(actual) - end
	for stop < len(actual) && !utf8.RuneStart(actual[stop]) {
		stop++
	}
	return start, stop
}

// all masks v whole, recording the texts of its leaves and keys.
func (c *Comparison) all(v any) any {
	c.Changed = true
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				c.derived(k)
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			c.derived(x)
		case json.Number:
			c.derived(string(x))
		}
	}
	walk(v)
	return Mask
}

// All masks a value whole: what callers show when no shadow rendering
// exists to compare with. Not even its keys or length show, as nothing
// tells which of them a secret made.
func All(v any) Comparison {
	c := &Comparison{}
	c.Masked = c.all(v)
	return *c
}

// SecretData masks the values under `data` and `stringData` of every
// Kubernetes Secret in v (an object with `kind: Secret` and an
// apiVersion, at any depth): whoever wrote a Secret's data meant it to
// be secret, wherever it came from. It returns the masked value, the
// texts it masked, and whether it masked anything; v is not changed.
func SecretData(v any) (any, []string, bool) {
	var found []string
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			secret := x["kind"] == "Secret" && x["apiVersion"] != nil
			out := make(map[string]any, len(x))
			for k, e := range x {
				if data, ok := e.(map[string]any); ok && secret && (k == "data" || k == "stringData") {
					masked := make(map[string]any, len(data))
					for dk, dv := range data {
						if s, ok := dv.(string); ok && utf8.RuneCountInString(s) >= minSecret {
							found = append(found, s)
						}
						masked[dk] = Mask
						changed = true
					}
					out[k] = masked
					continue
				}
				out[k] = walk(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = walk(e)
			}
			return out
		}
		return v
	}
	out := walk(v)
	return out, found, changed
}
