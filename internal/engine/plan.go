package engine

import (
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/rollout"

	"maps"
	"slices"
	"sort"
)

// Plan says what the next job will do. The provider shows it in
// `terraform plan` and the engine follows it in apply, so both come from
// this one function and cannot disagree.
type Plan struct {
	// Run lists items that will be reconciled, sorted.
	Run []string
	// Skip lists items kept as they are: unchanged since their last success.
	Skip []string
	// Delete lists orphans (in the status, not in the spec) whose deployer
	// delete will run during Init.
	Delete []string
	// Drop lists orphans that no deployer ever worked on; they are
	// forgotten without a deployer call.
	Drop []string
	// Hold lists members of rollout groups whose spec changed but which
	// the rollout does not move in this job (paused, failed, or later
	// batches of a paused rollout); they keep what they run.
	Hold []string
	// Rollouts is each group's rollout decision: the stages this job may
	// run (canary, batches), in order.
	Rollouts map[string]rollout.Decision
	// Job is true when applying starts a new job. A job that did not finish
	// cleanly is resumed even when every item is individually fine: an
	// object keeps progressing until it is done.
	Job bool
}

// WithRun returns the plan with names moved to Run, as for items whose
// spec is not known yet: they may change, so they must be expected to run.
func (p Plan) WithRun(names ...string) Plan {
	if len(names) == 0 {
		return p
	}
	out := p
	out.Skip = slices.DeleteFunc(slices.Clone(p.Skip), func(n string) bool { return slices.Contains(names, n) })
	out.Run = slices.Clone(p.Run)
	for _, n := range names {
		if !slices.Contains(out.Run, n) {
			out.Run = append(out.Run, n)
		}
	}
	slices.Sort(out.Run)
	out.Job = true
	return out
}

// Noop reports whether applying would change nothing at all.
func (p Plan) Noop() bool { return !p.Job }

// PlanJob decides what a reconcile job for ex would do, given the status
// left by the previous job.
//
// An item runs when it is new, did not succeed last time, its spec hash
// differs from the one of its last success, a refresh found it drifted,
// or the execution's ReconcileTrigger differs from the one of its last
// success. A changed trigger thus runs every item, and a job that fails
// half-way is resumed with only the items that did not finish. Items with UpdateOnChangeOnly
// false run in every job, but do not start a job by themselves: otherwise
// a plan after a successful apply could never be empty.
func PlanJob(ex Execution, st Status) Plan {
	var p Plan
	var always []string
	var held map[string]bool
	var baking bool
	p.Rollouts, held, baking = planRollouts(ex, st)
	for _, name := range slices.Sorted(maps.Keys(ex.Items)) {
		spec := ex.Items[name]
		is := st.Items[name]
		switch {
		case held[name]:
			p.Hold = append(p.Hold, name)
		case is == nil || is.Phase != core.PhaseSucceeded || is.AppliedHash != spec.Hash() || is.Drift != "" ||
			is.AppliedTrigger != ex.ReconcileTrigger:
			p.Run = append(p.Run, name)
		case !spec.UpdateOnChangeOnly:
			always = append(always, name)
		default:
			p.Skip = append(p.Skip, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(st.Items)) {
		if _, ok := ex.Items[name]; ok {
			continue
		}
		if st.Items[name].triggered() {
			p.Delete = append(p.Delete, name)
		} else {
			p.Drop = append(p.Drop, name)
		}
	}
	p.Job = len(p.Run) > 0 || len(p.Delete) > 0 || len(p.Drop) > 0 || !st.Succeeded() || baking
	if p.Job {
		p.Run = append(p.Run, always...)
		sort.Strings(p.Run)
	} else {
		p.Skip = append(p.Skip, always...)
		sort.Strings(p.Skip)
	}
	return p
}
