package engine

import (
	"context"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

func exec(items map[string]ItemSpec) Execution { return Execution{Name: "ex", Items: items} }

func TestReconcileRunsItemsInDependencyOrder(t *testing.T) {
	h := newHarness(0)
	ex := exec(map[string]ItemSpec{
		"db":    item(""),
		"cache": item(""),
		"api":   item("", "db", "cache"),
		"web":   item("", "api"),
	})
	st := h.e.Reconcile(context.Background(), ex, Status{}, "job-1")
	if st.Phase != PhaseSucceeded || st.JobIDFinished != "job-1" || st.LastError != nil {
		t.Fatalf("execution: phase %s finished %q err %v", st.Phase, st.JobIDFinished, st.LastError)
	}
	for _, pair := range [][2]string{{"db", "api"}, {"cache", "api"}, {"api", "web"}} {
		if h.d.position(t, "RECONCILE:"+pair[0]) > h.d.position(t, "RECONCILE:"+pair[1]) {
			t.Errorf("%s ran after %s: %v", pair[0], pair[1], h.d.callList())
		}
	}
	for name, is := range st.Items {
		if is.Phase != PhaseSucceeded || is.JobIDFinished != "job-1" || is.AppliedHash != ex.Items[name].Hash() {
			t.Errorf("%s: %+v", name, is)
		}
	}
	if got := h.rec.phases(""); !reflect.DeepEqual(got, []Phase{PhaseInit, PhaseProgressing, PhaseCompleting, PhaseSucceeded}) {
		t.Errorf("execution phases %v", got)
	}
	if got := h.rec.phases("web"); !reflect.DeepEqual(got, []Phase{PhaseProgressing, PhaseSucceeded}) {
		t.Errorf("item phases %v", got)
	}
}

// startAll waits until n items started, then checks nobody else starts.
func waitStarted(t *testing.T, d *fakeDeployer, n int) []string {
	t.Helper()
	var got []string
	for len(got) < n {
		select {
		case s := <-d.started:
			got = append(got, s)
		case <-time.After(10 * time.Second):
			t.Fatalf("only %v started", got)
		}
	}
	return got
}

func TestParallelismIsBounded(t *testing.T) {
	for _, limit := range []int{1, 2, 0} {
		h := newHarness(limit)
		items := map[string]ItemSpec{}
		g := newGate()
		for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
			items[n] = item(`{"gate":"` + g + `"}`)
		}
		done := make(chan Status)
		go func() { done <- h.e.Reconcile(context.Background(), exec(items), Status{}, "j") }()
		want := limit
		if limit == 0 {
			want = len(items) // unbounded: all independent items run at once
		}
		waitStarted(t, h.d, want)
		select {
		case s := <-h.d.started:
			t.Fatalf("limit %d: %s started beyond the limit", limit, s)
		case <-time.After(50 * time.Millisecond):
		}
		close(gate(g))
		st := <-done
		if st.Phase != PhaseSucceeded || h.d.peak != want {
			t.Fatalf("limit %d: phase %s peak %d", limit, st.Phase, h.d.peak)
		}
	}
}

