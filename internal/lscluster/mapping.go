package lscluster

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/template"
)

// mappings evaluates spec.importDataMappings as Landscaper's import
// constructor does (imports.Constructor.templateDataMappings): each value
// is a Spiff template over the data imports by name and the target imports
// as whole Target objects (lists and maps of them). landscaper_installation
// has no importDataMappings, so what they produce is taken over as values,
// each with a warning; a value is sensitive when it carries a Secret's or a
// Target config's values.
func (rd *instReader) mappings(context.Context) error {
	m := rd.inst.Spec.ImportDataMappings
	if len(m) == 0 {
		return nil
	}
	values := make(map[string]any, len(rd.out.Imports)+len(rd.targetValues))
	for name, imp := range rd.out.Imports {
		values[name] = imp.Value
	}
	for name, v := range rd.targetValues {
		values[name] = v
	}
	res, err := EvaluateMappings(m, values)
	if err != nil {
		return err
	}
	for _, key := range sortedKeys(res) {
		v := res[key]
		sensitive := carriesSecret(v, rd.secrets)
		if prev, ok := rd.out.Imports[key]; ok {
			rd.warn("importDataMappings[%q] replaces the data import of the same name (%s %s), as in Landscaper", key, prev.Source, prev.Object)
		}
		rd.out.Imports[key] = Import{Value: v, Sensitive: sensitive, Source: SourceMapping}
		where := "imports"
		if sensitive {
			where = "sensitive_imports"
		}
		rd.warn("importDataMappings[%q] is taken over as the value it has now, in %s: it will not follow changes of the imports it was computed from", key, where)
	}
	return nil
}

// EvaluateMappings evaluates importDataMappings (raw Spiff templates by
// import name) with values as bindings. Unlike Landscaper, Spiff gets no
// file system or OS access here.
func EvaluateMappings(mappings map[string]json.RawMessage, values map[string]any) (map[string]any, error) {
	tmpl := make(map[string]any, len(mappings))
	for k, raw := range mappings {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("importDataMappings[%q]: %w", k, err)
		}
		tmpl[k] = v
	}
	out, err := template.DataMapping(tmpl, values)
	if err != nil {
		return nil, fmt.Errorf("importDataMappings: %w", err)
	}
	return out, nil
}
