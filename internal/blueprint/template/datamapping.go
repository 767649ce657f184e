package template

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/mandelsoft/spiff/spiffing"
	spiffyaml "github.com/mandelsoft/spiff/yaml"
	"github.com/mandelsoft/vfs/pkg/memoryfs"
	"sigs.k8s.io/yaml"
)

// DataMapping evaluates an installation's importDataMappings or
// exportDataMappings: every mapping value is a Spiff template evaluated with
// values as bindings, and its result is stored under the mapping's key.
//
// For importDataMappings, values are the parent's imports as the
// sub-installation references them: data by import name, targets as Target
// objects (TargetObject), target lists and maps as lists and maps of them.
// For exportDataMappings use ExportMappingValues.
//
// As in Landscaper, Landscaper's own template functions are not available
// here. Unlike Landscaper, Spiff gets neither file system nor OS access.
func DataMapping(mappings map[string]any, values map[string]any) (out map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			out = nil
			err = fmt.Errorf("data mapping: template engine panicked: %v\n%s", r, firstLines(string(debug.Stack()), 12))
		}
	}()
	plain, err := plainMap(values)
	if err != nil {
		return nil, fmt.Errorf("data mapping values are not plain data: %w", err)
	}
	s, err := spiffing.Plain().WithFileSystem(memoryfs.New()).WithMode(spiffing.MODE_PRIVATE).WithValues(plain)
	if err != nil {
		return nil, fmt.Errorf("unable to init spiff templater: %w", err)
	}
	out = make(map[string]any, len(mappings))
	keys := make([]string, 0, len(mappings))
	for k := range mappings {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		raw, err := json.Marshal(mappings[key])
		if err != nil {
			return nil, fmt.Errorf("unable to parse data mapping template %s: %w", key, err)
		}
		tmpl, err := spiffyaml.Unmarshal(key, raw)
		if err != nil {
			return nil, fmt.Errorf("unable to parse data mapping template %s: %w", key, err)
		}
		res, err := s.Cascade(tmpl, nil)
		if err != nil {
			return nil, fmt.Errorf("unable to template data mapping %s: %w", key, err)
		}
		data, err := spiffyaml.Marshal(res)
		if err != nil {
			return nil, fmt.Errorf("unable to marshal templated data mapping %s: %w", key, err)
		}
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("unable to unmarshal templated data mapping %s: %w", key, err)
		}
		out[key] = v
	}
	return out, nil
}

// ExportMappingValues builds the bindings of exportDataMappings from a
// sub-installation's exports: every export at the top level and all of them
// under "exports" (so an export named "exports" is shadowed, as in
// Landscaper).
func ExportMappingValues(exports map[string]any) map[string]any {
	v := make(map[string]any, len(exports)+1)
	for k, e := range exports {
		v[k] = e
	}
	v["exports"] = exports
	return v
}

func plainMap(m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	err = json.Unmarshal(data, &out)
	return out, err
}
