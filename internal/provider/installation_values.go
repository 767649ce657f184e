package provider

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/rollout"
)

// The status attribute of landscaper_installation flattens the tree:
// installations by path, deploy items by "<path>/<item>". An item's status
// is its phase alone, and its error, when it has one, sits in
// deploy_item_errors: a tree of a thousand items costs Terraform a
// thousand values per pass over the state, not five thousand.

const attrDeployItemErrors = "deploy_item_errors"

func (x *installations) statusTypes() (status, node, lastError tftypes.Object) {
	status = as[tftypes.Object](x.t.AttributeTypes["status"])
	node = as[tftypes.Object](as[tftypes.Map](status.AttributeTypes["installations"]).ElementType)
	lastError = as[tftypes.Object](status.AttributeTypes["last_error"])
	return status, node, lastError
}

// vt returns value helpers for the error type of this schema.
func (x *installations) vt() valueTypes {
	_, _, lastError := x.statusTypes()
	return valueTypes{lastError: lastError}
}

func (x *installations) nodeValue(s *installation.Status) tftypes.Value {
	_, node, _ := x.statusTypes()
	return tftypes.NewValue(node, map[string]tftypes.Value{
		"phase":      stringOrNull(string(s.Phase)),
		"last_error": x.vt().errorValue(s.LastError),
	})
}

// treeStatus collects the flattened parts of a status.
type treeStatus struct {
	nodes, items, errors map[string]tftypes.Value
	// key is the key an item is shown under (masking.Tree.Key).
	key func(string) string
	// rollouts are every node's rollout groups, by "<path>/<group>".
	rollouts map[string]*rollout.State
}

func newTreeStatus(sec *masking.Tree) treeStatus {
	key := func(k string) string { return k }
	if sec != nil {
		key = sec.Key
	}
	return treeStatus{nodes: map[string]tftypes.Value{}, items: map[string]tftypes.Value{}, errors: map[string]tftypes.Value{}, key: key}
}

// addRollouts adds a node's groups: its items' and its sub-installations'.
func (ts *treeStatus) addRollouts(path string, s *installation.Status) {
	for g, st := range treeRollouts(path, s, "") {
		if ts.rollouts == nil {
			ts.rollouts = map[string]*rollout.State{}
		}
		ts.rollouts[g] = st
	}
}

// treeRollouts are the rollout groups of one node by "<path>/<group>";
// with jobID set, only those that job moved.
func treeRollouts(path string, s *installation.Status, jobID string) map[string]*rollout.State {
	out := map[string]*rollout.State{}
	for g, r := range s.Execution.Rollouts {
		if jobID == "" || r.JobID == jobID {
			out[installation.Join(path, g)] = &r.State
		}
	}
	for g, r := range s.Rollouts {
		if jobID == "" || r.JobID == jobID {
			out[installation.Join(path, g)] = &r.State
		}
	}
	return out
}

func (x *installations) addItem(ts treeStatus, key string, is *engine.ItemStatus) {
	key = ts.key(key)
	ts.items[key] = stringValue(string(is.Phase))
	if is.LastError != nil {
		ts.errors[key] = x.vt().errorValue(is.LastError)
	}
}

// statusValue renders a tree status, its items by the keys sec shows them
// under (nil: their own); nil is a null status.
func (x *installations) statusValue(st *installation.Status, sec *masking.Tree) tftypes.Value {
	status, _, _ := x.statusTypes()
	if st == nil {
		return tftypes.NewValue(status, nil)
	}
	ts := newTreeStatus(sec)
	st.Walk(func(p string, s *installation.Status) {
		ts.nodes[p] = x.nodeValue(s)
		for n, is := range s.Execution.Items {
			x.addItem(ts, installation.Join(p, n), is)
		}
		ts.addRollouts(p, s)
	})
	return x.statusObject(st.Phase, st.JobID, st.JobIDFinished, st.LastError, ts)
}

