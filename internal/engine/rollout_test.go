package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/mock"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/rollout"
)

// autoAdvance plays the passing of time: whenever the engine waits on the
// fake clock, time jumps by a minute. It stops when the test ends.
func (h *harness) autoAdvance(t *testing.T) {
	const step = time.Minute
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-h.clock.sleeper:
				h.clock.Advance(step)
			case <-done:
				return
			}
		}
	}()
	t.Cleanup(func() { close(done); wg.Wait() })
}

// healthScript makes health commands fail for the members in bad, and
// counts the calls.
type healthScript struct {
	mu    sync.Mutex
	bad   map[string]bool
	calls map[string]int
}

func (s *healthScript) run(_ context.Context, cmd, env []string, _ time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var member string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "LANDSCAPER_MEMBER="); ok {
			member = v
		}
	}
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[member]++
	if s.bad[member] {
		return errors.New("exit status 1: " + strings.Join(cmd, " ") + " says unhealthy")
	}
	return nil
}

func (s *healthScript) set(member string, bad bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bad == nil {
		s.bad = map[string]bool{}
	}
	s.bad[member] = bad
}

// fleet is an execution with n members of group "fleet" (m0..m{n-1}),
// each with config cfg, and one non-member "db".
func fleet(n int, cfg string, s *rollout.Strategy) Execution {
	ex := Execution{Name: "ex", Items: map[string]ItemSpec{"db": item("")}, Groups: map[string]string{}, Rollout: s}
	for i := range n {
		m := fmt.Sprintf("m%d", i)
		ex.Items[m] = item(cfg)
		ex.Groups[m] = "fleet"
	}
	return ex
}

func intp(n int) *int { return &n }

// reconciled lists the items reconciled since call index from, in order.
func (f *fakeDeployer) reconciledSince(from int) []string {
	var out []string
	for _, c := range f.callList()[from:] {
		if n, ok := strings.CutPrefix(c, "Reconcile:"); ok {
			out = append(out, n)
		}
	}
	return out
}

func TestRolloutCanaryBakeThenBatches(t *testing.T) {
	h := newHarness(0)
	h.autoAdvance(t)
	hs := &healthScript{}
	h.e.HealthCommand = hs.run
	s := &rollout.Strategy{CanaryCount: 1, Duration: 10 * time.Minute, Batches: []rollout.Step{{Percent: 25}, {Percent: 100}},
		AutoFail: intp(3), Health: rollout.Health{Command: []string{"check"}, Interval: time.Minute}}
	ex := fleet(9, `{"export":"v1"}`, s)
	start := h.clock.Now()
	st := h.e.Apply(context.Background(), ex, Status{}, h.run("job-1"))
	if !st.Succeeded() {
		t.Fatalf("create: phase %s: %v", st.Phase, st.LastError)
	}
	rs := st.Rollouts["fleet"]
	if rs == nil || rs.Phase != rollout.PhaseCompleted || !slices.Equal(rs.Canary, []string{"m0"}) {
		t.Fatalf("rollout %+v", rs)
	}
	if waited := h.clock.Now().Sub(start); waited < 10*time.Minute {
		t.Errorf("the canary baked only %s", waited)
	}
	if hs.calls["m0"] < 10 || len(hs.calls) != 1 {
		t.Errorf("health commands: %v; want m0 checked every minute of the bake, nothing else", hs.calls)
	}
	// A first create goes canary first too: m0 (and db, which does not
	// wait), then 2 of the 8 others (25%), then the rest.
	order := h.d.reconciledSince(0)
	pos := func(n string) int { return slices.Index(order, n) }
	for i := 1; i < 9; i++ {
		if pos(fmt.Sprintf("m%d", i)) < pos("m0") {
			t.Errorf("m%d ran before the canary: %v", i, order)
		}
	}
	for _, later := range []string{"m3", "m4", "m5", "m6", "m7", "m8"} {
		for _, early := range []string{"m1", "m2"} {
			if pos(later) < pos(early) {
				t.Errorf("batch 2 member %s ran before batch 1 member %s: %v", later, early, order)
			}
		}
	}
	for m, ms := range rs.Members {
		if !ms.New || ms.Revision != st.Items[m].AppliedHash[:12] || ms.Canary != (m == "m0") {
			t.Errorf("member %s: %+v", m, ms)
		}
	}
	var completed *rollout.Condition
	for i, c := range rs.Conditions {
		if c.Type == rollout.ConditionCompleted {
			completed = &rs.Conditions[i]
		}
	}
	if completed == nil || completed.Status != "True" || completed.LastUpdateTime.IsZero() || completed.LastTransitionTime.IsZero() {
		t.Errorf("conditions %+v", rs.Conditions)
	}

	// Nothing changes: nothing runs, and no job starts.
	if p := PlanJob(ex, st); !p.Noop() {
		t.Errorf("settled rollout plans a job: %+v", p)
	}
	// A new spec: a new rollout, canary first again; db does not run.
	ex2 := fleet(9, `{"export":"v2"}`, s)
	n := len(h.d.callList())
	st2 := h.e.Apply(context.Background(), ex2, st, h.run("job-2"))
	if !st2.Succeeded() || st2.Rollouts["fleet"].Phase != rollout.PhaseCompleted || st2.Rollouts["fleet"].Revision == rs.Revision {
		t.Fatalf("update: %s %v %+v", st2.Phase, st2.LastError, st2.Rollouts["fleet"])
	}
	if got := h.d.reconciledSince(n); got[0] != "m0" || len(got) != 9 || slices.Contains(got, "db") {
		t.Errorf("update ran %v; want the canary m0 first, then the 8 others, not db", got)
	}
	if prev := st2.Rollouts["fleet"].Previous["m0"]; prev.Hash() != ex.Items["m0"].Hash() {
		t.Errorf("previous spec of the canary is not v1: %s", prev.Config)
	}
}

