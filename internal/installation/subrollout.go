package installation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/rollout"
)

// Sub-installations as rollout members. A blueprint that ranges over a
// target map in its subinstallationExecutions renders one sub-installation
// per cluster (`target: clusters[eu-1]`); those are members too, named by
// the key, and a member's subtree moves as one: the canary's
// sub-installations run first and bake (the health of every deploy item
// under them), then the rest batch by batch. The node's runner does what
// the engine does for items, with the same decisions (rollout.Decide) and
// the same bake (rollout.RunBakes).

// SubRollout is the rollout of one group of a node's sub-installations.
type SubRollout struct {
	rollout.State
	JobID string `json:"jobID,omitempty"`
	// Previous is the status each canary sub-installation had before the
	// rollout moved it, to revert its subtree to on auto-fail.
	Previous map[string]*Status `json:"previous,omitempty"`
}

func (r *SubRollout) clone() *SubRollout {
	c := *r
	c.State = r.Clone()
	c.Previous = make(map[string]*Status, len(r.Previous))
	for k, v := range r.Previous {
		c.Previous[k] = v.Clone()
	}
	return &c
}

// elementOfSub is the target map or list element a sub-installation is
// rendered for: the one element its target imports name, if they name
// exactly one of an import of imp.
func elementOfSub(sub Sub, imp Imports) (coll, key string, ok bool) {
	var refs []string
	for _, t := range sub.TargetImports {
		refs = append(refs, t)
	}
	for _, l := range sub.TargetListImports {
		refs = append(refs, l...)
	}
	for _, ref := range refs {
		c, k, isElem := ElementOf(ref, imp)
		if !isElem {
			continue
		}
		if ok && (c != coll || k != key) {
			return "", "", false // for two clusters: no one's member
		}
		coll, key, ok = c, k, true
	}
	return coll, key, ok
}

// subGroup is one group of a node's sub-installation members during a
// plan or a job.
type subGroup struct {
	name string
	// members are the sub-installations of each key, sorted.
	members map[string][]string
	// input is the input hash each member sub-installation would run
	// with ("" when it imports from a sibling: not known beforehand);
	// revision is its part of the group's revision.
	input, revision map[string]string
	d               rollout.Decision
}

// idle reports whether no group has anything to run or hold: the job
// leaves their state as it is, as the engine's Settle does.
func idle(groups []*subGroup) bool {
	for _, g := range groups {
		if len(g.d.Stages) > 0 || len(g.d.Hold) > 0 {
			return false
		}
	}
	return true
}

// settleSubRollouts is the rollout state of a node whose groups are
// idle: what it was, and a new group's decision state.
func settleSubRollouts(st *Status, groups []*subGroup) {
	old := st.Rollouts
	st.Rollouts = map[string]*SubRollout{}
	for _, g := range groups {
		if o := old[g.name]; o != nil {
			st.Rollouts[g.name] = o
		} else {
			st.Rollouts[g.name] = &SubRollout{State: g.d.State.Clone()}
		}
	}
}

// subs lists the sub-installations of members.
func (g *subGroup) subs(members []string) []string {
	var out []string
	for _, m := range members {
		out = append(out, g.members[m]...)
	}
	slices.Sort(out)
	return out
}

