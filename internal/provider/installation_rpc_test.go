package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/render"
)

// treeBP is a blueprint of a tree of subs × items zero-latency mock items.
type treeBP struct {
	subs, items int
	leaf        bool
	fail        string // "<sub>/<item>" whose mock fails
}

func (b *treeBP) Digest() string { return fmt.Sprint(b.subs, b.items, b.fail) }

func (b *treeBP) Render(_ context.Context, in installation.Input) (*installation.Rendered, error) {
	r := &installation.Rendered{Items: map[string]engine.ItemSpec{}}
	for i := range b.items {
		name := fmt.Sprintf("item%d", i)
		cfg := fmt.Sprintf(`{"export": {"n": %d, "v": %q}}`, i, fmt.Sprint(in.Imports.Data["v"]))
		if installation.Join(in.Path, name) == b.fail {
			cfg = `{"phase": "Failed"}`
		}
		var deps []string
		if i > 0 {
			deps = []string{fmt.Sprintf("item%d", i-1)}
		}
		r.Items[name] = engine.ItemSpec{Type: "mock", Config: json.RawMessage(cfg), DependsOn: deps, UpdateOnChangeOnly: true, Timeout: engine.DefaultTimeout}
	}
	if !b.leaf {
		for s := range b.subs {
			r.Subs = append(r.Subs, installation.Sub{
				Name:        fmt.Sprintf("sub%d", s),
				Blueprint:   &treeBP{items: b.items, leaf: true, fail: b.fail},
				DataImports: map[string]string{"v": "v"},
			})
		}
	}
	return r, nil
}

func (b *treeBP) Exports(_ context.Context, _ installation.Input, v installation.ExportValues) (installation.Exports, error) {
	return installation.Exports{Data: map[string]any{"first": v.DeployItems["item0"]}}, nil
}

type installationFixture struct {
	s    *server
	x    *installations
	bp   *treeBP
	null *tfprotov6.DynamicValue
}

func newInstallationFixture(tb testing.TB, bp *treeBP) *installationFixture {
	p := newProvider("test")
	p.engine.Store(engine.New(p.deployers, DefaultMaxParallelism))
	p.installations.load = func(context.Context, render.Source) (installation.Blueprint, error) { return bp, nil }
	f := &installationFixture{s: &server{routes: p.routes()}, x: p.installations, bp: bp}
	f.null = f.dv(tb, tftypes.NewValue(f.x.t, nil))
	return f
}

func (f *installationFixture) dv(tb testing.TB, v tftypes.Value) *tfprotov6.DynamicValue {
	d, err := tfprotov6.NewDynamicValue(f.x.t, v)
	if err != nil {
		tb.Fatal(err)
	}
	return &d
}

func (f *installationFixture) config(v string) tftypes.Value {
	obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"v": tftypes.String}}
	return fill(f.x.t, map[string]any{
		"name":      "app",
		"blueprint": map[string]any{"path": "/bp"},
		"imports":   tftypes.NewValue(obj, map[string]tftypes.Value{"v": tftypes.NewValue(tftypes.String, v)}),
	})
}

// step plans and applies config on top of prior, as Terraform would.
func (f *installationFixture) step(tb testing.TB, prior *tfprotov6.DynamicValue, private []byte, config tftypes.Value) (*tfprotov6.PlanResourceChangeResponse, *tfprotov6.ApplyResourceChangeResponse) {
	ctx := context.Background()
	plan, _ := f.s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: installationType,
		PriorState: prior, ProposedNewState: f.dv(tb, config), Config: f.dv(tb, config), PriorPrivate: private})
	for _, d := range plan.Diagnostics {
		tb.Fatalf("plan: %s: %s", d.Summary, d.Detail)
	}
	applied, _ := f.s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: installationType,
		PriorState: prior, PlannedState: plan.PlannedState, Config: f.dv(tb, config), PlannedPrivate: private})
	return plan, applied
}