func TestRolloutAutoFailRevertsCanary(t *testing.T) {
	h := newHarness(0)
	h.autoAdvance(t)
	hs := &healthScript{}
	h.e.HealthCommand = hs.run
	s := &rollout.Strategy{CanaryMembers: []string{"m2"}, Duration: 5 * time.Minute, AutoPause: intp(5), AutoFail: intp(1),
		Health: rollout.Health{Command: []string{"check"}, Interval: time.Minute}}
	v1 := fleet(4, `{"export":"v1"}`, s)
	st := h.e.Apply(context.Background(), v1, Status{}, h.run("job-1"))
	if !st.Succeeded() {
		t.Fatalf("create: %v", st.LastError)
	}
	hs.set("m2", true)
	v2 := fleet(4, `{"export":"v2"}`, s)
	n := len(h.d.callList())
	st2 := h.e.Apply(context.Background(), v2, st, h.run("job-2"))
	rs := st2.Rollouts["fleet"]
	if st2.Phase != core.PhaseFailed || st2.LastError == nil || st2.LastError.Reason != ReasonCanaryFailed {
		t.Fatalf("execution %s %+v", st2.Phase, st2.LastError)
	}
	if rs.Phase != rollout.PhaseCanaryFailed || rs.Reason != rollout.ReasonAutoFail {
		t.Fatalf("rollout %+v", rs.State)
	}
	// The canary ran v2, was reverted to v1; nobody else moved.
	if got := h.d.reconciledSince(n); !slices.Equal(got, []string{"m2", "m2"}) {
		t.Errorf("ran %v; want m2 (v2) then m2 (reverted to v1)", got)
	}
	m2 := st2.Items["m2"]
	if m2.AppliedHash != v1.Items["m2"].Hash() || m2.Spec.Hash() != v1.Items["m2"].Hash() || string(m2.Export) != `"v1"` {
		t.Errorf("m2 not reverted: applied %s spec %s export %s", m2.AppliedHash[:8], m2.Spec.Config, m2.Export)
	}
	for m, ms := range rs.Members {
		if ms.New {
			t.Errorf("%s reported on the new spec after auto-fail", m)
		}
	}
	if rs.Members["m2"].Restarts != 2 || !strings.Contains(rs.Message, "reverted") {
		t.Errorf("member m2 %+v; message %q", rs.Members["m2"], rs.Message)
	}
	// The same spec again: nothing moves, the failure stands.
	p := PlanJob(v2, st2)
	if len(p.Run) != 0 || !slices.Equal(p.Hold, []string{"m0", "m1", "m2", "m3"}) {
		t.Errorf("plan after auto-fail: run %v hold %v", p.Run, p.Hold)
	}
	n = len(h.d.callList())
	st3 := h.e.Apply(context.Background(), v2, st2, h.run("job-3"))
	if got := h.d.reconciledSince(n); len(got) != 0 || st3.Rollouts["fleet"].Phase != rollout.PhaseCanaryFailed || st3.Phase != core.PhaseFailed {
		t.Errorf("held rollout ran %v, phase %s", got, st3.Rollouts["fleet"].Phase)
	}
	// A new reconcile trigger tries the canary again; now it is healthy.
	hs.set("m2", false)
	v2.ReconcileTrigger = "again"
	st4 := h.e.Apply(context.Background(), v2, st3, h.run("job-4"))
	if !st4.Succeeded() || st4.Rollouts["fleet"].Phase != rollout.PhaseCompleted {
		t.Fatalf("retry: %s %v %+v", st4.Phase, st4.LastError, st4.Rollouts["fleet"].State)
	}
}

