package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/component"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

// Kind is the kind of a template execution, which decides what its
// output holds.
type Kind string

// Execution kinds.
const (
	KindImport          Kind = "import"
	KindDeploy          Kind = "deploy"
	KindSubinstallation Kind = "subinstallation"
	KindExport          Kind = "export"
)

// Env is what a template execution may read besides its bindings: the
// blueprint's files, and the component set for getResourceContent & co.
type Env struct {
	Blueprint *blueprint.Blueprint
	Set       *component.Set
	Component *component.Component
}

// Executor runs Landscaper's template executions (GoTemplate, Spiff).
type Executor interface {
	// Execute runs one execution over bindings and returns the rendered
	// document and the execution's new state (nil when it keeps none).
	Execute(env Env, kind Kind, exec blueprint.TemplateExecutor, bindings map[string]any, state []byte) (doc map[string]any, newState []byte, err error)
	// Mappings evaluates Spiff data mappings (importDataMappings,
	// exportDataMappings), each key over values.
	Mappings(mappings map[string]json.RawMessage, values map[string]any) (map[string]any, error)
}

// loader loads the blueprints of one tree, each once.
type loader struct {
	cache *blueprint.Cache
	set   *component.Set
	opts  Options
}

// node is a loaded blueprint as an installation node.
type node struct {
	l    *loader
	bp   *blueprint.Blueprint
	comp *component.Component
	def  map[string]any
}

func (l *loader) node(bp *blueprint.Blueprint, comp *component.Component, def map[string]any) *node {
	return &node{l: l, bp: bp, comp: comp, def: def}
}

var _ installation.Blueprint = (*node)(nil)

// Digest covers the blueprint's files and, since templates read it, the
// component set's content.
func (n *node) Digest() string {
	if n.l.set == nil {
		return n.bp.Digest()
	}
	return n.bp.Digest() + "+" + n.l.set.Digest()
}

func (n *node) env() Env { return Env{Blueprint: n.bp, Set: n.l.set, Component: n.comp} }

// bindings are the standard bindings of every execution.
func (n *node) bindings(imports map[string]any) map[string]any {
	b := map[string]any{
		"imports":      imports,
		"blueprint":    n.def,
		"blueprintDef": n.def,
	}
	if n.comp != nil {
		b["cd"] = n.comp.Descriptor()
		b["components"] = n.l.set.Components(n.comp)
		b["componentDescriptorDef"] = map[string]any{"ref": map[string]any{
			"componentName": n.comp.Spec.Name, "version": n.comp.Spec.Version}}
	}
	return b
}

// importValues validates the imports and returns what templates see as
// .imports: data (with defaults) and targets as Landscaper Target objects.
func (n *node) importValues(in installation.Input) (map[string]any, error) {
	given := blueprint.Imports{Data: in.Imports.Data, Targets: map[string]blueprint.Target{},
		TargetLists: map[string][]blueprint.Target{}, TargetMaps: map[string]map[string]blueprint.Target{}}
	for k, t := range in.Imports.Targets {
		given.Targets[k] = bpTarget(t)
	}
	for k, l := range in.Imports.TargetLists {
		for _, t := range l {
			given.TargetLists[k] = append(given.TargetLists[k], bpTarget(t))
		}
	}
	for k, m := range in.Imports.TargetMaps {
		given.TargetMaps[k] = map[string]blueprint.Target{}
		for key, t := range m {
			given.TargetMaps[k][key] = bpTarget(t)
		}
	}
	data, problems := n.bp.ValidateImports(n.bp.NewSchemaContext(n.l.set, n.comp), given)
	if in.Path != "" {
		// A sub-installation may import more than its blueprint declares,
		// for its importDataMappings; Landscaper ignores the rest.
		problems = slices.DeleteFunc(problems, func(p blueprint.ImportProblem) bool { return p.Reason == blueprint.ReasonUndeclared })
	}
	if len(problems) > 0 {
		if in.Path != "" {
			return nil, blueprint.ImportProblems(problems)
		}
		ie := &ImportError{}
		for _, p := range problems {
			msg := p.Message
			if p.Pointer != "" {
				msg = fmt.Sprintf("at %s: %s", p.Pointer, msg)
			}
			ie.Problems = append(ie.Problems, ImportProblem{Kind: ImportKind(p.Kind), Name: p.Import, Message: msg})
		}
		return nil, ie
	}
	imports := maps.Clone(data)
	if imports == nil {
		imports = map[string]any{}
	}
	for k, t := range in.Imports.Targets {
		imports[k] = targetObject(t)
	}
	for k, l := range in.Imports.TargetLists {
		objs := make([]any, len(l))
		for i, t := range l {
			objs[i] = targetObject(t)
		}
		imports[k] = objs
	}
	for k, m := range in.Imports.TargetMaps {
		objs := make(map[string]any, len(m))
		for key, t := range m {
			objs[key] = targetObject(t)
		}
		imports[k] = objs
	}
	return imports, nil
}