func TestFailureStopsTriggeringButLetsRunningItemsFinish(t *testing.T) {
	h := newHarness(0)
	g := newGate()
	ex := exec(map[string]ItemSpec{
		"bad":   item(`{"fail":true}`),
		"after": item("", "bad"),
		"slow":  item(`{"gate":"` + g + `"}`),
		"later": item("", "slow"),
	})
	done := make(chan Status)
	go func() { done <- h.e.Reconcile(context.Background(), ex, Status{}, "job-1") }()
	waitStarted(t, h.d, 2)
	time.Sleep(20 * time.Millisecond) // let the failure be recorded first
	close(gate(g))
	st := <-done

	want := map[string]Phase{"bad": PhaseFailed, "after": PhaseInit, "slow": PhaseSucceeded, "later": PhaseInit}
	if got := phasesOf(st); !reflect.DeepEqual(got, want) {
		t.Fatalf("phases %v, want %v", got, want)
	}
	if st.Phase != PhaseFailed || st.JobIDFinished != "job-1" {
		t.Fatalf("execution %s finished %q", st.Phase, st.JobIDFinished)
	}
	le := st.LastError
	if le.Reason != "DeployItemsFailed" || !strings.Contains(le.Message, "Failed: bad") ||
		!strings.Contains(le.Message, "not run: after, later") || !reflect.DeepEqual(le.Codes, []string{"ERR_TEST"}) {
		t.Fatalf("execution error %+v", le)
	}
	bad := st.Items["bad"]
	if bad.LastError.Operation != OperationReconcile || bad.LastError.Reason != "Broken" ||
		string(bad.ProviderStatus) != `{"why":"broken"}` || bad.JobIDFinished != "job-1" {
		t.Fatalf("bad item %+v %+v", bad, bad.LastError)
	}
	if st.Items["after"].JobIDFinished != "" {
		t.Fatal("an item whose predecessor failed must not be finished in this job")
	}

	// The next job re-runs only what failed or never ran.
	fixed := exec(map[string]ItemSpec{
		"bad": item(`{}`), "after": item("", "bad"),
		"slow": ex.Items["slow"], "later": item("", "slow"),
	})
	plan := PlanJob(fixed, st)
	if !reflect.DeepEqual(plan.Run, []string{"after", "bad", "later"}) || !reflect.DeepEqual(plan.Skip, []string{"slow"}) {
		t.Fatalf("plan %+v", plan)
	}
	before := len(h.d.callList())
	st2 := h.e.Reconcile(context.Background(), fixed, st, "job-2")
	calls := h.d.callList()[before:]
	if st2.Phase != PhaseSucceeded || len(calls) != 3 {
		t.Fatalf("second job: %s, calls %v", st2.Phase, calls)
	}
	if st2.Items["slow"].JobIDFinished != "job-1" {
		t.Error("a skipped item keeps the job it last ran in")
	}
}

func TestUnchangedItemsDoNotRunAgain(t *testing.T) {
	h := newHarness(0)
	ex := exec(map[string]ItemSpec{"a": item(`{"export":{"x":1}}`), "b": item(`{}`, "a")})
	st := h.e.Reconcile(context.Background(), ex, Status{}, "j1")
	if p := PlanJob(ex, st); !p.Noop() || len(p.Skip) != 2 {
		t.Fatalf("plan after success: %+v", p)
	}
	// Formatting and key order are not changes.
	same := exec(map[string]ItemSpec{"a": item("{ \"export\" : {\"x\": 1} }"), "b": item(`{}`, "a")})
	if p := PlanJob(same, st); !p.Noop() {
		t.Fatalf("reformatted config planned %+v", p)
	}
	// Changing one item re-runs only that item.
	changed := exec(map[string]ItemSpec{"a": item(`{"export":{"x":2}}`), "b": item(`{}`, "a")})
	p := PlanJob(changed, st)
	if !reflect.DeepEqual(p.Run, []string{"a"}) {
		t.Fatalf("plan %+v", p)
	}
	before := len(h.d.callList())
	st2 := h.e.Reconcile(context.Background(), changed, st, "j2")
	if calls := h.d.callList()[before:]; !reflect.DeepEqual(calls, []string{"RECONCILE:a"}) {
		t.Fatalf("calls %v", calls)
	}
	if string(st2.Items["a"].Export) != `{"x":2}` {
		t.Fatalf("export %s", st2.Items["a"].Export)
	}
	// update_on_change_only=false re-runs the item in every job, but does
	// not start a job on its own.
	always := changed
	b := always.Items["b"]
	b.UpdateOnChangeOnly = false
	always.Items["b"] = b
	if p := PlanJob(always, st2); !p.Noop() {
		t.Fatalf("always-item alone started a job: %+v", p)
	}
	always.Items["a"] = item(`{"export":{"x":3}}`)
	if p := PlanJob(always, st2); !reflect.DeepEqual(p.Run, []string{"a", "b"}) {
		t.Fatalf("plan %+v", p)
	}
}

func TestUnfinishedJobIsResumed(t *testing.T) {
	h := newHarness(0)
	ex := exec(map[string]ItemSpec{"a": item("")})
	st := h.e.Reconcile(context.Background(), ex, Status{}, "j1")
	st.Phase = PhaseFailed // as if the job was stopped after a finished
	if p := PlanJob(ex, st); p.Noop() || len(p.Run) != 0 {
		t.Fatalf("plan %+v", p)
	}
	st2 := h.e.Reconcile(context.Background(), ex, st, "j2")
	if !st2.Succeeded() {
		t.Fatalf("status %+v", st2)
	}
	if p := PlanJob(exec(nil), Status{}); p.Noop() {
		t.Fatal("an imported execution without status must run a job")
	}
}

