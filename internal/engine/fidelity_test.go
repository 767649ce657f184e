package engine

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
)

// A changed ReconcileTrigger runs every item, also those that did not
// change and those with UpdateOnChangeOnly false; an unchanged one plans
// as before.
func TestReconcileTriggerRunsEveryItem(t *testing.T) {
	h := newHarness(0)
	ex := exec(map[string]ItemSpec{"a": item(""), "b": item("", "a"), "c": item("")})
	c := ex.Items["c"]
	c.UpdateOnChangeOnly = false
	ex.Items["c"] = c
	st := h.e.Reconcile(context.Background(), ex, Status{}, h.run("j1"))
	if p := PlanJob(ex, st); !p.Noop() {
		t.Fatalf("plan without a trigger change: %+v", p)
	}
	for _, tc := range []struct {
		name, trigger string
		run           []string
	}{
		{"unset stays unset", "", nil},
		{"set for the first time", "1", []string{"a", "b", "c"}},
	} {
		ex.ReconcileTrigger = tc.trigger
		p := PlanJob(ex, st)
		if !reflect.DeepEqual(p.Run, tc.run) || p.Job != (tc.run != nil) {
			t.Fatalf("%s: plan %+v, want run %v", tc.name, p, tc.run)
		}
	}
	before := len(h.d.callList())
	st = h.e.Apply(context.Background(), ex, st, h.run("j2"))
	if calls := h.d.callList()[before:]; len(calls) != 3 || h.d.position(t, "Reconcile:b") < h.d.position(t, "Reconcile:a") {
		t.Fatalf("calls %v", calls)
	}
	for n, is := range st.Items {
		if is.AppliedTrigger != "1" || is.JobIDFinished != "j2" {
			t.Fatalf("%s: applied trigger %q job %q", n, is.AppliedTrigger, is.JobIDFinished)
		}
	}
	if p := PlanJob(ex, st); !p.Noop() {
		t.Fatalf("plan after the triggered job: %+v", p)
	}
}

// A triggered job that fails half-way is resumed with only what did not
// finish.
func TestFailedTriggeredJobResumesWhatDidNotFinish(t *testing.T) {
	h := newHarness(0)
	ex := exec(map[string]ItemSpec{"a": item(""), "b": item("", "a"), "c": item("", "b")})
	st := h.e.Reconcile(context.Background(), ex, Status{}, h.run("j1"))
	ex.ReconcileTrigger = "x"
	ex.Items["b"] = item(`{"fail":true}`, "a")
	st = h.e.Apply(context.Background(), ex, st, h.run("j2"))
	if got := phasesOf(st); got["a"] != core.PhaseSucceeded || got["b"] != core.PhaseFailed {
		t.Fatalf("phases %v", got)
	}
	ex.Items["b"] = item("", "a")
	if p := PlanJob(ex, st); !reflect.DeepEqual(p.Run, []string{"b", "c"}) {
		t.Fatalf("resume plan %+v", p)
	}
}

// Retries follow Landscaper: a transient error with an unrecoverable code
// fails at once; the run's first error is kept beside its last; errors
// carry Landscaper's times; Request.Attempt counts the calls.
func TestRetryDecisionAndErrorHistory(t *testing.T) {
	for _, tc := range []struct {
		name     string
		config   string
		attempts int
		phase    core.Phase
	}{
		{"recoverable transient errors are retried", `{"transient":2}`, 3, core.PhaseSucceeded},
		{"other codes are recoverable", `{"transient":2,"codes":["ERR_WEBHOOK"]}`, 3, core.PhaseSucceeded},
		{"an unrecoverable code fails at once", `{"transient":2,"codes":["ERR_INTERNAL_PROBLEM"]}`, 1, core.PhaseFailed},
		{"unauthorized fails at once", `{"transient":2,"codes":["ERR_UNAUTHORIZED"]}`, 1, core.PhaseFailed},
		{"a terminal error fails at once", `{"fail":true}`, 1, core.PhaseFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(0)
			stop := make(chan struct{})
			defer close(stop)
			go driveClock(h.clock, 30*time.Second, stop)
			start := h.clock.Now()
			st := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"a": item(tc.config)}), Status{}, h.run("j"))
			is := st.Items["a"]
			if is.Phase != tc.phase || h.d.attempts["Reconcile:a"] != tc.attempts {
				t.Fatalf("phase %s after %d attempts, want %s after %d", is.Phase, h.d.attempts["Reconcile:a"], tc.phase, tc.attempts)
			}
			want := make([]int, tc.attempts)
			for i := range want {
				want[i] = i + 1
			}
			if got := h.d.reqAttempts["Reconcile:a"]; !reflect.DeepEqual(got, want) {
				t.Fatalf("Request.Attempt %v, want %v", got, want)
			}
			fe := is.FirstError
			if fe == nil || fe.Operation != core.OperationReconcile || !fe.LastTransitionTime.Equal(start) {
				t.Fatalf("first error %+v", fe)
			}
			if tc.phase == core.PhaseSucceeded {
				if is.LastError != nil || fe.Message != "attempt 1" {
					t.Fatalf("last error %+v, first %+v", is.LastError, fe)
				}
				return
			}
			le := is.LastError
			if le == nil || le.LastTransitionTime.IsZero() || le.LastUpdateTime.Before(le.LastTransitionTime) {
				t.Fatalf("last error %+v", le)
			}
			if st.LastError == nil || st.LastError.LastTransitionTime.IsZero() {
				t.Fatalf("execution error %+v", st.LastError)
			}
		})
	}
}

// After retries that end in a timeout, the first error is the first
// transient one and the last error's transition time is the first
// error's: the operation never changed.
func TestTimeoutAfterRetriesKeepsTheTransitionTime(t *testing.T) {
	h := newHarness(0)
	stop := make(chan struct{})
	defer close(stop)
	go driveClock(h.clock, 30*time.Second, stop)
	start := h.clock.Now()
	spec := item(`{"transient":1000}`)
	spec.Timeout = 3 * time.Minute
	st := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"a": spec}), Status{}, h.run("j"))
	is := st.Items["a"]
	if is.FirstError.Message != "attempt 1" || is.LastError.Reason != core.ReasonProgressingTimeout {
		t.Fatalf("first %+v last %+v", is.FirstError, is.LastError)
	}
	if !is.LastError.LastTransitionTime.Equal(start) || !is.LastError.LastUpdateTime.After(start) {
		t.Fatalf("times %v / %v, start %v", is.LastError.LastTransitionTime, is.LastError.LastUpdateTime, start)
	}
}

// The component descriptor is part of what an item does; the content is not stored.
func TestComponentDescriptorCountsInTheHash(t *testing.T) {
	a, b := item(""), item("")
	b.ComponentDescriptor = []byte(`{"components":[]}`)
	if a.Hash() == b.Hash() {
		t.Fatal("a component descriptor does not change the hash")
	}
	c := b
	c.ComponentDescriptor = []byte(`{ "components" : [ ] }`)
	if b.Hash() != c.Hash() {
		t.Fatal("formatting of the component descriptor changes the hash")
	}
}