func TestRolloutFailingCanaryMemberRevertsLikeAutoFail(t *testing.T) {
	h := newHarness(0)
	s := &rollout.Strategy{CanaryCount: 1, Batches: []rollout.Step{{Count: 1}, {Percent: 100}}}
	v1 := fleet(3, `{"export":"v1"}`, s)
	st := h.e.Apply(context.Background(), v1, Status{}, h.run("job-1"))
	v2 := fleet(3, `{"export":"v2"}`, s)
	v2.Items["m0"] = item(`{"fail":true}`)
	n := len(h.d.callList())
	st2 := h.e.Apply(context.Background(), v2, st, h.run("job-2"))
	rs := st2.Rollouts["fleet"]
	if st2.Phase != core.PhaseFailed || rs.Phase != rollout.PhaseCanaryFailed || rs.Reason != rollout.ReasonCanaryFailed {
		t.Fatalf("%s %+v", st2.Phase, rs.State)
	}
	if !strings.Contains(rs.Message, "item m0 is broken") {
		t.Errorf("message %q does not carry the member's error", rs.Message)
	}
	if got := h.d.reconciledSince(n); !slices.Equal(got, []string{"m0", "m0"}) {
		t.Errorf("ran %v", got)
	}
	if st2.Items["m0"].AppliedHash != v1.Items["m0"].Hash() || st2.Items["m0"].Phase != core.PhaseSucceeded {
		t.Errorf("m0 not back on v1: %+v", st2.Items["m0"])
	}
	if st2.Items["m1"].Spec.Hash() != v1.Items["m1"].Hash() {
		t.Errorf("held member m1 took the new spec into its status")
	}
}

func TestRolloutAutoPauseIsResumable(t *testing.T) {
	h := newHarness(0)
	h.autoAdvance(t)
	hs := &healthScript{}
	h.e.HealthCommand = hs.run
	s := &rollout.Strategy{CanaryCount: 1, Duration: 3 * time.Minute, AutoPause: intp(1),
		Health: rollout.Health{Command: []string{"check"}, Interval: time.Minute}}
	hs.set("m0", true)
	ex := fleet(3, "", s)
	st := h.e.Apply(context.Background(), ex, Status{}, h.run("job-1"))
	rs := st.Rollouts["fleet"]
	if rs.Phase != rollout.PhaseCanaryPaused || rs.Reason != rollout.ReasonAutoPause || st.Phase != core.PhaseProgressing ||
		st.LastError == nil || st.LastError.Reason != ReasonRolloutStopped {
		t.Fatalf("%s %+v %+v", st.Phase, st.LastError, rs.State)
	}
	if !rs.Members["m0"].New || rs.Members["m1"].New || st.Items["m1"].Phase != core.PhaseInit {
		t.Errorf("canary must stay, the rest untouched: %+v %+v", rs.Members, st.Items["m1"])
	}
	// Same trigger: still paused, nothing runs.
	n := len(h.d.callList())
	st2 := h.e.Apply(context.Background(), ex, st, h.run("job-2"))
	if got := h.d.reconciledSince(n); len(got) != 0 || st2.Rollouts["fleet"].Phase != rollout.PhaseCanaryPaused {
		t.Errorf("paused rollout ran %v", got)
	}
	// A new trigger lifts the pause: the canary bakes again, healthy now.
	hs.set("m0", false)
	ex.ReconcileTrigger = "resume"
	st3 := h.e.Apply(context.Background(), ex, st2, h.run("job-3"))
	if !st3.Succeeded() || st3.Rollouts["fleet"].Phase != rollout.PhaseCompleted {
		t.Fatalf("resume: %s %v %+v", st3.Phase, st3.LastError, st3.Rollouts["fleet"].State)
	}
}