func TestOrphansAreDeletedInReverseOrderDuringInit(t *testing.T) {
	h := newHarness(0)
	ex := exec(map[string]ItemSpec{
		"base": item(""), "mid": item("", "base"), "top": item("", "mid"), "keep": item(""),
	})
	st := h.e.Reconcile(context.Background(), ex, Status{}, "j1")
	st.Items["declared"] = &ItemStatus{Phase: PhaseInit, Spec: item("")} // never triggered

	next := exec(map[string]ItemSpec{"keep": ex.Items["keep"], "new": item("")})
	p := PlanJob(next, st)
	if !reflect.DeepEqual(p.Delete, []string{"base", "mid", "top"}) || !reflect.DeepEqual(p.Drop, []string{"declared"}) {
		t.Fatalf("plan %+v", p)
	}
	before := len(h.d.callList())
	st2 := h.e.Reconcile(context.Background(), next, st, "j2")
	calls := h.d.callList()[before:]
	want := []string{"DELETE:top", "DELETE:mid", "DELETE:base", "RECONCILE:new"}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("calls %v, want %v", calls, want)
	}
	if got := slices.Sorted(maps.Keys(st2.Items)); !reflect.DeepEqual(got, []string{"keep", "new"}) || !st2.Succeeded() {
		t.Fatalf("items %v phase %s", got, st2.Phase)
	}
}

func TestFailedOrphanDeletionFailsTheJobAndKeepsTheOrphan(t *testing.T) {
	h := newHarness(0)
	ex := exec(map[string]ItemSpec{"old": item(`{"failDelete":true}`), "keep": item("")})
	st := h.e.Reconcile(context.Background(), ex, Status{}, "j1")
	next := exec(map[string]ItemSpec{"keep": ex.Items["keep"], "new": item("")})
	st2 := h.e.Reconcile(context.Background(), next, st, "j2")
	if st2.Phase != PhaseFailed || st2.Items["old"].Phase != PhaseDeleteFailed || st2.Items["new"] != nil {
		t.Fatalf("phase %s items %v", st2.Phase, phasesOf(st2))
	}
	if st2.LastError.Reason != "DeployItemsFailed" || st2.Items["old"].LastError.Operation != OperationDelete {
		t.Fatalf("errors %+v %+v", st2.LastError, st2.Items["old"].LastError)
	}
}

func TestDeleteRunsInReverseDependencyOrder(t *testing.T) {
	h := newHarness(0)
	ex := exec(map[string]ItemSpec{
		"a": item(""), "b": item("", "a"), "c": item("", "a"), "d": item("", "b", "c"),
	})
	st := h.e.Reconcile(context.Background(), ex, Status{}, "j1")
	before := len(h.d.callList())
	gone := h.e.Delete(context.Background(), "ex", st, "j2")
	calls := h.d.callList()[before:]
	if len(gone.Items) != 0 || gone.LastError != nil || len(calls) != 4 {
		t.Fatalf("items %v err %v calls %v", phasesOf(gone), gone.LastError, calls)
	}
	if calls[0] != "DELETE:d" || calls[3] != "DELETE:a" {
		t.Fatalf("order %v", calls)
	}
	if got := h.rec.phases(""); got[len(got)-2] != PhaseInitDelete || got[len(got)-1] != PhaseDeleting {
		t.Fatalf("phases %v", got)
	}
}

