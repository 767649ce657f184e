package installation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/dag"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/rollout"
)

// Event reports progress: a phase transition of an installation (Item is
// nil), or an event of an installation's execution.
type Event struct {
	// Path names the installation: "" for the root.
	Path    string
	JobID   string
	Phase   core.Phase
	Elapsed time.Duration
	Err     *core.Error
	// Gone is set when a deleted installation has vanished.
	Gone bool
	Item *engine.Event
}

// Runner runs jobs of one root installation.
type Runner struct {
	// ReconcileTrigger is passed to every node's execution (see
	// engine.Execution): a new value runs every deploy item of the tree.
	ReconcileTrigger string
	Engine           *engine.Engine
	// Name is the root installation's name; executions are named after it
	// and the node's path, so deploy items see which installation they
	// belong to (exec's EXECUTION_NAME).
	Name string
	// Observe receives events from many goroutines; it must be safe for
	// concurrent use and must not block for long. It may be nil.
	Observe func(Event)
	// JobID is the ID Apply runs its job under, such as one a plan
	// announced; empty means a fresh one.
	JobID string
	// Rollout, when set, moves the members of every node's rollout groups
	// (see execution) canary first, then batch by batch.
	Rollout *rollout.Strategy
	// Rendered, when set, is told what each node rendered, before its
	// items run: a log that masks what a secret became learns it first.
	// Called from many goroutines.
	Rendered func(path string, r *Rendered)
}

func (r *Runner) emit(ev Event) {
	if r.Observe != nil {
		r.Observe(ev)
	}
}

// executionName names the execution of the node at path.
func (r *Runner) executionName(path string) string { return ExecutionName(r.Name, path) }

// ExecutionName names the execution of the node at path of the root
// installation name: deploy items see it (exec's EXECUTION_NAME, the
// owner label of Kubernetes objects).
func ExecutionName(name, path string) string {
	if path == "" {
		return name
	}
	return name + "/" + path
}

// InputHash identifies what a node is run from: its imports and its
// blueprint's content. A settled tree whose root's input hash is unchanged
// has nothing to do.
func InputHash(bp Blueprint, imp Imports) string {
	sum := sha256.Sum256([]byte(imp.Hash() + "\x00" + bp.Digest()))
	return hex.EncodeToString(sum[:])
}

// Apply runs one job of the whole tree under a fresh job ID (or r.JobID): every node
// renders its blueprint, deletes orphaned sub-installations, runs its
// execution and its sub-installations, and collects its exports. It
// always returns the complete resulting status, also when parts failed or
// ctx was cancelled, so the caller can persist the truth.
func (r *Runner) Apply(ctx context.Context, bp Blueprint, imp Imports, prev *Status) *Status {
	id := r.JobID
	if id == "" {
		id = uuid.NewString()
	}
	return r.run(ctx, "", bp, imp, prev, id)
}

// node is one installation during a job.
type node struct {
	r     *Runner
	path  string
	jobID string
	start time.Time
	st    *Status
}

func (n *node) setPhase(p core.Phase) {
	n.st.Phase = p
	n.r.emit(Event{Path: n.path, JobID: n.jobID, Phase: p, Elapsed: time.Since(n.start), Err: n.st.LastError})
}

func (n *node) fail(p core.Phase, err *core.Error) *Status {
	n.st.LastError = err
	n.st.JobIDFinished = n.jobID
	n.setPhase(p)
	return n.st
}

// failIn fails the node for what its blueprint said in step.
func (n *node) failIn(step FailedIn, err *core.Error) *Status {
	n.st.FailedIn = step
	return n.fail(core.PhaseFailed, err)
}

