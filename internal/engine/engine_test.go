package engine

import (
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"

	"context"
	"encoding/json"
	"fmt"
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
	st := h.e.Reconcile(context.Background(), ex, Status{}, h.run("job-1"))
	if st.Phase != core.PhaseSucceeded || st.JobIDFinished != "job-1" || st.LastError != nil {
		t.Fatalf("execution: phase %s finished %q err %v", st.Phase, st.JobIDFinished, st.LastError)
	}
	for _, pair := range [][2]string{{"db", "api"}, {"cache", "api"}, {"api", "web"}} {
		if h.d.position(t, "Reconcile:"+pair[0]) > h.d.position(t, "Reconcile:"+pair[1]) {
			t.Errorf("%s ran after %s: %v", pair[0], pair[1], h.d.callList())
		}
	}
	for name, is := range st.Items {
		if is.Phase != core.PhaseSucceeded || is.JobIDFinished != "job-1" || is.AppliedHash != ex.Items[name].Hash() {
			t.Errorf("%s: %+v", name, is)
		}
	}
	if got := h.rec.phases(""); !reflect.DeepEqual(got, []core.Phase{core.PhaseInit, core.PhaseProgressing, core.PhaseCompleting, core.PhaseSucceeded}) {
		t.Errorf("execution phases %v", got)
	}
	if got := h.rec.phases("web"); !reflect.DeepEqual(got, []core.Phase{core.PhaseProgressing, core.PhaseSucceeded}) {
		t.Errorf("item phases %v", got)
	}
}

