package rollout

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// jumpClock is a clock whose After fires at once, moving time on.
type jumpClock struct{ now time.Time }

func (c *jumpClock) Now() time.Time { return c.now }

func (c *jumpClock) After(d time.Duration) <-chan time.Time {
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

type verdict struct {
	phase          Phase
	reason, msg    string
	passed, called bool
}

func bakeOf(clock *jumpClock, members []string, probe func(string) (int, string, bool)) (*Bake, *verdict) {
	v := &verdict{}
	return &Bake{
		State:   &State{BakeStart: clock.now},
		Members: members,
		Probe:   func(_ context.Context, m string) (int, string, bool) { return probe(m) },
		Stop:    func(p Phase, r, msg string) { *v = verdict{phase: p, reason: r, msg: msg, called: true} },
		Pass:    func() { v.passed, v.called = true, true },
	}, v
}

func TestRunBakes(t *testing.T) {
	one, five := 1, 5
	s := Strategy{Duration: time.Minute, AutoPause: &one, AutoFail: &five, Health: Health{Interval: 10 * time.Second}}
	clock := &jumpClock{now: time.Unix(0, 0)}
	sick, sickV := bakeOf(clock, []string{"a", "b"}, func(m string) (int, string, bool) {
		if m == "b" && clock.now.Sub(time.Unix(0, 0)) >= 30*time.Second {
			return 6, ": pod x restarted 6 times", true
		}
		return 0, "", true
	})
	unready, unreadyV := bakeOf(clock, []string{"c"}, func(string) (int, string, bool) { return 0, ": not ready", false })
	healthy, healthyV := bakeOf(clock, []string{"a"}, func(string) (int, string, bool) { return 1, "", true })
	RunBakes(context.Background(), clock, s, []*Bake{healthy, sick, unready})
	if !healthyV.passed {
		t.Errorf("one restart, auto_pause at more than one: %+v", healthyV)
	}
	if sickV.phase != PhaseCanaryFailed || sickV.reason != ReasonAutoFail || !strings.Contains(sickV.msg, "canary member b restarted 6 times during the bake: pod x") {
		t.Errorf("sick: %+v", sickV)
	}
	if unreadyV.reason != ReasonAutoPause || !strings.Contains(unreadyV.msg, "not ready at the end of the bake: c: not ready") {
		t.Errorf("unready: %+v", unreadyV)
	}
	if got := clock.now.Sub(time.Unix(0, 0)); got != time.Minute {
		t.Errorf("the bake took %s, want its duration", got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	clock = &jumpClock{now: time.Unix(0, 0)}
	b, v := bakeOf(clock, []string{"a"}, func(string) (int, string, bool) { return 0, "", true })
	blocked := &blockingClock{jumpClock: clock}
	RunBakes(ctx, blocked, s, []*Bake{b})
	if v.reason != ReasonInterrupted || v.phase != PhaseCanary {
		t.Errorf("interrupted: %+v", v)
	}
}

// blockingClock never fires: only ctx ends a wait.
type blockingClock struct{ *jumpClock }

func (blockingClock) After(time.Duration) <-chan time.Time { return nil }

func TestMemberHealth(t *testing.T) {
	s := Strategy{Health: Health{Command: []string{"check"}}}
	st := &State{RestartBase: map[string]int{"x/a": 2}}
	fail := errors.New("exit status 1")
	var env []string
	run := func(_ context.Context, _, e []string, _ time.Duration) error { env = e; return fail }
	items := []ItemHealth{{Key: "x/a", Restarts: 3, Ready: true, Message: "pod a"}, {Key: "x/b", Restarts: 2, Ready: false, Message: "pod b"}}
	n, why, ready, err := s.MemberHealth(context.Background(), st, items, run, HealthEnv{Member: "eu", Items: []string{"x/a", "x/b"}})
	// a: 3-2 = 1, b: 2; the sickest is b; plus one failed command.
	if n != 3 || ready || err == nil || !strings.Contains(why, "last health command: exit status 1") {
		t.Errorf("restarts %d why %q ready %t err %v", n, why, ready, err)
	}
	if st.Members["eu"].Restarts != 3 || st.HealthFailures["eu"] != 1 {
		t.Errorf("recorded %+v, failures %v", st.Members["eu"], st.HealthFailures)
	}
	if !strings.Contains(strings.Join(env, " "), "LANDSCAPER_MEMBER_ITEMS=x/a,x/b") {
		t.Errorf("env %v", env)
	}
	s.Health.Command = nil
	if n, why, _, _ := s.MemberHealth(context.Background(), st, items, run, HealthEnv{Member: "eu"}); n != 2 || why != ": pod b" {
		t.Errorf("without a command: %d %q, want the sickest item's 2 and its message", n, why)
	}
}

// A first bake counts restarts from zero without asking; a bake that
// starts again after an auto-pause counts from what the items show then;
// a bake an earlier apply began goes on from its start.
func TestBeginBake(t *testing.T) {
	t0 := time.Unix(0, 0)
	asked := 0
	base := func() map[string]int { asked++; return map[string]int{"x/a": 4} }
	var s State
	s.BeginBake(t0, time.Minute, base)
	if asked != 0 || len(s.RestartBase) != 0 || !s.BakeStart.Equal(t0) || s.Phase != PhaseCanary {
		t.Fatalf("first bake: asked %d, %+v", asked, s)
	}
	s.BeginBake(t0.Add(time.Hour), time.Minute, base)
	if !s.BakeStart.Equal(t0) || asked != 0 {
		t.Errorf("resumed bake restarted: %v, asked %d", s.BakeStart, asked)
	}
	s.BakeStart, s.Rebake = time.Time{}, true
	s.BeginBake(t0.Add(2*time.Hour), time.Minute, base)
	if asked != 1 || s.RestartBase["x/a"] != 4 || s.Rebake || !s.BakeStart.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("rebake: asked %d, %+v", asked, s)
	}
}
