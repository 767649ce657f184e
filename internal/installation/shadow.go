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
// did with it; the caller masks it. Data flowing between nodes carries
// stand-ins too: a sibling's exports that a secret influenced, every
// target, and the exports of items that may hold a secret.

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
	// Standin replaces a secret value.
	Standin func(v any) any
	// SecretExport says whether an item's export may hold a secret on
	// its own account (it reads a Kubernetes Secret, say). An item whose
	// rendered config differs from its shadow counts as well.
	SecretExport func(spec engine.ItemSpec) bool
	// Exports asks to find, for every node of Status that succeeded,
	// which data exports a secret influenced, and to record them in its
	// SensitiveExports.
	Exports bool
}

// Shadow is a shadow rendering.
type Shadow struct {
	// Items are the stand-in renderings of the deploy items, by
	// "<path>/<item>".
	Items map[string]engine.ItemSpec
	// Imports are the nodes' stand-in imports, by path.
	Imports map[string]Imports
	// Failed are the nodes whose shadow could not be rendered (a schema
	// refused a stand-in): all their items count as derived from secrets.
	Failed []string
}

// FailedAt reports whether the item key (by "<path>/<item>") lies in a
// node whose shadow failed, or has no shadow item.
func (s *Shadow) FailedAt(key string) bool {
	if _, ok := s.Items[key]; !ok {
		return true
	}
	for _, p := range s.Failed {
		if p == "" || len(key) > len(p) && key[:len(p)] == p && key[len(p)] == '/' {
			return true
		}
	}
	return false
}

// RenderShadow renders the tree from in.
func RenderShadow(ctx context.Context, bp Blueprint, in ShadowInput) *Shadow {
	sh := &Shadow{Items: map[string]engine.ItemSpec{}, Imports: map[string]Imports{}}
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
	rendered, err := bp.Render(ctx, Input{Path: path, Imports: imp, State: state})
	if err != nil {
		w.fail(path, st)
		return
	}
	for name, spec := range rendered.Items {
		w.sh.Items[Join(path, name)] = spec
	}
	deps, err := siblingOrder(rendered.Subs)
	if err != nil {
		w.fail(path, st)
		return
	}
	sc := newScope(imp)
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
			w.fail(subPath, ss)
			continue
		}
		w.node(ctx, subPath, sub.Blueprint, simp, ss)
		if ss != nil {
			sc.add(sub, w.exportsOf(ss))
		}
	}
	if w.in.Exports && st != nil && st.Succeeded() {
		w.exports(ctx, path, bp, imp, st, rendered, sc)
	}
}

// fail marks a node whose shadow cannot be rendered; its exports, not
// being comparable, all count as sensitive.
func (w *shadowWalk) fail(path string, st *Status) {
	w.sh.Failed = append(w.sh.Failed, path)
	if w.in.Exports && st != nil {
		st.Walk(func(_ string, n *Status) {
			n.SensitiveExports = slices.Sorted(maps.Keys(n.Exports.Data))
		})
	}
}

// exportsOf is what a node exports as its siblings' shadows see it.
func (w *shadowWalk) exportsOf(st *Status) Exports {
	ex := Exports{Data: maps.Clone(st.Exports.Data), Targets: make(map[string]*deployer.Target, len(st.Exports.Targets))}
	for _, n := range st.SensitiveExports {
		if v, ok := ex.Data[n]; ok {
			ex.Data[n] = w.in.Standin(v)
		}
	}
	for n, t := range st.Exports.Targets {
		ex.Targets[n] = w.target(t)
	}
	return ex
}

func (w *shadowWalk) target(t *deployer.Target) *deployer.Target {
	if t == nil {
		return nil
	}
	c := *t
	if v := decodeJSON(t.Config); v != nil {
		if b, err := json.Marshal(w.in.Standin(v)); err == nil {
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
		if w.itemSecret(path, name, is.Spec) {
			v = w.in.Standin(v)
		}
		values.DeployItems[name] = v
	}
	for n, t := range sc.targets {
		values.Targets[n] = w.target(t)
	}
	st.SensitiveExports = nil
	ex, err := bp.Exports(ctx, Input{Path: path, Imports: imp, State: rendered.State}, values)
	for _, n := range slices.Sorted(maps.Keys(st.Exports.Data)) {
		if err != nil || !sameJSON(st.Exports.Data[n], ex.Data[n]) {
			st.SensitiveExports = append(st.SensitiveExports, n)
		}
	}
}

// itemSecret reports whether an item's export may carry a secret: it
// says so itself, or a secret reached its config.
func (w *shadowWalk) itemSecret(path, name string, spec engine.ItemSpec) bool {
	if w.in.SecretExport != nil && w.in.SecretExport(spec) {
		return true
	}
	key := Join(path, name)
	if w.sh.FailedAt(key) {
		return true
	}
	return !sameJSON(decodeJSON(spec.Config), decodeJSON(w.sh.Items[key].Config))
}

func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(x) == string(y)
}