func TestRolloutManualPauseStopsAfterEachStage(t *testing.T) {
	h := newHarness(0)
	s := &rollout.Strategy{CanaryCount: 1, Batches: []rollout.Step{{Count: 1}, {Percent: 100}}, Paused: true}
	ex := fleet(4, "", s)
	st := h.e.Apply(context.Background(), ex, Status{}, h.run("job-1"))
	if rs := st.Rollouts["fleet"]; rs.Phase != rollout.PhaseCanaryPaused || rs.Reason != rollout.ReasonManualPause {
		t.Fatalf("after the canary: %+v", rs.State)
	}
	if got := h.d.reconciledSince(0); !slices.Equal(got, []string{"db", "m0"}) && !slices.Equal(got, []string{"m0", "db"}) {
		t.Errorf("ran %v", got)
	}
	p := PlanJob(ex, st)
	if !slices.Equal(p.Run, []string{"m1"}) || !slices.Equal(p.Hold, []string{"m2", "m3"}) {
		t.Errorf("plan of the next stage: run %v hold %v", p.Run, p.Hold)
	}
	n := len(h.d.callList())
	st2 := h.e.Apply(context.Background(), ex, st, h.run("job-2"))
	if rs := st2.Rollouts["fleet"]; rs.Phase != rollout.PhaseRollingOut || rs.Reason != rollout.ReasonManualPause {
		t.Fatalf("after batch 1: %+v", rs.State)
	}
	if got := h.d.reconciledSince(n); !slices.Equal(got, []string{"m1"}) {
		t.Errorf("batch 1 ran %v", got)
	}
	s.Paused = false
	n = len(h.d.callList())
	st3 := h.e.Apply(context.Background(), ex, st2, h.run("job-3"))
	if !st3.Succeeded() || st3.Rollouts["fleet"].Phase != rollout.PhaseCompleted {
		t.Fatalf("unpaused: %s %+v", st3.Phase, st3.Rollouts["fleet"].State)
	}
	if got := h.d.reconciledSince(n); !slices.Equal(got, []string{"m2", "m3"}) && !slices.Equal(got, []string{"m3", "m2"}) {
		t.Errorf("the rest ran %v", got)
	}
}

func TestRolloutNewSpecDuringPauseStartsNewCanary(t *testing.T) {
	h := newHarness(0)
	s := &rollout.Strategy{CanaryMembers: []string{"m1"}, Paused: true}
	v1 := fleet(3, `{"export":"v1"}`, s)
	s.Paused = false
	st := h.e.Apply(context.Background(), v1, Status{}, h.run("job-1"))
	s.Paused = true
	v2 := fleet(3, `{"export":"v2"}`, s)
	st2 := h.e.Apply(context.Background(), v2, st, h.run("job-2"))
	if rs := st2.Rollouts["fleet"]; rs.Phase != rollout.PhaseCanaryPaused || !rs.Members["m1"].New || rs.Members["m0"].New {
		t.Fatalf("v2 paused at the canary: %+v %+v", rs.State, rs.Members)
	}
	v3 := fleet(3, `{"export":"v3"}`, s)
	n := len(h.d.callList())
	st3 := h.e.Apply(context.Background(), v3, st2, h.run("job-3"))
	rs := st3.Rollouts["fleet"]
	if got := h.d.reconciledSince(n); !slices.Equal(got, []string{"m1"}) {
		t.Errorf("v3 ran %v; want only the canary", got)
	}
	if rs.Phase != rollout.PhaseCanaryPaused || rs.Revision == st2.Rollouts["fleet"].Revision || string(st3.Items["m1"].Export) != `"v3"` ||
		string(st3.Items["m0"].Export) != `"v1"` {
		t.Errorf("v3: %+v m1 %s m0 %s", rs.State, st3.Items["m1"].Export, st3.Items["m0"].Export)
	}
}