func (x *installations) statusObject(phase core.Phase, jobID, jobIDFinished string, lastError *core.Error, ts treeStatus) tftypes.Value {
	status, _, _ := x.statusTypes()
	return tftypes.NewValue(status, map[string]tftypes.Value{
		"phase":              stringOrNull(string(phase)),
		"job_id":             stringOrNull(jobID),
		"job_id_finished":    stringOrNull(jobIDFinished),
		"last_error":         x.vt().errorValue(lastError),
		"installations":      tftypes.NewValue(status.AttributeTypes["installations"], ts.nodes),
		attrDeployItems:      tftypes.NewValue(status.AttributeTypes[attrDeployItems], ts.items),
		attrDeployItemErrors: tftypes.NewValue(status.AttributeTypes[attrDeployItemErrors], ts.errors),
		attrRollout:          rolloutStatusValue(as[tftypes.Map](status.AttributeTypes[attrRollout]), ts.rollouts),
	})
}

// plannedStatus is the status a successful job under jobID leaves: nodes
// whose subtree changes nothing and items that do not run keep their
// status, everything else succeeds, and orphans leave. Predicting success
// keeps the plan to what changes: an item that succeeded before and runs
// again shows no change in status, its rendered config says why it runs.
// An apply that fails reports errors, and then Terraform takes the status
// it returns, which tells what happened.
func (x *installations) plannedStatus(prev *installation.Status, p *installation.Plan, jobID string, sec *masking.Tree) tftypes.Value {
	_, node, _ := x.statusTypes()
	ts := newTreeStatus(sec)
	prevOf := prev.ByPath()
	succeeded := stringValue(string(core.PhaseSucceeded))
	p.Walk(func(np *installation.Plan) {
		ps := prevOf[np.Path]
		if ps != nil {
			// Unchanged: rolloutsMove rules out plans that change them.
			ts.addRollouts(np.Path, ps)
		}
		if np.Noop && ps != nil {
			ts.nodes[np.Path] = x.nodeValue(ps)
		} else {
			ts.nodes[np.Path] = tftypes.NewValue(node, map[string]tftypes.Value{"phase": succeeded, "last_error": x.vt().errorValue(nil)})
		}
		for _, n := range np.Job.Run {
			ts.items[ts.key(installation.Join(np.Path, n))] = succeeded
		}
		for _, n := range np.Job.Skip {
			if ps != nil && ps.Execution.Items[n] != nil {
				x.addItem(ts, installation.Join(np.Path, n), ps.Execution.Items[n])
			}
		}
	})
	return x.statusObject(core.PhaseSucceeded, jobID, jobID, nil, ts)
}

// renderedItems is the deploy_items attribute (of type t, a map) for the
// items of a tree, with the secrets masked in their configs.
func renderedItems(t tftypes.Type, specs map[string]engine.ItemSpec, sec *masking.Tree) tftypes.Value {
	et := as[tftypes.Object](as[tftypes.Map](t).ElementType)
	vals := make(map[string]tftypes.Value, len(specs))
	sec.Derive(specs)
	for key, spec := range specs {
		it := sec.Item(key, spec)
		target := tftypes.NewValue(tftypes.String, nil)
		if label := targetLabel(spec); label != "" {
			target = stringValue(label)
		}
		if it.TargetMasked {
			target = stringValue(mask)
		}
		vals[it.Key] = tftypes.NewValue(et, map[string]tftypes.Value{
			"type":   stringValue(it.Type),
			"target": target,
			"config": stringValue(string(it.Config)),
		})
	}
	return tftypes.NewValue(t, vals)
}

// targetLabel is the target deploy_items shows for an item: the import it
// names, and where a provider target points; "" for none.
func targetLabel(spec engine.ItemSpec) string {
	label := spec.TargetRef
	if label == "" && spec.Target != nil {
		// Recorded before TargetRef existed.
		label = spec.Target.Name
	}
	if t := spec.Target; t != nil && t.Ref != "" {
		// A reviewer sees which provider target, and which cluster,
		// an item acts on; a credential is not part of either.
		label = providerTargetLabel(label, t)
	}
	return label
}

// plannedItems are the rendered items of every node of a plan; unknown
// while a node is not rendered yet, as then not even their names are.
// Members a rollout holds keep the spec they run (prev's).
func plannedItems(t tftypes.Type, p *installation.Plan, prev *installation.Status, sec *masking.Tree) tftypes.Value {
	if !p.AllKnown() {
		return tftypes.NewValue(t, tftypes.UnknownValue)
	}
	return renderedItems(t, plannedSpecs(p, prev), sec)
}

