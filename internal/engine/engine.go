package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// Event reports progress. Phase events are emitted once per transition of
// the execution (Item == "") or of an item; Output carries a deployer's
// log line; Retry is set when a transient error will be retried.
type Event struct {
	Execution string
	JobID     string
	Item      string
	Phase     Phase
	// Gone is set when a deleted item has vanished.
	Gone bool
	// Elapsed is measured from the start of the job (execution events) or
	// of the item's run (item events).
	Elapsed time.Duration
	Err     *Error
	Retry   time.Duration
	Output  string
	// Export is the item's new export, on its Succeeded event, so an
	// observer can mask sensitive values in what it logs afterwards.
	Export json.RawMessage
}

// Backoff is the exponential backoff between attempts after a transient error.
type Backoff struct {
	Initial time.Duration
	Max     time.Duration
}

// DefaultBackoff doubles from one second up to thirty.
var DefaultBackoff = Backoff{Initial: time.Second, Max: 30 * time.Second}

// Engine runs jobs. One Engine serves every execution of a provider, so
// Slots bounds the deploy items running at once across all of them.
type Engine struct {
	Deployers *deployer.Registry
	// Slots is a counting semaphore; nil means unbounded.
	Slots   chan struct{}
	Clock   Clock
	Backoff Backoff
	// Observe receives events. It is called from the job's goroutine and
	// from the items' goroutines (deployer output, retries), so it must be
	// safe for concurrent use, and must not block for long.
	Observe func(Event)
}

// New returns an engine with the real clock and default backoff.
func New(reg *deployer.Registry, maxParallelism int) *Engine {
	e := &Engine{Deployers: reg, Clock: RealClock{}, Backoff: DefaultBackoff}
	if maxParallelism > 0 {
		e.Slots = make(chan struct{}, maxParallelism)
	}
	return e
}

// errItemTimeout is the cancel cause when an item exceeds its own timeout.
var errItemTimeout = errors.New("deploy item timeout")

// job is the state of one reconcile or delete job of one execution.
type job struct {
	e     *Engine
	exec  string
	id    string
	start time.Time
	st    *Status
}

func (e *Engine) newJob(name, jobID string, st *Status) *job {
	return &job{e: e, exec: name, id: jobID, start: e.Clock.Now(), st: st}
}

func (j *job) emit(ev Event) {
	if j.e.Observe == nil {
		return
	}
	ev.Execution, ev.JobID = j.exec, j.id
	j.e.Observe(ev)
}

func (j *job) setPhase(p Phase) {
	j.st.Phase = p
	j.emit(Event{Phase: p, Elapsed: j.e.Clock.Now().Sub(j.start), Err: j.st.LastError})
}

func (j *job) fail(p Phase, err *Error) {
	j.st.LastError = err
	j.setPhase(p)
	j.st.JobIDFinished = j.id
}

// Reconcile runs one reconcile job of ex: Init (orphans deleted, items
// created or updated), Progressing (items triggered in dependency order),
// Completing. It always returns the complete resulting status, also when
// items failed or ctx was cancelled, so the caller can persist the truth.
func (e *Engine) Reconcile(ctx context.Context, ex Execution, prev Status, jobID string) Status {
	st := prev.Clone()
	st.JobID, st.LastError = jobID, nil
	j := e.newJob(ex.Name, jobID, &st)
	plan := PlanJob(ex, prev)

	j.setPhase(PhaseInit)
	for _, name := range plan.Drop {
		delete(st.Items, name)
	}
	if len(plan.Delete) > 0 {
		if err := j.deleteItems(ctx, plan.Delete, OperationReconcile); err != nil {
			j.fail(PhaseFailed, err)
			return st
		}
	}
	for name, spec := range ex.Items {
		is := st.Items[name]
		if is == nil {
			is = &ItemStatus{Phase: PhaseInit}
			st.Items[name] = is
		}
		is.Spec = spec
	}

	j.setPhase(PhaseProgressing)
	if err := j.progress(ctx, plan.Run); err != nil {
		j.fail(PhaseFailed, err)
		return st
	}
	// Completing: exports are already on the items; nothing else to collect.
	j.setPhase(PhaseCompleting)
	j.st.JobIDFinished = jobID
	j.setPhase(PhaseSucceeded)
	return st
}

