package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
)

// driveToTimers moves the clock, whenever an item pauses, to the first
// pause's end, so backoff runs its real schedule (1s, 2s, 4s, ...).
func driveToTimers(c *fakeClock, stop <-chan struct{}) {
	for {
		select {
		case <-c.sleeper:
			c.mu.Lock()
			var next time.Time
			for _, t := range c.timers {
				if !t.stopped && t.ch != nil && (next.IsZero() || t.at.Before(next)) {
					next = t.at
				}
			}
			d := next.Sub(c.now)
			c.mu.Unlock()
			c.Advance(d)
		case <-stop:
			return
		}
	}
}

// A chart host that does not resolve fails the item with that cause once
// the grace period has passed, long before the item's timeout; each retry
// on the way says why, and when the next attempt is.
func TestUnreachableHostFailsAfterTheGrace(t *testing.T) {
	h := newHarness(0)
	stop := make(chan struct{})
	defer close(stop)
	go driveToTimers(h.clock, stop)
	spec := item(`{"unreachable":1000000}`)
	spec.Timeout = 10 * time.Minute
	start := h.clock.Now()
	st := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"a": spec}), Status{}, h.run("j"))

	is := st.Items["a"]
	le := is.LastError
	if is.Phase != core.PhaseFailed || le == nil || le.Reason != "FetchChart" || !strings.Contains(le.Message, "lookup charts.invalid: no such host") ||
		!strings.Contains(le.Message, "longer than the grace period of 1m0s") {
		t.Fatalf("item %s, error %+v", is.Phase, le)
	}
	// Failed after the grace, well before the timeout: the backoff's
	// attempts at 0, 1, 3, 7, 15, 31 and 61 seconds.
	if failed := le.LastUpdateTime.Sub(start); failed < DefaultUnreachableGrace || failed > 2*DefaultUnreachableGrace {
		t.Fatalf("failed after %s", failed)
	}
	if n := h.d.attempts["Reconcile:a"]; n != 7 {
		t.Fatalf("%d attempts", n)
	}
	var retries []Event
	for _, e := range h.rec.events {
		if e.Retry > 0 {
			retries = append(retries, e)
		}
	}
	if len(retries) != 6 {
		t.Fatalf("%d retry events", len(retries))
	}
	at := start
	for i, e := range retries {
		if e.Attempt != i+1 || !e.RetryAt.Equal(at.Add(e.Retry)) || !strings.Contains(e.Err.Message, "https://charts.invalid/app-1.0.0.tgz") {
			t.Fatalf("retry %d: attempt %d at %s, next at %s in %s: %v", i, e.Attempt, at, e.RetryAt, e.Retry, e.Err)
		}
		at = e.RetryAt
	}
}

// A host that answers again within the grace is no failure; one that
// stays unreachable fails at the first attempt past the grace; a run of
// unreachable errors interrupted by another error starts the grace anew,
// so only the item's timeout ends it.
func TestUnreachableHostWithinTheGrace(t *testing.T) {
	for _, cfg := range []string{`{"unreachable":5}`, `{"unreachable":1000000}`, `{"unreachableOdd":true,"transient":1000000}`} {
		h := newHarness(0)
		h.e.UnreachableGrace = 20 * time.Second
		stop := make(chan struct{})
		go driveToTimers(h.clock, stop)
		spec := item(cfg)
		spec.Timeout = 3 * time.Minute
		st := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"a": spec}), Status{}, h.run("j"))
		close(stop)
		le := st.Items["a"].LastError
		switch cfg {
		case `{"unreachable":5}`:
			// Attempts at 0, 1, 3, 7, 15 fail, 31 succeeds: the grace of
			// 20s is past at 31s, but by then the host answers.
			if !st.Succeeded() {
				t.Fatalf("%s: %s %+v", cfg, st.Phase, le)
			}
		case `{"unreachable":1000000}`:
			// The sixth attempt, at 31s, is the first past the grace.
			if le == nil || !strings.Contains(le.Message, "grace period of 20s") || h.d.attempts["Reconcile:a"] != 6 {
				t.Fatalf("%s: %d attempts, %+v", cfg, h.d.attempts["Reconcile:a"], le)
			}
		default:
			if le == nil || le.Reason != core.ReasonProgressingTimeout || strings.Contains(le.Message, "grace") {
				t.Fatalf("%s: %+v", cfg, le)
			}
		}
	}
}