// waitStarted waits until n items started.
func waitStarted(t *testing.T, d *fakeDeployer, n int) {
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
		go func() { done <- h.e.Reconcile(context.Background(), exec(items), Status{}, h.run("j")) }()
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
		if st.Phase != core.PhaseSucceeded || h.d.peak != want {
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
	go func() { done <- h.e.Reconcile(context.Background(), ex, Status{}, h.run("job-1")) }()
	waitStarted(t, h.d, 2)
	time.Sleep(20 * time.Millisecond) // let the failure be recorded first
	close(gate(g))
	st := <-done

	want := map[string]core.Phase{"bad": core.PhaseFailed, "after": core.PhaseInit, "slow": core.PhaseSucceeded, "later": core.PhaseInit}
	if got := phasesOf(st); !reflect.DeepEqual(got, want) {
		t.Fatalf("phases %v, want %v", got, want)
	}
	if st.Phase != core.PhaseFailed || st.JobIDFinished != "job-1" {
		t.Fatalf("execution %s finished %q", st.Phase, st.JobIDFinished)
	}
	le := st.LastError
	if le.Reason != "DeployItemsFailed" || !strings.Contains(le.Message, "Failed: bad") ||
		!strings.Contains(le.Message, "not run: after, later") || !reflect.DeepEqual(le.Codes, []string{"ERR_TEST"}) {
		t.Fatalf("execution error %+v", le)
	}
	bad := st.Items["bad"]
	if bad.LastError.Operation != core.OperationReconcile || bad.LastError.Reason != "Broken" ||
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
	st2 := h.e.Reconcile(context.Background(), fixed, st, h.run("job-2"))
	calls := h.d.callList()[before:]
	if st2.Phase != core.PhaseSucceeded || len(calls) != 3 {
		t.Fatalf("second job: %s, calls %v", st2.Phase, calls)
	}
	if st2.Items["slow"].JobIDFinished != "job-1" {
		t.Error("a skipped item keeps the job it last ran in")
	}
}

func TestUnchangedItemsDoNotRunAgain(t *testing.T) {
	h := newHarness(0)
	ex := exec(map[string]ItemSpec{"a": item(`{"export":{"x":1}}`), "b": item(`{}`, "a")})
	st := h.e.Reconcile(context.Background(), ex, Status{}, h.run("j1"))
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
	st2 := h.e.Reconcile(context.Background(), changed, st, h.run("j2"))
	if calls := h.d.callList()[before:]; !reflect.DeepEqual(calls, []string{"Reconcile:a"}) {
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
	st := h.e.Reconcile(context.Background(), ex, Status{}, h.run("j1"))
	st.Phase = core.PhaseFailed // as if the job was stopped after a finished
	if p := PlanJob(ex, st); p.Noop() || len(p.Run) != 0 {
		t.Fatalf("plan %+v", p)
	}
	st2 := h.e.Reconcile(context.Background(), ex, st, h.run("j2"))
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
	st := h.e.Reconcile(context.Background(), ex, Status{}, h.run("j1"))
	st.Items["declared"] = &ItemStatus{Phase: core.PhaseInit, Spec: item("")} // never triggered

	next := exec(map[string]ItemSpec{"keep": ex.Items["keep"], "new": item("")})
	p := PlanJob(next, st)
	if !reflect.DeepEqual(p.Delete, []string{"base", "mid", "top"}) || !reflect.DeepEqual(p.Drop, []string{"declared"}) {
		t.Fatalf("plan %+v", p)
	}
	before := len(h.d.callList())
	st2 := h.e.Reconcile(context.Background(), next, st, h.run("j2"))
	calls := h.d.callList()[before:]
	want := []string{"Delete:top", "Delete:mid", "Delete:base", "Reconcile:new"}
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
	st := h.e.Reconcile(context.Background(), ex, Status{}, h.run("j1"))
	next := exec(map[string]ItemSpec{"keep": ex.Items["keep"], "new": item("")})
	st2 := h.e.Reconcile(context.Background(), next, st, h.run("j2"))
	if st2.Phase != core.PhaseFailed || st2.Items["old"].Phase != core.PhaseDeleteFailed || st2.Items["new"] != nil {
		t.Fatalf("phase %s items %v", st2.Phase, phasesOf(st2))
	}
	if st2.LastError.Reason != "DeployItemsFailed" || st2.Items["old"].LastError.Operation != core.OperationDelete {
		t.Fatalf("errors %+v %+v", st2.LastError, st2.Items["old"].LastError)
	}
}

func TestDeleteRunsInReverseDependencyOrder(t *testing.T) {
	h := newHarness(0)
	ex := exec(map[string]ItemSpec{
		"a": item(""), "b": item("", "a"), "c": item("", "a"), "d": item("", "b", "c"),
	})
	st := h.e.Reconcile(context.Background(), ex, Status{}, h.run("j1"))
	before := len(h.d.callList())
	gone := h.e.Destroy(context.Background(), "ex", st, h.run("j2"))
	calls := h.d.callList()[before:]
	if len(gone.Items) != 0 || gone.LastError != nil || len(calls) != 4 {
		t.Fatalf("items %v err %v calls %v", phasesOf(gone), gone.LastError, calls)
	}
	if calls[0] != "Delete:d" || calls[3] != "Delete:a" {
		t.Fatalf("order %v", calls)
	}
	if got := h.rec.phases(""); got[len(got)-2] != core.PhaseInitDelete || got[len(got)-1] != core.PhaseDeleting {
		t.Fatalf("phases %v", got)
	}
}

func TestFailedDeleteKeepsWhatWasNotDeleted(t *testing.T) {
	h := newHarness(0)
	ex := exec(map[string]ItemSpec{
		"a": item(""), "b": item(`{"failDelete":true}`, "a"), "c": item("", "b"), "side": item(""),
	})
	st := h.e.Reconcile(context.Background(), ex, Status{}, h.run("j1"))
	st.Items["never"] = &ItemStatus{Phase: core.PhaseInit, Spec: item("", "a")}
	st2 := h.e.Destroy(context.Background(), "ex", st, h.run("j2"))
	want := map[string]core.Phase{"a": core.PhaseSucceeded, "b": core.PhaseDeleteFailed}
	if got := phasesOf(st2); !reflect.DeepEqual(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
	if st2.Phase != core.PhaseDeleteFailed || !strings.Contains(st2.LastError.Message, "not deleted: a") {
		t.Fatalf("execution %s %+v", st2.Phase, st2.LastError)
	}
	// Fixing the item lets a later delete finish the job.
	b := st2.Items["b"]
	b.Spec = item("", "a")
	st3 := h.e.Destroy(context.Background(), "ex", st2, h.run("j3"))
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
		st := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"a": spec}), Status{}, h.run("j"))
		close(stop)
		if !st.Succeeded() || h.d.attempts["Reconcile:a"] != 4 {
			t.Fatalf("%s: phase %s attempts %d", cfg, st.Phase, h.d.attempts["Reconcile:a"])
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

// A deployer that is not done yet asks to be called again; that is no
// error, and while it waits its max_parallelism slot serves another item.
func TestRequeueIsNotAnErrorAndFreesTheSlot(t *testing.T) {
	h := newHarness(1)
	g := newGate()
	ex := exec(map[string]ItemSpec{"a": item(`{"requeue":2}`), "b": item(fmt.Sprintf(`{"gate":%q}`, g))})
	done := make(chan Status, 1)
	go func() { done <- h.e.Reconcile(context.Background(), ex, Status{}, h.run("j")) }()
	// a starts first (sorted), asks to be requeued and gives its slot to b.
	for _, want := range []string{"Reconcile:a", "Reconcile:b"} {
		if got := <-h.d.started; got != want {
			t.Fatalf("started %s, want %s", got, want)
		}
	}
	close(gate(g))
	stop := make(chan struct{})
	go driveClock(h.clock, 5*time.Second, stop)
	st := <-done
	close(stop)
	if !st.Succeeded() || h.d.attempts["Reconcile:a"] != 3 || st.Items["a"].LastError != nil {
		t.Fatalf("phase %s attempts %d err %v", st.Phase, h.d.attempts["Reconcile:a"], st.Items["a"].LastError)
	}
	var requeues int
	for _, e := range h.rec.events {
		if e.Requeue == 5*time.Second && e.Item == "a" {
			requeues++
		}
		if e.Retry > 0 || (e.Err != nil && e.Item == "a") {
			t.Fatalf("a requeue was reported as an error: %+v", e)
		}
	}
	if requeues != 2 {
		t.Fatalf("%d requeue events, want 2", requeues)
	}
}

func TestTransientErrorsStopAtTheItemTimeout(t *testing.T) {
	h := newHarness(0)
	stop := make(chan struct{})
	defer close(stop)
	go driveClock(h.clock, 30*time.Second, stop)
	spec := item(`{"transient":1000000}`)
	spec.Timeout = 3 * time.Minute
	st := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"a": spec}), Status{}, h.run("j"))
	le := st.Items["a"].LastError
	if st.Items["a"].Phase != core.PhaseFailed || le.Reason != core.ReasonProgressingTimeout || !reflect.DeepEqual(le.Codes, []string{core.CodeTimeout}) ||
		!strings.Contains(le.Message, "3m0s") || !strings.Contains(le.Message, "last error: attempt") {
		t.Fatalf("item %s %+v", st.Items["a"].Phase, le)
	}
	if !reflect.DeepEqual(st.LastError.Codes, []string{core.CodeTimeout}) {
		t.Fatalf("execution codes %v", st.LastError.Codes)
	}
}

