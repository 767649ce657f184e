package render

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/component"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/template"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/exec"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

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

// input is what the node's executions are rendered with.
func (n *node) input(imports map[string]any, state map[string][]byte) template.Input {
	in := template.Input{Imports: imports, BlueprintDef: n.def, Files: n.bp.FS, State: state}
	if n.comp != nil {
		in.ComponentDescriptor = n.comp.Descriptor()
		if list, ok := n.l.set.Components(n.comp)["components"].([]any); ok {
			for _, c := range list {
				if m, ok := c.(map[string]any); ok {
					in.ComponentList = append(in.ComponentList, m)
				}
			}
		}
		ref := map[string]any{"componentName": n.comp.Spec.Name, "version": n.comp.Spec.Version}
		if rc := n.comp.RepositoryContext(); rc != nil {
			ref["repositoryContext"] = rc
		}
		in.ComponentDescriptorDef = map[string]any{"ref": ref}
		in.Resolver = resolver{n.l.set}
	}
	return in
}

// executions converts a blueprint's execution list for the template engine.
func executions(list []blueprint.TemplateExecutor) []template.Execution {
	out := make([]template.Execution, len(list))
	for i, e := range list {
		out[i] = template.Execution{Name: e.Name, Type: string(e.Type), File: e.File}
		if len(e.Template) > 0 && string(e.Template) != "null" {
			var t any
			_ = json.Unmarshal(e.Template, &t)
			out[i].Template = t
		}
	}
	return out
}

// resolver serves getResourceContent from the component set.
type resolver struct{ set *component.Set }

func (r resolver) ResourceContent(comp, res map[string]any) ([]byte, string, error) {
	meta, _ := comp["component"].(map[string]any)
	if meta == nil {
		meta = comp
	}
	name, _ := meta["name"].(string)
	version, _ := meta["version"].(string)
	resName, _ := res["name"].(string)
	blob, err := r.set.ResourceContent(name, version, resName)
	if err != nil {
		return nil, "", err
	}
	return blob.Data, blob.MediaType, nil
}

// itemResources serves the node's component resources to its deploy
// items: by a getResourceKey key, or by name in a component of the set
// (the node's own when none is named).
type itemResources struct {
	set  *component.Set
	comp *component.Component
}

func (r itemResources) Resource(_ context.Context, ref deployer.ResourceRef) ([]byte, string, error) {
	name, version, res := ref.ComponentName, ref.Version, ref.Name
	if ref.Key != "" {
		var err error
		if name, version, res, err = template.ParseResourceKey(ref.Key); err != nil {
			return nil, "", err
		}
	} else if name == "" {
		name, version = r.comp.Spec.Name, r.comp.Spec.Version
	}
	blob, err := r.set.ResourceContent(name, version, res)
	if err != nil {
		return nil, "", err
	}
	return blob.Data, blob.MediaType, nil
}

// Verifying, SignedArtifact and SignedBlob make the resolver a
// deployer.SignedContent: under verification, deployers check what they
// fetch elsewhere against the digests the verified components sign.
func (r itemResources) Verifying() bool { return r.set.Verifying() }

func (r itemResources) SignedArtifact(digest string) (string, bool) {
	return r.set.SignedArtifact(digest)
}

func (r itemResources) SignedBlob(digest string) (string, bool) { return r.set.SignedBlob(digest) }

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
			ip := ImportProblem{Kind: ImportKind(p.Kind), Name: p.Import, Message: p.Message}
			switch {
			case p.Pointer != "" && (p.Kind == blueprint.ImportTypeTargetList || p.Kind == blueprint.ImportTypeTargetMap):
				ip.Element = unescapePointer(strings.TrimPrefix(p.Pointer, "/"))
			case p.Pointer != "":
				ip.Message = fmt.Sprintf("at %s: %s", p.Pointer, p.Message)
			}
			if p.Reason == blueprint.ReasonTargetType {
				ip.Field = "type"
			}
			ie.Problems = append(ie.Problems, ip)
		}
		return nil, ie
	}
	imports := maps.Clone(data)
	if imports == nil {
		imports = map[string]any{}
	}
	maps.Copy(imports, targetValues(in.Imports))
	return imports, nil
}

// targetValues are the target, target list and target map imports as
// templates see them: Target objects, lists and maps of them.
func targetValues(imp installation.Imports) map[string]any {
	return targetValuesAs(imp, targetObject)
}

// targetValuesAs shapes every target import with object: deploy and export
// executions see the same imports, but not the same view of provider targets.
func targetValuesAs(imp installation.Imports, object func(*deployer.Target) map[string]any) map[string]any {
	out := map[string]any{}
	for k, t := range imp.Targets {
		out[k] = object(t)
	}
	for k, l := range imp.TargetLists {
		objs := make([]any, len(l))
		for i, t := range l {
			objs[i] = object(t)
		}
		out[k] = objs
	}
	for k, m := range imp.TargetMaps {
		objs := make(map[string]any, len(m))
		for key, t := range m {
			objs[key] = object(t)
		}
		out[k] = objs
	}
	return out
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
	return template.TargetObjectWithMeta(t.Name, "", t.Labels, t.Annotations, t.Type, cfg)
}