// decideSubs groups a node's sub-installation members and decides each
// group's rollout from prev, the node's status before the job. A
// member is current when none of its sub-installations has anything to
// do (their plans are no-ops). A sub-installation that imports from a
// sibling sees what that sibling exported last, when the sibling has
// nothing to do either; otherwise what it will import is not known yet,
// and it counts as changed. A sub-installation that fails to render
// counts as changed too: its own run reports why. items are the node's
// deploy items: a group whose name an item group has is named
// "<import>/subinstallations". parentInput is the node's InputHash.
func decideSubs(ctx context.Context, path string, subs []Sub, deps map[string][]string, items map[string]engine.ItemSpec,
	imp Imports, defaults map[string]any, parentInput string, prev *Status, trigger string, s *rollout.Strategy) []*subGroup {
	if s == nil {
		return nil
	}
	itemGroups := map[string]bool{}
	for _, spec := range items {
		if c, _, ok := ElementOf(spec.TargetRef, imp); ok {
			itemGroups[c] = true
		}
	}
	byName := map[string]*subGroup{}
	sc := newScope(imp, defaults)
	current := map[string]bool{}
	// settled plans a sub-installation whose siblings it imports from
	// have nothing to do, and when it has nothing to do either, adds
	// what it exported last to the scope.
	done := map[string]bool{}
	settled := func(sub Sub, prevSub *Status) (input string, ok bool) {
		for _, d := range deps[sub.Name] {
			if !done[d] {
				return "", false
			}
		}
		subImp, err := sc.importsOf(sub)
		if err != nil {
			return "", false
		}
		// A member runs its spec whatever the trigger: a new
		// reconcile_trigger runs members again, but rolls nothing out,
		// as for items.
		t := trigger
		if prevSub != nil {
			t = prevSub.ReconcileTrigger
		}
		p, err := planNode(ctx, Join(path, sub.Name), sub.Blueprint, subImp, prevSub, t, s)
		if err != nil || !p.Noop {
			return InputHash(sub.Blueprint, subImp), false
		}
		sc.add(sub, p.Exports)
		done[sub.Name] = true
		return InputHash(sub.Blueprint, subImp), true
	}
	feeds := func(sub Sub) bool {
		return slices.ContainsFunc(subs, func(o Sub) bool { return slices.Contains(deps[o.Name], sub.Name) })
	}
	for _, sub := range topological(subs, deps) {
		var prevSub *Status
		if prev != nil {
			prevSub = prev.Subs[sub.Name]
		}
		coll, key, ok := elementOfSub(sub, imp)
		if !ok {
			// Not a member; what it exports may feed one.
			if feeds(sub) {
				settled(sub, prevSub)
			}
			continue
		}
		name := coll
		if itemGroups[coll] {
			name = coll + "/subinstallations"
		}
		g := byName[name]
		if g == nil {
			g = &subGroup{name: name, members: map[string][]string{}, input: map[string]string{}, revision: map[string]string{}}
			byName[name] = g
		}
		g.members[key] = append(g.members[key], sub.Name)
		g.input[sub.Name], current[sub.Name] = settled(sub, prevSub)
		// What identifies the spec being rolled out. What a member
		// imports from siblings is known only once they ran, so such a
		// member's part is the node's own input (which any upstream
		// change changes), the same before and after the job.
		g.revision[sub.Name] = g.input[sub.Name]
		if len(deps[sub.Name]) > 0 {
			g.revision[sub.Name] = "siblings\x00" + parentInput
		}
	}
	var out []*subGroup
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		g := byName[name]
		keys := slices.Sorted(maps.Keys(g.members))
		ms := make([]rollout.Member, len(keys))
		h := sha256.New()
		for i, k := range keys {
			slices.Sort(g.members[k])
			cur := true
			for _, sub := range g.members[k] {
				cur = cur && current[sub]
				fmt.Fprintf(h, "%s\x00%s\x00%s\x00", k, sub, g.revision[sub])
			}
			ms[i] = rollout.Member{Name: k, Current: cur}
		}
		var prevState *rollout.State
		if prev != nil && prev.Rollouts[name] != nil {
			prevState = &prev.Rollouts[name].State
		}
		g.d = rollout.Decide(*s, prevState, ms, hex.EncodeToString(h.Sum(nil))[:12], trigger)
		out = append(out, g)
	}
	return out
}

// heldSubs are the sub-installations the groups' decisions hold.
func heldSubs(groups []*subGroup) map[string]bool {
	held := map[string]bool{}
	for _, g := range groups {
		for _, sub := range g.subs(g.d.Hold) {
			held[sub] = true
		}
	}
	return held
}

// keptPlan is the plan of a sub-installation a rollout holds: its subtree
// stays as prev says. A held sub-installation that never ran has nothing
// to show, and its dependents wait for it.
func keptPlan(path string, prev *Status) *Plan {
	p := &Plan{Path: path, Known: true, Kept: true}
	if prev == nil {
		return p
	}
	p.Noop, p.Exports = prev.Succeeded(), prev.Exports
	// The members it rendered last, for checking canary.members.
	for _, rs := range prev.Rollouts {
		p.SubMembers = append(p.SubMembers, slices.Collect(maps.Keys(rs.Members))...)
	}
	for _, rs := range prev.Execution.Rollouts {
		p.SubMembers = append(p.SubMembers, slices.Collect(maps.Keys(rs.Members))...)
	}
	p.Items = map[string]engine.ItemSpec{}
	for n, is := range prev.Execution.Items {
		p.Items[n] = is.Spec
		p.Job.Skip = append(p.Job.Skip, n)
	}
	slices.Sort(p.Job.Skip)
	for _, n := range slices.Sorted(maps.Keys(prev.Subs)) {
		p.Subs = append(p.Subs, keptPlan(Join(path, n), prev.Subs[n]))
	}
	return p
}

// subRun is one group's progress through one job.
type subRun struct {
	*subGroup
	rs      *SubRollout
	stopped bool
	revert  bool
}

