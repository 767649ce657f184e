package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/rollout"
)

// Rollouts: the members of a group (items with the same Execution.Groups
// entry) move to a new spec canary first, then batch by batch, as
// rollout.Decide says. Items outside groups run as before, in the first
// round, without waiting for any rollout.

// Reasons of the execution's error when a rollout stops it.
const (
	ReasonRolloutStopped = "RolloutStopped"
	ReasonCanaryFailed   = "CanaryFailed"
)

// GroupMembers returns the members of each group, sorted.
func GroupMembers(ex Execution) map[string][]string {
	out := map[string][]string{}
	for g, members := range groupItems(ex) {
		out[g] = slices.Sorted(maps.Keys(members))
	}
	return out
}

// memberOf names the member item n is, or belongs to.
func memberOf(ex Execution, n string) string {
	if m := ex.Members[n]; m != "" {
		return m
	}
	return n
}

// groupItems returns the items of each member of each group, sorted.
func groupItems(ex Execution) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, n := range slices.Sorted(maps.Keys(ex.Items)) {
		if g := ex.Groups[n]; g != "" {
			if out[g] == nil {
				out[g] = map[string][]string{}
			}
			m := memberOf(ex, n)
			out[g][m] = append(out[g][m], n)
		}
	}
	return out
}

// expand lists the items of members, sorted.
func expand(items map[string][]string, members []string) []string {
	var out []string
	for _, m := range members {
		out = append(out, items[m]...)
	}
	slices.Sort(out)
	return out
}

// currentMember reports whether every item of a member runs its spec.
func currentMember(ex Execution, st Status, items []string) bool {
	for _, n := range items {
		if !current(ex.Items[n], st.Items[n]) {
			return false
		}
	}
	return true
}

// current reports whether an item runs spec, successfully.
func current(spec ItemSpec, is *ItemStatus) bool {
	return is != nil && is.Phase == core.PhaseSucceeded && is.AppliedHash == spec.Hash()
}

