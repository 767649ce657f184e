package installation

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/rollout"
)

// fleetBP renders one sub-installation per key of the target map
// "clusters" ("s-<key>", importing the element and the data object v),
// as Landscaper's blueprint-multiple-subinst does, and a sub-installation
// "agg" for no cluster.
type fleetBP struct{ keys []string }

func (b *fleetBP) Digest() string { return "fleet" }

func (b *fleetBP) Render(_ context.Context, _ Input) (*Rendered, error) {
	out := &Rendered{Items: map[string]engine.ItemSpec{}}
	for _, k := range b.keys {
		out.Subs = append(out.Subs, Sub{Name: "s-" + k, Blueprint: &fakeBP{id: "member"},
			DataImports: map[string]string{"v": "v"}, TargetImports: map[string]string{"cluster": "clusters[" + k + "]"}})
	}
	out.Subs = append(out.Subs, sub("agg", &fakeBP{id: "agg"}, "", map[string]string{"v": "v"}))
	return out, nil
}

func (b *fleetBP) Exports(context.Context, Input, ExportValues) (Exports, error) {
	return Exports{}, nil
}

func fleetImports(keys []string, v string) Imports {
	m := map[string]*deployer.Target{}
	for _, k := range keys {
		m[k] = &deployer.Target{Type: "example.com/cluster", Config: []byte(`{}`)}
	}
	return Imports{Data: map[string]any{"v": v}, TargetMaps: map[string]map[string]*deployer.Target{"clusters": m}}
}

func keysN(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("c%02d", i)
	}
	return out
}

// onNew lists the members whose sub-installation ran with v.
func onNew(st *Status, bp *fleetBP, v string) []string {
	var out []string
	for _, k := range bp.keys {
		if s := st.Subs["s-"+k]; s.Succeeded() && s.InputHash == InputHash(&fakeBP{id: "member"}, Imports{Data: map[string]any{"v": v},
			Targets: map[string]*deployer.Target{"cluster": {Type: "example.com/cluster", Config: []byte(`{}`)}}}) {
			out = append(out, k)
		}
	}
	return out
}

func TestSubRolloutPausedStageByStageThenCompleted(t *testing.T) {
	r, _ := newRunner()
	bp := &fleetBP{keys: keysN(5)}
	r.Rollout = &rollout.Strategy{CanaryMembers: []string{"c03"}, Batches: []rollout.Step{{Count: 2}, {Percent: 100}}, Paused: true}
	st := r.Apply(context.Background(), bp, fleetImports(bp.keys, "v1"), nil)
	// A first create goes canary first too: one stage per apply.
	if st.Phase != core.PhaseProgressing || st.LastError == nil || st.LastError.Reason != engine.ReasonRolloutStopped {
		t.Fatalf("paused create: phase %s %v", st.Phase, st.LastError)
	}
	if got := onNew(st, bp, "v1"); !slices.Equal(got, []string{"c03"}) {
		t.Fatalf("after the canary stage, on v1: %v", got)
	}
	if !st.Subs["agg"].Succeeded() {
		t.Errorf("a sub-installation outside the group waited for the rollout")
	}
	rs := st.Rollouts["clusters"]
	if rs == nil || rs.Reason != rollout.ReasonManualPause || rs.Phase != rollout.PhaseCanaryPaused {
		t.Fatalf("rollout %+v", rs)
	}
	p, err := PlanTree(context.Background(), bp, fleetImports(bp.keys, "v1"), st, "", r.Rollout)
	if err != nil {
		t.Fatal(err)
	}
	d := p.SubRollouts["clusters"]
	if len(d.Stages) != 1 || !slices.Equal(d.Stages[0].Run, []string{"c00", "c01"}) || !slices.Equal(d.Hold, []string{"c02", "c04"}) {
		t.Fatalf("plan of the next stage: %+v", d)
	}
	st = r.Apply(context.Background(), bp, fleetImports(bp.keys, "v1"), st)
	if got := onNew(st, bp, "v1"); !slices.Equal(got, []string{"c00", "c01", "c03"}) {
		t.Fatalf("after batch 1, on v1: %v", got)
	}
	r.Rollout.Paused = false
	st = r.Apply(context.Background(), bp, fleetImports(bp.keys, "v1"), st)
	if !st.Succeeded() || st.Rollouts["clusters"].Phase != rollout.PhaseCompleted || len(onNew(st, bp, "v1")) != 5 {
		t.Fatalf("unpaused: phase %s %v, rollout %+v", st.Phase, st.LastError, st.Rollouts["clusters"].State)
	}
	if p, _ := PlanTree(context.Background(), bp, fleetImports(bp.keys, "v1"), st, "", r.Rollout); !p.Noop {
		t.Errorf("a completed rollout plans a job")
	}
}