func TestFailedDeleteKeepsWhatWasNotDeleted(t *testing.T) {
	h := newHarness(0)
	ex := exec(map[string]ItemSpec{
		"a": item(""), "b": item(`{"failDelete":true}`, "a"), "c": item("", "b"), "side": item(""),
	})
	st := h.e.Reconcile(context.Background(), ex, Status{}, "j1")
	st.Items["never"] = &ItemStatus{Phase: PhaseInit, Spec: item("", "a")}
	st2 := h.e.Delete(context.Background(), "ex", st, "j2")
	want := map[string]Phase{"a": PhaseSucceeded, "b": PhaseDeleteFailed}
	if got := phasesOf(st2); !reflect.DeepEqual(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
	if st2.Phase != PhaseDeleteFailed || !strings.Contains(st2.LastError.Message, "not deleted: a") {
		t.Fatalf("execution %s %+v", st2.Phase, st2.LastError)
	}
	// Fixing the item lets a later delete finish the job.
	b := st2.Items["b"]
	b.Spec = item("", "a")
	st3 := h.e.Delete(context.Background(), "ex", st2, "j3")
	if len(st3.Items) != 0 || st3.LastError != nil {
		t.Fatalf("left %v", phasesOf(st3))
	}
}

// driveClock advances the fake clock whenever the engine sleeps.
func driveClock(c *fakeClock, step time.Duration, stop <-chan struct{}) {
	for {
		select {
		case <-c.sleeper:
			c.Advance(step)
		case <-stop:
			return
		}
	}
}

func TestTransientErrorsAreRetriedWithExponentialBackoff(t *testing.T) {
	for _, cfg := range []string{`{"transient":3}`, `{"transient":3,"unknownError":true}`} {
		h := newHarness(0)
		stop := make(chan struct{})
		go driveClock(h.clock, 30*time.Second, stop)
		spec := item(cfg)
		spec.Timeout = 10 * time.Minute
		st := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"a": spec}), Status{}, "j")
		close(stop)
		if !st.Succeeded() || h.d.attempts["RECONCILE:a"] != 4 {
			t.Fatalf("%s: phase %s attempts %d", cfg, st.Phase, h.d.attempts["RECONCILE:a"])
		}
		var waits []time.Duration
		for _, e := range h.rec.events {
			if e.Retry > 0 {
				waits = append(waits, e.Retry)
			}
		}
		if !reflect.DeepEqual(waits, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}) {
			t.Fatalf("%s: backoff %v", cfg, waits)
		}
		if string(st.Items["a"].State) != "++++" {
			t.Fatalf("state must carry over attempts: %q", st.Items["a"].State)
		}
	}
}

func TestTransientErrorsStopAtTheItemTimeout(t *testing.T) {
	h := newHarness(0)
	stop := make(chan struct{})
	defer close(stop)
	go driveClock(h.clock, 30*time.Second, stop)
	spec := item(`{"transient":1000000}`)
	spec.Timeout = 3 * time.Minute
	st := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"a": spec}), Status{}, "j")
	le := st.Items["a"].LastError
	if st.Items["a"].Phase != PhaseFailed || le.Reason != "Timeout" || !reflect.DeepEqual(le.Codes, []string{deployer.CodeTimeout}) ||
		!strings.Contains(le.Message, "3m0s") || !strings.Contains(le.Message, "last error: attempt") {
		t.Fatalf("item %s %+v", st.Items["a"].Phase, le)
	}
	if !reflect.DeepEqual(st.LastError.Codes, []string{deployer.CodeTimeout}) {
		t.Fatalf("execution codes %v", st.LastError.Codes)
	}
}

func TestTerminalErrorsAreNotRetried(t *testing.T) {
	h := newHarness(0)
	st := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"a": item(`{"fail":true}`)}), Status{}, "j")
	if st.Items["a"].Phase != PhaseFailed || h.d.attempts["RECONCILE:a"] != 1 {
		t.Fatalf("phase %s attempts %d", st.Items["a"].Phase, h.d.attempts["RECONCILE:a"])
	}
}

func TestRunningItemOverItsTimeoutFails(t *testing.T) {
	h := newHarness(0)
	spec := item(`{"block":true}`)
	spec.Timeout = 10 * time.Minute
	done := make(chan Status)
	go func() {
		done <- h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"a": spec}), Status{}, "j")
	}()
	waitStarted(t, h.d, 1)
	h.clock.Advance(9 * time.Minute)
	select {
	case <-done:
		t.Fatal("finished before its timeout")
	case <-time.After(20 * time.Millisecond):
	}
	h.clock.Advance(time.Minute)
	st := <-done
	le := st.Items["a"].LastError
	if le.Reason != "Timeout" || le.Codes[0] != deployer.CodeTimeout || !strings.Contains(le.Message, "10m0s") {
		t.Fatalf("%+v", le)
	}
}

