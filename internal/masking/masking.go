// Package masking finds what secrets influenced in rendered values,
// whatever a template did with them. A tree is rendered a second time
// with every secret replaced by a stand-in (Standins); every leaf of the
// rendering that differs between the two (Compare) was derived from a
// secret: base64 of it, a hash, a substring, a document embedding it. A
// literal search for the secret's text finds none of those.
//
// It knows nothing of Terraform or of blueprints: callers say what is
// secret and hand both renderings in.
package masking

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// Mask is shown instead of a value a secret influenced.
const Mask = "***"

// Standins replaces secrets by stand-ins and remembers them, so that a
// stand-in rendering can be masked the way the real one is.
type Standins struct {
	list []string
}

// Strings are the stand-in strings made so far.
func (s *Standins) Strings() []string { return s.list }

// Of returns v with every string and number leaf replaced by a stand-in
// of the same shape: letters and digits rotated within their class (so a
// schema's pattern or length still accepts it, and every character
// differs), numbers incremented. A string holding a YAML or JSON
// document (a kubeconfig) keeps its keys, so a template that parses it
// finds the same structure. Booleans and null stay: a flipped boolean
// would render another tree, not the same tree with other values. The
// result depends on v alone, so plan and apply agree.
func (s *Standins) Of(v any) any {
	switch x := v.(type) {
	case string:
		return s.str(x)
	case json.Number:
		return incremented(x)
	case float64:
		return x + 1
	case int:
		return x + 1
	case int64:
		return x + 1
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.Of(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = s.Of(e)
		}
		return out
	}
	return v
}

// JSON returns a JSON document with its leaves replaced as Of does; a
// document that does not parse is returned as it is.
func (s *Standins) JSON(raw json.RawMessage) json.RawMessage {
	v, ok := decode(raw)
	if !ok {
		return raw
	}
	out, err := json.Marshal(s.Of(v))
	if err != nil {
		return raw
	}
	return out
}

func (s *Standins) str(x string) string {
	if doc, ok := s.document(x); ok {
		return doc
	}
	r := rotated(x)
	if r != x {
		s.list = append(s.list, r)
	}
	return r
}

// document replaces the leaves of a YAML or JSON document held in a
// string, keeping its format.
func (s *Standins) document(x string) (string, bool) {
	trimmed := strings.TrimSpace(x)
	isJSON := strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[")
	if !isJSON && !strings.Contains(x, "\n") {
		return "", false
	}
	var doc any
	if isJSON {
		v, ok := decode([]byte(x))
		if !ok {
			return "", false
		}
		doc = v
	} else if yaml.Unmarshal([]byte(x), &doc) != nil {
		return "", false
	}
	switch doc.(type) {
	case map[string]any, []any:
	default:
		return "", false
	}
	var out []byte
	var err error
	if isJSON {
		out, err = json.Marshal(s.Of(doc))
	} else {
		out, err = yaml.Marshal(s.Of(doc))
	}
	if err != nil {
		return "", false
	}
	s.list = append(s.list, string(out))
	return string(out), true
}

// rotated moves every ASCII letter and digit one place on in its class.
func rotated(x string) string {
	b := []byte(x)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = 'a' + (c-'a'+1)%26
		case c >= 'A' && c <= 'Z':
			b[i] = 'A' + (c-'A'+1)%26
		case c >= '0' && c <= '9':
			b[i] = '0' + (c-'0'+1)%10
		}
	}
	return string(b)
}

// incremented adds one to a number, keeping integers integers.
func incremented(n json.Number) json.Number {
	if i, err := n.Int64(); err == nil && i < math.MaxInt64 {
		return json.Number(strconv.FormatInt(i+1, 10))
	}
	if f, err := n.Float64(); err == nil {
		return json.Number(strconv.FormatFloat(f+1, 'g', -1, 64))
	}
	return n
}