// Ctrl-C during the canary's bake: the canary keeps the new spec, the
// rest the old, and the next apply bakes on from where it stopped.
func TestSubRolloutInterruptedBakeResumes(t *testing.T) {
	r, _ := newRunner()
	bp := &fleetBP{keys: keysN(4)}
	r.Rollout = &rollout.Strategy{CanaryCount: 1}
	st := r.Apply(context.Background(), bp, fleetImports(bp.keys, "v1"), nil)
	if !st.Succeeded() {
		t.Fatalf("create: %v", st.LastError)
	}
	r.Rollout.Duration = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	st = r.Apply(ctx, bp, fleetImports(bp.keys, "v2"), st)
	rs := st.Rollouts["clusters"]
	if rs.Reason != rollout.ReasonInterrupted || rs.BakeStart.IsZero() || rs.Baked {
		t.Fatalf("interrupted bake: %+v", rs.State)
	}
	if got := onNew(st, bp, "v2"); !slices.Equal(got, []string{"c00"}) {
		t.Fatalf("on v2 after Ctrl-C: %v", got)
	}
	// The bake started an hour ago by now: the next apply promotes.
	r.Rollout.Duration = 0
	st = r.Apply(context.Background(), bp, fleetImports(bp.keys, "v2"), st)
	if !st.Succeeded() || len(onNew(st, bp, "v2")) != 4 {
		t.Fatalf("resumed: phase %s %v on v2 %v", st.Phase, st.LastError, onNew(st, bp, "v2"))
	}
}

// BenchmarkSubRollout50 measures the tree's rollout overhead for 50
// sub-installation members with mock items: a new spec, canary and three
// batches, no bake; beside the same job without a rollout.
func BenchmarkSubRollout50(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("rollout=%t", on), func(b *testing.B) {
			r, _ := newRunner()
			fleet := &fleetBP{keys: keysN(50)}
			if on {
				r.Rollout = &rollout.Strategy{CanaryCount: 1, Batches: []rollout.Step{{Percent: 10}, {Percent: 50}, {Percent: 100}}}
			}
			st := r.Apply(context.Background(), fleet, fleetImports(fleet.keys, "v0"), nil)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				st = r.Apply(context.Background(), fleet, fleetImports(fleet.keys, fmt.Sprintf("v%d", i+1)), st)
				if !st.Succeeded() {
					b.Fatalf("phase %s: %v", st.Phase, st.LastError)
				}
			}
		})
	}
}

// failingFleet is fleetBP whose sub-installation for bad fails under any
// v other than v1.
type failingFleet struct {
	fleetBP
	bad string
}

func (b *failingFleet) Render(ctx context.Context, in Input) (*Rendered, error) {
	out, err := b.fleetBP.Render(ctx, in)
	if err == nil && in.Imports.Data["v"] != "v1" {
		for i, s := range out.Subs {
			if s.Name == "s-"+b.bad {
				out.Subs[i].Blueprint = &fakeBP{id: "member", fail: true}
			}
		}
	}
	return out, err
}

// A canary sub-installation whose deploy item fails fails the rollout
// like auto-fail: its subtree runs v1 again, the rest never moved.
func TestSubRolloutFailingCanaryIsReverted(t *testing.T) {
	r, _ := newRunner()
	bp := &failingFleet{fleetBP: fleetBP{keys: keysN(3)}, bad: "c01"}
	r.Rollout = &rollout.Strategy{CanaryMembers: []string{"c01"}}
	st := r.Apply(context.Background(), bp, fleetImports(bp.keys, "v1"), nil)
	if !st.Succeeded() {
		t.Fatalf("create: %v", st.LastError)
	}
	before := st.Subs["s-c01"].Execution.Items["item"].AppliedHash
	st = r.Apply(context.Background(), bp, fleetImports(bp.keys, "v2"), st)
	rs := st.Rollouts["clusters"]
	if st.Phase != core.PhaseFailed || st.LastError.Reason != engine.ReasonCanaryFailed || rs.Phase != rollout.PhaseCanaryFailed {
		t.Fatalf("phase %s %+v, rollout %+v", st.Phase, st.LastError, rs.State)
	}
	s := st.Subs["s-c01"]
	if is := s.Execution.Items["item"]; is.AppliedHash != before || is.Phase != core.PhaseSucceeded {
		t.Errorf("canary not reverted: %s %s", is.Phase, is.AppliedHash)
	}
	if got := onNew(st, &bp.fleetBP, "v2"); len(got) != 0 {
		t.Errorf("on v2 after the failed canary: %v", got)
	}
	if got := onNew(st, &bp.fleetBP, "v1"); !slices.Equal(got, []string{"c00", "c01", "c02"}) {
		t.Errorf("on v1: %v, want every member, the canary reverted", got)
	}
	// The same spec again holds everything; the plan says so.
	p, err := PlanTree(context.Background(), bp, fleetImports(bp.keys, "v2"), st, "", r.Rollout)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.SubRollouts["clusters"]; len(d.Stages) != 0 || !slices.Equal(d.Hold, []string{"c00", "c01", "c02"}) || d.Why != rollout.ReasonCanaryFailed {
		t.Errorf("plan after the failure: %+v", d)
	}
}