// imports validates the imports and runs the import executions, which add
// bindings to .imports in order; the first that reports errors stops.
// Every later execution of the node sees the result.
func (n *node) imports(in installation.Input) (map[string]any, error) {
	imports, err := n.importValues(in)
	if err != nil {
		return nil, err
	}
	if execs := n.bp.Definition.ImportExecutions; len(execs) > 0 {
		res, err := template.Render(template.KindImport, executions(execs), n.input(imports, in.State))
		if err != nil {
			return nil, err
		}
		if len(res.Errors) > 0 {
			return nil, fmt.Errorf("import executions: %s", strings.Join(res.Errors, "; "))
		}
		maps.Copy(imports, res.Bindings)
	}
	return imports, nil
}

// defaulted are the data imports of defs (conditional ones included) that
// given lacks and that took their default in imports.
func defaulted(defs []blueprint.ImportDefinition, given, imports map[string]any) map[string]any {
	out := map[string]any{}
	for _, d := range defs {
		if d.Type == blueprint.ImportTypeData && d.Default != nil {
			if _, ok := given[d.Name]; !ok {
				if v, ok := imports[d.Name]; ok {
					out[d.Name] = v
				}
			}
		}
		maps.Copy(out, defaulted(d.ConditionalImports, given, imports))
	}
	return out
}

