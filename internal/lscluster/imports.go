package lscluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/yaml"
)

// rootContext is the data context of root installations: their imports are
// the DataObjects and Targets the user created, named as they are.
const rootContext = ""

// dataImports reads spec.imports.data as Landscaper does
// (installations.GetDataImport): a DataObject by dataRef, or a Secret's or
// ConfigMap's data, one key of it parsed as YAML, or all keys as an object
// of parsed values.
func (rd *instReader) dataImports(ctx context.Context) error {
	ns := rd.inst.Namespace
	for _, def := range rd.inst.Spec.Imports.Data {
		if def.Name == "" {
			return errors.New("spec.imports.data has an entry without a name")
		}
		if _, dup := rd.out.Imports[def.Name]; dup {
			return fmt.Errorf("spec.imports.data names import %q twice", def.Name)
		}
		set := 0
		for _, b := range []bool{def.DataRef != "", def.SecretRef != nil, def.ConfigMapRef != nil} {
			if b {
				set++
			}
		}
		if set != 1 {
			return fmt.Errorf("data import %q must set exactly one of dataRef, secretRef and configMapRef", def.Name)
		}
		var imp Import
		switch {
		case def.DataRef != "":
			name := DataObjectName(rootContext, def.DataRef)
			var do lsDataObject
			why := fmt.Sprintf("import %q, dataRef %q", def.Name, def.DataRef)
			if err := rd.get(ctx, dataObjectsGVR, ns, name, why, &do); err != nil {
				return err
			}
			v, err := parseJSON(do.Data)
			if err != nil {
				return fmt.Errorf("DataObject %s/%s (%s): data: %w", ns, name, why, err)
			}
			imp = Import{Value: v, Source: SourceDataObject, Object: ns + "/" + name}
		case def.SecretRef != nil:
			v, err := rd.secretData(ctx, def.Name, def.SecretRef)
			if err != nil {
				return err
			}
			imp = Import{Value: v, Sensitive: true, Source: SourceSecret, Object: refName(ns, def.SecretRef)}
			collectSecrets(v, &rd.secrets)
		default:
			v, err := rd.configMapData(ctx, def.Name, def.ConfigMapRef)
			if err != nil {
				return err
			}
			imp = Import{Value: v, Source: SourceConfigMap, Object: refName(ns, def.ConfigMapRef)}
		}
		rd.out.Imports[def.Name] = imp
	}
	return nil
}

func refName(ns string, ref *lsLocalRef) string {
	s := ns + "/" + ref.Name
	if ref.Key != "" {
		s += "#" + ref.Key
	}
	return s
}

func (rd *instReader) secretData(ctx context.Context, imp string, ref *lsLocalRef) (any, error) {
	var s struct {
		Data map[string][]byte `json:"data"`
	}
	why := fmt.Sprintf("import %q, secretRef", imp)
	if err := rd.get(ctx, secretsGVR, rd.inst.Namespace, ref.Name, why, &s); err != nil {
		return nil, err
	}
	return keyData(s.Data, ref.Key, fmt.Sprintf("Secret %s/%s (%s)", rd.inst.Namespace, ref.Name, why))
}

func (rd *instReader) configMapData(ctx context.Context, imp string, ref *lsLocalRef) (any, error) {
	var cm struct {
		Data       map[string]string `json:"data"`
		BinaryData map[string][]byte `json:"binaryData"`
	}
	why := fmt.Sprintf("import %q, configMapRef", imp)
	if err := rd.get(ctx, configMapsGVR, rd.inst.Namespace, ref.Name, why, &cm); err != nil {
		return nil, err
	}
	all := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.BinaryData {
		all[k] = v
	}
	for k, v := range cm.Data {
		all[k] = []byte(v)
	}
	return keyData(all, ref.Key, fmt.Sprintf("ConfigMap %s/%s (%s)", rd.inst.Namespace, ref.Name, why))
}

