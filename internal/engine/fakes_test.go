package engine

import (
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"

	"context"
	"encoding/json"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// fakeClock only moves when a test moves it.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	timers  []*fakeTimer
	sleeper chan struct{} // receives a token when After is called
}

type fakeTimer struct {
	at      time.Time
	f       func()
	ch      chan time.Time
	stopped bool
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), sleeper: make(chan struct{}, 1000)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	t := &fakeTimer{at: c.now.Add(d), ch: make(chan time.Time, 1)}
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	c.sleeper <- struct{}{}
	return t.ch
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// Advance moves time and fires every timer that is due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []*fakeTimer
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.stopped:
		case !t.at.After(c.now):
			t.stopped = true
			due = append(due, t)
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
	now := c.now
	c.mu.Unlock()
	for _, t := range due {
		if t.f != nil {
			t.f()
		} else {
			t.ch <- now
		}
	}
}

// fakeDeployer behaves as each item's config says, and records calls.
type fakeDeployer struct {
	mu       sync.Mutex
	calls    []string // "op:item" in start order
	attempts map[string]int
	// reqAttempts lists Request.Attempt of every call, by "op:item".
	reqAttempts map[string][]int
	running     int
	peak        int
	started     chan string
	// adopted lists Request.Adopt.DeployItem of every call ("" for none),
	// by "op:item".
	adopted map[string][]string
}

type fakeConfig struct {
	Fail       bool            `json:"fail"`
	FailDelete bool            `json:"failDelete"`
	Transient  int             `json:"transient"`
	Block      bool            `json:"block"`  // run until ctx ends
	Gate       string          `json:"gate"`   // wait for release(gate)
	Export     json.RawMessage `json:"export"` // returned on success
	Unknown    bool            `json:"unknownError"`
	Requeue    int             `json:"requeue"`   // first N attempts: not ready, look again in 5s
	Waiting    string          `json:"waiting"`   // what a requeued attempt says it waits for
	WaitCodes  []string        `json:"waitCodes"` // the codes a timeout ending the wait adds
	Codes      []string        `json:"codes"`     // of the transient errors
	// Unreachable makes the first N attempts fail as a chart host that
	// does not resolve would (after the transient ones).
	Unreachable int `json:"unreachable"`
	// UnreachableOdd makes every odd attempt fail so.
	UnreachableOdd bool `json:"unreachableOdd"`
}

func newFakeDeployer() *fakeDeployer {
	return &fakeDeployer{attempts: map[string]int{}, reqAttempts: map[string][]int{}, adopted: map[string][]string{}, started: make(chan string, 100000)}
}

var (
	gates   sync.Map // name -> chan struct{}
	gateSeq atomic.Int64
)

// newGate names a fresh gate, so repeated test runs (-count) do not share one.
func newGate() string { return fmt.Sprintf("gate-%d", gateSeq.Add(1)) }

func gate(name string) chan struct{} {
	ch, _ := gates.LoadOrStore(name, make(chan struct{}))
	c, _ := ch.(chan struct{})
	return c
}

func (f *fakeDeployer) Validate(config json.RawMessage) error {
	var c fakeConfig
	return deployer.DecodeStrict(config, &c)
}