// plannedSpecs are the specs the items of a plan run with.
func plannedSpecs(p *installation.Plan, prev *installation.Status) map[string]engine.ItemSpec {
	specs := planSpecs(p)
	prevOf := prev.ByPath()
	p.Walk(func(n *installation.Plan) {
		for _, item := range n.Job.Hold {
			if ps := prevOf[n.Path]; ps != nil && ps.Execution.Items[item] != nil {
				specs[installation.Join(n.Path, item)] = ps.Execution.Items[item].Spec
			}
		}
	})
	return specs
}

// newSubMembers reports whether a rollout group of the plan has a
// sub-installation member that never ran.
func newSubMembers(p *installation.Plan) bool {
	found := false
	p.Walk(func(n *installation.Plan) { found = found || n.NewSubMembers })
	return found
}

// rolloutsMove reports whether applying the plan changes the rollout
// state of any node: a node with rollout groups (now or before) runs a
// job, or its groups come or go. Such a status is not predicted.
func rolloutsMove(p *installation.Plan, prev *installation.Status) bool {
	prevOf := prev.ByPath()
	moves := false
	p.Walk(func(n *installation.Plan) {
		ps := prevOf[n.Path]
		var beforeItems map[string]*engine.RolloutStatus
		var beforeSubs map[string]*installation.SubRollout
		if ps != nil {
			beforeItems, beforeSubs = ps.Execution.Rollouts, ps.Rollouts
		}
		if n.Job.Rollouts == nil && beforeItems == nil && n.SubRollouts == nil && beforeSubs == nil {
			return
		}
		// A node that runs anything (or is not rendered yet) moves its
		// groups' state: Finish stamps the conditions.
		if !n.Noop || len(n.Job.Rollouts) != len(beforeItems) || len(n.SubRollouts) != len(beforeSubs) {
			moves = true
			return
		}
		for g := range n.Job.Rollouts {
			moves = moves || beforeItems[g] == nil
		}
		for g := range n.SubRollouts {
			moves = moves || beforeSubs[g] == nil
		}
	})
	return moves
}

// plannedRollouts is rollout_plan: every rendered node's rollout
// decisions by "<path>/<group>"; null without a rollout. At plan time
// (partial false) it is unknown while the strategy or a node is not
// known; at apply time it holds what can be rendered before the job.
func (x *installations) plannedRollouts(p *installation.Plan, strategyKnown, partial bool) tftypes.Value {
	t := as[tftypes.Map](x.t.AttributeTypes[attrRolloutPlan])
	if !partial && (!strategyKnown || !p.AllKnown()) {
		return tftypes.NewValue(t, tftypes.UnknownValue)
	}
	var all map[string]rollout.Decision
	p.Walk(func(n *installation.Plan) {
		for _, decisions := range []map[string]rollout.Decision{n.Job.Rollouts, n.SubRollouts} {
			for g, d := range decisions {
				if all == nil {
					all = map[string]rollout.Decision{}
				}
				all[installation.Join(n.Path, g)] = d
			}
		}
	})
	return rolloutPlanValue(t, all)
}

// validateTreeRollout checks canary.members against the members the
// tree renders, once every node is rendered.
func validateTreeRollout(s *rollout.Strategy, p *installation.Plan) problems {
	var ps problems
	if s == nil {
		return ps
	}
	known, members := p.AllKnown(), p.Members()
	for _, pr := range s.Validate(members, "a target map key or target list index that a deploy item or sub-installation of the tree is rendered for") {
		if !known && strings.HasPrefix(pr.Field, "canary.members") {
			continue // members of nodes not rendered yet may have them
		}
		ps.add(rolloutPath(strings.Split(pr.Field, ".")...), "Invalid rollout", pr.Message)
	}
	if known && len(members) == 0 {
		ps.warn(attrPath(attrRollout), "Rollout has no members", "No deploy item or sub-installation of the tree "+
			"is rendered for an element of a target map or target list import, so everything runs as soon as its "+
			"dependencies allow.")
	}
	return ps
}