// revisionOf identifies the desired specs of a group's members.
func revisionOf(ex Execution, items map[string][]string) string {
	h := sha256.New()
	for _, n := range expand(items, slices.Sorted(maps.Keys(items))) {
		fmt.Fprintf(h, "%s\x00%s\x00", n, ex.Items[n].Hash())
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// planRollouts decides every group's rollout: which members are held,
// and whether a canary still has to bake (a job even when nothing runs).
func planRollouts(ex Execution, st Status) (map[string]rollout.Decision, map[string]bool, bool) {
	if ex.Rollout == nil || len(ex.Groups) == 0 {
		return nil, nil, false
	}
	out := map[string]rollout.Decision{}
	held := map[string]bool{}
	baking := false
	for g, items := range groupItems(ex) {
		members := slices.Sorted(maps.Keys(items))
		ms := make([]rollout.Member, len(members))
		for i, m := range members {
			ms[i] = rollout.Member{Name: m, Current: currentMember(ex, st, items[m])}
		}
		var prev *rollout.State
		if rs := st.Rollouts[g]; rs != nil {
			prev = &rs.State
		}
		d := rollout.Decide(*ex.Rollout, prev, ms, revisionOf(ex, items), ex.ReconcileTrigger)
		out[g] = d
		for _, n := range expand(items, d.Hold) {
			held[n] = true
		}
		for _, s := range d.Stages {
			baking = baking || (s.Canary && !d.State.Baked)
		}
	}
	return out, held, baking
}

// startRollouts puts each group's decision state into the status and
// keeps the spec every moving canary member runs now, to revert to.
func (j *job) startRollouts(ex Execution, plan Plan) {
	if plan.Rollouts == nil {
		j.st.Rollouts = nil // no rollout configured any more
		return
	}
	out := make(map[string]*RolloutStatus, len(plan.Rollouts))
	items := groupItems(ex)
	for g, d := range plan.Rollouts {
		rs := &RolloutStatus{State: *d.State}
		if old := j.st.Rollouts[g]; old != nil && d.KeepsRevert(&old.State) {
			rs.Previous = old.Previous
		}
		if rs.Previous == nil {
			rs.Previous = map[string]ItemSpec{}
		}
		rs.Members = map[string]*rollout.MemberStatus{}
		if old := j.st.Rollouts[g]; old != nil && !d.Fresh {
			for k, v := range old.Members {
				c := *v
				rs.Members[k] = &c
			}
		}
		for _, n := range expand(items[g], rs.Canary) {
			if _, kept := rs.Previous[n]; kept {
				continue
			}
			if is := j.st.Items[n]; is != nil && is.Phase == core.PhaseSucceeded && is.AppliedHash == is.Spec.Hash() {
				rs.Previous[n] = is.Spec
			}
		}
		if d.Fresh {
			rs.Begin(j.e.Clock.Now())
		}
		out[g] = rs
	}
	j.st.Rollouts = out
}

// groupRun is one group's progress through one job.
type groupRun struct {
	name string
	// items are each member's items.
	items   map[string][]string
	d       rollout.Decision
	rs      *RolloutStatus
	stopped bool
	revert  bool
}

// rollout runs plan.Run, members stage by stage: round 0 runs every
// non-member with each group's first stage; each later round the next
// stage of every group still going. A canary stage bakes before the
// group moves on. It returns the job's error, or nil.
func (j *job) rollout(ctx context.Context, ex Execution, plan Plan) *core.Error {
	var groups []*groupRun
	staged := map[string]bool{}
	items := groupItems(ex)
	for _, g := range slices.Sorted(maps.Keys(plan.Rollouts)) {
		gr := &groupRun{name: g, items: items[g], d: plan.Rollouts[g], rs: j.st.Rollouts[g]}
		groups = append(groups, gr)
		for _, s := range gr.d.Stages {
			for _, n := range expand(gr.items, s.Run) {
				staged[n] = true
			}
		}
	}
	var failure *core.Error
	for round := 0; ; round++ {
		var run []string
		if round == 0 {
			for _, n := range plan.Run {
				if !staged[n] {
					run = append(run, n)
				}
			}
		}
		var active []*groupRun
		for _, gr := range groups {
			if !gr.stopped && round < len(gr.d.Stages) {
				active = append(active, gr)
				run = append(run, expand(gr.items, gr.d.Stages[round].Run)...)
			}
		}
		if len(active) == 0 && len(run) == 0 {
			break
		}
		slices.Sort(run)
		for _, n := range run {
			j.st.Items[n].Spec = ex.Items[n]
		}
		err := j.progress(ctx, run)
		othersFailed := false
		if err != nil {
			canaries := map[string]bool{}
			for _, gr := range active {
				if s := gr.d.Stages[round]; s.Canary {
					for _, n := range expand(gr.items, s.Run) {
						canaries[n] = true
					}
				}
			}
			for _, n := range run {
				if j.st.Items[n].Phase != core.PhaseSucceeded && !canaries[n] {
					othersFailed = true
				}
			}
			if othersFailed || ctx.Err() != nil {
				failure = err
			}
		}
		var bakers []*groupRun
		for _, gr := range active {
			s := gr.d.Stages[round]
			var failed []string
			for _, n := range expand(gr.items, s.Run) {
				if j.st.Items[n].Phase != core.PhaseSucceeded {
					failed = append(failed, n)
				}
			}
			switch {
			case ctx.Err() != nil:
				j.stop(gr, gr.rs.Phase, rollout.ReasonInterrupted, "the apply was stopped (interrupted or out of time) during "+rollout.StageName(s))
			case len(failed) > 0 && s.Canary:
				gr.revert = true
				j.stop(gr, rollout.PhaseCanaryFailed, rollout.ReasonCanaryFailed, "canary "+itemErrors(j.st, failed))
			case len(failed) > 0:
				j.stop(gr, rollout.PhaseRollingOut, rollout.ReasonBatchFailed, rollout.StageName(s)+" failed: "+itemErrors(j.st, failed))
			case s.Canary && !gr.rs.Baked:
				bakers = append(bakers, gr)
			default:
				j.stageDone(ex, gr, s)
			}
		}
		j.bake(ctx, ex, bakers, round)
		for _, gr := range groups {
			if gr.revert {
				gr.revert = false
				j.revertCanary(ctx, gr)
			}
		}
		if othersFailed {
			for _, gr := range groups {
				if !gr.stopped && round+1 < len(gr.d.Stages) {
					j.stop(gr, gr.rs.Phase, rollout.ReasonInterrupted, "other deploy items failed; the rollout goes on in the next apply")
				}
			}
		}
	}
	stops := j.finishRollouts(ex, groups)
	if failure != nil {
		if len(stops) > 0 {
			failure.Message += "; " + strings.Join(stops, "; ")
		}
		return failure
	}
	if len(stops) == 0 {
		return nil
	}
	reason := ReasonRolloutStopped
	for _, gr := range groups {
		if gr.rs.Phase == rollout.PhaseCanaryFailed {
			reason = ReasonCanaryFailed // a failure, not a wait
		}
	}
	return &core.Error{Reason: reason, Message: strings.Join(stops, "; "), Codes: []string{core.CodeForInfoOnly}}
}

func itemErrors(st *Status, names []string) string {
	var parts []string
	for _, n := range names {
		msg := "failed"
		if e := st.Items[n].LastError; e != nil {
			msg = "failed: " + e.Message
		}
		parts = append(parts, fmt.Sprintf("%s %s", n, msg))
	}
	return strings.Join(parts, "; ")
}

// stop ends a group's rollout for this job.
func (j *job) stop(gr *groupRun, phase rollout.Phase, reason, msg string) {
	gr.stopped = true
	gr.rs.Stop(j.e.Clock.Now(), phase, reason, msg)
}

// stageDone moves a group past a stage that went well, and stops it
// there when the rollout is paused by hand and members are left.
func (j *job) stageDone(ex Execution, gr *groupRun, s rollout.Stage) {
	if gr.rs.StageDone(j.e.Clock.Now(), s, ex.Rollout.Paused, len(gr.d.Hold) > 0) {
		gr.stopped = true
	}
}

// bake watches the canaries of groups until their duration is over or
// their health trips auto-pause or auto-fail.
func (j *job) bake(ctx context.Context, ex Execution, groups []*groupRun, round int) {
	if len(groups) == 0 {
		return
	}
	s, clock := ex.Rollout, j.e.Clock
	for _, gr := range groups {
		gr.rs.BeginBake(clock.Now(), s.Duration, func() map[string]int {
			base := map[string]int{}
			for _, n := range expand(gr.items, gr.d.Stages[round].Members) {
				if h, ok := j.deployerHealth(ctx, n); ok {
					base[n] = h.Restarts
				}
			}
			return base
		})
	}
	bakes := make([]*rollout.Bake, len(groups))
	for i, gr := range groups {
		members := gr.d.Stages[round]
		bakes[i] = &rollout.Bake{
			State:   &gr.rs.State,
			Members: members.Members,
			Probe: func(ctx context.Context, m string) (int, string, bool) {
				return j.memberRestarts(ctx, ex, gr, m)
			},
			Stop: func(phase rollout.Phase, reason, msg string) {
				gr.revert = gr.revert || reason == rollout.ReasonAutoFail
				j.stop(gr, phase, reason, msg)
			},
			Pass: func() { j.stageDone(ex, gr, members) },
		}
	}
	rollout.RunBakes(ctx, clock, *s, bakes)
}

// memberRestarts counts a canary member's restarts since the bake began:
// its deployer's count (Kubernetes pods) and failed health commands.
func (j *job) memberRestarts(ctx context.Context, ex Execution, gr *groupRun, m string) (int, string, bool) {
	items := gr.items[m]
	var health []rollout.ItemHealth
	for _, it := range items {
		if h, ok := j.deployerHealth(ctx, it); ok {
			health = append(health, rollout.ItemHealth{Key: it, Restarts: h.Restarts, Ready: h.Ready, Message: h.Message})
		}
	}
	n, why, ready, err := ex.Rollout.MemberHealth(ctx, &gr.rs.State, health, j.e.HealthCommand, rollout.HealthEnv{
		Execution: j.exec, Group: gr.name, Member: m, Export: j.memberExport(m, items), Items: items})
	if err != nil {
		j.emit(Event{Item: m, Output: "health command failed: " + err.Error()})
	}
	return n, why, ready
}

// memberExport is what a health command sees of a member's exports: the
// item's export, or for a member of several items an object of them by
// item name.
func (j *job) memberExport(m string, items []string) string {
	if len(items) == 1 && items[0] == m {
		if is := j.st.Items[m]; is != nil {
			return string(is.Export)
		}
		return ""
	}
	all := map[string]json.RawMessage{}
	for _, n := range items {
		if is := j.st.Items[n]; is != nil && len(is.Export) > 0 {
			all[n] = is.Export
		}
	}
	b, _ := json.Marshal(all)
	return string(b)
}

// deployerHealth asks a member's deployer about its workloads, if it can tell.
func (j *job) deployerHealth(ctx context.Context, m string) (deployer.Health, bool) {
	h, ok, err := j.e.Health(ctx, j.exec, m, j.id, j.st.Items[m])
	if err != nil {
		j.emit(Event{Item: m, Output: "health check failed: " + err.Error()})
	}
	return h, ok && err == nil
}

// Health asks the deployer of an item about the health of the workloads
// it manages (restarts, readiness); ok is false when it cannot tell.
func (e *Engine) Health(ctx context.Context, exec, item, jobID string, is *ItemStatus) (h deployer.Health, ok bool, err error) {
	if is == nil {
		return h, false, nil
	}
	d, found := e.Deployers.Get(is.Spec.Type)
	if !found {
		return h, false, nil
	}
	hc, can := d.(deployer.HealthChecker)
	if !can {
		return h, false, nil
	}
	tgt, err := e.target(is.Spec.Target)
	if err != nil {
		return h, true, err
	}
	h, err = hc.Health(ctx, deployer.Request{Operation: core.OperationReconcile, Execution: exec, Item: item, JobID: jobID,
		Config: is.Spec.Config, Target: tgt, State: is.State})
	return h, true, err
}

// revertCanary runs the canary members with the specs they ran before
// the rollout. Members that had none (a first create) stay as they are.
func (j *job) revertCanary(ctx context.Context, gr *groupRun) {
	var names, none []string
	for _, n := range expand(gr.items, gr.rs.Canary) {
		if p, ok := gr.rs.Previous[n]; ok {
			j.st.Items[n].Spec = p
			names = append(names, n)
		} else {
			none = append(none, n)
		}
	}
	if len(names) > 0 {
		if err := j.progress(ctx, names); err != nil {
			gr.rs.Message += "; reverting the canary failed: " + err.Message
		} else {
			gr.rs.Message += "; canary reverted to the previous spec: " + strings.Join(names, ", ")
		}
	}
	if len(none) > 0 {
		gr.rs.Message += "; no previous spec to revert to (new members): " + strings.Join(none, ", ")
	}
}

// finishRollouts records every group's members and, for a group whose
// members all run the new spec, completion. It returns one sentence per
// group that stopped short.
func (j *job) finishRollouts(ex Execution, groups []*groupRun) []string {
	members := GroupMembers(ex)
	items := groupItems(ex)
	now := j.e.Clock.Now()
	var stops []string
	for _, gr := range groups {
		rs := gr.rs
		rs.JobID = j.id
		all := true
		for _, m := range members[gr.name] {
			ms := rs.Members[m]
			if ms == nil {
				ms = &rollout.MemberStatus{}
				rs.Members[m] = ms
			}
			ms.Revision = appliedRevision(j.st, items[gr.name][m])
			ms.New = currentMember(ex, *j.st, items[gr.name][m])
			ms.Canary = slices.Contains(rs.Canary, m)
			all = all && ms.New
		}
		for m := range rs.Members {
			if !slices.Contains(members[gr.name], m) {
				delete(rs.Members, m)
			}
		}
		if msg := rs.Finish(now, gr.name, all, gr.d, gr.stopped, ex.ReconcileTrigger); msg != "" {
			stops = append(stops, msg)
		}
	}
	return stops
}

// appliedRevision is a short hash of the specs a member's items last ran
// successfully ("" when one never did): the item's own for a member of
// one item.
func appliedRevision(st *Status, items []string) string {
	h := sha256.New()
	for _, n := range items {
		is := st.Items[n]
		if is == nil || is.AppliedHash == "" {
			return ""
		}
		if len(items) == 1 {
			return is.AppliedHash[:12]
		}
		fmt.Fprintf(h, "%s\x00%s\x00", n, is.AppliedHash)
	}
	if len(items) == 0 {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}