func (f *fakeDeployer) run(ctx context.Context, req deployer.Request) (deployer.Result, error) {
	var c fakeConfig
	if err := deployer.DecodeStrict(req.Config, &c); err != nil {
		return deployer.Result{}, core.Terminal("ConfigurationProblem", err.Error())
	}
	key := string(req.Operation) + ":" + req.Item
	f.mu.Lock()
	f.calls = append(f.calls, key)
	f.attempts[key]++
	f.reqAttempts[key] = append(f.reqAttempts[key], req.Attempt)
	from := ""
	if req.Adopt != nil {
		from = req.Adopt.DeployItem
	}
	f.adopted[key] = append(f.adopted[key], from)
	attempt := f.attempts[key]
	f.running++
	f.peak = max(f.peak, f.running)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	f.started <- key
	state := append(append([]byte(nil), req.State...), '+')
	if c.Gate != "" {
		select {
		case <-gate(c.Gate):
		case <-ctx.Done():
			return deployer.Result{State: state}, core.Terminal("Interrupted", "gate wait stopped", core.CodeInterrupted)
		}
	}
	if c.Block {
		<-ctx.Done()
		return deployer.Result{State: state}, core.Terminal("Interrupted", "stopped", core.CodeInterrupted)
	}
	if req.Operation == core.OperationDelete {
		if c.FailDelete {
			return deployer.Result{State: state}, core.Terminal("DeleteBroken", "cannot delete "+req.Item, "ERR_TEST")
		}
		return deployer.Result{}, nil
	}
	if attempt <= c.Requeue {
		return deployer.Result{State: state, RequeueAfter: 5 * time.Second, Waiting: c.Waiting, TimeoutCodes: c.WaitCodes}, nil
	}
	if attempt <= c.Unreachable || c.UnreachableOdd && attempt%2 == 1 {
		err := &net.DNSError{Err: "no such host", Name: "charts.invalid", IsNotFound: true}
		return deployer.Result{State: state}, core.TransientCause("FetchChart", "unable to fetch https://charts.invalid/app-1.0.0.tgz: "+err.Error(), err)
	}
	if attempt <= c.Transient {
		if c.Unknown {
			return deployer.Result{State: state}, fmt.Errorf("unclassified failure %d", attempt)
		}
		return deployer.Result{State: state}, core.Transient("Flaky", fmt.Sprintf("attempt %d", attempt), c.Codes...)
	}
	if c.Fail {
		return deployer.Result{State: state, ProviderStatus: json.RawMessage(`{"why":"broken"}`)},
			core.Terminal("Broken", "item "+req.Item+" is broken", "ERR_TEST")
	}
	return deployer.Result{State: state, Export: c.Export, ProviderStatus: json.RawMessage(`{"ok":true}`)}, nil
}

func (f *fakeDeployer) Reconcile(ctx context.Context, req deployer.Request) (deployer.Result, error) {
	return f.run(ctx, req)
}

func (f *fakeDeployer) Delete(ctx context.Context, req deployer.Request) (deployer.Result, error) {
	return f.run(ctx, req)
}

func (f *fakeDeployer) callList() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// position returns the index of a call, failing the test if it is absent.
func (f *fakeDeployer) position(t *testing.T, call string) int {
	t.Helper()
	for i, c := range f.callList() {
		if c == call {
			return i
		}
	}
	t.Fatalf("call %s not made; calls: %v", call, f.callList())
	return -1
}

type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) observe(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) phases(item string) []core.Phase {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []core.Phase
	for _, e := range r.events {
		if e.Item == item && e.Phase != "" {
			out = append(out, e.Phase)
		}
	}
	return out
}

type harness struct {
	e     *Engine
	d     *fakeDeployer
	clock *fakeClock
	rec   *recorder
}

func newHarness(parallelism int) *harness {
	reg := deployer.NewRegistry()
	d := newFakeDeployer()
	reg.Register(d, "fake")
	e := New(reg, parallelism)
	c := newFakeClock()
	e.Clock = c
	rec := &recorder{}
	return &harness{e: e, d: d, clock: c, rec: rec}
}

// item builds a spec of the fake type.
func item(config string, deps ...string) ItemSpec {
	if config == "" {
		config = "{}"
	}
	return ItemSpec{Type: "fake", Config: json.RawMessage(config), DependsOn: deps, UpdateOnChangeOnly: true}
}

func phasesOf(st Status) map[string]core.Phase {
	out := map[string]core.Phase{}
	for n, is := range st.Items {
		out[n] = is.Phase
	}
	return out
}

// run is a Run under jobID whose events the harness records.
func (h *harness) run(jobID string) Run {
	return Run{JobID: jobID, Observe: h.rec.observe}
}