func (r *Runner) run(ctx context.Context, path string, bp Blueprint, imp Imports, prev *Status, jobID string) *Status {
	st := prev.Clone()
	if st == nil {
		st = &Status{}
	}
	if st.Subs == nil {
		st.Subs = map[string]*Status{}
	}
	st.JobID, st.LastError, st.FailedIn = jobID, nil, ""
	n := &node{r: r, path: path, jobID: jobID, start: time.Now(), st: st}

	n.setPhase(core.PhaseInit)
	st.ImportsHash = imp.Hash()
	rendered, err := bp.Render(ctx, Input{Path: path, Imports: imp, State: st.State})
	if err != nil {
		return n.failIn(FailedInRender, renderError(err))
	}
	deps, err := siblingOrder(rendered.Subs)
	if err != nil {
		return n.failIn(FailedInRender, core.ConfigurationProblem("%s", err.Error()))
	}
	if r.Rendered != nil {
		r.Rendered(path, rendered)
	}

	n.setPhase(core.PhaseCleanupOrphaned)
	var orphans []string
	for name := range st.Subs {
		if _, ok := deps[name]; !ok {
			orphans = append(orphans, name)
		}
	}
	if len(orphans) > 0 {
		if err := r.deleteSubs(ctx, path, st, orphans, jobID, core.OperationReconcile); err != nil {
			return n.fail(core.PhaseFailed, err)
		}
	}

	n.setPhase(core.PhaseObjectsCreated)
	for _, sub := range rendered.Subs {
		ss := st.Subs[sub.Name]
		if ss == nil {
			ss = &Status{Phase: core.PhaseInit, Subs: map[string]*Status{}}
			st.Subs[sub.Name] = ss
		}
		ss.DependsOn = deps[sub.Name]
	}

	n.setPhase(core.PhaseProgressing)
	var groups []*subGroup
	if r.Rollout != nil {
		groups = decideSubs(ctx, path, rendered.Subs, deps, rendered.Items, imp, rendered.Defaults, InputHash(bp, imp), prev, r.ReconcileTrigger, r.Rollout)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ex := execution(r.executionName(path), rendered.Items, imp, r.ReconcileTrigger, r.Rollout)
		st.Execution = r.Engine.Apply(ctx, ex, st.Execution, engine.Run{JobID: jobID, Resources: rendered.Resources, Observe: func(ev engine.Event) {
			r.emit(Event{Path: path, JobID: jobID, Item: &ev})
		}})
	}()
	sc := newScope(imp, rendered.Defaults)
	var subErr *core.Error
	var stops []string
	switch {
	case len(groups) > 0 && !idle(groups):
		subErr, stops = r.rolloutSubs(ctx, path, rendered.Subs, deps, st, sc, jobID, groups)
	case len(groups) > 0:
		settleSubRollouts(st, groups)
		subErr = r.runSubs(ctx, path, rendered.Subs, deps, st, sc, jobID, nil)
	default:
		st.Rollouts = nil
		subErr = r.runSubs(ctx, path, rendered.Subs, deps, st, sc, jobID, nil)
	}
	wg.Wait()
	if e, failed, ok := rolloutOutcome(st, jobID, subErr, stops); ok {
		if failed {
			return n.fail(core.PhaseFailed, e)
		}
		// Everything that ran is fine and a rollout waits (paused, or
		// left for the next apply): the installation is still
		// progressing, and keeps the exports of its last success.
		st.LastError, st.JobIDFinished = e, jobID
		n.setPhase(core.PhaseProgressing)
		return st
	}
	if err := progressError(st, subErr); err != nil {
		return n.fail(core.PhaseFailed, err)
	}

	n.setPhase(core.PhaseCompleting)
	values := ExportValues{DeployItems: map[string]any{}, DataObjects: map[string]any{}, Targets: map[string]*deployer.Target{}}
	for name, is := range st.Execution.Items {
		values.DeployItems[name] = decodeJSON(is.Export)
	}
	// Landscaper's export executions see every data object and target in
	// the installation's context: its own imports as well as what its
	// sub-installations exported.
	maps.Copy(values.DataObjects, sc.data)
	maps.Copy(values.Targets, sc.targets)
	values.Sealed = sc.sealed
	ex, err := bp.Exports(ctx, Input{Path: path, Imports: imp, State: rendered.State}, values)
	if err != nil {
		return n.failIn(FailedInExports, renderError(err))
	}
	st.Exports = ex
	st.State = rendered.State
	st.InputHash = InputHash(bp, imp)
	st.ReconcileTrigger = r.ReconcileTrigger
	st.JobIDFinished = jobID
	n.setPhase(core.PhaseSucceeded)
	if untouched(prev, st, len(orphans) > 0) {
		// Nothing in this subtree ran: like a skipped deploy item, the
		// node keeps the job it last ran in, as the plan promised.
		st.JobID, st.JobIDFinished = prev.JobID, prev.JobIDFinished
	}
	return st
}

// untouched reports whether a successful run of a node changed nothing:
// same input, no orphan deleted, its execution started no job, every sub
// kept its job, and the exports are the same.
func untouched(prev, st *Status, orphans bool) bool {
	if orphans || !prev.Succeeded() || prev.InputHash != st.InputHash || prev.ReconcileTrigger != st.ReconcileTrigger ||
		st.Execution.JobID != prev.Execution.JobID ||
		len(prev.Subs) != len(st.Subs) {
		return false
	}
	for name, s := range st.Subs {
		if p := prev.Subs[name]; p == nil || s.JobIDFinished != p.JobIDFinished || s.JobID != p.JobID {
			return false
		}
	}
	a, _ := json.Marshal(prev.Exports)
	b, _ := json.Marshal(st.Exports)
	return string(a) == string(b)
}

