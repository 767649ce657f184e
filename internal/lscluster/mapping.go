package lscluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/template"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
)

// mappings evaluates spec.importDataMappings as Landscaper's import
// constructor does (imports.Constructor.templateDataMappings): each value
// is a Spiff template over the data imports by name and the target imports
// as whole Target objects (lists and maps of them). landscaper_installation
// has no importDataMappings, so what they produce is taken over as values,
// each with a warning; a value is sensitive when a Secret's or a Target
// config's values influenced it (see derivedMappings), or it carries one.
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
	derived, decided := rd.derivedMappings(m, res, err)
	if decided {
		rd.masked.AddText(err.Error())
		return errors.New("importDataMappings: the message is not shown: whether the mappings fail depends on the value of a Secret or a Target's config")
	}
	if err != nil {
		return err
	}
	for _, key := range sortedKeys(res) {
		v := res[key]
		sensitive := derived[key] || carriesSecret(v, rd.secrets)
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

// derivedMappings tells which results of the mappings (res, or the error
// err) a secret influenced, by evaluating them again with stand-ins for
// the Secrets' values and the Targets' configs (masking.Rounds), as the
// provider finds what a template made of a secret: a mapping that
// transforms a secret (base64, a hash, a part of it) carries none of its
// text. A message that quotes what a mapping made of a secret is masked
// where it differs from the stand-ins' message; decided reports that the
// stand-ins evaluate without the error err, so that whether the mappings
// fail depends on a secret and nothing of the message may show.
func (rd *instReader) derivedMappings(m map[string]json.RawMessage, res map[string]any, err error) (derived map[string]bool, decided bool) {
	secrets := map[string]any{}
	for name, imp := range rd.out.Imports {
		if imp.Sensitive {
			secrets["data/"+name] = imp.Value
		}
	}
	for name, v := range rd.targetValues {
		secrets["target/"+name] = v
	}
	derived = map[string]bool{}
	if len(secrets) == 0 {
		return derived, false
	}
	rounds := masking.NewRounds(secrets)
	var said []string
	for i := range rounds.Count() {
		st := rounds.Standins(i)
		values := make(map[string]any, len(rd.out.Imports)+len(rd.targetValues))
		for name, imp := range rd.out.Imports {
			values[name] = imp.Value
			if imp.Sensitive {
				values[name] = st.At("data/"+name, imp.Value)
			}
		}
		for name, v := range rd.targetValues {
			values[name] = standinConfigs(st, "target/"+name, v)
		}
		shadow, serr := EvaluateMappings(m, values)
		if serr != nil {
			said = append(said, serr.Error())
		} else if err != nil {
			decided = true
		}
		for key, v := range res {
			if serr != nil || !sameJSON(v, shadow[key]) {
				derived[key] = true
			}
		}
	}
	if err != nil && !decided {
		rd.masked.Compared(err.Error(), said)
	}
	return derived, decided
}

// standinConfigs replaces the spec.config of every Target object in v
// (a Target, or a list or map of them) by its stand-in.
func standinConfigs(st *masking.Standins, path string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		if spec, ok := x["spec"].(map[string]any); ok && x["kind"] == "Target" {
			out := maps.Clone(x)
			spec = maps.Clone(spec)
			if cfg, ok := spec["config"]; ok {
				spec["config"] = st.At(path, cfg)
			}
			out["spec"] = spec
			return out
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = standinConfigs(st, path+"/"+k, e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = standinConfigs(st, path+"/"+strconv.Itoa(i), e)
		}
		return out
	}
	return v
}

func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(x) == string(y)
}