func decode(raw []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

// Literal masks literal occurrences of known secret strings in text.
type Literal func(string) string

// Comparison is what Compare found in one rendered value.
type Comparison struct {
	// Masked is the real value with every derived leaf masked.
	Masked any
	// Derived are the real texts of derived string and number leaves,
	// for masking them where they appear as text (logs, messages).
	Derived []string
	// Changed is set when anything was masked.
	Changed bool
}

// Compare masks every leaf of actual that differs from the same leaf of
// shadow, the same value rendered from stand-ins. A derived string that
// still reads the same once the literal secrets are masked in both
// renderings (actual, shadow) shows that way, so `admin:***` rather than
// `***`; anything else derived is Mask. Map keys that differ mask their
// whole entry, and a part of actual that shadow does not have at all (an
// array of other length, another kind of value) is masked whole.
func Compare(actual, shadow any, literal, shadowLiteral Literal) Comparison {
	c := &Comparison{}
	c.Masked = c.compare(actual, shadow, literal, shadowLiteral)
	return *c
}

func (c *Comparison) compare(actual, shadow any, literal, shadowLiteral Literal) any {
	switch r := actual.(type) {
	case map[string]any:
		s, ok := shadow.(map[string]any)
		if !ok {
			return c.all(actual)
		}
		out := make(map[string]any, len(r))
		masked := 0
		// Sorted, so that masked keys are numbered the same every time.
		for _, k := range slices.Sorted(maps.Keys(r)) {
			v := r[k]
			sv, found := s[k]
			if !found {
				// A key derived from a secret: its name is one too.
				c.derived(k)
				out[Mask+strings.Repeat("*", masked)] = c.all(v)
				masked++
				continue
			}
			out[k] = c.compare(v, sv, literal, shadowLiteral)
		}
		return out
	case []any:
		s, ok := shadow.([]any)
		if !ok || len(s) != len(r) {
			return c.all(actual)
		}
		out := make([]any, len(r))
		for i := range r {
			out[i] = c.compare(r[i], s[i], literal, shadowLiteral)
		}
		return out
	case string:
		s, ok := shadow.(string)
		if ok && s == r {
			return r
		}
		c.derived(r)
		if ok {
			c.derivedSpan(r, s)
			if m := literal(r); m != r && m == shadowLiteral(s) {
				return m
			}
		}
		return Mask
	case json.Number:
		if s, ok := shadow.(json.Number); ok && s == r {
			return r
		}
		c.derived(string(r))
		return Mask
	case bool, nil:
		if shadow == actual {
			return actual
		}
		c.Changed = true
		return Mask
	}
	return actual
}

func (c *Comparison) derived(x string) {
	c.Changed = true
	if utf8.RuneCountInString(x) >= 3 {
		c.Derived = append(c.Derived, x)
	}
}

// derivedSpan records the part of a derived string that differs from
// its shadow: a command or a message may quote that part (a header's
// value) without the rest of the leaf.
func (c *Comparison) derivedSpan(actual, shadow string) {
	start := 0
	for start < len(actual) && start < len(shadow) && actual[start] == shadow[start] {
		start++
	}
	end := 0
	for end < len(actual)-start && end < len(shadow)-start && actual[len(actual)-1-end] == shadow[len(shadow)-1-end] {
		end++
	}
	if span := actual[start : len(actual)-end]; span != actual && utf8.RuneCountInString(span) >= 3 {
		c.Derived = append(c.Derived, span)
	}
}

// all masks every leaf of v.
func (c *Comparison) all(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = c.all(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = c.all(e)
		}
		return out
	case string:
		c.derived(x)
	case json.Number:
		c.derived(string(x))
	case bool:
		c.Changed = true
	case nil:
		return nil
	}
	return Mask
}

// All masks every leaf of a value: what callers show when no shadow
// rendering exists to compare with.
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
						if s, ok := dv.(string); ok && utf8.RuneCountInString(s) >= 3 {
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

// Decode reads a JSON document with numbers kept as written.
func Decode(raw []byte) (any, bool) { return decode(raw) }