func TestTerminalErrorsAreNotRetried(t *testing.T) {
	h := newHarness(0)
	st := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"a": item(`{"fail":true}`)}), Status{}, h.run("j"))
	if st.Items["a"].Phase != core.PhaseFailed || h.d.attempts["Reconcile:a"] != 1 {
		t.Fatalf("phase %s attempts %d", st.Items["a"].Phase, h.d.attempts["Reconcile:a"])
	}
}

func TestRunningItemOverItsTimeoutFails(t *testing.T) {
	h := newHarness(0)
	spec := item(`{"block":true}`)
	spec.Timeout = 10 * time.Minute
	done := make(chan Status)
	go func() {
		done <- h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"a": spec}), Status{}, h.run("j"))
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
	if le.Reason != core.ReasonProgressingTimeout || le.Codes[0] != core.CodeTimeout || !strings.Contains(le.Message, "10m0s") {
		t.Fatalf("%+v", le)
	}
}

func TestInterruptMarksRunningItemsAndKeepsTheRest(t *testing.T) {
	h := newHarness(0)
	ctx, cancel := context.WithCancel(context.Background())
	ex := exec(map[string]ItemSpec{"a": item(`{"block":true}`), "b": item("", "a"), "c": item("")})
	done := make(chan Status)
	go func() { done <- h.e.Reconcile(ctx, ex, Status{}, h.run("j")) }()
	waitStarted(t, h.d, 2)
	time.Sleep(10 * time.Millisecond) // c finishes on its own
	cancel()
	st := <-done
	want := map[string]core.Phase{"a": core.PhaseFailed, "b": core.PhaseInit, "c": core.PhaseSucceeded}
	if got := phasesOf(st); !reflect.DeepEqual(got, want) {
		t.Fatalf("phases %v", got)
	}
	if st.Items["a"].LastError.Codes[0] != core.CodeInterrupted || st.LastError.Reason != core.ReasonInterruptOperation ||
		st.Items["a"].LastError.Reason != core.ReasonInterruptOperation ||
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
	st := h.e.Reconcile(ctx, exec(map[string]ItemSpec{"a": item(`{"block":true}`)}), Status{}, h.run("j"))
	if st.LastError.Reason != core.ReasonProgressingTimeout || st.Items["a"].LastError.Codes[0] != core.CodeTimeout {
		t.Fatalf("%+v / %+v", st.LastError, st.Items["a"].LastError)
	}
}

func TestStuckGraphFails(t *testing.T) {
	h := newHarness(0)
	// Validation rejects this; the engine must still not hang on it.
	ex := exec(map[string]ItemSpec{"a": item("", "b"), "b": item("", "a"), "c": item("")})
	st := h.e.Reconcile(context.Background(), ex, Status{}, h.run("j"))
	if st.Phase != core.PhaseFailed || st.LastError.Reason != "Stuck" || !reflect.DeepEqual(st.LastError.Codes, []string{core.CodeForInfoOnly}) ||
		st.Items["c"].Phase != core.PhaseSucceeded {
		t.Fatalf("%s %+v %v", st.Phase, st.LastError, phasesOf(st))
	}
}

