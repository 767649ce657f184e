package installation

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/rollout"
)

// Rollouts in an installation. A blueprint that ranges over a target map
// (or list) renders the same deploy items once per target; those renders
// are the members of a rollout. A node's items that target an element of
// one of its target map or list imports form a group named after that
// import, and each element's key (a list's index) is a member, made of
// every item rendered for it. The engine then moves members the way it
// moves an execution's rollout groups.

// execution is the engine's view of a node's items under the runner's
// trigger and rollout strategy.
func execution(name string, items map[string]engine.ItemSpec, imp Imports, trigger string, s *rollout.Strategy) engine.Execution {
	ex := engine.Execution{Name: name, Items: items, ReconcileTrigger: trigger}
	if s == nil {
		return ex
	}
	groups, members := map[string]string{}, map[string]string{}
	for n, spec := range items {
		if coll, key, ok := ElementOf(spec.TargetRef, imp); ok {
			groups[n], members[n] = coll, key
		}
	}
	if len(groups) > 0 {
		ex.Groups, ex.Members, ex.Rollout = groups, members, s
	}
	return ex
}

// ElementOf splits an item's target reference "clusters[eu]" into the
// target map or list import it names and the key (index) of its element,
// when imp has such an import.
func ElementOf(ref string, imp Imports) (coll, key string, ok bool) {
	coll, key, ok = Indexed(ref)
	if !ok {
		return "", "", false
	}
	if _, isMap := imp.TargetMaps[coll]; isMap {
		return coll, key, true
	}
	if _, isList := imp.TargetLists[coll]; isList {
		return coll, key, true
	}
	return "", "", false
}

// Members lists the members of the rollout groups of every rendered node
// of the plan, items' and sub-installations' (target keys and list
// indexes), sorted and once each.
func (p *Plan) Members() []string {
	seen := map[string]bool{}
	p.Walk(func(n *Plan) {
		for _, spec := range n.Items {
			if _, key, ok := ElementOf(spec.TargetRef, n.Imports); ok {
				seen[key] = true
			}
		}
		for _, k := range n.SubMembers {
			seen[k] = true
		}
	})
	return slices.Sorted(maps.Keys(seen))
}

// rolloutOutcome says whether a node's job ended short only because of
// rollouts: its execution's error, if any, is a rollout's stop, stops
// are what its sub-installation groups say, and every sub-installation
// that did not succeed in this job stopped for a rollout of its own.
// Siblings that import from a waiting one wait with it. It returns the
// node's error then, and whether a canary failed (the node fails) rather
// than the rollout waits (the node is still progressing).
func rolloutOutcome(st *Status, jobID string, subErr *core.Error, stops []string) (e *core.Error, failed, ok bool) {
	var parts []string
	if e := st.Execution.LastError; e != nil {
		if !rolloutReason(e.Reason) {
			return nil, false, false
		}
		failed = e.Reason == engine.ReasonCanaryFailed
		parts = append(parts, "execution: "+e.Message)
	}
	if subErr != nil {
		for _, n := range slices.Sorted(maps.Keys(st.Subs)) {
			s := st.Subs[n]
			if s.JobIDFinished != jobID || s.Succeeded() {
				continue
			}
			if s.LastError == nil || !rolloutReason(s.LastError.Reason) {
				return nil, false, false
			}
			failed = failed || s.LastError.Reason == engine.ReasonCanaryFailed
			parts = append(parts, fmt.Sprintf("sub-installation %s: %s", n, s.LastError.Message))
		}
	}
	for _, g := range st.Rollouts {
		failed = failed || g.Phase == rollout.PhaseCanaryFailed || g.Reason == rollout.ReasonBatchFailed
	}
	parts = append(parts, stops...)
	if len(parts) == 0 {
		return nil, false, false
	}
	reason := engine.ReasonRolloutStopped
	if failed {
		reason = engine.ReasonCanaryFailed
	}
	return &core.Error{Operation: core.OperationReconcile, Reason: reason,
		Message: strings.Join(parts, "; "), Codes: []string{core.CodeForInfoOnly}}, failed, true
}

func rolloutReason(r string) bool {
	return r == engine.ReasonRolloutStopped || r == engine.ReasonCanaryFailed
}
