package rollout

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func members(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("m%02d", i)
	}
	return out
}

func TestStagesPartitionCanaryAndCumulativeBatches(t *testing.T) {
	s := Strategy{Batches: []Step{{Percent: 25}, {Count: 5}, {Percent: 100}}}
	got := Stages(s, []string{"m03"}, members(9))
	want := []Stage{
		{Index: 0, Members: []string{"m03"}, Canary: true},
		{Index: 1, Members: []string{"m00", "m01"}},        // 25% of 8, rounded up
		{Index: 2, Members: []string{"m02", "m04", "m05"}}, // 5 in total
		{Index: 3, Members: []string{"m06", "m07", "m08"}}, // the rest
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stages\n got %+v\nwant %+v", got, want)
	}
}

func TestDecidePicksCanaryFromChangedMembers(t *testing.T) {
	ms := []Member{{"a", true}, {"b", false}, {"c", false}, {"d", false}}
	d := Decide(Strategy{CanaryPercent: 50, Batches: []Step{{Percent: 100}}}, nil, ms, "r1", "")
	if !d.Fresh || !reflect.DeepEqual(d.State.Canary, []string{"b", "c"}) {
		t.Fatalf("canary %v", d.State.Canary)
	}
	if got := d.Move(); !reflect.DeepEqual(got, []string{"b", "c", "d"}) || len(d.Hold) != 0 {
		t.Errorf("move %v hold %v", got, d.Hold)
	}
	// Paused: one stage per apply.
	d = Decide(Strategy{CanaryCount: 1, Paused: true}, nil, ms, "r1", "")
	if got := d.Move(); !reflect.DeepEqual(got, []string{"b"}) || !reflect.DeepEqual(d.Hold, []string{"c", "d"}) || d.Why != ReasonManualPause {
		t.Errorf("paused: move %v hold %v why %s", got, d.Hold, d.Why)
	}
	// Nothing to change: completed at once, nothing to bake.
	d = Decide(Strategy{CanaryCount: 1, Duration: 1}, nil, []Member{{"a", true}}, "r1", "")
	if d.State.Phase != PhaseCompleted || len(d.Stages) != 0 {
		t.Errorf("settled: %+v", d)
	}
}

func TestDecideHoldsAfterFailureUntilNewTrigger(t *testing.T) {
	prev := &State{Phase: PhaseCanaryFailed, Revision: "r1", Canary: []string{"a"}, Reason: ReasonAutoFail, Trigger: "t1"}
	ms := []Member{{"a", false}, {"b", false}}
	d := Decide(Strategy{CanaryCount: 1}, prev, ms, "r1", "t1")
	if len(d.Stages) != 0 || !reflect.DeepEqual(d.Hold, []string{"a", "b"}) || d.Why != ReasonAutoFail {
		t.Errorf("held: %+v", d)
	}
	d = Decide(Strategy{CanaryCount: 1}, prev, ms, "r1", "t2")
	if len(d.Stages) != 2 || !d.Stages[0].Canary || d.State.Reason != "" {
		t.Errorf("new trigger: %+v", d)
	}
	if prev.Reason != ReasonAutoFail {
		t.Error("Decide changed the previous state")
	}
	d = Decide(Strategy{CanaryCount: 1}, prev, ms, "r2", "t1")
	if !d.Fresh || len(d.Stages) != 2 {
		t.Errorf("new spec: %+v", d)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		s    Strategy
		want string
	}{
		{Strategy{CanaryMembers: []string{"x"}}, `canary.members[0]: "x" is not a deploy item`},
		{Strategy{CanaryPercent: 120}, "canary.percent: 120 is not a percentage"},
		{Strategy{Batches: []Step{{Percent: 25}, {Percent: 50}}}, `batches[1]: the last batch must be "100%"`},
		{Strategy{Batches: []Step{{Percent: 50}, {Percent: 25}, {Percent: 100}}}, "batches[1]: batches are cumulative"},
		{Strategy{AutoFail: new(int), CanaryMembers: []string{"a", "a"}}, `canary.members[1]: "a" is listed twice`},
	} {
		var got []string
		for _, p := range c.s.Validate([]string{"a", "b"}, "a deploy item") {
			got = append(got, p.Field+": "+p.Message)
		}
		if !strings.Contains(strings.Join(got, "\n"), c.want) {
			t.Errorf("%+v: got %q, want %q", c.s, got, c.want)
		}
	}
	if ps := (Strategy{CanaryCount: 1, Batches: []Step{{Percent: 25}, {Count: 30}, {Percent: 100}}}).Validate(nil, "a member"); len(ps) != 0 {
		t.Errorf("valid strategy: %+v", ps)
	}
	for _, bad := range []string{"0%", "101%", "x", "-1", "0"} {
		if _, err := ParseStep(bad); err == nil {
			t.Errorf("ParseStep(%q) passed", bad)
		}
	}
}
