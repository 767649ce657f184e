package engine

import (
	"context"
	"sync"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// PreviewTimeout bounds the dry run of one item: a plan must not hang on
// a cluster that does not answer.
const PreviewTimeout = 20 * time.Second

// Preview is what a dry run of one item found: the changes on its target,
// or why it could not tell.
type Preview struct {
	Changes []deployer.ObjectChange
	Err     error
}

// Preview asks the deployers of the named items of ex, those a job would
// run, what they would change (deployer.Previewer), as the job would call
// them: same config, target, stored state and resources. Items whose
// deployer cannot tell are left out. The calls run in parallel, within
// max_parallelism, each bounded by PreviewTimeout.
func (e *Engine) Preview(ctx context.Context, name string, ex Execution, prev Status, run Run, items []string) map[string]Preview {
	out := map[string]Preview{}
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for _, item := range items {
		spec, ok := ex.Items[item]
		if !ok {
			continue
		}
		d, _ := e.Deployers.Get(spec.Type)
		pv, can := d.(deployer.Previewer)
		if !can {
			continue
		}
		var state []byte
		var adopt *deployer.Adoption
		if is := prev.Items[item]; is != nil {
			state, adopt = is.State, is.Adopt
		}
		tgt, err := e.target(spec.Target)
		if err != nil {
			mu.Lock()
			out[item] = Preview{Err: err}
			mu.Unlock()
			continue
		}
		req := deployer.Request{
			Operation: core.OperationReconcile, Execution: name, Item: item, JobID: run.JobID,
			Config: spec.Config, Target: tgt, State: state, Attempt: 1, Adopt: adopt,
			ComponentDescriptor: spec.ComponentDescriptor, Content: spec.Content, Resources: run.Resources,
		}
		e.goWithSlot(&wg, func() {
			ictx, cancel := context.WithTimeout(ctx, PreviewTimeout)
			defer cancel()
			changes, err := pv.Preview(ictx, req)
			mu.Lock()
			out[item] = Preview{Changes: changes, Err: err}
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}