// keyData is one key's value parsed as YAML, or with no key all keys'.
func keyData(data map[string][]byte, key, what string) (any, error) {
	if key != "" {
		raw, ok := data[key]
		if !ok {
			return nil, fmt.Errorf("%s has no key %q: %w", what, key, ErrNotFound)
		}
		v, err := parseYAML(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: key %q: %w", what, key, err)
		}
		return v, nil
	}
	out := make(map[string]any, len(data))
	for k, raw := range data {
		v, err := parseYAML(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: key %q: %w", what, k, err)
		}
		out[k] = v
	}
	return out, nil
}

func parseYAML(raw []byte) (any, error) {
	var v any
	if err := yaml.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %w", err)
	}
	return v, nil
}

func parseJSON(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	err := json.Unmarshal(raw, &v)
	return v, err
}

// targetImports reads spec.imports.targets as Landscaper does
// (installations.GetTargetImport and friends). The Targets' configs are
// only kept for importDataMappings, which see whole Target objects.
func (rd *instReader) targetImports(ctx context.Context) error {
	rd.targetValues = map[string]any{}
	for _, def := range rd.inst.Spec.Imports.Targets {
		if def.Name == "" {
			return errors.New("spec.imports.targets has an entry without a name")
		}
		if _, dup := rd.out.Targets[def.Name]; dup {
			return fmt.Errorf("spec.imports.targets names import %q twice", def.Name)
		}
		set := 0
		for _, b := range []bool{def.Target != "", def.Targets != nil, def.TargetListReference != "", def.TargetMap != nil, def.TargetMapReference != ""} {
			if b {
				set++
			}
		}
		if set != 1 {
			return fmt.Errorf("target import %q must set exactly one of target, targets, targetListRef, targetMap and targetMapRef", def.Name)
		}
		why := func(detail string) string { return fmt.Sprintf("import %q, %s", def.Name, detail) }
		var ti TargetImport
		switch {
		case def.Target != "":
			ref, v, err := rd.target(ctx, def.Target, why(fmt.Sprintf("target %q", def.Target)))
			if err != nil {
				return err
			}
			ti.Target, rd.targetValues[def.Name] = &ref, v
		case def.Targets != nil:
			ti.List = []TargetRef{}
			var vals []any
			for i, name := range def.Targets {
				ref, v, err := rd.target(ctx, name, why(fmt.Sprintf("targets[%d] %q", i, name)))
				if err != nil {
					return err
				}
				ti.List = append(ti.List, ref)
				vals = append(vals, v)
			}
			rd.targetValues[def.Name] = vals
		case def.TargetMap != nil:
			ti.Map = map[string]TargetRef{}
			vals := map[string]any{}
			for _, key := range sortedKeys(def.TargetMap) {
				name := def.TargetMap[key]
				ref, v, err := rd.target(ctx, name, why(fmt.Sprintf("targetMap[%q] %q", key, name)))
				if err != nil {
					return err
				}
				ti.Map[key], vals[key] = ref, v
			}
			rd.targetValues[def.Name] = vals
		case def.TargetListReference != "":
			ti.List = []TargetRef{}
			var vals []any
			err := rd.targetsByKey(ctx, def.TargetListReference, func(t *lsTarget, v any) error {
				ti.List = append(ti.List, TargetRef{Name: t.Name, Object: t.Name, Type: t.Spec.Type})
				vals = append(vals, v)
				return nil
			})
			if err != nil {
				return fmt.Errorf("target import %q, targetListRef %q: %w", def.Name, def.TargetListReference, err)
			}
			rd.targetValues[def.Name] = vals
		default:
			ti.Map = map[string]TargetRef{}
			vals := map[string]any{}
			err := rd.targetsByKey(ctx, def.TargetMapReference, func(t *lsTarget, v any) error {
				key, ok := t.Labels[labelDOTargetMapKey]
				if !ok {
					return fmt.Errorf("the Target %s/%s has no label %s", t.Namespace, t.Name, labelDOTargetMapKey)
				}
				if _, dup := ti.Map[key]; dup {
					return fmt.Errorf("two Targets have %s=%s", labelDOTargetMapKey, key)
				}
				ti.Map[key], vals[key] = TargetRef{Name: t.Name, Object: t.Name, Type: t.Spec.Type}, v
				return nil
			})
			if err != nil {
				return fmt.Errorf("target import %q, targetMapRef %q: %w", def.Name, def.TargetMapReference, err)
			}
			rd.targetValues[def.Name] = vals
		}
		rd.out.Targets[def.Name] = ti
	}
	return nil
}