func TestRolloutInterruptedBakeResumes(t *testing.T) {
	h := newHarness(0)
	s := &rollout.Strategy{CanaryCount: 1, Duration: 10 * time.Minute}
	ex := fleet(2, "", s)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-h.clock.sleeper // the bake waits
		h.clock.Advance(4 * time.Minute)
		<-h.clock.sleeper
		cancel()
	}()
	st := h.e.Apply(ctx, ex, Status{}, h.run("job-1"))
	rs := st.Rollouts["fleet"]
	if rs.Phase != rollout.PhaseCanary || rs.Reason != rollout.ReasonInterrupted || rs.BakeStart.IsZero() || st.Succeeded() {
		t.Fatalf("%s %+v", st.Phase, rs.State)
	}
	h.autoAdvance(t)
	before := h.clock.Now()
	st2 := h.e.Apply(context.Background(), ex, st, h.run("job-2"))
	if !st2.Succeeded() || st2.Rollouts["fleet"].Phase != rollout.PhaseCompleted {
		t.Fatalf("resume: %s %v", st2.Phase, st2.LastError)
	}
	if waited := h.clock.Now().Sub(before); waited != 6*time.Minute {
		t.Errorf("resumed bake waited %s; want the 6m left", waited)
	}
}

// BenchmarkRollout50 measures the engine's own cost of a rollout of 50
// zero-latency mock members (canary, then 25%, 50%, 100% batches) with
// no bake, against the same items without a rollout.
func BenchmarkRollout50(b *testing.B) {
	for _, withRollout := range []bool{false, true} {
		b.Run(fmt.Sprintf("rollout=%v", withRollout), func(b *testing.B) {
			reg := deployer.NewRegistry()
			reg.Register(mock.New(), "mock")
			e := New(reg, 10)
			ex := Execution{Name: "bench", Items: map[string]ItemSpec{}, Groups: map[string]string{}}
			for i := range 50 {
				m := fmt.Sprintf("cluster-%02d", i)
				ex.Items[m] = ItemSpec{Type: "mock", Config: json.RawMessage(`{"export":"v1"}`), Timeout: DefaultTimeout, UpdateOnChangeOnly: true}
				ex.Groups[m] = "fleet"
			}
			if withRollout {
				ex.Rollout = &rollout.Strategy{CanaryCount: 1, Batches: []rollout.Step{{Percent: 25}, {Percent: 50}, {Percent: 100}}}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				st := e.Apply(context.Background(), ex, Status{}, Run{JobID: "job"})
				if !st.Succeeded() {
					b.Fatalf("phase %s: %v", st.Phase, st.LastError)
				}
			}
		})
	}
}

// Ctrl-C in the middle of a batch: the members that finished keep the new
// spec, the interrupted one records its interruption, and the next apply
// runs only what the batch has left.
func TestRolloutInterruptedBatchResumes(t *testing.T) {
	h := newHarness(0)
	g := newGate()
	s := &rollout.Strategy{CanaryCount: 1, Batches: []rollout.Step{{Count: 1}, {Percent: 100}}}
	ex := fleet(4, "", s)
	ex.Items["m2"] = item(fmt.Sprintf(`{"gate":%q}`, g))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for started := range h.d.started {
			if started == "Reconcile:m2" {
				cancel()
				return
			}
		}
	}()
	st := h.e.Apply(ctx, ex, Status{}, h.run("job-1"))
	rs := st.Rollouts["fleet"]
	if st.Phase != core.PhaseFailed || st.LastError.Reason != core.ReasonInterruptOperation || rs.Phase != rollout.PhaseRollingOut ||
		rs.Reason != rollout.ReasonInterrupted {
		t.Fatalf("%s %+v %+v", st.Phase, st.LastError, rs.State)
	}
	if !rs.Members["m0"].New || !rs.Members["m1"].New || rs.Members["m2"].New || st.Items["m2"].Phase != core.PhaseFailed {
		t.Errorf("members %+v, m2 %s", rs.Members, st.Items["m2"].Phase)
	}
	close(gate(g))
	n := len(h.d.callList())
	p := PlanJob(ex, st)
	st2 := h.e.Apply(context.Background(), ex, st, h.run("job-2"))
	got := h.d.reconciledSince(n)
	slices.Sort(got)
	want := slices.DeleteFunc([]string{"m2", "m3"}, func(m string) bool { return st.Items[m].Phase == core.PhaseSucceeded })
	if !st2.Succeeded() || st2.Rollouts["fleet"].Phase != rollout.PhaseCompleted || !slices.Equal(got, want) {
		t.Errorf("resume ran %v (want %v, planned %v): %s %+v", got, want, p.Run, st2.Phase, st2.Rollouts["fleet"].State)
	}
}

