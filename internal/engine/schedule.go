package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// graph is the part of the dependency graph one drive works on. pending
// counts, per node, the nodes it still waits for; next lists who waits for
// a node. Keeping counts instead of re-classifying every item on every
// event makes a drive linear in items and edges.
type graph struct {
	names   []string
	index   map[string]int
	pending []int
	next    [][]int
}

func newGraph(names []string) *graph {
	g := &graph{
		names:   names,
		index:   make(map[string]int, len(names)),
		pending: make([]int, len(names)),
		next:    make([][]int, len(names)),
	}
	for i, n := range names {
		g.index[n] = i
	}
	return g
}

// wait records that node i may start only after node k finished.
func (g *graph) wait(i, k int) {
	g.pending[i]++
	g.next[k] = append(g.next[k], i)
}

type driveResult struct {
	failed    []int
	triggered []bool
}

type itemResult struct {
	node    int
	res     deployer.Result
	err     *Error
	elapsed time.Duration
}

// drive is the Progressing (or Deleting) loop of seed 001 in incremental
// form. Class A/B/C are the finished-succeeded, finished-failed and running
// items; D are the nodes in the ready queue; E are nodes with pending > 0.
// It triggers D while there is no B and the context is alive, waits for C
// to drain, and returns. Whatever is still in D or E was not triggered.
func (j *job) drive(ctx context.Context, g *graph, op deployer.Operation) driveResult {
	n := len(g.names)
	out := driveResult{triggered: make([]bool, n)}
	ready := make([]int, 0, n)
	for i := range n {
		if g.pending[i] == 0 {
			ready = append(ready, i)
		}
	}
	results := make(chan itemResult, n)
	running := 0
	stopped := false
	finish := func(r itemResult) {
		running--
		if !j.record(g.names[r.node], op, r) {
			out.failed = append(out.failed, r.node)
			stopped = true
			return
		}
		for _, k := range g.next[r.node] {
			if g.pending[k]--; g.pending[k] == 0 {
				ready = append(ready, k)
			}
		}
	}
	for {
		if ctx.Err() != nil {
			stopped = true
		}
		if !stopped && len(ready) > 0 {
			if j.e.Slots != nil {
				select {
				case j.e.Slots <- struct{}{}:
				case r := <-results:
					finish(r)
					continue
				case <-ctx.Done():
					continue
				}
				// select picks at random among ready cases: a slot may
				// come with a stop, and then nothing must start.
				if ctx.Err() != nil {
					<-j.e.Slots
					continue
				}
			}
			i := ready[0]
			ready = ready[1:]
			out.triggered[i] = true
			running++
			j.trigger(ctx, g.names[i], i, op, results)
			continue
		}
		if running == 0 {
			return out
		}
		finish(<-results)
	}
}

// trigger hands the current job to one item: its phase moves on and a
// goroutine runs its deployer.
func (j *job) trigger(ctx context.Context, name string, node int, op deployer.Operation, results chan<- itemResult) {
	is := j.st.Items[name]
	phase := PhaseProgressing
	if op == deployer.OperationDelete {
		phase = PhaseDeleting
	}
	is.Phase = phase
	j.emit(Event{Item: name, Phase: phase})
	spec, state := is.Spec, is.State
	go func() {
		r := j.runItem(ctx, name, spec, state, op)
		r.node = node
		if j.e.Slots != nil {
			<-j.e.Slots
		}
		results <- r
	}()
}

// record writes an item's result into the status. It runs on the drive's
// goroutine only, so the status has a single writer. It reports success.
func (j *job) record(name string, op deployer.Operation, r itemResult) bool {
	is := j.st.Items[name]
	ev := Event{Item: name, Elapsed: r.elapsed}
	if r.err == nil && op == deployer.OperationDelete {
		delete(j.st.Items, name)
		ev.Gone = true
		j.emit(ev)
		return true
	}
	is.JobIDFinished = j.id
	is.State = r.res.State
	if r.res.ProviderStatus != nil || r.err == nil {
		is.ProviderStatus = r.res.ProviderStatus
	}
	is.LastError = r.err
	switch {
	case r.err != nil && op == deployer.OperationDelete:
		is.Phase = PhaseDeleteFailed
	case r.err != nil:
		// A failed item exports nothing: its last export no longer
		// describes what is installed.
		is.Phase, is.Export = PhaseFailed, nil
	default:
		is.Phase, is.Export, is.AppliedHash = PhaseSucceeded, r.res.Export, is.Spec.Hash()
	}
	ev.Phase, ev.Err, ev.Export = is.Phase, is.LastError, is.Export
	j.emit(ev)
	return r.err == nil
}