// Render validates imports and runs import, deploy and sub-installation
// executions, the way Landscaper does in an installation's Init phase.
func (n *node) Render(_ context.Context, in installation.Input) (*installation.Rendered, error) {
	imports, err := n.imports(in)
	if err != nil {
		return nil, err
	}
	def := &n.bp.Definition
	out := &installation.Rendered{Items: map[string]engine.ItemSpec{}, State: map[string][]byte{}, Defaults: defaulted(def.Imports, in.Imports.Data, imports)}
	if n.comp != nil {
		out.Resources = itemResources{set: n.l.set, comp: n.comp}
	}
	keep := func(st map[string][]byte) { maps.Copy(out.State, st) }

	var specs []map[string]any
	if len(def.DeployExecutions) > 0 && !in.SkipItems {
		res, err := template.Render(template.KindDeploy, executions(def.DeployExecutions), n.input(imports, in.State))
		if err != nil {
			return nil, err
		}
		specs = res.DeployItems
		keep(res.State)
	}
	var cd json.RawMessage
	if n.comp != nil {
		cd, _ = json.Marshal(n.comp.Descriptor())
	}
	for _, m := range specs {
		name, spec, err := itemSpec(m, in.Imports)
		if err != nil {
			return nil, err
		}
		if err := core.ValidName(name); err != nil {
			return nil, fmt.Errorf("deploy item: %w", err)
		}
		if spec.Type == exec.Type {
			// The rest of Landscaper's container contract, for the one
			// deployer that has it: COMPONENT_DESCRIPTOR_PATH and
			// CONTENT_PATH (the blueprint's files).
			spec.ComponentDescriptor, spec.Content = cd, n.bp.FS
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
	if len(def.SubinstallationExecutions) > 0 {
		res, err := template.Render(template.KindSubinstallation, executions(def.SubinstallationExecutions), n.input(imports, in.State))
		if err != nil {
			return nil, err
		}
		keep(res.State)
		for _, raw := range res.Subinstallations {
			it, err := decodeTemplate(raw)
			if err != nil {
				return nil, err
			}
			templates = append(templates, it)
		}
	}
	if err := checkTargetRefs(def.Imports, templates); err != nil {
		return nil, err
	}
	for _, t := range templates {
		if err := core.ValidName(t.Name); err != nil {
			return nil, fmt.Errorf("sub-installation: %w", err)
		}
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
			spec.TargetRef = t.Import + "[" + *t.Key + "]"
		case t.Import != "" && t.Index != nil:
			if l := imp.TargetLists[t.Import]; *t.Index >= 0 && *t.Index < len(l) {
				tg = l[*t.Index]
			}
			spec.TargetRef = t.Import + "[" + strconv.Itoa(*t.Index) + "]"
		case t.Import != "":
			tg = imp.Targets[t.Import]
			spec.TargetRef = t.Import
		case t.Name != "":
			spec.TargetRef = t.Name
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
		case ti.TargetMap != nil:
			if s.TargetMapImports == nil {
				s.TargetMapImports = map[string]map[string]string{}
			}
			s.TargetMapImports[ti.Name] = ti.TargetMap
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
	bare := *t
	bare.ImportDataMappings = nil
	s.Template, _ = json.Marshal(bare)
	if len(t.ImportDataMappings) > 0 {
		s.ImportMappings, _ = json.Marshal(t.ImportDataMappings)
		mappings := decodeMappings(t.ImportDataMappings)
		s.MapImports = func(imp installation.Imports) (map[string]any, error) {
			values := maps.Clone(imp.Data)
			if values == nil {
				values = map[string]any{}
			}
			maps.Copy(values, targetValues(imp))
			return template.DataMapping(mappings, values)
		}
	}
	if len(t.ExportDataMappings) > 0 {
		mappings := decodeMappings(t.ExportDataMappings)
		s.MapExports = func(exports map[string]any) (map[string]any, error) {
			return template.DataMapping(mappings, template.ExportMappingValues(exports))
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
	imports, err := n.imports(in)
	if err != nil {
		return ex, err
	}
	refs := visibleRefs(in.Imports, v.Targets)
	targets := make(map[string]any, len(v.Targets))
	for k, t := range v.Targets {
		targets[k] = exportTargetObject(t)
	}
	values := map[string]any{"deployitems": v.DeployItems, "dataobjects": v.DataObjects, "targets": targets}
	exports := map[string]any{}
	if execs := n.bp.Definition.ExportExecutions; len(execs) > 0 {
		if len(refs) > 0 {
			imports = maps.Clone(imports)
			maps.Copy(imports, exportTargetValues(in.Imports))
		}
		tin := n.input(imports, in.State)
		tin.Exports = values
		res, err := template.Render(template.KindExport, executions(execs), tin)
		if err != nil {
			return ex, err
		}
		exports = res.Exports
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
			t := &deployer.Target{Name: def.Name, Type: typ, Labels: stringMap(m["labels"]), Annotations: stringMap(m["annotations"])}
			if name, ok := refMarker(m["config"]); ok {
				r, visible := refs[name]
				switch {
				case !visible:
					return ex, fmt.Errorf("export %q: provider target %q is not imported here; an export can only pass "+
						"on a provider target the installation imports", def.Name, name)
				case r.Type != typ:
					return ex, fmt.Errorf("export %q: a target of type %q, but provider target %q has type %q", def.Name, typ, name, r.Type)
				}
				t.Ref, t.Location = r.Ref, r.Location
			} else {
				t.Config, _ = json.Marshal(m["config"])
			}
			ex.Targets[def.Name] = t
		default:
			if err := sc.ValidateValue(def.Schema, val); err != nil {
				return ex, fmt.Errorf("export %q does not match its schema: %w", def.Name, err)
			}
			ex.Data[def.Name] = val
		}
	}
	return ex, nil
}

// providerTargetKey is the one key of the config export executions see
// for a target of the provider's targets. Deploy executions see its config
// as null: it is kept nowhere in the tree. An export execution that passes
// such a target on copies the config as it copies any other, and the key
// turns the exported target back into the reference, so a consumer of the
// export reaches the provider's config, and no config is stored.
const providerTargetKey = "providerTargetRef"

// visibleRefs are the provider targets a node may export: those it
// imports and those its sub-installations exported. A marker naming any
// other is refused, so a blueprint cannot reach provider targets it was
// not given.
func visibleRefs(imp installation.Imports, subs map[string]*deployer.Target) map[string]*deployer.Target {
	refs := map[string]*deployer.Target{}
	add := func(t *deployer.Target) {
		if t != nil && t.Ref != "" {
			refs[t.Ref] = t
		}
	}
	for _, t := range imp.Targets {
		add(t)
	}
	for _, l := range imp.TargetLists {
		for _, t := range l {
			add(t)
		}
	}
	for _, m := range imp.TargetMaps {
		for _, t := range m {
			add(t)
		}
	}
	for _, t := range subs {
		add(t)
	}
	return refs
}

// exportTargetObject is a target as export executions see it: a provider
// target's config is its marker.
func exportTargetObject(t *deployer.Target) map[string]any {
	if t.Ref == "" {
		return targetObject(t)
	}
	return template.TargetObjectWithMeta(t.Name, "", t.Labels, t.Annotations, t.Type, map[string]any{providerTargetKey: t.Ref})
}

// exportTargetValues are targetValues as export executions see them.
func exportTargetValues(imp installation.Imports) map[string]any {
	return targetValuesAs(imp, exportTargetObject)
}

// refMarker reads the provider target an exported config names, if it is
// a marker.
func refMarker(cfg any) (string, bool) {
	m, ok := cfg.(map[string]any)
	if !ok || len(m) != 1 {
		return "", false
	}
	name, ok := m[providerTargetKey].(string)
	return name, ok
}

// decodeMappings reads data mappings for the template engine.
func decodeMappings(m map[string]json.RawMessage) map[string]any {
	out := make(map[string]any, len(m))
	for k, raw := range m {
		var v any
		_ = json.Unmarshal(raw, &v)
		out[k] = v
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

// stringMap reads the labels or annotations of an exported target
// template; values that are not strings are printed, as YAML would have
// them.
func stringMap(v any) map[string]string {
	m, _ := v.(map[string]any)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, val := range m {
		if s, ok := val.(string); ok {
			out[k] = s
		} else {
			out[k] = fmt.Sprint(val)
		}
	}
	return out
}

// unescapePointer reads one JSON pointer token.
func unescapePointer(tok string) string {
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
}