// instantClock lets a bake pass at once: every wait moves time on.
type instantClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *instantClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *instantClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	c.mu.Unlock()
	return ch
}

func (c *instantClock) AfterFunc(time.Duration, func()) func() bool {
	return func() bool { return true }
}

// BenchmarkRolloutBake50 is BenchmarkRollout50 with a 10m bake and a
// health check every 10s, on a clock that lets the bake pass at once: the
// engine's own cost of baking (61 rounds of health checks, no command).
func BenchmarkRolloutBake50(b *testing.B) {
	reg := deployer.NewRegistry()
	reg.Register(mock.New(), "mock")
	e := New(reg, 10)
	e.Clock = &instantClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	ex := Execution{Name: "bench", Items: map[string]ItemSpec{}, Groups: map[string]string{},
		Rollout: &rollout.Strategy{CanaryCount: 2, Duration: 10 * time.Minute, Batches: []rollout.Step{{Percent: 25}, {Percent: 50}, {Percent: 100}},
			AutoFail: intp(0), Health: rollout.Health{Interval: 10 * time.Second}}}
	for i := range 50 {
		m := fmt.Sprintf("cluster-%02d", i)
		ex.Items[m] = ItemSpec{Type: "mock", Config: json.RawMessage(`{"export":"v1"}`), Timeout: DefaultTimeout, UpdateOnChangeOnly: true}
		ex.Groups[m] = "fleet"
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		st := e.Apply(context.Background(), ex, Status{}, Run{JobID: "job"})
		if !st.Succeeded() || st.Rollouts["fleet"].Phase != rollout.PhaseCompleted {
			b.Fatalf("phase %s: %v", st.Phase, st.LastError)
		}
	}
}

// podDeployer is the fake deployer with pods: Health reports the restarts
// and readiness a test sets per item.
type podDeployer struct {
	*fakeDeployer
	mu       sync.Mutex
	restarts map[string]int
	unready  map[string]bool
}

func (p *podDeployer) Health(_ context.Context, req deployer.Request) (deployer.Health, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return deployer.Health{Restarts: p.restarts[req.Item], Ready: !p.unready[req.Item], Message: "pod of " + req.Item}, nil
}

func (p *podDeployer) setM0(restarts int, unready bool) {
	const item = "m0"
	p.mu.Lock()
	defer p.mu.Unlock()
	p.restarts[item], p.unready[item] = restarts, unready
}

func TestRolloutJudgesPodsOfKubernetesLikeItems(t *testing.T) {
	h := newHarness(0)
	pd := &podDeployer{fakeDeployer: h.d, restarts: map[string]int{}, unready: map[string]bool{}}
	h.e.Deployers.Register(pd, "fake") // the same fake, with Health
	h.autoAdvance(t)
	s := &rollout.Strategy{CanaryCount: 1, Duration: 5 * time.Minute, AutoPause: intp(1), AutoFail: intp(3)}

	// Restarts the pods had before the bake began count: they are the
	// canary's new pods. 2 > auto_pause's 1, not > auto_fail's 3.
	pd.setM0(2, false)
	ex := fleet(3, "", s)
	st := h.e.Apply(context.Background(), ex, Status{}, h.run("job-1"))
	rs := st.Rollouts["fleet"]
	if rs.Phase != rollout.PhaseCanaryPaused || rs.Reason != rollout.ReasonAutoPause || !strings.Contains(rs.Message, "restarted 2 times during the bake: pod of m0") {
		t.Fatalf("%+v", rs.State)
	}
	// Lifted by a new trigger, the bake counts from the 4 restarts seen
	// now: none more, so the rollout completes.
	pd.setM0(4, false)
	ex.ReconcileTrigger = "go"
	st = h.e.Apply(context.Background(), ex, st, h.run("job-2"))
	if rs := st.Rollouts["fleet"]; rs.Phase != rollout.PhaseCompleted || rs.Members["m0"].Restarts != 0 {
		t.Fatalf("rebaked: %+v %+v", rs.State, rs.Members["m0"])
	}
	// A new spec whose canary is not ready at the end of the bake:
	// paused, not promoted.
	pd.setM0(0, true)
	v2 := fleet(3, `{"export":"v2"}`, s)
	st = h.e.Apply(context.Background(), v2, st, h.run("job-3"))
	if rs := st.Rollouts["fleet"]; rs.Phase != rollout.PhaseCanaryPaused || !strings.Contains(rs.Message, "not ready at the end of the bake: m0: pod of m0") {
		t.Fatalf("unready: %+v", rs.State)
	}
	// Another spec, crash-looping past auto_fail: the canary goes back to
	// what it ran when this rollout began (v2).
	pd.setM0(9, false)
	v3 := fleet(3, `{"export":"v3"}`, s)
	st = h.e.Apply(context.Background(), v3, st, h.run("job-4"))
	if rs := st.Rollouts["fleet"]; rs.Phase != rollout.PhaseCanaryFailed || !strings.Contains(rs.Message, "restarted 9 times") ||
		string(st.Items["m0"].Export) != `"v2"` || len(st.Items["m1"].Export) != 0 {
		t.Fatalf("auto-fail: %+v m0 %s m1 %s", rs.State, st.Items["m0"].Export, st.Items["m1"].Export)
	}
}