func TestInstallationRPCsCreateNoopFailAndResume(t *testing.T) {
	f := newInstallationFixture(t, &treeBP{subs: 3, items: 4})
	_, applied := f.step(t, f.null, nil, f.config("a"))
	if len(applied.Diagnostics) > 0 {
		t.Fatal(applied.Diagnostics[0].Detail)
	}
	st, err := applied.NewState.Unmarshal(f.x.t)
	if err != nil {
		t.Fatal(err)
	}
	status := fields(fields(st)["status"])
	if str(status["phase"]) != "Succeeded" || len(fields(status["installations"])) != 4 || len(fields(status[attrDeployItems])) != 16 {
		t.Fatalf("status %v", status)
	}
	if n := fields(status[attrDeployItems])["sub2/item3"]; str(n) != "Succeeded" {
		t.Fatalf("sub2/item3: %v", n)
	}
	if v := fields(fields(fields(st)["exports"])["first"]); str(v["v"]) != "a" {
		t.Fatalf("exports %v", fields(st)["exports"])
	}

	// Same config: the plan is the prior state.
	plan, _ := f.s.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{TypeName: installationType,
		PriorState: applied.NewState, ProposedNewState: applied.NewState, Config: f.dv(t, f.config("a")), PriorPrivate: applied.Private})
	pv, _ := plan.PlannedState.Unmarshal(f.x.t)
	if !pv.Equal(st) {
		d, _ := st.Diff(pv)
		t.Fatalf("no-op plan differs from the prior state: %v", d)
	}

	// A failing item in a sub-installation: diagnostics name its path, and
	// the state tells the truth.
	f.bp.fail = "sub1/item2"
	_, failed := f.step(t, applied.NewState, applied.Private, f.config("b"))
	var summaries []string
	for _, d := range failed.Diagnostics {
		summaries = append(summaries, d.Summary)
	}
	if len(summaries) != 1 || summaries[0] != `Deploy item "sub1/item2" failed` {
		t.Fatalf("diagnostics %v", summaries)
	}
	fst, _ := failed.NewState.Unmarshal(f.x.t)
	items := fields(fields(fields(fst)["status"])[attrDeployItems])
	job := str(fields(fields(fst)["status"])["job_id"])
	saved, err := decodeInstallationPrivate(failed.Private)
	if err != nil {
		t.Fatal(err)
	}
	// item3 never ran in this job: it keeps the result of the job it last ran in.
	if saved.Status.Subs["sub1"].Execution.Items["item3"].JobIDFinished == job || str(items["sub1/item2"]) != "Failed" ||
		str(fields(fields(fields(fields(fst)["status"])[attrDeployItemErrors])["sub1/item2"])["reason"]) == "" {
		t.Fatalf("sub1 items: %v %v, errors %v", items["sub1/item2"], items["sub1/item3"], fields(fields(fst)["status"])[attrDeployItemErrors])
	}
	nodes := fields(fields(fields(fst)["status"])["installations"])
	if str(fields(nodes["sub1"])["phase"]) != "Failed" || str(fields(nodes[""])["phase"]) != "Failed" || str(fields(nodes["sub0"])["phase"]) != "Succeeded" {
		t.Fatalf("installations: %v", nodes)
	}

	// Fixed: the next plan is an update that runs only what did not succeed.
	f.bp.fail = ""
	plan, resumed := f.step(t, failed.NewState, failed.Private, f.config("b"))
	pv, _ = plan.PlannedState.Unmarshal(f.x.t)
	pitems := fields(fields(fields(pv)["status"])[attrDeployItems])
	pjob := str(fields(fields(pv)["status"])["job_id"])
	if pjob == "" || pjob == job || str(pitems["sub1/item2"]) != "Succeeded" || len(fields(fields(fields(pv)["status"])[attrDeployItemErrors])) != 0 {
		t.Fatalf("resume plan (job %s): %v", pjob, fields(pv)["status"])
	}
	if len(resumed.Diagnostics) > 0 {
		t.Fatal(resumed.Diagnostics[0].Detail)
	}
	rst, _ := resumed.NewState.Unmarshal(f.x.t)
	if s := str(fields(fields(rst)["status"])["phase"]); s != "Succeeded" {
		t.Fatalf("resume: %s", s)
	}
	resumedSaved, err := decodeInstallationPrivate(resumed.Private)
	if err != nil {
		t.Fatal(err)
	}
	ran := func(sub, item string) bool {
		return resumedSaved.Status.Subs[sub].Execution.Items[item].JobIDFinished == pjob
	}
	if ran("sub0", "item0") || !ran("sub1", "item2") || !ran("sub1", "item3") {
		t.Fatalf("resume: sub0/item0 ran %v, sub1/item2 ran %v, sub1/item3 ran %v; want only sub1's unfinished items to run in job %s",
			ran("sub0", "item0"), ran("sub1", "item2"), ran("sub1", "item3"), pjob)
	}
	// The apply keeps what the plan promised: the job it announced, and
	// the status of success.
	if !fields(rst)["status"].Equal(fields(pv)["status"]) {
		d, _ := fields(pv)["status"].Diff(fields(rst)["status"])
		t.Fatalf("resumed status differs from the plan: %v", d)
	}
	if !strings.Contains(fmt.Sprint(fields(rst)["exports"]), `"b"`) {
		t.Fatalf("exports after resume %v", fields(rst)["exports"])
	}
}