func TestInterruptMarksRunningItemsAndKeepsTheRest(t *testing.T) {
	h := newHarness(0)
	ctx, cancel := context.WithCancel(context.Background())
	ex := exec(map[string]ItemSpec{"a": item(`{"block":true}`), "b": item("", "a"), "c": item("")})
	done := make(chan Status)
	go func() { done <- h.e.Reconcile(ctx, ex, Status{}, "j") }()
	waitStarted(t, h.d, 2)
	time.Sleep(10 * time.Millisecond) // c finishes on its own
	cancel()
	st := <-done
	want := map[string]Phase{"a": PhaseFailed, "b": PhaseInit, "c": PhaseSucceeded}
	if got := phasesOf(st); !reflect.DeepEqual(got, want) {
		t.Fatalf("phases %v", got)
	}
	if st.Items["a"].LastError.Codes[0] != deployer.CodeInterrupted || st.LastError.Reason != "Interrupted" ||
		string(st.Items["a"].State) != "+" {
		t.Fatalf("item %+v exec %+v", st.Items["a"].LastError, st.LastError)
	}
	// A later job resumes with what did not finish.
	ex.Items["a"] = item("")
	if p := PlanJob(ex, st); !reflect.DeepEqual(p.Run, []string{"a", "b"}) {
		t.Fatalf("plan %+v", p)
	}
}

func TestResourceDeadlineIsATimeout(t *testing.T) {
	h := newHarness(0)
	h.e.Clock = RealClock{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	st := h.e.Reconcile(ctx, exec(map[string]ItemSpec{"a": item(`{"block":true}`)}), Status{}, "j")
	if st.LastError.Reason != "Timeout" || st.Items["a"].LastError.Codes[0] != deployer.CodeTimeout {
		t.Fatalf("%+v / %+v", st.LastError, st.Items["a"].LastError)
	}
}

func TestStuckGraphFails(t *testing.T) {
	h := newHarness(0)
	// Validation rejects this; the engine must still not hang on it.
	ex := exec(map[string]ItemSpec{"a": item("", "b"), "b": item("", "a"), "c": item("")})
	st := h.e.Reconcile(context.Background(), ex, Status{}, "j")
	if st.Phase != PhaseFailed || st.LastError.Reason != "Stuck" || st.Items["c"].Phase != PhaseSucceeded {
		t.Fatalf("%s %+v %v", st.Phase, st.LastError, phasesOf(st))
	}
}

func TestValidate(t *testing.T) {
	reg := deployer.NewRegistry()
	reg.Register(newFakeDeployer(), "fake")
	cases := []struct {
		name  string
		items map[string]ItemSpec
		want  []string // "item/field: substring"
	}{
		{"valid", map[string]ItemSpec{"a": item(""), "b": item("", "a")}, nil},
		{"unknown type", map[string]ItemSpec{"a": {Type: "nope", Config: json.RawMessage(`{}`)}}, []string{`a/type: unknown deploy item type "nope"; known types: fake`}},
		{"missing dep", map[string]ItemSpec{"a": item("", "ghost")}, []string{`a/depends_on: "ghost" is not a deploy item`}},
		{"self", map[string]ItemSpec{"a": item("", "a")}, []string{"a/depends_on: cannot depend on itself"}},
		{"twice", map[string]ItemSpec{"a": item(""), "b": item("", "a", "a")}, []string{`b/depends_on: "a" is listed twice`}},
		{"cycle", map[string]ItemSpec{"a": item("", "c"), "b": item("", "a"), "c": item("", "b"), "d": item("")},
			[]string{"a/depends_on: dependency cycle: a -> c -> b -> a"}},
		{"bad config", map[string]ItemSpec{"a": item(`{"nope":1}`)}, []string{`a/config: unknown field "nope"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			probs := Validate(exec(tc.items), reg)
			if len(probs) != len(tc.want) {
				t.Fatalf("got %v", probs)
			}
			for i, w := range tc.want {
				head, sub, _ := strings.Cut(w, ": ")
				if got := probs[i].Item + "/" + probs[i].Field; got != head || !strings.Contains(probs[i].Message, sub) {
					t.Errorf("problem %d: %s: %s, want %s", i, got, probs[i].Message, w)
				}
			}
		})
	}
}

func TestParseTimeout(t *testing.T) {
	for in, want := range map[string]time.Duration{"none": 0, "90s": 90 * time.Second, "1h30m": 90 * time.Minute} {
		if got, err := ParseTimeout(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "10", "ten minutes", "-1m", "0s"} {
		if _, err := ParseTimeout(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