// keyed is an execution whose members are target keys, each made of two
// items ("app-<key>", "db-<key>"), as an installation renders them.
func keyed(keys []string, cfg string, s *rollout.Strategy) Execution {
	ex := Execution{Name: "ex", Items: map[string]ItemSpec{"shared": item("")}, Groups: map[string]string{},
		Members: map[string]string{}, Rollout: s}
	for _, k := range keys {
		for _, kind := range []string{"app", "db"} {
			n := kind + "-" + k
			ex.Items[n] = item(cfg)
			ex.Groups[n], ex.Members[n] = "clusters", k
		}
	}
	return ex
}

func TestRolloutMembersOfSeveralItemsMoveAndRevertTogether(t *testing.T) {
	h := newHarness(0)
	h.autoAdvance(t)
	hs := &healthScript{}
	h.e.HealthCommand = hs.run
	s := &rollout.Strategy{CanaryMembers: []string{"eu"}, Duration: 3 * time.Minute, AutoFail: intp(0),
		Health: rollout.Health{Command: []string{"check"}, Interval: time.Minute}}
	keys := []string{"eu", "us", "ap"}
	v1 := keyed(keys, `{"export":"v1"}`, s)
	if got := GroupMembers(v1)["clusters"]; !slices.Equal(got, []string{"ap", "eu", "us"}) {
		t.Fatalf("members %v", got)
	}
	n := len(h.d.callList())
	st := h.e.Apply(context.Background(), v1, Status{}, h.run("job-1"))
	if !st.Succeeded() {
		t.Fatalf("create: %v", st.LastError)
	}
	// The canary key's two items run first (with the non-member), the rest after the bake.
	ran := h.d.reconciledSince(n)
	if first := ran[:3]; !slices.Equal(sorted(first), []string{"app-eu", "db-eu", "shared"}) {
		t.Errorf("first round %v", first)
	}
	rs := st.Rollouts["clusters"]
	if rs.Phase != rollout.PhaseCompleted || !slices.Equal(rs.Canary, []string{"eu"}) || len(rs.Members) != 3 || !rs.Members["us"].New {
		t.Fatalf("rollout %+v members %v", rs.State, rs.Members)
	}
	if calls := hs.calls["eu"]; calls == 0 {
		t.Errorf("the health command never ran for member eu")
	}
	// A sick canary fails: both its items go back to v1, nobody else moves.
	hs.set("eu", true)
	v2 := keyed(keys, `{"export":"v2"}`, s)
	n = len(h.d.callList())
	st2 := h.e.Apply(context.Background(), v2, st, h.run("job-2"))
	if st2.Rollouts["clusters"].Phase != rollout.PhaseCanaryFailed {
		t.Fatalf("rollout %+v", st2.Rollouts["clusters"].State)
	}
	if got := sorted(h.d.reconciledSince(n)); !slices.Equal(got, []string{"app-eu", "app-eu", "db-eu", "db-eu"}) {
		t.Errorf("ran %v; want the canary's items, then their revert", got)
	}
	for _, it := range []string{"app-eu", "db-eu"} {
		if is := st2.Items[it]; is.AppliedHash != v1.Items[it].Hash() {
			t.Errorf("%s not reverted to v1", it)
		}
	}
	if p := PlanJob(v2, st2); !slices.Equal(p.Hold, []string{"app-ap", "app-eu", "app-us", "db-ap", "db-eu", "db-us"}) {
		t.Errorf("hold after auto-fail: %v", p.Hold)
	}
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