// BenchmarkInstallationRPC measures the provider's share of plan and
// apply for a tree of 50 sub-installations × 20 zero-latency mock items
// (1,000 items), with a blueprint that costs nothing to render: what is
// left is the tree, the engine and the Terraform values.
func BenchmarkInstallationRPC(b *testing.B) {
	ctx := context.Background()
	f := newInstallationFixture(b, &treeBP{subs: 50, items: 20})
	cfg := f.dv(b, f.config("a"))
	create := &tfprotov6.PlanResourceChangeRequest{TypeName: installationType, PriorState: f.null, ProposedNewState: cfg, Config: cfg}
	planned, _ := f.s.PlanResourceChange(ctx, create)
	apply := &tfprotov6.ApplyResourceChangeRequest{TypeName: installationType, PriorState: f.null, PlannedState: planned.PlannedState, Config: cfg}
	applied, _ := f.s.ApplyResourceChange(ctx, apply)
	if len(applied.Diagnostics) > 0 {
		b.Fatal(applied.Diagnostics[0].Detail)
	}
	b.Run("validate", func(b *testing.B) {
		for range b.N {
			_, _ = f.s.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: installationType, Config: cfg})
		}
	})
	b.Run("plan-create", func(b *testing.B) {
		for range b.N {
			_, _ = f.s.PlanResourceChange(ctx, create)
		}
	})
	b.Run("plan-noop", func(b *testing.B) {
		req := &tfprotov6.PlanResourceChangeRequest{TypeName: installationType, PriorState: applied.NewState,
			ProposedNewState: applied.NewState, Config: cfg, PriorPrivate: applied.Private}
		for range b.N {
			_, _ = f.s.PlanResourceChange(ctx, req)
		}
	})
	b.Run("apply-create", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if r, _ := f.s.ApplyResourceChange(ctx, apply); len(r.Diagnostics) > 0 {
				b.Fatal(r.Diagnostics[0].Detail)
			}
		}
	})
}

// BenchmarkInstallationBlueprint measures the provider's share of
// validate, plan and apply for testdata/installation/bench: a real
// Landscaper blueprint tree of 50 sub-installations × 20 mock items
// (1,000 items) from a component, rendered with GoTemplate.
func BenchmarkInstallationBlueprint(b *testing.B) {
	// Two sizes, to show that time and memory grow linearly with items.
	for _, subs := range []int{25, 50} {
		b.Run(fmt.Sprintf("%dx20", subs), func(b *testing.B) { benchmarkInstallationBlueprint(b, subs, false) })
	}
	// The tag every item renders, given as a sensitive import: the tree
	// is rendered twice (masking by derivation) wherever it is rendered.
	b.Run("50x20-secret", func(b *testing.B) { benchmarkInstallationBlueprint(b, 50, true) })
}

