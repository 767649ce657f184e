package installation

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

// A shadow rendering is the tree rendered a second time, from imports
// whose secrets the caller replaced by stand-ins. Whatever differs from
// the real rendering was derived from a secret, whatever the templates
// did with it; the caller (internal/masking) decides what that means.
// Data flowing between nodes carries stand-ins too: a sibling's exports
// that a secret influenced, every target, and the exports of items that
// may hold a secret.

// ShadowInput is what a shadow rendering starts from.
type ShadowInput struct {
	// Imports are the root's imports with their secrets replaced.
	Imports Imports
	// Status gives what a node renders from besides its imports: its
	// template state and its sub-installations' exports (Status.Exports,
	// with SensitiveExports replaced). Nil for a tree never run.
	Status *Status
	// Known says which nodes to render (a plan's rendered nodes); nil
	// renders every node that Status has, and the root.
	Known func(path string) bool
	// Standin replaces a value that may hold a secret; path names it.
	Standin func(path string, v any) any
	// ExportSecret says which parts of an item's export may hold a secret
	// (all of it, or the exports under keys), given the item's key
	// ("<path>/<item>"), its spec and the spec its shadow rendered (nil
	// when there is none).
	ExportSecret func(key string, spec engine.ItemSpec, shadow *engine.ItemSpec) (all bool, keys []string)
	// Exports asks to find, for every node of Status that succeeded,
	// which data exports differ from the real ones (Shadow.Exports).
	Exports bool
	// SkipItems renders no deploy execution: for a caller that knows
	// from elsewhere what the items are (Blueprint.Render's
	// Input.SkipItems), and wants the exports.
	SkipItems bool
}

// Shadow is a shadow rendering.
type Shadow struct {
	// Items are the stand-in renderings of the deploy items, by
	// "<path>/<item>".
	Items map[string]engine.ItemSpec
	// Imports are the nodes' stand-in imports, by path.
	Imports map[string]Imports
	// Failed are the nodes whose shadow could not be rendered (a schema
	// refused a stand-in), with what rendering them said, by path.
	Failed map[string]string
	// Exports are, with ShadowInput.Exports, the data exports of each
	// node that differ from the real ones, by path: every one of a node
	// whose shadow failed.
	Exports map[string][]string
	// ExportErrors are what the export executions of a node said when
	// they failed, by path.
	ExportErrors map[string]string
	// Subs are the names of the sub-installations each node rendered
	// (walked or not), by path: a real sub-installation whose name a
	// shadow lacks was named after a secret.
	Subs map[string][]string
}

// ErrorAt is what the shadow said when the node at path failed to render
// or to export; ok is false when it did neither.
func (s *Shadow) ErrorAt(path string) (msg string, ok bool) {
	if msg, ok = s.Failed[path]; ok {
		return msg, true
	}
	msg, ok = s.ExportErrors[path]
	return msg, ok
}

// failedUnder reports whether key is a node path at or below a failed
// node.
func (s *Shadow) failedUnder(key string) bool {
	for p := range s.Failed {
		if p == "" || key == p || len(key) > len(p) && key[:len(p)] == p && key[len(p)] == '/' {
			return true
		}
	}
	return false
}

// NodeFailed reports whether the shadow of the node at path, or of a node
// above it, failed.
func (s *Shadow) NodeFailed(path string) bool { return s.failedUnder(path) }

// RenderShadow renders the tree from in.
func RenderShadow(ctx context.Context, bp Blueprint, in ShadowInput) *Shadow {
	sh := &Shadow{Items: map[string]engine.ItemSpec{}, Imports: map[string]Imports{}, Failed: map[string]string{},
		ExportErrors: map[string]string{}, Subs: map[string][]string{}}
	if in.Exports {
		sh.Exports = map[string][]string{}
	}
	w := &shadowWalk{in: in, sh: sh}
	w.node(ctx, "", bp, in.Imports, in.Status)
	return sh
}

type shadowWalk struct {
	in ShadowInput
	sh *Shadow
}

func (w *shadowWalk) known(path string) bool {
	if w.in.Known != nil {
		return w.in.Known(path)
	}
	return true
}