func bpTarget(t *deployer.Target) blueprint.Target {
	var cfg any
	_ = json.Unmarshal(t.Config, &cfg)
	return blueprint.Target{Type: t.Type, Config: cfg}
}

// targetObject is a target as Landscaper's templates see it.
func targetObject(t *deployer.Target) map[string]any {
	var cfg any
	_ = json.Unmarshal(t.Config, &cfg)
	return map[string]any{
		"apiVersion": "landscaper.gardener.cloud/v1alpha1",
		"kind":       "Target",
		"metadata":   map[string]any{"name": t.Name},
		"spec":       map[string]any{"type": t.Type, "config": cfg},
	}
}

// stateKey names an execution's template state.
func stateKey(kind Kind, name string) string { return string(kind) + "/" + name }

// Render validates imports and runs import, deploy and sub-installation
// executions, the way Landscaper does in an installation's Init phase.
func (n *node) Render(_ context.Context, in installation.Input) (*installation.Rendered, error) {
	imports, err := n.importValues(in)
	if err != nil {
		return nil, err
	}
	def := &n.bp.Definition
	out := &installation.Rendered{Items: map[string]engine.ItemSpec{}, State: map[string]json.RawMessage{}}
	run := func(kind Kind, exec blueprint.TemplateExecutor, b map[string]any) (map[string]any, error) {
		key := stateKey(kind, exec.Name)
		doc, state, err := n.l.opts.Templates.Execute(n.env(), kind, exec, b, in.State[key])
		if err != nil {
			return nil, fmt.Errorf("%s execution %q: %w", kind, exec.Name, err)
		}
		if state != nil {
			out.State[key] = state
		}
		return doc, nil
	}

	// Import executions add bindings to .imports, in order; the first
	// that reports errors stops the rendering.
	for _, exec := range def.ImportExecutions {
		doc, err := run(KindImport, exec, n.bindings(imports))
		if err != nil {
			return nil, err
		}
		if errs := stringList(doc["errors"]); len(errs) > 0 {
			return nil, fmt.Errorf("import execution %q: %s", exec.Name, strings.Join(errs, "; "))
		}
		if b, ok := doc["bindings"].(map[string]any); ok {
			maps.Copy(imports, b)
		}
	}

	var specs []map[string]any
	for _, exec := range def.DeployExecutions {
		doc, err := run(KindDeploy, exec, n.bindings(imports))
		if err != nil {
			return nil, err
		}
		list, _ := doc["deployItems"].([]any)
		for _, it := range list {
			m, ok := it.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("deploy execution %q: a deploy item is not an object", exec.Name)
			}
			specs = append(specs, m)
		}
	}
	for _, m := range specs {
		name, spec, err := itemSpec(m, in.Imports)
		if err != nil {
			return nil, err
		}
		if _, dup := out.Items[name]; dup {
			return nil, fmt.Errorf("deploy item %q is rendered twice", name)
		}
		out.Items[name] = spec
	}
	if n.l.opts.Deployers != nil {
		for _, p := range engine.Validate(engine.Execution{Items: out.Items}, n.l.opts.Deployers) {
			if p.Warning {
				out.Warnings = append(out.Warnings, fmt.Sprintf("deploy item %q, %s: %s", p.Item, p.Field, p.Message))
				continue
			}
			return nil, fmt.Errorf("deploy item %q, %s: %s", p.Item, p.Field, p.Message)
		}
	}

	templates := slices.Clone(n.bp.Subinstallations)
	for _, exec := range def.SubinstallationExecutions {
		doc, err := run(KindSubinstallation, exec, n.bindings(imports))
		if err != nil {
			return nil, err
		}
		list, _ := doc["subinstallations"].([]any)
		for _, raw := range list {
			it, err := decodeTemplate(raw)
			if err != nil {
				return nil, fmt.Errorf("subinstallation execution %q: %w", exec.Name, err)
			}
			templates = append(templates, it)
		}
	}
	for _, t := range templates {
		sub, err := n.sub(t)
		if err != nil {
			return nil, fmt.Errorf("sub-installation %q: %w", t.Name, err)
		}
		out.Subs = append(out.Subs, sub)
	}
	return out, nil
}