// target reads one Target by the name the Installation uses. v is the
// whole object as importDataMappings see it.
func (rd *instReader) target(ctx context.Context, name, why string) (TargetRef, any, error) {
	obj := DataObjectName(rootContext, name)
	raw, t, err := rd.getTarget(ctx, obj, why)
	if err != nil {
		return TargetRef{}, nil, err
	}
	return TargetRef{Name: name, Object: obj, Type: t.Spec.Type}, raw, nil
}

func (rd *instReader) getTarget(ctx context.Context, obj, why string) (map[string]any, *lsTarget, error) {
	var raw map[string]any
	if err := rd.get(ctx, targetsGVR, rd.inst.Namespace, obj, why, &raw); err != nil {
		return nil, nil, err
	}
	t, err := rd.noteTarget(raw, why)
	return raw, t, err
}

// noteTarget decodes a Target and remembers its config's values as
// secrets.
func (rd *instReader) noteTarget(raw map[string]any, why string) (*lsTarget, error) {
	var t lsTarget
	if err := decode(raw, &t, "Target ("+why+")"); err != nil {
		return nil, err
	}
	if cfg, err := parseJSON(t.Spec.Config); err == nil {
		collectSecrets(cfg, &rd.secrets)
	}
	return &t, nil
}

// targetsByKey lists the Targets a targetListRef or targetMapRef selects in
// a root installation's context (installations.GetTargetListImportBySelector):
// imported ones without a context label, by key.
func (rd *instReader) targetsByKey(ctx context.Context, key string, each func(t *lsTarget, v any) error) error {
	noContext, err := labels.NewRequirement(labelDOContext, selection.DoesNotExist, nil)
	if err != nil {
		return err
	}
	byKey, err := labels.NewRequirement(labelDOKey, selection.Equals, []string{key})
	if err != nil {
		return fmt.Errorf("not a label value: %w", err)
	}
	imported, err := labels.NewRequirement(labelDOSourceType, selection.Equals, []string{sourceTypeImport})
	if err != nil {
		return err
	}
	sel := labels.NewSelector().Add(*noContext, *byKey, *imported).String()
	n := 0
	err = rd.list(ctx, targetsGVR, rd.inst.Namespace, sel, func(raw map[string]any) error {
		n++
		t, err := rd.noteTarget(raw, "selected by "+sel)
		if err != nil {
			return err
		}
		return each(t, raw)
	})
	if err == nil && n == 0 {
		err = fmt.Errorf("no Target in %s matches %s: %w", rd.inst.Namespace, sel, ErrNotFound)
	}
	return err
}

// collectSecrets adds the leaves of v a rendered value could carry.
func collectSecrets(v any, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			collectSecrets(e, out)
		}
	case []any:
		for _, e := range t {
			collectSecrets(e, out)
		}
	case string:
		if len(t) >= minSecretLen {
			*out = append(*out, t)
		}
	case float64, json.Number:
		if s := fmt.Sprint(t); len(s) >= minSecretLen {
			*out = append(*out, s)
		}
	}
}

// minSecretLen: shorter values ("1", "ok") occur everywhere; treating them
// as secret would mark every mapping sensitive. The provider masks by the
// same rule.
const minSecretLen = 3

// carriesSecret tells whether a string or number of v contains one of the
// secrets.
func carriesSecret(v any, secrets []string) bool {
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			if carriesSecret(e, secrets) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if carriesSecret(e, secrets) {
				return true
			}
		}
	case string:
		for _, s := range secrets {
			if strings.Contains(t, s) {
				return true
			}
		}
	case float64, json.Number:
		str := fmt.Sprint(t)
		for _, s := range secrets {
			if strings.Contains(str, s) {
				return true
			}
		}
	}
	return false
}