// chainedFleet is fleetBP whose members import what a sibling outside
// the group, "config", exports from v.
type chainedFleet struct{ fleetBP }

func (b *chainedFleet) Render(ctx context.Context, in Input) (*Rendered, error) {
	out, err := b.fleetBP.Render(ctx, in)
	if err != nil {
		return nil, err
	}
	for i := range out.Subs {
		if out.Subs[i].Name != "agg" {
			out.Subs[i].DataImports = map[string]string{"cfg": "cfg"}
		}
	}
	out.Subs = append(out.Subs, sub("config", &fakeBP{id: "config"}, "cfg", map[string]string{"v": "v"}))
	return out, nil
}

// Members that import from a sibling are known to be current once that
// sibling has nothing to do: a completed rollout settles, and a change
// upstream moves them canary first.
func TestSubRolloutOfMembersFedBySibling(t *testing.T) {
	r, _ := newRunner()
	bp := &chainedFleet{fleetBP{keys: keysN(3)}}
	r.Rollout = &rollout.Strategy{CanaryCount: 1}
	var st *Status
	for _, v := range []string{"v1", "v2"} {
		st = r.Apply(context.Background(), bp, fleetImports(bp.keys, v), st)
		rs := st.Rollouts["clusters"]
		if !st.Succeeded() || rs.Phase != rollout.PhaseCompleted {
			t.Fatalf("%s: phase %s %v, rollout %+v", v, st.Phase, st.LastError, rs.State)
		}
		for m, ms := range rs.Members {
			if !ms.New {
				t.Errorf("%s: member %s not on the new spec", v, m)
			}
		}
		p, err := PlanTree(context.Background(), bp, fleetImports(bp.keys, v), st, "", r.Rollout)
		if err != nil || !p.Noop {
			t.Fatalf("%s: the plan after a completed rollout is not a no-op (%v): %+v", v, err, p.SubRollouts)
		}
	}
}

// Members fed by a sibling cannot know their input before the job; each
// upstream change is still a new revision, so a new spec during a paused
// rollout starts over with the canary instead of moving the batches on.
func TestSubRolloutNewUpstreamSpecIsANewRevision(t *testing.T) {
	r, _ := newRunner()
	bp := &chainedFleet{fleetBP{keys: keysN(3)}}
	r.Rollout = &rollout.Strategy{CanaryCount: 1}
	st := r.Apply(context.Background(), bp, fleetImports(bp.keys, "v1"), nil)
	r.Rollout.Paused = true
	st = r.Apply(context.Background(), bp, fleetImports(bp.keys, "v2"), st)
	r2 := st.Rollouts["clusters"].Revision
	st = r.Apply(context.Background(), bp, fleetImports(bp.keys, "v3"), st)
	rs := st.Rollouts["clusters"]
	if rs.Revision == r2 {
		t.Fatalf("v2 and v3 have the same revision %s", r2)
	}
	var moved []string
	for m, ms := range rs.Members {
		if ms.New {
			moved = append(moved, m)
		}
	}
	if !slices.Equal(moved, []string{"c00"}) || rs.Reason != rollout.ReasonManualPause {
		t.Fatalf("v3 while paused moved %v (%s), want the canary c00 alone", moved, rs.Reason)
	}
}

// Which items are members: those that target an element of a target map
// or list import of their node, grouped by the import, named by key or
// index; not an item targeting a plain import, nor a name that only
// looks like an element.
func TestExecutionGroupsItemsByElement(t *testing.T) {
	tg := &deployer.Target{Type: "x"}
	imp := Imports{
		Targets:     map[string]*deployer.Target{"single": tg, "fake[1]": tg},
		TargetLists: map[string][]*deployer.Target{"list": {tg, tg}},
		TargetMaps:  map[string]map[string]*deployer.Target{"clusters": {"eu": tg, "us": tg}},
	}
	items := map[string]engine.ItemSpec{
		"app-eu": {TargetRef: "clusters[eu]"}, "agent-eu": {TargetRef: "clusters[eu]"}, "app-us": {TargetRef: "clusters[us]"},
		"l0": {TargetRef: "list[0]"}, "l1": {TargetRef: "list[1]"},
		"plain": {TargetRef: "single"}, "named": {TargetRef: "fake[1]"}, "none": {},
	}
	if ex := execution("x", items, imp, "", nil); ex.Groups != nil || ex.Rollout != nil {
		t.Fatalf("groups without a strategy: %v", ex.Groups)
	}
	ex := execution("x", items, imp, "", &rollout.Strategy{})
	got := engine.GroupMembers(ex)
	if !slices.Equal(got["clusters"], []string{"eu", "us"}) || !slices.Equal(got["list"], []string{"0", "1"}) || len(got) != 2 {
		t.Fatalf("groups %v", got)
	}
	if ex.Members["agent-eu"] != "eu" || ex.Groups["plain"] != "" || ex.Groups["named"] != "" || ex.Groups["none"] != "" {
		t.Errorf("members %v groups %v", ex.Members, ex.Groups)
	}
}