func TestValidate(t *testing.T) {
	reg := deployer.NewRegistry()
	reg.Register(newFakeDeployer(), "fake")
	reg.Register(clusterFake{newFakeDeployer()}, "cluster")
	onCluster := func(t *deployer.Target) ItemSpec {
		return ItemSpec{Type: "cluster", Config: json.RawMessage(`{}`), Target: t}
	}
	cases := []struct {
		name  string
		items map[string]ItemSpec
		want  []string // "item/field: substring"
	}{
		{"valid", map[string]ItemSpec{"a": item(""), "b": item("", "a")}, nil},
		{"unknown type", map[string]ItemSpec{"a": {Type: "nope", Config: json.RawMessage(`{}`)}}, []string{`a/type: unknown deploy item type "nope"; known types: cluster, fake`}},
		{"missing dep", map[string]ItemSpec{"a": item("", "ghost")}, []string{`a/dependsOn: "ghost" is not a deploy item`}},
		{"self", map[string]ItemSpec{"a": item("", "a")}, []string{"a/dependsOn: cannot depend on itself"}},
		{"twice", map[string]ItemSpec{"a": item(""), "b": item("", "a", "a")}, []string{`b/dependsOn: "a" is listed twice`}},
		{"cycle", map[string]ItemSpec{"a": item("", "c"), "b": item("", "a"), "c": item("", "b"), "d": item("")},
			[]string{"a/dependsOn: dependency cycle: a -> c -> b -> a"}},
		{"bad config", map[string]ItemSpec{"a": item(`{"nope":1}`)}, []string{`a/config: unknown field "nope"`}},
		{"target given", map[string]ItemSpec{"a": onCluster(&deployer.Target{Name: "c", Type: "k8s"})}, nil},
		{"target type unknown yet", map[string]ItemSpec{"a": onCluster(&deployer.Target{Name: "c"})}, nil},
		{"target missing", map[string]ItemSpec{"a": onCluster(nil)}, []string{"a/target: acts on a target of type k8s; set one"}},
		{"target of another type", map[string]ItemSpec{"a": onCluster(&deployer.Target{Name: "c", Type: "ssh"})},
			[]string{`a/target: target "c" has type "ssh"; this deployer needs k8s`}},
		{"target on a deployer without", map[string]ItemSpec{"a": {Type: "fake", Config: json.RawMessage(`{}`), Target: &deployer.Target{Type: "x"}}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			probs := Validate(exec(tc.items), reg)
			if len(probs) != len(tc.want) {
				t.Fatalf("got %v", probs)
			}
			for i, w := range tc.want {
				head, sub, _ := strings.Cut(w, ": ")
				if got := probs[i].Item + "/" + string(probs[i].Field); got != head || !strings.Contains(probs[i].Message, sub) {
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

// clusterFake is a fake deployer that acts on targets of type k8s.
type clusterFake struct{ *fakeDeployer }

func (clusterFake) TargetTypes() []string { return []string{"k8s"} }

// An item that waits says what for: every WaitReport while it waits, and
// in the timeout's message when the wait does not end, whose codes are
// those the deployer gave for the wait besides ERR_TIMEOUT (as Landscaper's
// readiness check adds ERR_FOR_INFO_ONLY).
func TestWaitingItemSaysWhatItWaitsFor(t *testing.T) {
	h := newHarness(0)
	h.e.WaitReport = 20 * time.Second
	stop := make(chan struct{})
	defer close(stop)
	go driveClock(h.clock, 5*time.Second, stop)
	const why = "Deployment example/web: 0 of 1 replicas available (pod web-1: container web: ImagePullBackOff)"
	spec := item(fmt.Sprintf(`{"requeue":1000000,"waiting":%q,"waitCodes":["ERR_FOR_INFO_ONLY"]}`, why))
	spec.Timeout = time.Minute
	st := h.e.Reconcile(context.Background(), exec(map[string]ItemSpec{"a": spec}), Status{}, h.run("j"))
	le := st.Items["a"].LastError
	if le == nil || le.Reason != core.ReasonProgressingTimeout || !strings.Contains(le.Message, "timeout of 1m0s; still waiting for: "+why) {
		t.Fatalf("item %s %+v", st.Items["a"].Phase, le)
	}
	if fmt.Sprint(le.Codes) != "[ERR_TIMEOUT ERR_FOR_INFO_ONLY]" {
		t.Errorf("codes %v, want ERR_TIMEOUT and the wait's ERR_FOR_INFO_ONLY", le.Codes)
	}
	var reports []time.Duration
	for _, e := range h.rec.events {
		if e.Waiting != nil {
			if *e.Waiting != why || e.Item != "a" {
				t.Fatalf("report %+v", e)
			}
			reports = append(reports, e.Elapsed)
		}
	}
	if !reflect.DeepEqual(reports, []time.Duration{20 * time.Second, 40 * time.Second}) {
		t.Fatalf("reports at %v, want every 20s while waiting", reports)
	}
}
