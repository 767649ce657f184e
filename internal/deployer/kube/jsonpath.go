package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/client-go/util/jsonpath"
)

// braced turns Landscaper's JSONPath notation (".a.b" or "a.b", without
// braces) into a client-go template.
func braced(path string) string {
	if !strings.HasPrefix(path, ".") {
		path = "." + path
	}
	return "{" + path + "}"
}

// ParseJSONPath checks that path is valid in Landscaper's notation.
func ParseJSONPath(path string) error {
	if path == "" {
		return errors.New("must not be empty")
	}
	_, err := jsonpath.Parse("check", braced(path))
	return err
}

// GetValue returns the single value path selects in data (Landscaper's
// exports), as plain JSON values. It fails if the path selects nothing.
func GetValue(path string, data any) (any, error) {
	jp := jsonpath.New("get")
	if err := jp.Parse(braced(path)); err != nil {
		return nil, err
	}
	res, err := jp.FindResults(data)
	if err != nil {
		return nil, err
	}
	if len(res) == 0 || len(res[0]) == 0 {
		return nil, errors.New("not found")
	}
	v := res[0][0]
	if !v.IsValid() {
		return nil, errors.New("not found")
	}
	return plain(v.Interface())
}

// plain round-trips a value through JSON, so what a JSONPath selected
// (which may be a reflect-level view of typed data) is a plain JSON value
// and numbers compare as numbers whatever their Go type.
func plain(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Construct returns an object holding value at the dotted path key, such as
// {"a": {"b": value}} for "a.b" (Landscaper's export keys). Only field
// names are allowed in key.
func Construct(key string, value any) (map[string]any, error) {
	p, err := jsonpath.Parse("construct", braced(key))
	if err != nil {
		return nil, err
	}
	var fields []string
	var walk func(n *jsonpath.ListNode) error
	walk = func(n *jsonpath.ListNode) error {
		for _, node := range n.Nodes {
			switch x := node.(type) {
			case *jsonpath.ListNode:
				if err := walk(x); err != nil {
					return err
				}
			case *jsonpath.FieldNode:
				fields = append(fields, x.Value)
			default:
				return fmt.Errorf("export key %q: only field names are supported, not %s", key, node.Type())
			}
		}
		return nil
	}
	if err := walk(p.Root); err != nil {
		return nil, err
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("export key %q names no field", key)
	}
	out := map[string]any{}
	cur := out
	for i, f := range fields {
		if i == len(fields)-1 {
			cur[f] = value
			break
		}
		next := map[string]any{}
		cur[f] = next
		cur = next
	}
	return out, nil
}

// MergeMaps deep-merges b into a copy of a: nested objects are merged,
// anything else in b replaces what a holds.
func MergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		am, aok := out[k].(map[string]any)
		bm, bok := v.(map[string]any)
		if aok && bok {
			out[k] = MergeMaps(am, bm)
			continue
		}
		out[k] = v
	}
	return out
}

// findFields returns what a requirement's path selects, allowing missing
// keys, as Landscaper's custom readiness checks do.
func findFields(obj map[string]any, path string) ([]any, error) {
	jp := jsonpath.New("fieldPath").AllowMissingKeys(true)
	if err := jp.Parse(braced(path)); err != nil {
		return nil, fmt.Errorf("cannot parse jsonPath %s: %w", path, err)
	}
	res, err := jp.FindResults(obj)
	if err != nil {
		return nil, fmt.Errorf("cannot find results of jsonPath %s: %w", path, err)
	}
	if len(res) == 0 || len(res[0]) == 0 {
		return nil, nil
	}
	var out []any
	for _, group := range res {
		for _, v := range group {
			if !v.IsValid() {
				continue
			}
			p, err := plain(reflectInterface(v))
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}

func reflectInterface(v reflect.Value) any {
	if v.Kind() == reflect.Interface && v.IsNil() {
		return nil
	}
	return v.Interface()
}