// rolloutSubs runs a node's sub-installations, members stage by stage:
// round 0 runs every other sub-installation with each group's first
// stage; each later round the next stage of every group still going; a
// canary stage bakes before its group goes on. It returns the error of
// the sub-installations that failed, and one sentence per group that
// stopped short.
func (r *Runner) rolloutSubs(ctx context.Context, path string, subs []Sub, deps map[string][]string, st *Status, sc *scope,
	jobID string, groups []*subGroup) (*core.Error, []string) {
	runs := r.startSubRollouts(st, groups)
	// Members a stage moves, or the decision holds, wait for that; the
	// rest (members whose spec does not change, sub-installations outside
	// groups) run in every round: they may import what members export,
	// which changes as members move, and a new reconcile_trigger runs
	// them at once, as it runs items outside stages.
	waiting := heldSubs(groups)
	for _, g := range runs {
		for _, stg := range g.d.Stages {
			for _, sub := range g.subs(stg.Run) {
				waiting[sub] = true
			}
		}
	}
	var failure *core.Error
	for round := 0; ; round++ {
		run := map[string]bool{}
		for _, sub := range subs {
			if !waiting[sub.Name] {
				run[sub.Name] = true
			}
		}
		canaries := map[string]bool{}
		var active []*subRun
		for _, g := range runs {
			if !g.stopped && round < len(g.d.Stages) {
				active = append(active, g)
				stg := g.d.Stages[round]
				for _, sub := range g.subs(stg.Run) {
					run[sub], canaries[sub] = true, stg.Canary
				}
			}
		}
		if len(active) == 0 && round > 0 {
			break
		}
		err := r.runSubs(ctx, path, subs, deps, st, sc, jobID, func(n string) bool { return !run[n] })
		var othersFailed []string
		for n := range run {
			if s := st.Subs[n]; s.JobIDFinished == jobID && !s.Succeeded() && !canaries[n] {
				othersFailed = append(othersFailed, n)
			}
		}
		if err != nil && (len(othersFailed) > 0 || ctx.Err() != nil) {
			failure = err
		}
		var bakes []*rollout.Bake
		for _, g := range active {
			stg := g.d.Stages[round]
			var failed []string
			for _, sub := range g.subs(stg.Run) {
				if !st.Subs[sub].Succeeded() {
					failed = append(failed, sub)
				}
			}
			now := r.Engine.Clock.Now()
			switch {
			case ctx.Err() != nil:
				g.stop(now, g.rs.Phase, rollout.ReasonInterrupted, "the apply was stopped (interrupted or out of time) during "+rollout.StageName(stg))
			case len(failed) > 0 && stg.Canary:
				g.revert = true
				g.stop(now, rollout.PhaseCanaryFailed, rollout.ReasonCanaryFailed, "canary sub-installations failed: "+strings.Join(failed, ", "))
			case len(failed) > 0:
				g.stop(now, rollout.PhaseRollingOut, rollout.ReasonBatchFailed, rollout.StageName(stg)+" failed: sub-installations "+strings.Join(failed, ", "))
			case stg.Canary && !g.rs.Baked:
				bakes = append(bakes, r.subBake(ctx, path, st, g, stg, jobID))
			default:
				g.stageDone(now, stg, r.Rollout.Paused)
			}
		}
		switch {
		case len(bakes) > 0 && failure != nil:
			for _, b := range bakes {
				b.Stop(rollout.PhaseCanary, rollout.ReasonInterrupted, "other sub-installations failed; the canary bakes in the next apply")
			}
		case len(bakes) > 0:
			rollout.RunBakes(ctx, r.Engine.Clock, *r.Rollout, bakes)
		}
		for _, g := range runs {
			if g.revert {
				g.revert = false
				r.revertSubs(ctx, path, st, g, jobID)
			}
		}
		if failure != nil {
			for _, g := range runs {
				if !g.stopped && round+1 < len(g.d.Stages) {
					g.stop(r.Engine.Clock.Now(), g.rs.Phase, rollout.ReasonInterrupted, "other sub-installations failed; the rollout goes on in the next apply")
				}
			}
			break
		}
	}
	// Inputs that could not be known before the job are known now.
	byName := map[string]Sub{}
	for _, sub := range subs {
		byName[sub.Name] = sub
	}
	for _, g := range runs {
		for sub, in := range g.input {
			if in != "" {
				continue
			}
			if subImp, err := sc.importsOf(byName[sub]); err == nil {
				g.input[sub] = InputHash(byName[sub].Blueprint, subImp)
			}
		}
	}
	return failure, r.finishSubRollouts(st, runs, jobID)
}

