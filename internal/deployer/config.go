package deployer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// NormalizeConfig turns a user's config text (JSON or YAML) into JSON.
// Empty text means an empty object, so simple items need no config at all.
func NormalizeConfig(text string) (json.RawMessage, error) {
	if strings.TrimSpace(text) == "" {
		return json.RawMessage("{}"), nil
	}
	out, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("config is neither JSON nor YAML: %w", err)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(out), []byte("{")) {
		return nil, fmt.Errorf("config must be an object, got %s", firstLine(string(out)))
	}
	return out, nil
}

// DecodeStrict decodes normalised config into v. Type errors are errors.
// Unknown fields are not: Landscaper decodes deployer configs leniently,
// and real blueprints carry fields a deployer does not know. v is decoded
// as Landscaper would, and an *UnknownFieldsError names the fields, so a
// typo still shows up at plan time, as a warning (see IsWarning).
func DecodeStrict(config json.RawMessage, v any) error {
	if err := json.Unmarshal(config, v); err != nil {
		return fmt.Errorf("invalid config: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	var unknown []string
	for {
		dec := json.NewDecoder(bytes.NewReader(config))
		dec.DisallowUnknownFields()
		err := dec.Decode(reflectNew(v))
		field, ok := unknownField(err)
		if !ok || slices.Contains(unknown, field) {
			break
		}
		unknown = append(unknown, field)
		config = withoutField(config, field)
		if config == nil {
			break
		}
	}
	if len(unknown) > 0 {
		return &UnknownFieldsError{Fields: unknown}
	}
	return nil
}

// UnknownFieldsError names config fields the deployer does not know. It is
// a warning, not a failure: see DecodeStrict.
type UnknownFieldsError struct {
	Fields []string
}

func (e *UnknownFieldsError) Error() string {
	return fmt.Sprintf("unknown field %s: this deployer ignores it (a typo?)", strings.Join(quoteAll(e.Fields), ", "))
}

// Lookalike is the hint a message about a missing required field gives
// when warning (an *UnknownFieldsError) names fields that look like a
// misspelling of it: ` (the config has "comand", which this deployer does
// not know: a misspelling of "command"?)`. It is "" when none does.
func Lookalike(field string, warning error) string {
	var uf *UnknownFieldsError
	if !errors.As(warning, &uf) {
		return ""
	}
	var like []string
	for _, u := range uf.Fields {
		if looksLike(u, field) {
			like = append(like, strconv.Quote(u))
		}
	}
	if len(like) == 0 {
		return ""
	}
	return fmt.Sprintf(" (the config has %s, which this deployer does not know: a misspelling of %q?)", strings.Join(like, " and "), field)
}

// looksLike reports whether name is within a few edits of field, ignoring
// case: one edit for short names, one more for each five letters.
func looksLike(name, field string) bool {
	a, b := []rune(strings.ToLower(name)), []rune(strings.ToLower(field))
	return editDistance(a, b) <= 1+len(b)/5
}

// editDistance counts the insertions, deletions, substitutions and swaps
// of adjacent letters that turn a into b (optimal string alignment).
func editDistance(a, b []rune) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// IsWarning reports whether a deployer's validation error only warns.
func IsWarning(err error) bool {
	var uf *UnknownFieldsError
	return errors.As(err, &uf)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// unknownField reads the field name out of encoding/json's error for a
// field DisallowUnknownFields rejected.
func unknownField(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	const prefix = "json: unknown field "
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return "", false
	}
	name, uerr := strconv.Unquote(strings.TrimPrefix(msg, prefix))
	return name, uerr == nil
}

// withoutField removes every object key named field, at any depth, so the
// next strict decode reports the next unknown field; nil when nothing
// changed.
func withoutField(config json.RawMessage, field string) json.RawMessage {
	var v any
	if json.Unmarshal(config, &v) != nil {
		return nil
	}
	changed := false
	var walk func(any)
	walk = func(x any) {
		switch t := x.(type) {
		case map[string]any:
			if _, ok := t[field]; ok {
				delete(t, field)
				changed = true
			}
			for _, e := range t {
				walk(e)
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(v)
	if !changed {
		return nil
	}
	out, _ := json.Marshal(v)
	return out
}

// reflectNew returns a pointer to a fresh value of v's type, so probing
// for unknown fields does not touch what v was decoded into.
func reflectNew(v any) any {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return new(any)
	}
	return reflect.New(t.Elem()).Interface()
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + "..."
	}
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return s
}