// Delete runs a delete job: every item is deleted after all items that
// depend on it are gone. Items that could not be deleted stay in the
// returned status; an empty Items map means the execution is gone.
func (e *Engine) Delete(ctx context.Context, name string, prev Status, jobID string) Status {
	st := prev.Clone()
	st.JobID, st.LastError = jobID, nil
	j := e.newJob(name, jobID, &st)
	j.setPhase(PhaseInitDelete)
	var names []string
	for n, is := range st.Items {
		if is.triggered() {
			names = append(names, n)
		} else {
			delete(st.Items, n)
		}
	}
	j.setPhase(PhaseDeleting)
	if err := j.deleteItems(ctx, names, OperationDelete); err != nil {
		j.fail(PhaseDeleteFailed, err)
		return st
	}
	st.JobIDFinished = jobID
	j.emit(Event{Gone: true, Elapsed: e.Clock.Now().Sub(j.start)})
	return st
}

// progress triggers the items in run once their predecessors succeeded.
// Items outside run are class A already (unchanged and Succeeded).
func (j *job) progress(ctx context.Context, run []string) *Error {
	g := newGraph(run)
	for i, name := range g.names {
		for _, dep := range j.st.Items[name].Spec.DependsOn {
			if k, ok := g.index[dep]; ok {
				g.wait(i, k)
			} else if d := j.st.Items[dep]; d == nil || d.Phase != PhaseSucceeded {
				// Only possible when validation was bypassed; it makes the
				// item permanently pending, which progress reports as stuck.
				g.pending[i]++
			}
		}
	}
	out := j.drive(ctx, g, deployer.OperationReconcile)
	return j.outcome(ctx, g, out, OperationReconcile, PhaseFailed)
}

// deleteItems deletes names in reverse dependency order.
func (j *job) deleteItems(ctx context.Context, names []string, op string) *Error {
	sort.Strings(names)
	g := newGraph(names)
	for i, name := range g.names {
		for _, dep := range j.st.Items[name].Spec.DependsOn {
			if k, ok := g.index[dep]; ok {
				g.wait(k, i) // the dependency waits for its dependant to be gone
			}
		}
	}
	out := j.drive(ctx, g, deployer.OperationDelete)
	return j.outcome(ctx, g, out, op, PhaseDeleteFailed)
}

// outcome turns the result of a drive into the execution's error, if any:
// an interruption, failed items, or (only when validation was bypassed) a
// graph on which nothing could make progress.
func (j *job) outcome(ctx context.Context, g *graph, out driveResult, op string, failPhase Phase) *Error {
	var failed, notRun []string
	var codes []string
	for _, i := range out.failed {
		failed = append(failed, g.names[i])
		codes = append(codes, j.st.Items[g.names[i]].LastError.Codes...)
	}
	for i, name := range g.names {
		if !out.triggered[i] {
			notRun = append(notRun, name)
		}
	}
	if len(failed) == 0 && len(notRun) == 0 {
		return nil
	}
	err := &Error{Operation: op}
	var parts []string
	switch {
	case ctx.Err() != nil:
		err.Reason, err.Codes = interruption(ctx)
		parts = append(parts, "the job was stopped before it finished")
	case len(failed) > 0:
		err.Reason = "DeployItemsFailed"
	default:
		err.Reason = "Stuck"
		err.Codes = []string{deployer.CodeCyclicDependencies}
		parts = append(parts, "no deploy item can make progress; check depends_on for cycles or missing items")
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		parts = append(parts, fmt.Sprintf("deploy items in phase %s: %s", failPhase, strings.Join(failed, ", ")))
	}
	if len(notRun) > 0 {
		verb := "not run"
		if failPhase == PhaseDeleteFailed {
			verb = "not deleted"
		}
		parts = append(parts, fmt.Sprintf("%s: %s", verb, strings.Join(notRun, ", ")))
	}
	err.Message = strings.Join(parts, "; ")
	err.Codes = append(err.Codes, codes...)
	slices.Sort(err.Codes)
	err.Codes = slices.Compact(err.Codes)
	return err
}

// interruption names why ctx ended: the operation's deadline, or a stop.
func interruption(ctx context.Context) (string, []string) {
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return "Timeout", []string{deployer.CodeTimeout}
	}
	return "Interrupted", []string{deployer.CodeInterrupted}
}