func benchmarkInstallationBlueprint(b *testing.B, subs int, secret bool) {
	ctx := context.Background()
	p := newProvider("test")
	p.engine.Store(engine.New(p.deployers, DefaultMaxParallelism))
	s := &server{routes: p.routes()}
	x := p.installations
	cc, err := filepath.Abs(filepath.Join("testdata", "installation", "bench", "component-constructor.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	configOf := func(tag string) tftypes.Value {
		attrs := map[string]any{
			"name":      "bench",
			"blueprint": map[string]any{"ref": "root"},
			"component": map[string]any{"name": "example.com/bench", "version": "v1.0.0", "constructors": []string{cc}},
		}
		obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"subs": tftypes.Number, "items": tftypes.Number}}
		imports := map[string]tftypes.Value{"subs": tftypes.NewValue(tftypes.Number, subs), "items": tftypes.NewValue(tftypes.Number, 20)}
		tagObj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"tag": tftypes.String}}
		if secret {
			attrs[attrSensitiveImports] = tftypes.NewValue(tagObj, map[string]tftypes.Value{"tag": tftypes.NewValue(tftypes.String, tag)})
		} else {
			obj.AttributeTypes["tag"] = tftypes.String
			imports["tag"] = tftypes.NewValue(tftypes.String, tag)
		}
		attrs["imports"] = tftypes.NewValue(obj, imports)
		return fill(x.t, attrs)
	}
	config := configOf("tag-a")
	dv := func(v tftypes.Value) *tfprotov6.DynamicValue {
		d, err := tfprotov6.NewDynamicValue(x.t, v)
		if err != nil {
			b.Fatal(err)
		}
		return &d
	}
	null := dv(tftypes.NewValue(x.t, nil))
	create := &tfprotov6.PlanResourceChangeRequest{TypeName: installationType, PriorState: null, ProposedNewState: dv(config), Config: dv(config)}
	planned, _ := s.PlanResourceChange(ctx, create)
	if len(planned.Diagnostics) > 0 {
		b.Fatal(planned.Diagnostics[0].Detail)
	}
	apply := &tfprotov6.ApplyResourceChangeRequest{TypeName: installationType, PriorState: null, PlannedState: planned.PlannedState, Config: dv(config)}
	applied, _ := s.ApplyResourceChange(ctx, apply)
	if len(applied.Diagnostics) > 0 {
		b.Fatal(applied.Diagnostics[0].Detail)
	}
	if st, _ := applied.NewState.Unmarshal(x.t); fmt.Sprint(fields(fields(st)["exports"])["total"]) != fmt.Sprintf("tftypes.Number<\"%d\">", subs*20) {
		b.Fatalf("the tree exported total %v, want %d items", fields(fields(st)["exports"])["total"], subs*20)
	}
	b.Run("validate+plan-create", func(b *testing.B) {
		for range b.N {
			_, _ = s.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: installationType, Config: dv(config)})
			if r, _ := s.PlanResourceChange(ctx, create); len(r.Diagnostics) > 0 {
				b.Fatal(r.Diagnostics[0].Detail)
			}
		}
	})
	b.Run("plan-noop", func(b *testing.B) {
		req := &tfprotov6.PlanResourceChangeRequest{TypeName: installationType, PriorState: applied.NewState,
			ProposedNewState: applied.NewState, Config: dv(config), PriorPrivate: applied.Private}
		for range b.N {
			if r, _ := s.PlanResourceChange(ctx, req); len(r.Diagnostics) > 0 {
				b.Fatal(r.Diagnostics[0].Detail)
			}
		}
	})
	b.Run("plan-change", func(b *testing.B) {
		// A new tag: every item renders anew.
		changed := configOf("tag-b")
		req := &tfprotov6.PlanResourceChangeRequest{TypeName: installationType, PriorState: applied.NewState,
			ProposedNewState: dv(changed), Config: dv(changed), PriorPrivate: applied.Private}
		for range b.N {
			if r, _ := s.PlanResourceChange(ctx, req); len(r.Diagnostics) > 0 {
				b.Fatal(r.Diagnostics[0].Detail)
			}
		}
	})
	b.Run("apply-create", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			if r, _ := s.ApplyResourceChange(ctx, apply); len(r.Diagnostics) > 0 {
				b.Fatal(r.Diagnostics[0].Detail)
			}
		}
	})
}

// State of schema version 1 (deploy items' status as objects, no
// deploy_items) upgrades with its status dropped, and the next plan fills
// status and deploy_items in from private state; the apply of that plan
// runs nothing and keeps them.
func TestInstallationStateOfVersion1Upgrades(t *testing.T) {
	f := newInstallationFixture(t, &treeBP{subs: 1, items: 2})
	_, applied := f.step(t, f.null, nil, f.config("a"))
	st, err := applied.NewState.Unmarshal(f.x.t)
	if err != nil || len(applied.Diagnostics) > 0 {
		t.Fatal(err, applied.Diagnostics)
	}
	v1 := `{"id": "app", "name": "app", "blueprint": {"path": "/bp", "filesystem": null, "ref": null},
	  "imports": {"value": {"v": "a"}, "type": ["object", {"v": "string"}]},
	  "status": {"phase": "Succeeded", "job_id": "j", "job_id_finished": "j", "imports_hash": "h", "last_error": null,
	    "installations": {"": {"phase": "Succeeded", "job_id_finished": "j", "last_error": null}},
	    "deploy_items": {"item0": {"phase": "Succeeded", "job_id_finished": "j", "last_error": null, "first_error": null, "provider_status": null}}}}`
	up, _ := f.s.UpgradeResourceState(context.Background(), &tfprotov6.UpgradeResourceStateRequest{TypeName: installationType,
		Version: 1, RawState: &tfprotov6.RawState{JSON: []byte(v1)}})
	for _, d := range up.Diagnostics {
		t.Fatalf("upgrade: %s: %s", d.Summary, d.Detail)
	}
	old, err := up.UpgradedState.Unmarshal(f.x.t)
	if err != nil || !fields(old)["status"].IsNull() || !fields(old)[attrDeployItems].IsNull() || str(fields(old)["name"]) != "app" {
		t.Fatalf("upgraded: %v %v", err, old)
	}
	plan, reapplied := f.step(t, up.UpgradedState, applied.Private, f.config("a"))
	pv, _ := plan.PlannedState.Unmarshal(f.x.t)
	for _, a := range []string{attrDeployItems, "status"} {
		if !fields(pv)[a].Equal(fields(st)[a]) {
			t.Fatalf("plan of upgraded state: %s %v, want %v", a, fields(pv)[a], fields(st)[a])
		}
	}
	rv, _ := reapplied.NewState.Unmarshal(f.x.t)
	if !rv.Equal(pv) {
		d, _ := pv.Diff(rv)
		t.Fatalf("apply differs from its plan: %v", d)
	}
}