func (w *shadowWalk) node(ctx context.Context, path string, bp Blueprint, imp Imports, st *Status) {
	w.sh.Imports[path] = imp
	var state map[string][]byte
	if st != nil {
		state = st.State
	}
	rendered, err := bp.Render(ctx, Input{Path: path, Imports: imp, State: state, SkipItems: w.in.SkipItems})
	if err != nil {
		w.fail(path, st, err)
		return
	}
	for name, spec := range rendered.Items {
		w.sh.Items[Join(path, name)] = spec
	}
	names := make([]string, 0, len(rendered.Subs))
	for _, sub := range rendered.Subs {
		names = append(names, sub.Name)
	}
	w.sh.Subs[path] = names
	deps, err := siblingOrder(rendered.Subs)
	if err != nil {
		w.fail(path, st, err)
		return
	}
	sc := newScope(imp, rendered.Defaults)
	for _, sub := range topological(rendered.Subs, deps) {
		subPath := Join(path, sub.Name)
		var ss *Status
		if st != nil {
			ss = st.Subs[sub.Name]
		}
		if w.in.Known != nil && !w.known(subPath) || w.in.Known == nil && ss == nil {
			continue
		}
		simp, err := sc.importsOf(sub)
		if err != nil {
			w.fail(subPath, ss, err)
			continue
		}
		w.node(ctx, subPath, sub.Blueprint, simp, ss)
		if ss != nil {
			sc.add(sub, w.exportsOf(subPath, ss))
		}
	}
	if w.in.Exports && st != nil && (st.Succeeded() || st.FailedIn == FailedInExports) {
		w.exports(ctx, path, bp, imp, st, rendered, sc)
	}
}

// fail marks a node whose shadow cannot be rendered; its exports, not
// being comparable, all count as influenced by a secret.
func (w *shadowWalk) fail(path string, st *Status, err error) {
	w.sh.Failed[path] = err.Error()
	if w.in.Exports && st != nil {
		st.walk(path, func(p string, n *Status) {
			w.sh.Exports[p] = slices.Sorted(maps.Keys(n.Exports.Data))
		})
	}
}

// sensitive are the data exports of the node at path that may hold a
// secret: as this walk found them, or as the status recorded them.
func (w *shadowWalk) sensitive(path string, st *Status) []string {
	if ex, ok := w.sh.Exports[path]; ok {
		return ex
	}
	return st.SensitiveExports
}

// exportsOf is what a node exports as its siblings' shadows see it.
func (w *shadowWalk) exportsOf(path string, st *Status) Exports {
	ex := Exports{Data: maps.Clone(st.Exports.Data), Targets: make(map[string]*deployer.Target, len(st.Exports.Targets))}
	for _, n := range w.sensitive(path, st) {
		if v, ok := ex.Data[n]; ok {
			ex.Data[n] = w.in.Standin("flow/"+path+"/"+n, v)
		}
	}
	for n, t := range st.Exports.Targets {
		ex.Targets[n] = w.target("flow/"+path+"/target/"+n, t)
	}
	return ex
}

func (w *shadowWalk) target(path string, t *deployer.Target) *deployer.Target {
	if t == nil {
		return nil
	}
	c := *t
	if v := decodeJSON(t.Config); v != nil {
		if b, err := json.Marshal(w.in.Standin(path, v)); err == nil {
			c.Config = b
		}
	}
	return &c
}

// exports runs the node's export executions over stand-ins and records
// which exports differ from the real ones.
func (w *shadowWalk) exports(ctx context.Context, path string, bp Blueprint, imp Imports, st *Status, rendered *Rendered, sc *scope) {
	values := ExportValues{DeployItems: map[string]any{}, DataObjects: maps.Clone(sc.data), Targets: map[string]*deployer.Target{}}
	for name, is := range st.Execution.Items {
		v := decodeJSON(is.Export)
		key := Join(path, name)
		var shadow *engine.ItemSpec
		if s, ok := w.sh.Items[key]; ok && !w.in.SkipItems {
			shadow = &s
		}
		all, keys := true, []string(nil)
		if w.in.ExportSecret != nil {
			all, keys = w.in.ExportSecret(key, is.Spec, shadow)
		}
		switch m, isMap := v.(map[string]any); {
		case all:
			v = w.in.Standin("item/"+key, v)
		case len(keys) > 0 && isMap:
			m = maps.Clone(m)
			for _, k := range keys {
				if e, ok := m[k]; ok {
					m[k] = w.in.Standin("item/"+key+"/"+k, e)
				}
			}
			v = m
		case len(keys) > 0:
			v = w.in.Standin("item/"+key, v)
		}
		values.DeployItems[name] = v
	}
	for n, t := range sc.targets {
		values.Targets[n] = w.target("target/"+path+"/"+n, t)
	}
	ex, err := bp.Exports(ctx, Input{Path: path, Imports: imp, State: rendered.State}, values)
	if err != nil {
		w.sh.ExportErrors[path] = err.Error()
	}
	differ := []string{}
	for _, n := range slices.Sorted(maps.Keys(st.Exports.Data)) {
		if err != nil || !sameJSON(st.Exports.Data[n], ex.Data[n]) {
			differ = append(differ, n)
		}
	}
	w.sh.Exports[path] = differ
}

func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(x) == string(y)
}