// runItem runs one item's deployer until success, a terminal error, the
// item's timeout, or the end of ctx. Transient errors are retried with
// exponential backoff.
func (j *job) runItem(ctx context.Context, name string, spec ItemSpec, state []byte, op deployer.Operation) itemResult {
	clock := j.e.Clock
	start := clock.Now()
	opName := OperationReconcile
	if op == deployer.OperationDelete {
		opName = OperationDelete
	}
	result := func(res deployer.Result, err *Error) itemResult {
		if err != nil {
			err.Operation = opName
		}
		return itemResult{res: res, err: err, elapsed: clock.Now().Sub(start)}
	}

	d, ok := j.e.Deployers.Get(spec.Type)
	if !ok {
		return result(deployer.Result{State: state}, &Error{Reason: "UnknownType",
			Message: fmt.Sprintf("no deployer for type %q", spec.Type), Codes: []string{deployer.CodeConfigurationProblem}})
	}
	ictx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if spec.Timeout > 0 {
		stop := clock.AfterFunc(spec.Timeout, func() { cancel(errItemTimeout) })
		defer stop()
	}
	req := deployer.Request{
		Operation: op, Execution: j.exec, Item: name, JobID: j.id,
		Config: spec.Config, State: state,
		Log: func(msg string) { j.emit(Event{Item: name, Output: msg}) },
	}
	wait := j.e.Backoff.Initial
	for {
		var res deployer.Result
		var err error
		if op == deployer.OperationDelete {
			res, err = d.Delete(ictx, req)
		} else {
			res, err = d.Reconcile(ictx, req)
		}
		req.State = res.State
		if err == nil {
			return result(res, nil)
		}
		de := classify(err)
		if ictx.Err() != nil {
			return result(res, stoppedError(ictx, spec, de))
		}
		if !de.Transient {
			return result(res, toError(de))
		}
		j.emit(Event{Item: name, Err: toError(de), Retry: wait})
		select {
		case <-clock.After(wait):
		case <-ictx.Done():
			return result(res, stoppedError(ictx, spec, de))
		}
		wait = min(2*wait, j.e.Backoff.Max)
	}
}

// classify treats errors a deployer did not classify as transient, the
// safe default of seed 004: they are retried until the item's timeout.
func classify(err error) *deployer.Error {
	var de *deployer.Error
	if errors.As(err, &de) {
		return de
	}
	return deployer.Transient("Error", err.Error())
}

func toError(de *deployer.Error) *Error {
	return &Error{Reason: de.Reason, Message: de.Message, Codes: append([]string(nil), de.Codes...)}
}

// stoppedError explains why a running item was stopped: its own timeout,
// the operation's deadline, or an interrupt (Ctrl-C).
func stoppedError(ctx context.Context, spec ItemSpec, last *deployer.Error) *Error {
	cause := context.Cause(ctx)
	e := &Error{Reason: "Interrupted", Codes: []string{deployer.CodeInterrupted},
		Message: "the operation was interrupted while the deploy item was running"}
	switch {
	case errors.Is(cause, errItemTimeout):
		e.Reason, e.Codes = "Timeout", []string{deployer.CodeTimeout}
		e.Message = fmt.Sprintf("the deploy item did not finish within its timeout of %s", spec.Timeout)
	case errors.Is(cause, context.DeadlineExceeded):
		e.Reason, e.Codes = "Timeout", []string{deployer.CodeTimeout}
		e.Message = "the operation's timeout expired while the deploy item was running"
	}
	if last != nil && last.Message != "" {
		e.Message += "; last error: " + last.Message
	}
	return e
}