// itemSpec turns a rendered deploy item into an engine item, resolving
// its target reference against the node's imports.
func itemSpec(m map[string]any, imp installation.Imports) (string, engine.ItemSpec, error) {
	raw, _ := json.Marshal(m)
	var it struct {
		Name   string `json:"name"`
		Type   string `json:"type"`
		Target *struct {
			Import string  `json:"import"`
			Key    *string `json:"key"`
			Index  *int    `json:"index"`
			Name   string  `json:"name"`
		} `json:"target"`
		Config             json.RawMessage `json:"config"`
		DependsOn          []string        `json:"dependsOn"`
		Timeout            *string         `json:"timeout"`
		UpdateOnChangeOnly *bool           `json:"updateOnChangeOnly"`
	}
	if err := json.Unmarshal(raw, &it); err != nil {
		return "", engine.ItemSpec{}, fmt.Errorf("deploy item %v: %w", m["name"], err)
	}
	if it.Name == "" {
		return "", engine.ItemSpec{}, errors.New("a rendered deploy item has no name")
	}
	spec := engine.ItemSpec{Type: it.Type, Config: it.Config, DependsOn: it.DependsOn,
		Timeout: engine.DefaultTimeout, UpdateOnChangeOnly: true}
	if len(spec.Config) == 0 || string(spec.Config) == "null" {
		spec.Config = json.RawMessage("{}")
	}
	if it.UpdateOnChangeOnly != nil {
		spec.UpdateOnChangeOnly = *it.UpdateOnChangeOnly
	}
	if it.Timeout != nil {
		d, err := time.ParseDuration(*it.Timeout)
		if err != nil || d <= 0 {
			return "", spec, fmt.Errorf("deploy item %q: timeout %q is not a positive duration", it.Name, *it.Timeout)
		}
		spec.Timeout = d
	}
	if t := it.Target; t != nil {
		var tg *deployer.Target
		switch {
		case t.Import != "" && t.Key != nil:
			tg = imp.TargetMaps[t.Import][*t.Key]
		case t.Import != "" && t.Index != nil:
			if l := imp.TargetLists[t.Import]; *t.Index >= 0 && *t.Index < len(l) {
				tg = l[*t.Index]
			}
		case t.Import != "":
			tg = imp.Targets[t.Import]
		case t.Name != "":
			for _, cand := range imp.Targets {
				if cand.Name == t.Name {
					tg = cand
				}
			}
		}
		if tg == nil {
			return "", spec, fmt.Errorf("deploy item %q: its target %s is not among the imports", it.Name, targetRefString(raw))
		}
		spec.Target = tg
	}
	return it.Name, spec, nil
}

func targetRefString(raw []byte) string {
	var m struct {
		Target any `json:"target"`
	}
	_ = json.Unmarshal(raw, &m)
	b, _ := json.Marshal(m.Target)
	return string(b)
}

func stringList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		out = append(out, fmt.Sprint(e))
	}
	return out
}

// sub loads a sub-installation's blueprint and maps its imports and exports.
func (n *node) sub(t *blueprint.InstallationTemplate) (installation.Sub, error) {
	s := installation.Sub{Name: t.Name, DataImports: map[string]string{}, TargetImports: map[string]string{},
		DataExports: map[string]string{}, TargetExports: map[string]string{}}
	var (
		bp   *blueprint.Blueprint
		comp = n.comp
		err  error
		def  map[string]any
	)
	switch {
	case t.Blueprint.Ref != "":
		if n.l.set == nil {
			return s, fmt.Errorf("blueprint ref %q needs a component, and the installation has none", t.Blueprint.Ref)
		}
		if comp, _, err = n.l.set.Resolve(n.comp, t.Blueprint.Ref); err != nil {
			return s, err
		}
		if bp, err = n.l.cache.Resource(n.l.set, n.comp, t.Blueprint.Ref); err != nil {
			return s, err
		}
		def = map[string]any{"ref": map[string]any{"resourceName": t.Blueprint.Ref}}
	case len(t.Blueprint.Filesystem) > 0:
		if bp, err = blueprint.LoadInline(n.bp.Source+"/"+t.Name, t.Blueprint.Filesystem); err != nil {
			return s, err
		}
		var fs any
		_ = json.Unmarshal(t.Blueprint.Filesystem, &fs)
		def = map[string]any{"inline": map[string]any{"filesystem": fs}}
	default:
		return s, errors.New("the template names no blueprint (blueprint.ref or blueprint.filesystem)")
	}
	s.Blueprint = n.l.node(bp, comp, def)
	for _, d := range t.Imports.Data {
		if d.DataRef == "" {
			return s, fmt.Errorf("data import %q: only dataRef imports are possible without a cluster (secretRef and configMapRef are not)", d.Name)
		}
		s.DataImports[d.Name] = d.DataRef
	}
	for _, ti := range t.Imports.Targets {
		switch {
		case ti.Target != "":
			s.TargetImports[ti.Name] = ti.Target
		case ti.Targets != nil:
			if s.TargetListImports == nil {
				s.TargetListImports = map[string][]string{}
			}
			s.TargetListImports[ti.Name] = ti.Targets
		case ti.TargetListReference != "":
			if s.TargetListRefs == nil {
				s.TargetListRefs = map[string]string{}
			}
			s.TargetListRefs[ti.Name] = ti.TargetListReference
		case ti.TargetMapReference != "":
			if s.TargetMapRefs == nil {
				s.TargetMapRefs = map[string]string{}
			}
			s.TargetMapRefs[ti.Name] = ti.TargetMapReference
		default:
			return s, fmt.Errorf("target import %q names no target", ti.Name)
		}
	}
	for _, d := range t.Exports.Data {
		s.DataExports[d.Name] = d.DataRef
	}
	for _, te := range t.Exports.Targets {
		s.TargetExports[te.Name] = te.Target
	}
	if len(t.ImportDataMappings) > 0 {
		mappings := t.ImportDataMappings
		s.MapImports = func(imp installation.Imports) (map[string]any, error) {
			values := maps.Clone(imp.Data)
			if values == nil {
				values = map[string]any{}
			}
			for k, tg := range imp.Targets {
				values[k] = targetObject(tg)
			}
			return n.l.opts.Templates.Mappings(mappings, values)
		}
	}
	if len(t.ExportDataMappings) > 0 {
		mappings := t.ExportDataMappings
		s.MapExports = func(exports map[string]any) (map[string]any, error) {
			return n.l.opts.Templates.Mappings(mappings, exports)
		}
	}
	return s, nil
}

