package template

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"time"

	"github.com/mandelsoft/spiff/spiffing"
	spiffyaml "github.com/mandelsoft/spiff/yaml"
	"github.com/mandelsoft/vfs/pkg/vfs"
	"sigs.k8s.io/yaml"
)

// Render renders one execution list of a blueprint in order and merges the
// results as Landscaper does: deploy items and subinstallations are
// concatenated, exports are deep-merged with later executions winning,
// import bindings are added to the imports seen by later import executions
// and rendering stops at the first import execution reporting errors.
//
// Render never panics; every error names the execution, where its template
// comes from and, when the engine reports one, the line.
func Render(kind Kind, execs []Execution, in Input) (out Output, err error) {
	defer func() {
		if r := recover(); r != nil {
			out = Output{}
			err = fmt.Errorf("%s executions: template engine panicked: %v\n%s", kind, r, firstLines(string(debug.Stack()), 12))
		}
	}()
	switch kind {
	case KindDeploy, KindExport, KindImport, KindSubinstallation:
	default:
		return Output{}, fmt.Errorf("unknown execution kind %q", kind)
	}
	values, err := bindingValues(kind, &in)
	if err != nil {
		return Output{}, err
	}
	r := &renderer{kind: kind, in: &in, values: values}
	r.comps = &componentFuncs{resolver: in.Resolver}
	r.comps.cd, _ = values["cd"].(map[string]any)
	r.comps.list = componentList(values["components"])
	out.State = map[string][]byte{}
	r.out = &out
	for _, e := range execs {
		stop, err := r.run(e)
		if err != nil {
			return Output{}, fmt.Errorf("%s execution %q (%s): %w", kind, e.Name, source(e), err)
		}
		if stop {
			break
		}
	}
	return out, nil
}

func source(e Execution) string {
	if e.Template == nil && e.File != "" {
		return fmt.Sprintf("file %q", e.File)
	}
	return "inline template"
}

func firstLines(s string, n int) string {
	lines := 0
	for i, c := range s {
		if c == '\n' {
			lines++
			if lines == n {
				return s[:i]
			}
		}
	}
	return s
}

