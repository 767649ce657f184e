package installation

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/rollout"
)

// Plan says what a job would do to one installation and its subtree. The
// provider shows it in `terraform plan`; apply renders the tree again and
// follows the same rules, so both agree.
type Plan struct {
	Path string
	// Known is false when the node's imports come from a sibling that will
	// run: what it renders is known only once that sibling has run.
	Known bool
	// Job is what the node's execution would do.
	Job engine.Plan
	// Subs are the sub-installations' plans, in the blueprint's order.
	Subs []*Plan
	// Orphans are sub-installations that will be deleted with their subtrees.
	Orphans []string
	// Noop is set when nothing in the subtree would change; Exports are
	// then the exports it keeps.
	Noop    bool
	Exports Exports
	// Warnings are what rendering the node warned about.
	Warnings []string
	// Imports and Items are what the node was rendered from and into,
	// when Known: its resolved imports and its execution's deploy items.
	// They let a caller show a rendered tree without running it.
	Imports Imports
	Items   map[string]engine.ItemSpec
	// Resources serves the node's component resources to its items, as
	// a run hands them down (engine.Run.Resources).
	Resources deployer.ResourceResolver
	// SubRollouts are the rollout decisions of the node's groups of
	// sub-installations, by group name; held sub-installations plan to
	// stay as they are.
	SubRollouts map[string]rollout.Decision
	// SubMembers are the members (target keys) of those groups.
	SubMembers []string
	// Kept is set for a sub-installation a rollout holds: its Items are
	// what it ran before, not rendered now.
	Kept bool
	// NewSubMembers is set when a member sub-installation has never run:
	// until it does, what it renders is not known, and a rollout may
	// hold it past this job.
	NewSubMembers bool
}

// AllKnown reports whether every node of the plan was rendered.
func (p *Plan) AllKnown() bool {
	if !p.Known {
		return false
	}
	for _, s := range p.Subs {
		if !s.AllKnown() {
			return false
		}
	}
	return true
}

// Walk calls f for every node of the plan, parents first.
func (p *Plan) Walk(f func(*Plan)) {
	f(p)
	for _, s := range p.Subs {
		s.Walk(f)
	}
}

// PathError is a plan-time error of the installation at Path.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("sub-installation %q: %s", e.Path, e.Err)
}

func (e *PathError) Unwrap() error { return e.Err }

// PlanTree renders the tree from the root's blueprint and imports, as far
// as it can be known before anything runs, and compares it with prev. s
// is the rollout strategy, or nil.
func PlanTree(ctx context.Context, bp Blueprint, imp Imports, prev *Status, reconcileTrigger string, s *rollout.Strategy) (*Plan, error) {
	return planNode(ctx, "", bp, imp, prev, reconcileTrigger, s)
}

func planNode(ctx context.Context, path string, bp Blueprint, imp Imports, prev *Status, trigger string, s *rollout.Strategy) (*Plan, error) {
	var state map[string][]byte
	if prev != nil {
		state = prev.State
	}
	rendered, err := bp.Render(ctx, Input{Path: path, Imports: imp, State: state})
	if err != nil {
		return nil, &PathError{Path: path, Err: err}
	}
	deps, err := siblingOrder(rendered.Subs)
	if err != nil {
		return nil, &PathError{Path: path, Err: err}
	}
	p := &Plan{Path: path, Known: true, Warnings: rendered.Warnings, Imports: imp, Items: rendered.Items, Resources: rendered.Resources}
	var prevEx engine.Status
	var prevSubs map[string]*Status
	if prev != nil {
		prevEx, prevSubs = prev.Execution, prev.Subs
	}
	p.Job = engine.PlanJob(execution("", rendered.Items, imp, trigger, s), prevEx)
	for _, name := range slices.Sorted(maps.Keys(prevSubs)) {
		if _, ok := deps[name]; !ok {
			p.Orphans = append(p.Orphans, name)
		}
	}

	var groups []*subGroup
	if s != nil {
		groups = decideSubs(ctx, path, rendered.Subs, deps, rendered.Items, imp, rendered.Defaults, InputHash(bp, imp), prev, trigger, s)
	}
	for _, g := range groups {
		if p.SubRollouts == nil {
			p.SubRollouts = map[string]rollout.Decision{}
		}
		p.SubRollouts[g.name] = g.d
		for k, subs := range g.members {
			if !slices.Contains(p.SubMembers, k) {
				p.SubMembers = append(p.SubMembers, k)
			}
			for _, sub := range subs {
				p.NewSubMembers = p.NewSubMembers || prevSubs[sub] == nil
			}
		}
	}
	held := heldSubs(groups)
	sc := newScope(imp, rendered.Defaults)
	plans := map[string]*Plan{}
	for _, sub := range topological(rendered.Subs, deps) {
		subPath := Join(path, sub.Name)
		ready := true
		for _, d := range deps[sub.Name] {
			ready = ready && plans[d].Noop
		}
		var sp *Plan
		if imp, err := sc.importsOf(sub); held[sub.Name] {
			sp = keptPlan(subPath, prevSubs[sub.Name])
		} else if !ready {
			sp = &Plan{Path: subPath}
		} else if err != nil {
			return nil, &PathError{Path: subPath, Err: err}
		} else if sp, err = planNode(ctx, subPath, sub.Blueprint, imp, prevSubs[sub.Name], trigger, s); err != nil {
			return nil, err
		}
		plans[sub.Name] = sp
		if sp.Noop {
			sc.add(sub, sp.Exports)
		}
	}
	noop := !p.Job.Job && len(p.Orphans) == 0 && prev.Succeeded() && prev.InputHash == InputHash(bp, imp) &&
		prev.ReconcileTrigger == trigger
	for _, sub := range rendered.Subs {
		p.Subs = append(p.Subs, plans[sub.Name])
		noop = noop && plans[sub.Name].Noop
	}
	if p.Noop = noop; noop {
		p.Exports = prev.Exports
	}
	return p, nil
}

// topological returns subs so that every sub comes after the siblings it
// imports from; siblingOrder has ruled out cycles.
func topological(subs []Sub, deps map[string][]string) []Sub {
	done := map[string]bool{}
	out := make([]Sub, 0, len(subs))
	for len(out) < len(subs) {
		for _, s := range subs {
			if done[s.Name] {
				continue
			}
			ready := true
			for _, d := range deps[s.Name] {
				ready = ready && done[d]
			}
			if ready {
				done[s.Name] = true
				out = append(out, s)
			}
		}
	}
	return out
}