// Exports runs the export executions over what the node's execution and
// sub-installations exported, and validates the result against the
// blueprint's export declarations. Exports the blueprint does not declare
// are dropped, as Landscaper drops them.
func (n *node) Exports(_ context.Context, in installation.Input, v installation.ExportValues) (installation.Exports, error) {
	var ex installation.Exports
	imports, err := n.importValues(in)
	if err != nil {
		return ex, err
	}
	targets := make(map[string]any, len(v.Targets))
	for k, t := range v.Targets {
		targets[k] = targetObject(t)
	}
	values := map[string]any{"deployitems": v.DeployItems, "dataobjects": v.DataObjects, "targets": targets}
	exports := map[string]any{}
	for _, exec := range n.bp.Definition.ExportExecutions {
		b := n.bindings(imports)
		b["values"] = values
		maps.Copy(b, values)
		doc, _, err := n.l.opts.Templates.Execute(n.env(), KindExport, exec, b, in.State[stateKey(KindExport, exec.Name)])
		if err != nil {
			return ex, fmt.Errorf("export execution %q: %w", exec.Name, err)
		}
		if m, ok := doc["exports"].(map[string]any); ok {
			exports = mergeMaps(exports, m)
		}
	}
	sc := n.bp.NewSchemaContext(n.l.set, n.comp)
	ex.Data, ex.Targets = map[string]any{}, map[string]*deployer.Target{}
	for _, def := range n.bp.Definition.Exports {
		val, ok := exports[def.Name]
		if !ok {
			continue
		}
		switch def.Type {
		case blueprint.ExportTypeTarget:
			m, _ := val.(map[string]any)
			typ, _ := m["type"].(string)
			if typ != def.TargetType {
				return ex, fmt.Errorf("export %q: a target of type %q, but the blueprint declares %q", def.Name, typ, def.TargetType)
			}
			cfg, _ := json.Marshal(m["config"])
			ex.Targets[def.Name] = &deployer.Target{Name: def.Name, Type: typ, Config: cfg}
		default:
			if err := sc.ValidateValue(def.Schema, val); err != nil {
				return ex, fmt.Errorf("export %q does not match its schema: %w", def.Name, err)
			}
			ex.Data[def.Name] = val
		}
	}
	return ex, nil
}

// mergeMaps merges b into a deeply, b winning, as Landscaper merges the
// results of several export executions.
func mergeMaps(a, b map[string]any) map[string]any {
	out := maps.Clone(a)
	for k, bv := range b {
		am, aok := out[k].(map[string]any)
		bm, bok := bv.(map[string]any)
		if aok && bok {
			out[k] = mergeMaps(am, bm)
			continue
		}
		out[k] = bv
	}
	return out
}

// decodeTemplate reads an installation template a subinstallation
// execution rendered; unknown fields are errors, as in blueprint.yaml.
func decodeTemplate(raw any) (*blueprint.InstallationTemplate, error) {
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var it blueprint.InstallationTemplate
	if err := dec.Decode(&it); err != nil {
		return nil, fmt.Errorf("a rendered installation template: %w", err)
	}
	if it.Name == "" {
		return nil, errors.New("a rendered installation template has no name")
	}
	return &it, nil
}
