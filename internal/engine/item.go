package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

type itemResult struct {
	res deployer.Result
	// err is the run's outcome, first the first error the run met (err
	// itself when there was only one).
	err, first *core.Error
	elapsed    time.Duration
}

// record writes an item's result into the status. It runs on the drive's
// goroutine only, so the status has a single writer. It reports success.
func (j *job) record(name string, op core.Operation, r itemResult) bool {
	is := j.st.Items[name]
	ev := Event{Item: name, Elapsed: r.elapsed}
	if r.err == nil && op == core.OperationDelete {
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
	is.LastError, is.FirstError = r.err, r.first
	switch {
	case r.err != nil && op == core.OperationDelete:
		is.Phase = core.PhaseDeleteFailed
	case r.err != nil:
		// A failed item exports nothing: its last export no longer
		// describes what is installed.
		is.Phase, is.Export, is.ExportWithheld = core.PhaseFailed, nil, false
	default:
		is.Phase, is.Export, is.AppliedHash, is.Drift = core.PhaseSucceeded, r.res.Export, is.Spec.Hash(), ""
		is.ExportWithheld = false
		is.AppliedTrigger = j.trigger
		// What was adopted is the item's own now, recorded in its state.
		is.Adopt = nil
	}
	ev.Phase, ev.Err, ev.Export = is.Phase, is.LastError, is.Export
	j.emit(ev)
	return r.err == nil
}

// runItem runs one item's deployer until success, an error that is not
// to be retried, the item's timeout, or the end of ctx. Retryable errors
// (core.Error.Retryable) are retried with exponential backoff; a deployer
// that asks to be called again later (RequeueAfter) is, without that
// counting as an error. Errors are stamped with their times as Landscaper
// updates an item's last error, and the run's first error is kept too.
func (j *job) runItem(ctx context.Context, name string, spec ItemSpec, state []byte, adopt *deployer.Adoption, op core.Operation) itemResult {
	clock := j.e.Clock
	start := clock.Now()
	var first, last *core.Error
	result := func(res deployer.Result, err *core.Error) itemResult {
		if err != nil {
			err.Operation = op
			err.Stamp(last, clock.Now())
			if first == nil {
				first = err
			}
		}
		return itemResult{res: res, err: err, first: first.Clone(), elapsed: clock.Now().Sub(start)}
	}

	d, ok := j.e.Deployers.Get(spec.Type)
	if !ok {
		return result(deployer.Result{State: state}, core.Terminal("UnknownType",
			fmt.Sprintf("no deployer for type %q", spec.Type), core.CodeConfigurationProblem))
	}
	tgt, err := j.e.target(spec.Target)
	if err != nil {
		return result(deployer.Result{State: state}, core.Terminal("TargetNotDefined", err.Error(), core.CodeConfigurationProblem))
	}
	ictx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if spec.Timeout > 0 {
		stop := clock.AfterFunc(spec.Timeout, func() { cancel(errItemTimeout) })
		defer stop()
	}
	req := deployer.Request{
		Operation: op, Execution: j.exec, Item: name, JobID: j.id,
		Config: spec.Config, Target: tgt, State: state,
		ComponentDescriptor: spec.ComponentDescriptor, Content: spec.Content,
		Log:       func(msg string) { j.emit(Event{Item: name, Output: msg}) },
		Resources: j.res,
		Adopt:     adopt,
	}
	backoff := j.e.Backoff.Initial
	report := j.e.WaitReport
	if report == 0 {
		report = DefaultWaitReport
	}
	// waiting is what the item waited for at its last look, when that
	// look asked to be called again; a later error clears it.
	var waiting string
	// waitCodes are the codes a timeout ending that wait adds.
	var waitCodes []string
	// unreachableSince is the time of the first of the errors in a row
	// that say a host is unreachable; zero when the last attempt's did not.
	var unreachableSince time.Time
	grace := j.e.UnreachableGrace
	if grace <= 0 {
		grace = DefaultUnreachableGrace
	}
	lastReport := start
	for attempt := 1; ; attempt++ {
		req.Attempt = attempt
		var res deployer.Result
		var err error
		if op == core.OperationDelete {
			res, err = d.Delete(ictx, req)
		} else {
			res, err = d.Reconcile(ictx, req)
		}
		req.State = res.State
		var wait time.Duration
		switch {
		case err == nil && res.RequeueAfter <= 0:
			return result(res, nil)
		case err == nil:
			wait, waiting, waitCodes = res.RequeueAfter, res.Waiting, res.TimeoutCodes
			unreachableSince = time.Time{}
			j.emit(Event{Item: name, Requeue: wait})
			if now := clock.Now(); report > 0 && now.Sub(lastReport) >= report {
				lastReport = now
				w := waiting
				j.emit(Event{Item: name, Waiting: &w, Elapsed: now.Sub(start)})
			}
		default:
			de := classify(err)
			if ictx.Err() != nil {
				// A call cut short by the stop mostly says only that; the
				// attempt before it says why the item had not finished.
				switch {
				case waiting != "":
					return result(res, stoppedError(ictx, spec, waiting, waitCodes, last))
				case last != nil:
					return result(res, stoppedError(ictx, spec, "", nil, last))
				}
				return result(res, stoppedError(ictx, spec, "", nil, de))
			}
			waiting, waitCodes = "", nil
			if !de.Retryable() {
				return result(res, de)
			}
			now := clock.Now()
			if !de.Unreachable {
				unreachableSince = time.Time{}
			} else if unreachableSince.IsZero() {
				unreachableSince = now
			} else if down := now.Sub(unreachableSince); down >= grace {
				de.Transient = false
				de.Message += fmt.Sprintf("; the host has not resolved or accepted connections for %s, longer than the grace "+
					"period of %s, so the item fails rather than retrying until its timeout", down.Round(time.Second), grace)
				return result(res, de)
			}
			de.Operation = op
			de.Stamp(last, now)
			if first == nil {
				first = de
			}
			last = de
			wait = backoff
			backoff = min(2*backoff, j.e.Backoff.Max)
			j.emit(Event{Item: name, Err: de.Clone(), Retry: wait, RetryAt: now.Add(wait), Attempt: attempt})
		}
		if !j.pause(ictx, wait) {
			return result(res, stoppedError(ictx, spec, waiting, waitCodes, last))
		}
	}
}

// pause waits d without holding a max_parallelism slot: another item may
// run meanwhile. It takes a slot again before returning, since the drive
// gives one back when the item's run ends. It reports false when ctx ended.
func (j *job) pause(ctx context.Context, d time.Duration) bool {
	slots := j.e.Slots
	if slots != nil {
		<-slots
	}
	select {
	case <-j.e.Clock.After(d):
	case <-ctx.Done():
	}
	if slots != nil {
		// The slot is taken back even after a stop, so the drive's
		// release stays balanced; a stopped item does no more work with it.
		slots <- struct{}{}
	}
	return ctx.Err() == nil
}

// classify treats errors a deployer did not classify as transient, as
// Landscaper does with errors that carry no unrecoverable code: they are
// retried until the item's timeout.
func classify(err error) *core.Error {
	var de *core.Error
	if errors.As(err, &de) {
		return de.Clone()
	}
	return core.Transient("Error", err.Error())
}

// stoppedError explains why a running item was stopped: its own timeout,
// the operation's deadline, or an interrupt (Ctrl-C); and what it was
// waiting for then (the objects not ready), or its last error. A timeout
// adds the codes the deployer gave for the wait (waitCodes).
func stoppedError(ctx context.Context, spec ItemSpec, waiting string, waitCodes []string, last *core.Error) *core.Error {
	cause := context.Cause(ctx)
	e := &core.Error{Reason: core.ReasonInterruptOperation, Codes: []string{core.CodeInterrupted},
		Message: "operation was interrupted while the deploy item was running"}
	switch {
	case errors.Is(cause, errItemTimeout):
		e.Reason, e.Codes = core.ReasonProgressingTimeout, []string{core.CodeTimeout}
		e.Message = fmt.Sprintf("the deploy item did not finish within its timeout of %s", spec.Timeout)
	case errors.Is(cause, context.DeadlineExceeded):
		e.Reason, e.Codes = core.ReasonProgressingTimeout, []string{core.CodeTimeout}
		e.Message = "the operation's timeout expired while the deploy item was running"
	}
	if e.Reason == core.ReasonProgressingTimeout && waiting != "" {
		e.Codes = append(e.Codes, waitCodes...)
	}
	if waiting != "" {
		e.Message += "; still waiting for: " + waiting
	}
	if last != nil && last.Message != "" {
		e.Message += "; last error: " + last.Message
	}
	return e
}