// runSubs runs the sub-installations in data-flow order. A sub's imports
// are taken from the scope when it is triggered, after every sibling it
// imports from finished and added its exports.
//
// hold, when set, names sub-installations a rollout holds: they keep
// their status, and their exports, if they have succeeded before, feed
// their siblings; siblings that need them otherwise wait.
func (r *Runner) runSubs(ctx context.Context, path string, subs []Sub, deps map[string][]string, st *Status, sc *scope, jobID string,
	hold func(string) bool) *core.Error {
	if len(subs) == 0 {
		return nil
	}
	names := make([]string, len(subs))
	for i, s := range subs {
		names[i] = s.Name
	}
	g := dag.New(names)
	for i, s := range subs {
		for _, d := range deps[s.Name] {
			k, _ := g.Index(d)
			g.Wait(i, k)
		}
	}
	type input struct {
		imp  Imports
		err  error
		prev *Status
	}
	inputs := make([]input, len(subs))
	out := dag.Drive(ctx, g, dag.Runner[*Status]{
		Trigger: func(i int) {
			imp, err := sc.importsOf(subs[i])
			inputs[i] = input{imp: imp, err: err, prev: st.Subs[subs[i].Name]}
		},
		Run: func(ctx context.Context, i int) *Status {
			in := inputs[i]
			if hold != nil && hold(subs[i].Name) {
				return in.prev
			}
			if in.err != nil {
				s := in.prev.Clone()
				if s == nil {
					s = &Status{Subs: map[string]*Status{}}
				}
				s.JobID, s.JobIDFinished, s.Phase = jobID, jobID, core.PhaseFailed
				s.LastError, s.FailedIn = core.ConfigurationProblem("%s", in.err.Error()), FailedInImports
				r.emit(Event{Path: Join(path, subs[i].Name), JobID: jobID, Phase: core.PhaseFailed, Err: s.LastError})
				return s
			}
			return r.run(ctx, Join(path, subs[i].Name), subs[i].Blueprint, in.imp, in.prev, jobID)
		},
		Finish: func(i int, s *Status) bool {
			st.Subs[subs[i].Name] = s
			if !s.Succeeded() {
				return false
			}
			sc.add(subs[i], s.Exports)
			return true
		},
	})
	if hold != nil {
		// Held ones that never ran are waiting, not failing, and so is
		// whatever needs them.
		out.Failed = slices.DeleteFunc(out.Failed, func(i int) bool { return hold(names[i]) })
		if len(out.Failed) == 0 && ctx.Err() == nil {
			return nil
		}
	}
	return subsError(ctx, st, names, g, out, core.PhaseFailed, "not run", "SubInstallationsFailed", core.OperationReconcile)
}

// subsError sums up a drive over sub-installations: which ended in
// failPhase, which never started, and their codes; nil when all went well.
func subsError(ctx context.Context, st *Status, names []string, g *dag.Graph, out dag.Outcome,
	failPhase core.Phase, notVerb, reason string, op core.Operation) *core.Error {
	var failed, codes []string
	for _, i := range out.Failed {
		failed = append(failed, names[i])
		if e := st.Subs[names[i]].LastError; e != nil {
			codes = append(codes, e.Codes...)
		}
	}
	notRun := out.NotTriggered(g)
	if len(failed) == 0 && len(notRun) == 0 {
		return nil
	}
	slices.Sort(failed)
	slices.Sort(notRun)
	slices.Sort(codes)
	var parts []string
	if len(failed) > 0 {
		parts = append(parts, fmt.Sprintf("sub-installations in phase %s: %s", failPhase, strings.Join(failed, ", ")))
	}
	if len(notRun) > 0 {
		parts = append(parts, notVerb+": "+strings.Join(notRun, ", "))
	}
	if ctx.Err() != nil {
		parts = append(parts, "the job was stopped before it finished")
	}
	return &core.Error{Operation: op, Reason: reason, Message: strings.Join(parts, "; "), Codes: slices.Compact(codes)}
}

