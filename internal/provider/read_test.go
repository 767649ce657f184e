package provider

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

// drifty is a deployer whose installed thing can vanish behind its back.
type drifty struct{ gone atomic.Bool }

func (d *drifty) Validate(json.RawMessage) error { return nil }
func (d *drifty) Reconcile(context.Context, deployer.Request) (deployer.Result, error) {
	d.gone.Store(false)
	return deployer.Result{}, nil
}
func (d *drifty) Delete(context.Context, deployer.Request) (deployer.Result, error) {
	return deployer.Result{}, nil
}
func (d *drifty) Drift(context.Context, deployer.Request, deployer.Result) (string, error) {
	if d.gone.Load() {
		return "the object was deleted", nil
	}
	return "", nil
}

// Refresh (ReadResource) asks a drift-checking deployer; drift turns the
// next plan from a no-op into an update that runs the drifted item only.
func TestReadResourceRecordsDriftForTheNextPlan(t *testing.T) {
	ctx := context.Background()
	p := newProvider("test")
	d := &drifty{}
	p.deployers.Register(d, "drifty")
	p.engine.Store(engine.New(p.deployers, DefaultMaxParallelism))
	s := &server{routes: p.routes()}
	x := p.executions
	config := fill(x.vt.resource, map[string]any{"name": "x", "deploy_items": map[string]any{
		"obj": map[string]any{"type": "drifty"}, "other": map[string]any{"type": "mock"},
	}})
	dv := func(v tftypes.Value) *tfprotov6.DynamicValue {
		out, err := tfprotov6.NewDynamicValue(x.vt.resource, v)
		if err != nil {
			t.Fatal(err)
		}
		return &out
	}
	null := dv(tftypes.NewValue(x.vt.resource, nil))
	planned, _ := s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: executionType, PriorState: null, ProposedNewState: dv(config), Config: dv(config)})
	applied, _ := s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: executionType, PriorState: null, PlannedState: planned.PlannedState, Config: dv(config)})
	if len(applied.Diagnostics) > 0 {
		t.Fatal(applied.Diagnostics[0].Detail)
	}

	read := func() *tfprotov6.ReadResourceResponse {
		r, _ := s.ReadResource(ctx, &tfprotov6.ReadResourceRequest{TypeName: executionType, CurrentState: applied.NewState, Private: applied.Private})
		return r
	}
	if r := read(); len(r.Diagnostics) > 0 || string(r.Private) != string(applied.Private) {
		t.Fatalf("refresh without drift changed something: %v", r.Diagnostics)
	}

	d.gone.Store(true)
	r := read()
	if len(r.Diagnostics) != 1 || r.Diagnostics[0].Severity != tfprotov6.DiagnosticSeverityWarning ||
		!strings.Contains(r.Diagnostics[0].Detail, "the object was deleted") {
		t.Fatalf("diagnostics %+v", r.Diagnostics)
	}
	plan, _ := s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: executionType,
		PriorState: r.NewState, ProposedNewState: r.NewState, Config: dv(config), PriorPrivate: r.Private})
	pv, err := plan.PlannedState.Unmarshal(x.vt.resource)
	if err != nil {
		t.Fatal(err)
	}
	items := fields(fields(fields(pv)["status"])[attrDeployItems])
	if items["obj"].IsKnown() || !items["other"].IsKnown() {
		t.Fatalf("planned item status: obj known %v, other known %v; want only obj to run", items["obj"].IsKnown(), items["other"].IsKnown())
	}
}