// bindingValues builds the top-level bindings of a template, as deep copies
// of the caller's data.
func bindingValues(kind Kind, in *Input) (map[string]any, error) {
	v := map[string]any{
		"cd":      in.ComponentDescriptor,
		"imports": in.Imports,
	}
	if in.Imports == nil {
		v["imports"] = map[string]any{}
	}
	v["components"] = componentsValue(in.ComponentDescriptor, in.ComponentList)
	if in.BlueprintDef != nil {
		v["blueprint"] = in.BlueprintDef
		v["blueprintDef"] = in.BlueprintDef
	}
	if in.ComponentDescriptorDef != nil {
		v["componentDescriptorDef"] = in.ComponentDescriptorDef
	}
	if kind == KindExport {
		exports := in.Exports
		if exports == nil {
			exports = map[string]any{}
		}
		v["values"] = exports
		for k, e := range exports {
			v[k] = e
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("template input is not plain data: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("template input is not plain data: %w", err)
	}
	return out, nil
}

// componentsValue shapes the component list as Landscaper binds it:
// a ComponentDescriptorList {meta, components} for schema v2 and a plain list
// for v3alpha1.
func componentsValue(cd map[string]any, list []map[string]any) any {
	if list == nil {
		return nil
	}
	ref := cd
	if ref == nil && len(list) > 0 {
		ref = list[0]
	}
	sv := ""
	if ref != nil {
		sv, _ = schemaVersion(ref)
	}
	items := make([]any, len(list))
	for i, c := range list {
		items[i] = c
	}
	if sv == schemaV3alpha1 {
		return items
	}
	return map[string]any{"meta": map[string]any{"schemaVersion": schemaV2}, "components": items}
}

func componentList(v any) []map[string]any {
	if m, ok := v.(map[string]any); ok {
		return mapList(m["components"])
	}
	return mapList(v)
}

type renderer struct {
	kind   Kind
	in     *Input
	values map[string]any
	comps  *componentFuncs
	out    *Output
	vfs    vfs.FileSystem
}

// usesState tells whether an execution kind reads and writes state; import
// executions do not.
func (r *renderer) usesState() bool { return r.kind != KindImport }

func (r *renderer) run(e Execution) (stop bool, err error) {
	var rendered []byte
	switch e.Type {
	case TypeGoTemplate:
		rendered, err = r.goTemplate(e)
	case TypeSpiff:
		rendered, err = r.spiff(e)
	default:
		return false, fmt.Errorf("unknown template type %q", e.Type)
	}
	if err != nil {
		return false, err
	}
	return r.collect(rendered)
}

func (r *renderer) goTemplate(e Execution) ([]byte, error) {
	var text string
	name := e.Name
	switch {
	case e.Template != nil:
		s, ok := e.Template.(string)
		if !ok {
			return nil, fmt.Errorf("a GoTemplate template must be a string, not %T", e.Template)
		}
		text = s
	case e.File != "":
		data, err := readFile(r.in.Files, e.File)
		if err != nil {
			return nil, err
		}
		text, name = string(data), e.File
	default:
		return nil, errors.New("no template found")
	}
	key := StateKey(r.kind, e.Name)
	if r.usesState() {
		state, err := r.goState(key)
		if err != nil {
			return nil, err
		}
		r.values["state"] = state
	}
	t := newGoTemplater(e.Name, r.in, r.comps)
	rendered, err := t.execute(name, text, r.values)
	if err != nil {
		return nil, withSnippet(err, name, text)
	}
	if r.kind != KindImport {
		if err := noValueError(rendered); err != nil {
			return nil, err
		}
	}
	if r.usesState() {
		var res struct {
			State json.RawMessage `json:"state"`
		}
		if err := yaml.Unmarshal([]byte(rendered), &res); err != nil {
			return nil, fmt.Errorf("unable to read state from rendered template: %w", err)
		}
		if len(res.State) != 0 {
			r.out.State[key] = res.State
		}
	}
	return []byte(rendered), nil
}

// goState reads the state of a GoTemplate execution, preferring state this
// render already wrote.
func (r *renderer) goState(key string) (any, error) {
	data, ok := r.out.State[key]
	if !ok {
		data, ok = r.in.State[key]
	}
	if !ok || len(data) == 0 {
		return map[string]any{}, nil
	}
	var state any
	if err := yaml.Unmarshal(data, &state); err != nil {
		return nil, fmt.Errorf("unable to load state: %w", err)
	}
	return state, nil
}

func (r *renderer) spiff(e Execution) ([]byte, error) {
	if r.vfs == nil {
		mem, err := toVFS(r.in.Files)
		if err != nil {
			return nil, err
		}
		r.vfs = mem
	}
	tmpl, err := spiffTemplateNode(e.Name, e.Template, r.vfs, e.File)
	if err != nil {
		return nil, fmt.Errorf("unable to parse template: %w", err)
	}
	s, err := newSpiff(r.vfs, r.values, spiffFuncs(r.comps, r.in.Cluster))
	if err != nil {
		return nil, fmt.Errorf("unable to init spiff templater: %w", err)
	}
	key := StateKey(r.kind, e.Name)
	var res spiffyaml.Node
	if r.usesState() {
		data, ok := r.out.State[key]
		if !ok {
			data = r.in.State[key]
		}
		state, err := stateNode(data)
		if err != nil {
			return nil, err
		}
		res, err = s.Cascade(tmpl, nil, state)
		if err != nil {
			return nil, err
		}
		if err := storeSpiffState(s, res, key, r.out.State); err != nil {
			return nil, err
		}
	} else {
		res, err = s.Cascade(tmpl, nil)
		if err != nil {
			return nil, err
		}
	}
	data, err := spiffyaml.Marshal(res)
	if err != nil {
		return nil, err
	}
	if len(data) > maxOutputBytes {
		return nil, errOutputTooLarge
	}
	return data, nil
}

func storeSpiffState(s spiffing.Spiff, res spiffyaml.Node, key string, into map[string][]byte) error {
	st := s.DetermineState(res)
	if st == nil || st.Value() == nil {
		return nil
	}
	data, err := spiffyaml.Marshal(st)
	if err != nil {
		return fmt.Errorf("unable to marshal state: %w", err)
	}
	if len(data) != 0 {
		into[key] = data
	}
	return nil
}

// collect decodes a rendered document and merges it into the output. Keys are
// matched case-insensitively, as Landscaper's JSON decoding does (so both
// deployItems and deployitems work).
func (r *renderer) collect(rendered []byte) (stop bool, err error) {
	switch r.kind {
	case KindDeploy:
		var doc struct {
			DeployItems []deployItemSpec `json:"deployItems"`
		}
		if err := yaml.Unmarshal(rendered, &doc); err != nil {
			return false, fmt.Errorf("error while decoding templated execution: %w", err)
		}
		for i := range doc.DeployItems {
			item, err := doc.DeployItems[i].toMap()
			if err != nil {
				return false, fmt.Errorf("deploy item %d: %w", i, err)
			}
			r.out.DeployItems = append(r.out.DeployItems, item)
		}
	case KindSubinstallation:
		var doc struct {
			Subinstallations []map[string]any `json:"subinstallations"`
		}
		if err := yaml.Unmarshal(rendered, &doc); err != nil {
			return false, fmt.Errorf("error while decoding templated execution: %w", err)
		}
		for i, s := range doc.Subinstallations {
			if s == nil {
				return false, fmt.Errorf("unable to decode installation template %d: empty", i)
			}
		}
		r.out.Subinstallations = append(r.out.Subinstallations, doc.Subinstallations...)
	case KindExport:
		var doc struct {
			Exports map[string]any `json:"exports"`
		}
		if err := yaml.Unmarshal(rendered, &doc); err != nil {
			return false, fmt.Errorf("error while decoding templated execution: %w", err)
		}
		r.out.Exports = mergeMaps(r.out.Exports, doc.Exports)
	case KindImport:
		var doc struct {
			Bindings map[string]any `json:"bindings"`
			Errors   []string       `json:"errors"`
		}
		if err := yaml.Unmarshal(rendered, &doc); err != nil {
			return false, fmt.Errorf("error while decoding templated execution: %w", err)
		}
		if doc.Bindings != nil {
			imports, ok := r.values["imports"].(map[string]any)
			if !ok {
				imports = map[string]any{}
				r.values["imports"] = imports
			}
			if r.out.Bindings == nil {
				r.out.Bindings = map[string]any{}
			}
			maps.Copy(r.out.Bindings, doc.Bindings)
			maps.Copy(imports, doc.Bindings)
		}
		if len(doc.Errors) != 0 {
			r.out.Errors = append(r.out.Errors, doc.Errors...)
			return true, nil
		}
	}
	return false, nil
}

// mergeMaps deep-merges b over a: nested maps merge, anything else in b
// replaces a's value.
func mergeMaps(a, b map[string]any) map[string]any {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := make(map[string]any, len(a)+len(b))
	maps.Copy(out, a)
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := a[k].(map[string]any); ok {
				out[k] = mergeMaps(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// deployItemSpec mirrors Landscaper's DeployItemSpecification so decoding
// accepts and rejects the same documents.
type deployItemSpec struct {
	Name               string            `json:"name"`
	Type               string            `json:"type"`
	Target             *targetRef        `json:"target,omitempty"`
	Labels             map[string]string `json:"labels,omitempty"`
	Config             json.RawMessage   `json:"config"`
	DependsOn          []string          `json:"dependsOn,omitempty"`
	Timeout            *string           `json:"timeout,omitempty"`
	UpdateOnChangeOnly bool              `json:"updateOnChangeOnly,omitempty"`
	// Landscaper's field has no JSON name; case-insensitive matching makes
	// onDelete work.
	OnDelete json.RawMessage `json:"OnDelete,omitempty"`
}

type targetRef struct {
	Name   string  `json:"name,omitempty"`
	Import string  `json:"import,omitempty"`
	Index  *int    `json:"index,omitempty"`
	Key    *string `json:"key,omitempty"`
}

func (d *deployItemSpec) toMap() (map[string]any, error) {
	m := map[string]any{
		"name":   d.Name,
		"type":   d.Type,
		"config": nil,
	}
	if len(d.Config) != 0 {
		var cfg any
		if err := json.Unmarshal(d.Config, &cfg); err != nil {
			return nil, err
		}
		m["config"] = cfg
	}
	if d.Target != nil {
		t := map[string]any{}
		if d.Target.Name != "" {
			t["name"] = d.Target.Name
		}
		if d.Target.Import != "" {
			t["import"] = d.Target.Import
		}
		if d.Target.Index != nil {
			t["index"] = *d.Target.Index
		}
		if d.Target.Key != nil {
			t["key"] = *d.Target.Key
		}
		m["target"] = t
	}
	if d.Labels != nil {
		m["labels"] = d.Labels
	}
	if d.DependsOn != nil {
		m["dependsOn"] = d.DependsOn
	}
	if d.Timeout != nil {
		if *d.Timeout != "none" {
			if _, err := time.ParseDuration(*d.Timeout); err != nil {
				return nil, fmt.Errorf("invalid timeout %q: %w", *d.Timeout, err)
			}
		}
		m["timeout"] = *d.Timeout
	}
	if d.UpdateOnChangeOnly {
		m["updateOnChangeOnly"] = true
	}
	if len(d.OnDelete) != 0 && string(d.OnDelete) != "null" {
		var od any
		if err := json.Unmarshal(d.OnDelete, &od); err != nil {
			return nil, err
		}
		m["onDelete"] = od
	}
	return m, nil
}
