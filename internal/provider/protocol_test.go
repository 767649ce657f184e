package provider

import (
	"bytes"
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

// The no-op shortcut of PlanResourceChange claims executions.plan would
// plan exactly the prior state; check the claim on a settled execution.
func TestNoopPlanShortcutMatchesFullPlan(t *testing.T) {
	r := newRPCFixture(t, layeredItems(3, 5, 2))
	prior, diags := r.s.decode(r.applied.NewState)
	if diags != nil {
		t.Fatal(diags[0].Detail)
	}
	planned, replace, ps := r.s.x.plan(prior, prior, r.applied.Private)
	if len(ps) > 0 || len(replace) > 0 {
		t.Fatalf("problems %v, replace %v", ps, replace)
	}
	// Compared as values: tftypes encodes maps in random order, while
	// Terraform (cty) encodes them sorted, which the shortcut relies on.
	if !planned.Equal(prior) {
		d, _ := prior.Diff(planned)
		t.Fatalf("the full plan of a settled execution differs from its prior state: %v", d)
	}
	failed, err := encodePrivate(engine.Status{Phase: engine.PhaseFailed, JobID: "j", JobIDFinished: "j"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !settled(r.applied.Private) || settled(nil) || settled(failed) {
		t.Fatal("settled misjudges private state")
	}
}

// State JSON with attributes the schema lacks takes the decoding path,
// which drops them, instead of being handed back as it is.
func TestUpgradeResourceStateDropsUnknownAttributes(t *testing.T) {
	s := &server{x: newProvider("test").executions}
	exact := []byte(`{"id":"a","name":"a","deploy_items":null,"exports":null,"sensitive_exports":null,"status":null,"timeouts":null}`)
	extra := []byte(`{"id":"a","name":"a","gone":1,"deploy_items":null,"exports":null,"sensitive_exports":null,"status":null,"timeouts":null}`)
	for _, raw := range [][]byte{exact, extra} {
		resp, _ := s.UpgradeResourceState(context.Background(), &tfprotov6.UpgradeResourceStateRequest{
			TypeName: executionType, RawState: &tfprotov6.RawState{JSON: raw}})
		if len(resp.Diagnostics) > 0 {
			t.Fatal(resp.Diagnostics[0].Detail)
		}
		if got := resp.UpgradedState; bytes.Equal(raw, exact) != (got.JSON != nil) {
			t.Fatalf("%s: passed through %v", raw, got.JSON != nil)
		}
		v, err := resp.UpgradedState.Unmarshal(s.x.vt.resource)
		if err != nil || str(fields(v)["name"], "") != "a" {
			t.Fatalf("%s: %v %v", raw, v, err)
		}
	}
}