func (g *subRun) stop(now time.Time, phase rollout.Phase, reason, msg string) {
	g.stopped = true
	g.rs.Stop(now, phase, reason, msg)
}

func (g *subRun) stageDone(now time.Time, stg rollout.Stage, paused bool) {
	if g.rs.StageDone(now, stg, paused, len(g.d.Hold) > 0) {
		g.stopped = true
	}
}

// startSubRollouts puts each group's decision state into the node's
// status, and keeps what each moving canary sub-installation runs now.
func (r *Runner) startSubRollouts(st *Status, groups []*subGroup) []*subRun {
	old := st.Rollouts
	st.Rollouts = map[string]*SubRollout{}
	var runs []*subRun
	now := r.Engine.Clock.Now()
	for _, g := range groups {
		rs := &SubRollout{State: *g.d.State}
		if o := old[g.name]; o != nil && !g.d.Fresh {
			rs.Members = o.Members
			if g.d.KeepsRevert(&o.State) {
				rs.Previous = o.Previous
			}
		}
		if rs.Previous == nil {
			rs.Previous = map[string]*Status{}
		}
		if rs.Members == nil {
			rs.Members = map[string]*rollout.MemberStatus{}
		}
		for _, sub := range g.subs(rs.Canary) {
			if _, kept := rs.Previous[sub]; !kept && st.Subs[sub].Succeeded() {
				rs.Previous[sub] = snapshot(st.Subs[sub])
			}
		}
		if g.d.Fresh {
			rs.Begin(now)
		}
		st.Rollouts[g.name] = rs
		runs = append(runs, &subRun{subGroup: g, rs: rs})
	}
	return runs
}

// snapshot is what a revert needs of a subtree: its nodes and their
// items' specs. Deployer state stays with the live status (a revert
// starts from it), and rollouts under it are not kept twice.
func snapshot(s *Status) *Status {
	c := s.Clone()
	c.Walk(func(_ string, n *Status) {
		n.Rollouts, n.Execution.Rollouts = nil, nil
		for name, is := range n.Execution.Items {
			cp := *is
			cp.State, cp.ProviderStatus = nil, nil
			n.Execution.Items[name] = &cp
		}
	})
	return c
}

// subBake prepares a group's canary bake: a member's restarts are those of
// the worst deploy item under its sub-installations, and the failed runs of
// the health command.
func (r *Runner) subBake(ctx context.Context, path string, st *Status, g *subRun, stg rollout.Stage, jobID string) *rollout.Bake {
	rs, clock := g.rs, r.Engine.Clock
	health := func(m string, f func(exec, item string, is *engine.ItemStatus)) {
		for _, sub := range g.members[m] {
			subPath := Join(path, sub)
			st.Subs[sub].Walk(func(p string, n *Status) {
				for _, item := range slices.Sorted(maps.Keys(n.Execution.Items)) {
					f(r.executionName(Join(subPath, p)), item, n.Execution.Items[item])
				}
			})
		}
	}
	rs.BeginBake(clock.Now(), r.Rollout.Duration, func() map[string]int {
		base := map[string]int{}
		for _, m := range stg.Members {
			health(m, func(exec, item string, is *engine.ItemStatus) {
				if h, ok, err := r.Engine.Health(ctx, exec, item, jobID, is); ok && err == nil {
					base[exec+"/"+item] = h.Restarts
				}
			})
		}
		return base
	})
	probe := func(ctx context.Context, m string) (int, string, bool) {
		var items []string
		var healths []rollout.ItemHealth
		health(m, func(exec, item string, is *engine.ItemStatus) {
			key := exec + "/" + item
			items = append(items, key)
			if h, ok, err := r.Engine.Health(ctx, exec, item, jobID, is); ok && err == nil {
				healths = append(healths, rollout.ItemHealth{Key: key, Restarts: h.Restarts, Ready: h.Ready, Message: h.Message})
			}
		})
		exports := map[string]any{}
		for _, sub := range g.members[m] {
			exports[sub] = st.Subs[sub].Exports.Data
		}
		b, _ := json.Marshal(exports)
		n, why, ready, err := r.Rollout.MemberHealth(ctx, &rs.State, healths, r.Engine.HealthCommand, rollout.HealthEnv{
			Execution: r.executionName(path), Group: g.name, Member: m, Export: string(b), Items: items})
		if err != nil {
			r.emit(Event{Path: path, JobID: jobID, Item: &engine.Event{Item: m, Output: "health command failed: " + err.Error()}})
		}
		return n, why, ready
	}
	return &rollout.Bake{State: &rs.State, Members: stg.Members, Probe: probe,
		Stop: func(phase rollout.Phase, reason, msg string) {
			g.revert = g.revert || reason == rollout.ReasonAutoFail
			g.stop(clock.Now(), phase, reason, msg)
		},
		Pass: func() { g.stageDone(clock.Now(), stg, r.Rollout.Paused) },
	}
}

