package provider

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Rollout errors are reported at plan time on the attribute they are about.
func TestValidateRolloutPaths(t *testing.T) {
	x := newProvider("test").executions
	num := func(n int64) tftypes.Value { return tftypes.NewValue(tftypes.Number, big.NewFloat(float64(n))) }
	items := map[string]any{
		"m0": map[string]any{"type": "mock", "rollout_group": "fleet"},
		"m1": map[string]any{"type": "mock", "rollout_group": "fleet"},
		"db": map[string]any{"type": "mock"},
	}
	for _, c := range []struct {
		rollout map[string]any
		path    string
		want    string
	}{
		{map[string]any{"canary": map[string]any{"percent": num(0)}}, "rollout.canary.percent", "0 is not a percentage"},
		{map[string]any{"canary": map[string]any{"members": []string{"m1", "db"}}}, "rollout.canary.members[1]", `"db" is not a deploy item with a rollout_group; members: m0, m1`},
		{map[string]any{"batches": []string{"50%", "25%", "100%"}}, "rollout.batches[1]", "batches are cumulative"},
		{map[string]any{"batches": []string{"10", "50%"}}, "rollout.batches[1]", `the last batch must be "100%"`},
		{map[string]any{"batches": []string{"x"}}, "rollout.batches[0]", `"x" is neither`},
		{map[string]any{"health": map[string]any{"command": []string{"true"}, "interval": "0s"}}, "rollout.health.interval", "not a positive Go duration"},
		{map[string]any{"auto_pause": map[string]any{"max_restarts": num(-1)}}, "rollout.auto_pause.max_restarts", "must not be negative"},
		{map[string]any{"duration": "-1m"}, "rollout.duration", "not a non-negative Go duration"},
	} {
		cfg := map[string]any{"name": "x", "deploy_items": items, "rollout": c.rollout}
		got := map[string]string{}
		for _, p := range x.validate(context.Background(), fill(x.vt.resource, cfg)) {
			got[pathString(p.path)] = p.detail
		}
		if !strings.Contains(got[c.path], c.want) || len(got) != 1 {
			t.Errorf("%v: problems %q; want %q on %s", c.rollout, got, c.want, c.path)
		}
	}
	ok := map[string]any{"name": "x", "deploy_items": items, "rollout": map[string]any{
		"canary": map[string]any{"members": []string{"m1"}}, "batches": []string{"1", "100%"}, "duration": "1m"}}
	if ps := x.validate(context.Background(), fill(x.vt.resource, ok)); len(ps) != 0 {
		t.Errorf("valid rollout: %+v", ps)
	}
}
