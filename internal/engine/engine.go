package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/dag"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// Event reports progress. Phase events are emitted once per transition of
// the execution (Item == "") or of an item; Output carries a deployer's
// log line; Retry is set when a transient error will be retried.
type Event struct {
	Execution string
	JobID     string
	Item      string
	Phase     core.Phase
	// Gone is set when a deleted item has vanished.
	Gone bool
	// Elapsed is measured from the start of the job (execution events) or
	// of the item's run (item events).
	Elapsed time.Duration
	Err     *core.Error
	// Retry is the wait before the next attempt after Err, and RetryAt
	// that attempt's time; Attempt counts the attempt that failed.
	Retry   time.Duration
	RetryAt time.Time
	Attempt int
	// Requeue is set when a deployer asked to be called again later
	// because its work is not finished yet.
	Requeue time.Duration
	// Waiting is set on an item's periodic report while it waits (every
	// Engine.WaitReport): what it still waits for, as its deployer said,
	// possibly empty. Elapsed is how long the item has run.
	Waiting *string
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

// DefaultUnreachableGrace is how long an item goes on retrying while a
// host it needs does not resolve or refuses connections
// (core.Error.Unreachable), where Landscaper retries until the item's
// timeout: long enough for an API server that restarts or a DNS record
// just published, short enough that a mistyped host fails in a minute
// rather than at the timeout, ten by default. With DefaultBackoff that is
// seven attempts.
const DefaultUnreachableGrace = time.Minute

// Engine runs jobs. One Engine serves every execution of a provider, so
// Slots bounds the deploy items running at once across all of them.
type Engine struct {
	Deployers *deployer.Registry
	// Slots is a counting semaphore; nil means unbounded.
	Slots   chan struct{}
	Clock   Clock
	Backoff Backoff
	// UnreachableGrace bounds the retries of an item whose errors all say
	// a host is unreachable (core.Error.Unreachable); zero means
	// DefaultUnreachableGrace.
	UnreachableGrace time.Duration
	// HealthCommand runs a rollout's health command; nil means
	// rollout.RunCommand. Tests replace it.
	HealthCommand func(ctx context.Context, command, env []string, limit time.Duration) error
	// Targets resolves targets that name one the provider defines
	// (deployer.Target.Ref): their configs are kept nowhere else, and
	// are handed to a deployer for its call only. Nil resolves none.
	Targets func(ref string) (*deployer.Target, bool)
	// Allowed, when set, says whether items of a deployer type may run;
	// a job with an item it refuses fails before anything runs.
	Allowed func(typ string) error
	// WaitReport is how often an item that waits (objects not ready)
	// reports what it still waits for; zero means DefaultWaitReport,
	// negative never.
	WaitReport time.Duration
}

// refused is the error of the first item whose type Allowed refuses: of
// the items in run, by their spec in ex, then of the items in del (which
// a job deletes), by the spec they last had in prev. Deleting runs a
// deployer as reconciling does (an exec item's command runs with
// OPERATION=DELETE), so a type no longer allowed may not delete either.
func (e *Engine) refused(ex Execution, run []string, prev Status, del []string) *core.Error {
	if e.Allowed == nil {
		return nil
	}
	for _, n := range slices.Sorted(slices.Values(run)) {
		if err := e.Allowed(ex.Items[n].Type); err != nil {
			return core.Terminal("DeployerNotAllowed", fmt.Sprintf("deploy item %q: %v", n, err), core.CodeConfigurationProblem)
		}
	}
	for _, n := range slices.Sorted(slices.Values(del)) {
		if is := prev.Items[n]; is != nil {
			if err := e.Allowed(is.Spec.Type); err != nil {
				return core.Terminal("DeployerNotAllowed", fmt.Sprintf("deploy item %q cannot be deleted: %v", n, err), core.CodeConfigurationProblem)
			}
		}
	}
	return nil
}

// withheld is the error of the first item of del (items a job deletes,
// by the spec they last had in prev) whose stored config is withheld
// (ItemSpec.Withheld) and whose deployer cannot delete from such a config
// (deployer.Sealer): its delete would run with masked values.
func (e *Engine) withheld(prev Status, del []string) *core.Error {
	for _, n := range slices.Sorted(slices.Values(del)) {
		is := prev.Items[n]
		if is == nil || !is.Spec.Withheld {
			continue
		}
		d, _ := e.Deployers.Get(is.Spec.Type)
		if _, ok := d.(deployer.Sealer); !ok {
			return core.Terminal("ConfigWithheld", fmt.Sprintf("deploy item %q cannot be deleted: a secret that is kept "+
				"nowhere influenced its config, and its deployer (%s) would need the config it ran with", n, is.Spec.Type),
				core.CodeConfigurationProblem)
		}
	}
	return nil
}

// TargetError says that a deploy item's target names a provider target
// that is not defined.
type TargetError struct{ Ref string }

func (e *TargetError) Error() string {
	return fmt.Sprintf("the provider defines no target %q: define it in the provider's targets again "+
		"(its config is kept nowhere else)", e.Ref)
}

// target is t as a deployer gets it: a provider's target with its config.
func (e *Engine) target(t *deployer.Target) (*deployer.Target, error) {
	if t == nil || t.Ref == "" {
		return t, nil
	}
	var r *deployer.Target
	ok := false
	if e.Targets != nil {
		r, ok = e.Targets(t.Ref)
	}
	if !ok || r == nil {
		return nil, &TargetError{Ref: t.Ref}
	}
	c := *t
	c.Config = r.Config
	return &c, nil
}

// DefaultWaitReport is how often a waiting item says what it waits for:
// often enough that a long apply never goes quiet at TF_LOG=INFO, rarely
// enough that it does not flood it.
const DefaultWaitReport = 30 * time.Second

// New returns an engine with the real clock and default backoff.
func New(reg *deployer.Registry, maxParallelism int) *Engine {
	e := &Engine{Deployers: reg, Clock: RealClock{}, Backoff: DefaultBackoff}
	if maxParallelism > 0 {
		e.Slots = make(chan struct{}, maxParallelism)
	}
	return e
}

// Run says how one call runs: under which job, and who hears about it.
type Run struct {
	// JobID is the job this call works for; a parent hands its own down.
	// Empty means a new job with a fresh ID, if anything runs at all.
	JobID string
	// Observe receives the call's events, or nil. It is called from the
	// job's goroutine and from the items' goroutines (deployer output,
	// retries), so it must be safe for concurrent use and must not block
	// for long.
	Observe func(Event)
	// Resources is handed to every deploy item's deployer (see
	// deployer.Request.Resources); nil when the items have no component.
	Resources deployer.ResourceResolver
}

// Apply brings an execution to ex. It asks PlanJob what a job would do;
// when that is nothing, no job starts and only the recorded specs follow
// ex (an edge or a timeout changed). Otherwise it runs a reconcile job.
// It always returns the complete resulting status, also when items failed
// or ctx was cancelled, so the caller can persist the truth.
func (e *Engine) Apply(ctx context.Context, ex Execution, prev Status, run Run) Status {
	if plan := PlanJob(ex, prev); plan.Noop() {
		return Settle(ex, prev, plan)
	}
	return e.Reconcile(ctx, ex, prev, run)
}

// Settle is the status an apply leaves when plan starts no job: the
// recorded specs follow ex (an edge or a timeout changed), and rollouts
// follow the configuration (removed, or added to members that already
// run their specs). Plans show it, so it is one function.
func Settle(ex Execution, prev Status, plan Plan) Status {
	st := prev.Clone()
	for n, spec := range ex.Items {
		if !slices.Contains(plan.Hold, n) {
			st.Items[n].Spec = spec
		}
	}
	if plan.Rollouts == nil {
		st.Rollouts = nil
	}
	for g, d := range plan.Rollouts {
		if st.Rollouts == nil {
			st.Rollouts = map[string]*RolloutStatus{}
		}
		if st.Rollouts[g] == nil {
			st.Rollouts[g] = &RolloutStatus{State: *d.State}
		}
	}
	for g := range st.Rollouts {
		if _, ok := plan.Rollouts[g]; !ok {
			delete(st.Rollouts, g)
		}
	}
	return st
}

// Destroy runs a delete job: every item is deleted after all items that
// depend on it are gone. Items that could not be deleted stay in the
// returned status; an empty Items map means the execution is gone.
func (e *Engine) Destroy(ctx context.Context, name string, prev Status, run Run) Status {
	st := prev.Clone()
	j := e.newJob(name, run, &st)
	j.setPhase(core.PhaseInitDelete)
	names := prev.DeletedOnDestroy()
	err := e.refused(Execution{}, nil, prev, names)
	if err == nil {
		err = e.withheld(prev, names)
	}
	if err != nil {
		// Nothing is deleted, nor forgotten: the provider refuses the
		// delete as a whole, as its plan did.
		err.Operation = core.OperationDelete
		j.fail(core.PhaseDeleteFailed, err)
		return st
	}
	for n, is := range st.Items {
		if !is.triggered() {
			delete(st.Items, n)
		}
	}
	j.setPhase(core.PhaseDeleting)
	if err := j.deleteItems(ctx, names, core.OperationDelete); err != nil {
		j.fail(core.PhaseDeleteFailed, err)
		return st
	}
	st.JobIDFinished = j.id
	j.emit(Event{Gone: true, Elapsed: e.Clock.Now().Sub(j.start)})
	return st
}

// errItemTimeout is the cancel cause when an item exceeds its own timeout.
var errItemTimeout = errors.New("deploy item timeout")

// job is the state of one reconcile or delete job of one execution.
type job struct {
	e       *Engine
	exec    string
	id      string
	observe func(Event)
	res     deployer.ResourceResolver
	start   time.Time
	st      *Status
	// trigger is the ReconcileTrigger the job runs for.
	trigger string
}

func (e *Engine) newJob(name string, run Run, st *Status) *job {
	id := run.JobID
	if id == "" {
		id = uuid.NewString()
	}
	st.JobID, st.LastError = id, nil
	return &job{e: e, exec: name, id: id, observe: run.Observe, res: run.Resources, start: e.Clock.Now(), st: st}
}

func (j *job) emit(ev Event) {
	if j.observe == nil {
		return
	}
	ev.Execution, ev.JobID = j.exec, j.id
	j.observe(ev)
}

func (j *job) setPhase(p core.Phase) {
	j.st.Phase = p
	j.emit(Event{Phase: p, Elapsed: j.e.Clock.Now().Sub(j.start), Err: j.st.LastError})
}

func (j *job) fail(p core.Phase, err *core.Error) {
	// newJob cleared the previous error, so this is the job's first one.
	err.Stamp(nil, j.e.Clock.Now())
	j.st.LastError = err
	j.setPhase(p)
	j.st.JobIDFinished = j.id
}

// Reconcile runs one reconcile job of ex, whether or not PlanJob asks for
// one: Init (orphans deleted, items created or updated), Progressing
// (items triggered in dependency order), Completing.
func (e *Engine) Reconcile(ctx context.Context, ex Execution, prev Status, run Run) Status {
	st := prev.Clone()
	j := e.newJob(ex.Name, run, &st)
	j.trigger = ex.ReconcileTrigger
	plan := PlanJob(ex, prev)

	j.setPhase(core.PhaseInit)
	err := e.refused(ex, plan.Run, prev, plan.Delete)
	if err == nil {
		err = e.withheld(prev, plan.Delete)
	}
	if err != nil {
		// Nothing runs, not even the deletion of orphans: the provider
		// refuses the execution as a whole, as its plan did.
		err.Operation = core.OperationReconcile
		j.fail(core.PhaseFailed, err)
		return st
	}
	for _, name := range plan.Drop {
		delete(st.Items, name)
	}
	if len(plan.Delete) > 0 {
		if err := j.deleteItems(ctx, plan.Delete, core.OperationReconcile); err != nil {
			j.fail(core.PhaseFailed, err)
			return st
		}
	}
	j.startRollouts(ex, plan)
	for name, spec := range ex.Items {
		is := st.Items[name]
		if is == nil {
			is = &ItemStatus{Phase: core.PhaseInit}
			st.Items[name] = is
		} else if plan.Rollouts != nil && ex.Groups[name] != "" {
			continue // a member keeps the spec it runs until its stage runs
		}
		is.Spec = spec
	}

	j.setPhase(core.PhaseProgressing)
	if plan.Rollouts != nil {
		if err := j.rollout(ctx, ex, plan); err != nil {
			if err.Reason == ReasonRolloutStopped {
				// The items are fine; the rollout waits for the user.
				err.Operation = core.OperationReconcile
				err.Stamp(nil, j.e.Clock.Now())
				st.LastError = err
				st.JobIDFinished = j.id
				j.setPhase(core.PhaseProgressing)
				return st
			}
			j.fail(core.PhaseFailed, err)
			return st
		}
	} else if err := j.progress(ctx, plan.Run); err != nil {
		j.fail(core.PhaseFailed, err)
		return st
	}
	// Completing: exports are already on the items; nothing else to collect.
	j.setPhase(core.PhaseCompleting)
	j.st.JobIDFinished = j.id
	j.setPhase(core.PhaseSucceeded)
	return st
}

// progress triggers the items in run once their predecessors succeeded.
// Items outside run are class A already (unchanged and Succeeded).
func (j *job) progress(ctx context.Context, run []string) *core.Error {
	g := dag.New(run)
	for i, name := range run {
		for _, dep := range j.st.Items[name].Spec.DependsOn {
			if k, ok := g.Index(dep); ok {
				g.Wait(i, k)
			} else if d := j.st.Items[dep]; d == nil || d.Phase != core.PhaseSucceeded {
				// Only possible when validation was bypassed; it makes the
				// item permanently pending, which progress reports as stuck.
				g.Block(i)
			}
		}
	}
	out := dag.Drive(ctx, g, j.runner(g, core.OperationReconcile))
	return j.outcome(ctx, g, out, core.OperationReconcile, core.PhaseFailed)
}

// deleteItems deletes names in reverse dependency order.
func (j *job) deleteItems(ctx context.Context, names []string, op core.Operation) *core.Error {
	slices.Sort(names)
	g := dag.New(names)
	for i, name := range names {
		for _, dep := range j.st.Items[name].Spec.DependsOn {
			if k, ok := g.Index(dep); ok {
				g.Wait(k, i) // the dependency waits for its dependant to be gone
			}
		}
	}
	out := dag.Drive(ctx, g, j.runner(g, core.OperationDelete))
	return j.outcome(ctx, g, out, op, core.PhaseDeleteFailed)
}

// runner runs deploy items as nodes of g: trigger moves an item's phase
// on, run calls its deployer, finish records the result.
func (j *job) runner(g *dag.Graph, op core.Operation) dag.Runner[itemResult] {
	phase := core.PhaseProgressing
	if op == core.OperationDelete {
		phase = core.PhaseDeleting
	}
	// What a run needs is copied out of the status on the driving
	// goroutine, when the item is triggered: the status map is written
	// there while items run.
	type input struct {
		spec  ItemSpec
		state []byte
		adopt *deployer.Adoption
	}
	inputs := make([]input, g.Len())
	return dag.Runner[itemResult]{
		Slots: j.e.Slots,
		Trigger: func(i int) {
			name := g.Name(i)
			is := j.st.Items[name]
			is.Phase = phase
			inputs[i] = input{is.Spec, is.State, is.Adopt}
			j.emit(Event{Item: name, Phase: phase})
		},
		Run: func(ctx context.Context, i int) itemResult {
			return j.runItem(ctx, g.Name(i), inputs[i].spec, inputs[i].state, inputs[i].adopt, op)
		},
		Finish: func(i int, r itemResult) bool { return j.record(g.Name(i), op, r) },
	}
}

// outcome turns the result of a drive into the execution's error, if any:
// an interruption, failed items, or (only when validation was bypassed) a
// graph on which nothing could make progress.
func (j *job) outcome(ctx context.Context, g *dag.Graph, out dag.Outcome, op core.Operation, failPhase core.Phase) *core.Error {
	var failed, codes []string
	for _, i := range out.Failed {
		failed = append(failed, g.Name(i))
		codes = append(codes, j.st.Items[g.Name(i)].LastError.Codes...)
	}
	notRun := out.NotTriggered(g)
	if len(failed) == 0 && len(notRun) == 0 {
		return nil
	}
	err := &core.Error{Operation: op}
	var parts []string
	switch {
	case ctx.Err() != nil:
		err.Reason, err.Codes = interruption(ctx)
		parts = append(parts, "the job was stopped before it finished")
	case len(failed) > 0:
		err.Reason = "DeployItemsFailed"
	default:
		// Landscaper's execution controller fails such an execution with
		// ERR_FOR_INFO_ONLY ("items could not be started"). Cycles and
		// missing items are rejected at plan time, so this needs a bypass.
		err.Reason = "Stuck"
		err.Codes = []string{core.CodeForInfoOnly}
		parts = append(parts, "items could not be started: none of the pending deploy items can make progress; check the dependencies for cycles or missing items")
	}
	if len(failed) > 0 {
		slices.Sort(failed)
		parts = append(parts, fmt.Sprintf("deploy items in phase %s: %s", failPhase, strings.Join(failed, ", ")))
	}
	if len(notRun) > 0 {
		verb := "not run"
		if failPhase == core.PhaseDeleteFailed {
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
		return core.ReasonProgressingTimeout, []string{core.CodeTimeout}
	}
	return core.ReasonInterruptOperation, []string{core.CodeInterrupted}
}