// revertSubs runs the canary's sub-installations with the deploy items
// their subtrees ran before the rollout. Items that read component
// resources (a chart given as resourceRef) cannot be reverted: the
// previous component is not at hand.
func (r *Runner) revertSubs(ctx context.Context, path string, st *Status, g *subRun, jobID string) {
	var reverted, none, failed []string
	for _, sub := range g.subs(g.rs.Canary) {
		snap := g.rs.Previous[sub]
		if snap == nil {
			none = append(none, sub)
			continue
		}
		s := r.revertNode(ctx, Join(path, sub), snap, st.Subs[sub], jobID)
		st.Subs[sub] = s
		if s.Phase == core.PhaseFailed {
			failed = append(failed, sub)
		} else {
			reverted = append(reverted, sub)
		}
	}
	if len(reverted) > 0 {
		g.rs.Message += "; canary reverted to the previous spec: " + strings.Join(reverted, ", ")
	}
	if len(failed) > 0 {
		g.rs.Message += "; reverting the canary failed: " + strings.Join(failed, ", ")
	}
	if len(none) > 0 {
		g.rs.Message += "; no previous spec to revert to (new members): " + strings.Join(none, ", ")
	}
}

// revertNode brings one node of a reverted subtree back to snap: its
// items to their previous specs, nodes the new spec added deleted.
func (r *Runner) revertNode(ctx context.Context, path string, snap, cur *Status, jobID string) *Status {
	out := snap.Clone()
	var curEx engine.Status
	if cur != nil {
		curEx = cur.Execution
	}
	specs := map[string]engine.ItemSpec{}
	for n, is := range snap.Execution.Items {
		specs[n] = is.Spec
	}
	out.Execution = r.Engine.Apply(ctx, engine.Execution{Name: r.executionName(path), Items: specs, ReconcileTrigger: r.ReconcileTrigger},
		curEx, engine.Run{JobID: jobID, Observe: func(ev engine.Event) { r.emit(Event{Path: path, JobID: jobID, Item: &ev}) }})
	ok := out.Execution.LastError == nil
	for name, s := range snap.Subs {
		var c *Status
		if cur != nil {
			c = cur.Subs[name]
		}
		out.Subs[name] = r.revertNode(ctx, Join(path, name), s, c, jobID)
		ok = ok && out.Subs[name].Phase != core.PhaseFailed
	}
	if cur != nil {
		for name, c := range cur.Subs {
			if snap.Subs[name] != nil {
				continue
			}
			if left := r.destroy(ctx, Join(path, name), c, jobID, core.OperationReconcile); left != nil {
				out.Subs[name], ok = left, false
			}
		}
	}
	out.JobID, out.JobIDFinished = jobID, jobID
	if !ok {
		out.Phase = core.PhaseFailed
		out.LastError = &core.Error{Operation: core.OperationReconcile, Reason: "RevertFailed",
			Message: "reverting to the spec before the rollout failed"}
	}
	return out
}

// finishSubRollouts records every group's members and outcome.
func (r *Runner) finishSubRollouts(st *Status, runs []*subRun, jobID string) []string {
	now := r.Engine.Clock.Now()
	var stops []string
	for _, g := range runs {
		rs := g.rs
		rs.JobID = jobID
		all := true
		for _, m := range slices.Sorted(maps.Keys(g.members)) {
			ms := rs.Members[m]
			if ms == nil {
				ms = &rollout.MemberStatus{}
				rs.Members[m] = ms
			}
			h := sha256.New()
			ms.New, ms.Revision = true, ""
			for _, sub := range g.members[m] {
				s := st.Subs[sub]
				ms.New = ms.New && s.Succeeded() && g.input[sub] != "" && s.InputHash == g.input[sub]
				if s.Succeeded() {
					fmt.Fprintf(h, "%s\x00%s\x00", sub, s.InputHash)
				} else {
					h = nil
					break
				}
			}
			if h != nil {
				ms.Revision = hex.EncodeToString(h.Sum(nil))[:12]
			}
			ms.Canary = slices.Contains(rs.Canary, m)
			all = all && ms.New
		}
		for m := range rs.Members {
			if g.members[m] == nil {
				delete(rs.Members, m)
			}
		}
		if msg := rs.Finish(now, g.name, all, g.d, g.stopped, r.ReconcileTrigger); msg != "" {
			stops = append(stops, msg)
		}
	}
	return stops
}
