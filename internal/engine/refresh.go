package engine

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// Refresh asks the deployers of an execution's Succeeded items whether
// what they left is still in place, and records what changed as the
// items' Drift, so the next job runs them again. Items of deployers that
// cannot tell are left as they are, and so is an item whose check fails:
// a refresh that cannot look is no evidence of drift; so are items whose
// stored config is withheld (ItemSpec.Withheld). changed reports
// whether any item's Drift changed.
func (e *Engine) Refresh(ctx context.Context, name string, prev Status) (st Status, changed bool) {
	st = prev.Clone()
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for _, item := range slices.Sorted(maps.Keys(st.Items)) {
		is := st.Items[item]
		d, ok := e.Deployers.Get(is.Spec.Type)
		dc, canCheck := d.(deployer.DriftChecker)
		if !ok || !canCheck || is.Phase != core.PhaseSucceeded || is.Drift != "" || is.Spec.Withheld {
			// A withheld config is not what the item ran with: compared
			// with the cluster, it would read as drift.
			continue
		}
		tgt, err := e.target(is.Spec.Target)
		if err != nil {
			// Without its target nothing can be checked; the plan says
			// which provider target is missing.
			continue
		}
		req := deployer.Request{
			Operation: core.OperationReconcile, Execution: name, Item: item, JobID: is.JobIDFinished,
			Config: is.Spec.Config, Target: tgt, State: is.State,
		}
		last := deployer.Result{ProviderStatus: is.ProviderStatus, Export: is.Export, State: is.State}
		e.goWithSlot(&wg, func() {
			drift, err := dc.Drift(ctx, req, last)
			if err != nil || drift == "" {
				return
			}
			mu.Lock()
			is.Drift, changed = drift, true
			mu.Unlock()
		})
	}
	wg.Wait()
	return st, changed
}

// goWithSlot runs f in a goroutine counted by wg that holds a
// max_parallelism slot while it runs: checks that talk to clusters share
// the bound of the runs that do.
func (e *Engine) goWithSlot(wg *sync.WaitGroup, f func()) {
	if e.Slots != nil {
		e.Slots <- struct{}{}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if e.Slots != nil {
			defer func() { <-e.Slots }()
		}
		f()
	}()
}
