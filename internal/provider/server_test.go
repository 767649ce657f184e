package provider

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

// The no-op shortcut of PlanResourceChange claims executions.plan would
// plan exactly the prior state; check the claim on a settled execution.
func TestNoopPlanShortcutMatchesFullPlan(t *testing.T) {
	r := newRPCFixture(t, layeredItems(3, 5, 2))
	prior, diags := decode(r.x, r.applied.NewState)
	if diags != nil {
		t.Fatal(diags[0].Detail)
	}
	planned, replace, ps := r.x.plan(context.Background(), prior, prior, r.applied.Private)
	if len(ps) > 0 || len(replace) > 0 {
		t.Fatalf("problems %v, replace %v", ps, replace)
	}
	// Compared as values: tftypes encodes maps in random order, while
	// Terraform (cty) encodes them sorted, which the shortcut relies on.
	if !planned.Equal(prior) {
		d, _ := prior.Diff(planned)
		t.Fatalf("the full plan of a settled execution differs from its prior state: %v", d)
	}
	failed, err := encodeExecutionPrivate(engine.Status{Phase: core.PhaseFailed, JobID: "j", JobIDFinished: "j"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	drifted, err := encodeExecutionPrivate(engine.Status{Phase: core.PhaseSucceeded, JobID: "j", JobIDFinished: "j",
		Items: map[string]*engine.ItemStatus{"a": {Phase: core.PhaseSucceeded, Drift: "gone"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	settled := func(private []byte) bool {
		ok, _ := r.x.settled(context.Background(), nil, private)
		return ok
	}
	if !settled(r.applied.Private) || settled(nil) || settled(failed) || settled(drifted) {
		t.Fatal("settled misjudges private state")
	}
}

// State JSON with attributes the schema lacks takes the decoding path,
// which drops them, instead of being handed back as it is.
func TestUpgradeResourceStateDropsUnknownAttributes(t *testing.T) {
	p := newProvider("test")
	s := &server{routes: p.routes()}
	exact := []byte(`{"id":"a","name":"a","reconcile_trigger":null,"deploy_items":null,"targets":null,"rollout":null,"rollout_plan":null,"exports":null,"sensitive_exports":null,"status":null,"plan_cluster_changes":null,"cluster_changes":null,"timeouts":null}`)
	extra := []byte(`{"id":"a","name":"a","reconcile_trigger":null,"gone":1,"deploy_items":null,"targets":null,"rollout":null,"rollout_plan":null,"exports":null,"sensitive_exports":null,"status":null,"plan_cluster_changes":null,"cluster_changes":null,"timeouts":null}`)
	v0 := []byte(`{"id":"a","name":"a","deploy_items":{"x":{"type":"mock","config":null,"depends_on":null,"timeout":null,"update_on_change_only":null,"sensitive_export":null}},"exports":null,"sensitive_exports":null,"status":null,"timeouts":null}`)
	for _, raw := range [][]byte{exact, extra, v0} {
		version := int64(executionSchemaVersion)
		if bytes.Equal(raw, v0) {
			version = 0
		}
		resp, _ := s.UpgradeResourceState(context.Background(), &tfprotov6.UpgradeResourceStateRequest{
			TypeName: executionType, Version: version, RawState: &tfprotov6.RawState{JSON: raw}})
		if len(resp.Diagnostics) > 0 {
			t.Fatal(resp.Diagnostics[0].Detail)
		}
		if got := resp.UpgradedState; bytes.Equal(raw, exact) != (got.JSON != nil) {
			t.Fatalf("%s: passed through %v", raw, got.JSON != nil)
		}
		v, err := resp.UpgradedState.Unmarshal(p.executions.vt.resource)
		if err != nil || str(fields(v)["name"]) != "a" {
			t.Fatalf("%s: %v %v", raw, v, err)
		}
	}
}

// Execution state of schema version 1 has no rollout attributes; it
// upgrades with rollout, rollout_plan, the items' rollout_group and
// status.rollout null.
func TestUpgradeExecutionStateFromVersion1(t *testing.T) {
	p := newProvider("test")
	s := &server{routes: p.routes()}
	v1 := []byte(`{"id":"a","name":"a","reconcile_trigger":null,"deploy_items":{"x":{"type":"mock","config":null,` +
		`"depends_on":null,"target":null,"timeout":null,"update_on_change_only":null,"sensitive_export":null}},"targets":null,` +
		`"exports":null,"sensitive_exports":null,"status":{"phase":"Succeeded","job_id":"j","job_id_finished":"j",` +
		`"last_error":null,"deploy_items":{"x":{"phase":"Succeeded","job_id_finished":"j","last_error":null,"first_error":null,` +
		`"provider_status":null}}},"timeouts":null}`)
	resp, _ := s.UpgradeResourceState(context.Background(), &tfprotov6.UpgradeResourceStateRequest{
		TypeName: executionType, Version: 1, RawState: &tfprotov6.RawState{JSON: v1}})
	if len(resp.Diagnostics) > 0 {
		t.Fatal(resp.Diagnostics[0].Detail)
	}
	v, err := resp.UpgradedState.Unmarshal(p.executions.vt.resource)
	if err != nil {
		t.Fatal(err)
	}
	f := fields(v)
	item := fields(fields(f[attrDeployItems])["x"])
	st := fields(f["status"])
	if !f[attrRollout].IsNull() || !f[attrRolloutPlan].IsNull() || !item[attrRolloutGroup].IsNull() || str(item["type"]) != "mock" ||
		!st[attrRollout].IsNull() || str(st["phase"]) != "Succeeded" {
		t.Errorf("upgraded: %v", v)
	}
}

// Execution state of schema version 2 has targets without a name: they
// upgrade as inline targets, their name null.
func TestUpgradeExecutionStateFromVersion2(t *testing.T) {
	p := newProvider("test")
	s := &server{routes: p.routes()}
	v2 := []byte(`{"id":"a","name":"a","deploy_items":{"x":{"type":"mock","target":"c"}},` +
		`"targets":{"c":{"type":"landscaper.gardener.cloud/kubernetes-cluster","config":"{}"}}}`)
	resp, _ := s.UpgradeResourceState(context.Background(), &tfprotov6.UpgradeResourceStateRequest{
		TypeName: executionType, Version: 2, RawState: &tfprotov6.RawState{JSON: v2}})
	if len(resp.Diagnostics) > 0 {
		t.Fatal(resp.Diagnostics[0].Detail)
	}
	v, err := resp.UpgradedState.Unmarshal(p.executions.vt.resource)
	if err != nil {
		t.Fatal(err)
	}
	c := fields(fields(fields(v)[attrTargets])["c"])
	if !c["name"].IsNull() || str(c["type"]) != "landscaper.gardener.cloud/kubernetes-cluster" || str(c["config"]) != "{}" {
		t.Errorf("upgraded target: %v", c)
	}
}

// Installation state of schema version 0 has targets without metadata
// (name, labels, annotations) and target exports without labels and
// annotations; it upgrades to the current version with those null.
func TestUpgradeInstallationStateFromVersion0(t *testing.T) {
	p := newProvider("test")
	s := &server{routes: p.routes()}
	target := `{"type":"landscaper.gardener.cloud/kubernetes-cluster","config":"{}"}`
	v0 := []byte(`{"id":"a","name":"a","reconcile_trigger":null,"blueprint":{"path":"bp","filesystem":null,"ref":null},` +
		`"component":null,"imports":null,"targets":{"main":` + target + `},"target_lists":{"fleet":[` + target + `]},` +
		`"target_maps":{"regions":{"eu":` + target + `}},"exports":null,"target_exports":{"out":` + target + `},` +
		`"status":null,"timeouts":null}`)
	resp, _ := s.UpgradeResourceState(context.Background(), &tfprotov6.UpgradeResourceStateRequest{
		TypeName: installationType, Version: 0, RawState: &tfprotov6.RawState{JSON: v0}})
	if len(resp.Diagnostics) > 0 {
		t.Fatal(resp.Diagnostics[0].Detail)
	}
	v, err := resp.UpgradedState.Unmarshal(p.installations.t)
	if err != nil {
		t.Fatal(err)
	}
	f := fields(v)
	var fleet []tftypes.Value
	_ = fields(f["target_lists"])["fleet"].As(&fleet)
	for what, tv := range map[string]tftypes.Value{
		"targets":        fields(f["targets"])["main"],
		"target_lists":   fleet[0],
		"target_maps":    fields(fields(f["target_maps"])["regions"])["eu"],
		"target_exports": fields(f["target_exports"])["out"],
	} {
		tf := fields(tv)
		if str(tf["type"]) != "landscaper.gardener.cloud/kubernetes-cluster" || !tf["labels"].IsNull() || !tf["annotations"].IsNull() {
			t.Errorf("%s: %v", what, tv)
		}
		if n, ok := tf["name"]; what != "target_exports" && (!ok || !n.IsNull()) {
			t.Errorf("%s: name %v", what, n)
		}
	}
}

// landscaper_installation serves its identity schema, and an import by
// identity takes the import ID it stands for: the name alone imports an
// installation of this provider by name, with that identity; half of a
// Landscaper identity is refused. landscaper_execution has no identity.
func TestInstallationIdentity(t *testing.T) {
	ctx := context.Background()
	ps, err := NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := ps.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil || len(schemas.Diagnostics) > 0 {
		t.Fatal(err, schemas.Diagnostics)
	}
	var attrs []string
	for _, a := range schemas.IdentitySchemas[installationType].IdentityAttributes {
		attrs = append(attrs, fmt.Sprintf("%s:%v", a.Name, a.RequiredForImport))
	}
	if got := strings.Join(attrs, " "); got != "name:true namespace:false target:false" {
		t.Errorf("identity schema of %s: %s", installationType, got)
	}
	if _, ok := schemas.IdentitySchemas[executionType]; ok {
		t.Errorf("%s has an identity", executionType)
	}
	p := newProvider("test")
	x := p.installations
	identity := func(target, ns, name any) *tfprotov6.ResourceIdentityData {
		v := func(s any) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
		dv, err := tfprotov6.NewDynamicValue(x.identityType(), tftypes.NewValue(x.identityType(),
			map[string]tftypes.Value{identityTarget: v(target), identityNamespace: v(ns), identityName: v(name)}))
		if err != nil {
			t.Fatal(err)
		}
		return &tfprotov6.ResourceIdentityData{IdentityData: &dv}
	}
	s := &server{routes: p.routes()}
	resp, _ := s.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{TypeName: installationType, Identity: identity(nil, nil, "app")})
	if len(resp.Diagnostics) > 0 || len(resp.ImportedResources) != 1 {
		t.Fatalf("import by name alone: %v", resp.Diagnostics)
	}
	got := resp.ImportedResources[0]
	state, err := got.State.Unmarshal(x.t)
	if err != nil || str(fields(state)["name"]) != "app" {
		t.Fatalf("imported state %v, %v", state, err)
	}
	id, err := got.Identity.IdentityData.Unmarshal(x.identityType())
	if want := x.identityOf(state); err != nil || !id.Equal(want) {
		t.Errorf("identity of the import by name: %v, want %v (%v)", id, want, err)
	}
	for _, bad := range []*tfprotov6.ResourceIdentityData{identity("landscaper", nil, "app"), identity(nil, "ns", "app"), identity(nil, nil, nil), identity(nil, nil, "a/b")} {
		resp, _ := s.ImportResourceState(ctx, &tfprotov6.ImportResourceStateRequest{TypeName: installationType, Identity: bad})
		if len(resp.Diagnostics) == 0 || resp.Diagnostics[0].Summary != "Invalid import identity" || len(resp.ImportedResources) > 0 {
			t.Errorf("import by %v: %v", bad, resp.Diagnostics)
		}
	}
}

// The list resource landscaper_installation is served through the
// protocol server (which must pass its RPCs on to the framework): its
// schema comes with the provider's, every attribute described, and a
// namespace that is no namespace name is refused at its attribute path.
func TestInstallationListServed(t *testing.T) {
	ctx := context.Background()
	ps, err := NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	sch, err := ps.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || len(sch.Diagnostics) > 0 {
		t.Fatal(err, sch.Diagnostics)
	}
	ls, ok := sch.ListResourceSchemas[installationType]
	if !ok {
		t.Fatalf("no list resource %s among %v", installationType, sch.ListResourceSchemas)
	}
	var attrs []string
	for _, a := range ls.Block.Attributes {
		attrs = append(attrs, fmt.Sprintf("%s:%v", a.Name, a.Required))
		if a.Description == "" {
			t.Errorf("list attribute %s has no description", a.Name)
		}
	}
	if got := strings.Join(attrs, " "); got != "namespace:true target:true" {
		t.Errorf("list resource attributes: %s", got)
	}
	l, ok := ps.(tfprotov6.ListResourceServer)
	if !ok {
		t.Fatal("the protocol server does not serve list resources")
	}
	config := func(target, ns string) *tfprotov6.DynamicValue {
		ty := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"target": tftypes.String, "namespace": tftypes.String}}
		dv, err := tfprotov6.NewDynamicValue(ty, tftypes.NewValue(ty, map[string]tftypes.Value{
			"target": tftypes.NewValue(tftypes.String, target), "namespace": tftypes.NewValue(tftypes.String, ns)}))
		if err != nil {
			t.Fatal(err)
		}
		return &dv
	}
	resp, err := l.ValidateListResourceConfig(ctx, &tfprotov6.ValidateListResourceConfigRequest{TypeName: installationType, Config: config("landscaper", "cu-example")})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Errorf("a valid list configuration: %v %v", err, resp.Diagnostics)
	}
	resp, err = l.ValidateListResourceConfig(ctx, &tfprotov6.ValidateListResourceConfigRequest{TypeName: installationType, Config: config("landscaper", "Not_A_Namespace")})
	if err != nil || len(resp.Diagnostics) != 1 || !resp.Diagnostics[0].Attribute.Equal(tftypes.NewAttributePath().WithAttributeName("namespace")) ||
		!strings.Contains(resp.Diagnostics[0].Detail, "not a namespace name") {
		t.Errorf("a bad namespace: %v %+v", err, resp.Diagnostics)
	}
}