// renderedSpecs are the items the nodes of a plan render now: not those
// of sub-installations a rollout holds.
func renderedSpecs(p *installation.Plan) map[string]engine.ItemSpec {
	specs := map[string]engine.ItemSpec{}
	p.Walk(func(n *installation.Plan) {
		if n.Kept || !n.Known {
			return
		}
		for name, spec := range n.Items {
			specs[installation.Join(n.Path, name)] = spec
		}
	})
	return specs
}

// planSpecs are the items of the rendered nodes of a plan, by key.
func planSpecs(p *installation.Plan) map[string]engine.ItemSpec {
	specs := map[string]engine.ItemSpec{}
	p.Walk(func(n *installation.Plan) {
		for name, spec := range n.Items {
			specs[installation.Join(n.Path, name)] = spec
		}
	})
	return specs
}

// statusItems are the items of a tree status as they were last rendered.
func statusItems(t tftypes.Type, st *installation.Status, sec *masking.Tree) tftypes.Value {
	if st == nil {
		return tftypes.NewValue(t, nil)
	}
	return renderedItems(t, st.ItemSpecs(), sec)
}

// exportValues renders the root's exports: data exports as one object,
// those a secret influenced in another (sensitive) one, null in the
// first, and target exports as a map of {type, config}.
func (x *installations) exportValues(st *installation.Status) (data, sensitive, targets tftypes.Value, err error) {
	tt := x.t.AttributeTypes["target_exports"]
	if st == nil {
		return dynamicNull, dynamicNull, tftypes.NewValue(tt, nil), nil
	}
	attrs, typs := map[string]tftypes.Value{}, map[string]tftypes.Type{}
	sAttrs, sTyps := map[string]tftypes.Value{}, map[string]tftypes.Type{}
	for _, n := range slices.Sorted(maps.Keys(st.Exports.Data)) {
		v, err := anyToValueJSON(st.Exports.Data[n])
		if err != nil {
			return dynamicNull, dynamicNull, tftypes.NewValue(tt, nil), fmt.Errorf("export %q: %w", n, err)
		}
		if _, withheld := st.Exports.Sealed[n]; withheld {
			// A secret kept nowhere influenced it: kept nowhere either.
			v = dynamicNull
		} else if slices.Contains(st.SensitiveExports, n) {
			sAttrs[n], sTyps[n] = v, v.Type()
			v = dynamicNull
		}
		attrs[n], typs[n] = v, v.Type()
	}
	data = tftypes.NewValue(tftypes.Object{AttributeTypes: typs}, attrs)
	sensitive = dynamicNull
	if len(sAttrs) > 0 {
		sensitive = tftypes.NewValue(tftypes.Object{AttributeTypes: sTyps}, sAttrs)
	}
	elem := as[tftypes.Map](tt).ElementType
	tv := map[string]tftypes.Value{}
	for n, t := range st.Exports.Targets {
		et := as[tftypes.Object](elem).AttributeTypes
		cfg, name := tftypes.NewValue(tftypes.String, nil), tftypes.NewValue(tftypes.String, nil)
		if t.Ref != "" {
			name = stringValue(t.Ref)
		} else if len(t.Config) == 0 {
			cfg = stringValue("null")
		} else {
			cfg = stringValue(string(t.Config))
		}
		tv[n] = tftypes.NewValue(elem, map[string]tftypes.Value{"name": name, "type": stringValue(t.Type), "config": cfg,
			"labels": stringMapValue(et["labels"], t.Labels), "annotations": stringMapValue(et["annotations"], t.Annotations)})
	}
	return data, sensitive, tftypes.NewValue(tt, tv), nil
}

// stringMapValue is a map of strings, null when empty.
func stringMapValue(t tftypes.Type, m map[string]string) tftypes.Value {
	if len(m) == 0 {
		return tftypes.NewValue(t, nil)
	}
	vals := make(map[string]tftypes.Value, len(m))
	for k, v := range m {
		vals[k] = stringValue(v)
	}
	return tftypes.NewValue(t, vals)
}