// progressError sums up what failed in Progressing: the execution, the
// sub-installations, or an interruption.
func progressError(st *Status, subErr *core.Error) *core.Error {
	exErr := st.Execution.LastError
	if exErr == nil && subErr == nil {
		return nil
	}
	err := &core.Error{Operation: core.OperationReconcile}
	var parts, codes []string
	if exErr != nil {
		err.Reason = exErr.Reason
		parts = append(parts, "execution: "+exErr.Message)
		codes = append(codes, exErr.Codes...)
	}
	if subErr != nil {
		if err.Reason == "" {
			err.Reason = subErr.Reason
		}
		parts = append(parts, subErr.Message)
		for _, s := range st.Subs {
			if s.LastError != nil && s.JobIDFinished == st.JobID {
				codes = append(codes, s.LastError.Codes...)
			}
		}
	}
	slices.Sort(codes)
	err.Message, err.Codes = strings.Join(parts, "; "), slices.Compact(codes)
	return err
}

// renderError turns a blueprint's error into the node's status error:
// it will not resolve without a change of blueprint or imports.
func renderError(err error) *core.Error {
	var ce *core.Error
	if errors.As(err, &ce) {
		c := ce.Clone()
		c.Operation = core.OperationReconcile
		return c
	}
	e := core.ConfigurationProblem("%s", err.Error())
	e.Operation = core.OperationReconcile
	return e
}

// Destroy deletes the whole tree: each installation's execution and its
// sub-installations (those in reverse data-flow order) go first, then the
// installation. What could not be deleted stays in the returned status;
// nil means everything is gone.
func (r *Runner) Destroy(ctx context.Context, prev *Status) *Status {
	return r.destroy(ctx, "", prev, uuid.NewString(), core.OperationDelete)
}

func (r *Runner) destroy(ctx context.Context, path string, prev *Status, jobID string, op core.Operation) *Status {
	if prev == nil {
		return nil
	}
	st := prev.Clone()
	st.JobID, st.LastError, st.FailedIn = jobID, nil, ""
	n := &node{r: r, path: path, jobID: jobID, start: time.Now(), st: st}
	n.setPhase(core.PhaseInitDelete)
	n.setPhase(core.PhaseTriggerDelete)
	n.setPhase(core.PhaseDeleting)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		st.Execution = r.Engine.Destroy(ctx, r.executionName(path), st.Execution, engine.Run{JobID: jobID, Observe: func(ev engine.Event) {
			r.emit(Event{Path: path, JobID: jobID, Item: &ev})
		}})
	}()
	subErr := r.deleteSubs(ctx, path, st, slices.Collect(maps.Keys(st.Subs)), jobID, op)
	wg.Wait()
	if exErr := st.Execution.LastError; exErr != nil || subErr != nil || len(st.Execution.Items) > 0 {
		err := &core.Error{Operation: op, Reason: "DeleteFailed"}
		var parts []string
		if exErr != nil {
			err.Reason, err.Codes = exErr.Reason, exErr.Codes
			parts = append(parts, "execution: "+exErr.Message)
		}
		if subErr != nil {
			parts = append(parts, subErr.Message)
			err.Codes = append(slices.Clone(err.Codes), subErr.Codes...)
		}
		err.Message = strings.Join(parts, "; ")
		return n.fail(core.PhaseDeleteFailed, err)
	}
	r.emit(Event{Path: path, JobID: jobID, Gone: true, Elapsed: time.Since(n.start)})
	return nil
}

// deleteSubs deletes the named sub-installations of st, each only after
// the siblings that import from it are gone. Deleted ones leave st.Subs.
func (r *Runner) deleteSubs(ctx context.Context, path string, st *Status, names []string, jobID string, op core.Operation) *core.Error {
	slices.Sort(names)
	g := dag.New(names)
	for i, name := range names {
		for _, dep := range st.Subs[name].DependsOn {
			if k, ok := g.Index(dep); ok {
				g.Wait(k, i) // what name imports from waits until name is gone
			}
		}
	}
	prevs := make([]*Status, len(names))
	for i, name := range names {
		prevs[i] = st.Subs[name]
	}
	out := dag.Drive(ctx, g, dag.Runner[*Status]{
		Run: func(ctx context.Context, i int) *Status {
			return r.destroy(ctx, Join(path, names[i]), prevs[i], jobID, op)
		},
		Finish: func(i int, s *Status) bool {
			if s == nil {
				delete(st.Subs, names[i])
				return true
			}
			st.Subs[names[i]] = s
			return false
		},
	})
	return subsError(ctx, st, names, g, out, core.PhaseDeleteFailed, "not deleted", "SubInstallationsDeleteFailed", op)
}
