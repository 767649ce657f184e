package provider

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/moved/movedtest"
)

// moveRequest is what Terraform sends for a `moved` block from the
// recorded resource to landscaper_execution.
func moveRequest(t *testing.T, r movedtest.Recorded, target string) *tfprotov6.MoveResourceStateRequest {
	return &tfprotov6.MoveResourceStateRequest{
		SourceProviderAddress: r.Provider, SourceTypeName: r.Type, SourceSchemaVersion: r.SchemaVersion,
		SourceState: &tfprotov6.RawState{JSON: r.JSON(t)}, TargetTypeName: target,
	}
}

func diagnosticsText(ds []*tfprotov6.Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		sev := "warning"
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			sev = "error"
		}
		b.WriteString(sev + ": " + d.Summary + ": " + d.Detail + "\n")
	}
	return b.String()
}

// The provider says it moves state across types, as Terraform demands
// before it sends a `moved` block's source state.
func TestMoveResourceStateCapability(t *testing.T) {
	s, err := NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || resp.ServerCapabilities == nil || !resp.ServerCapabilities.MoveResourceState {
		t.Fatalf("GetProviderSchema capabilities %+v, %v", resp.ServerCapabilities, err)
	}
	meta, err := s.GetMetadata(context.Background(), &tfprotov6.GetMetadataRequest{})
	if err != nil || meta.ServerCapabilities == nil || !meta.ServerCapabilities.MoveResourceState {
		t.Fatalf("GetMetadata capabilities %+v, %v", meta.ServerCapabilities, err)
	}
}

// Every recorded state moves, at the protocol level, into an execution of
// one deploy item of the current schema, whose private state holds what
// the item adopts: the state decodes as Terraform would read it, and
// UpgradeResourceState hands it back unchanged.
func TestMoveResourceState_recorded(t *testing.T) {
	for _, file := range movedtest.All {
		t.Run(file, func(t *testing.T) {
			p := newProvider("test")
			s := &server{routes: p.routes()}
			r := movedtest.Load(t, file)
			// The helm 3.x recording used the chart directory ./demo,
			// found where Terraform runs.
			t.Chdir(t.TempDir())
			if err := os.Mkdir("demo", 0o755); err != nil {
				t.Fatal(err)
			}
			resp, err := s.MoveResourceState(context.Background(), moveRequest(t, r, executionType))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range resp.Diagnostics {
				if d.Severity == tfprotov6.DiagnosticSeverityError {
					t.Fatal(diagnosticsText(resp.Diagnostics))
				}
			}
			v, err := resp.TargetState.Unmarshal(p.executions.vt.resource)
			if err != nil {
				t.Fatal(err)
			}
			f := fields(v)
			items := fields(f[attrDeployItems])
			if len(items) != 1 || str(f["name"]) == "" || str(f["id"]) != str(f["name"]) {
				t.Fatalf("name %q, items %v", str(f["name"]), items)
			}
			for n, it := range items {
				typ, cfg := str(fields(it)["type"]), str(fields(it)["config"])
				wantType := map[string]string{"helm_release": "helm"}[r.Type]
				if wantType == "" {
					wantType = "kubernetes-manifest"
				}
				if typ != wantType || !json.Valid([]byte(cfg)) {
					t.Fatalf("item %s: type %q, config %s", n, typ, cfg)
				}
				saved, err := decodeExecutionPrivate(resp.TargetPrivate)
				if err != nil {
					t.Fatal(err)
				}
				is := saved.Status.Items[n]
				if is == nil || is.Adopt == nil || is.Adopt.Source != r.Type || is.Phase != core.PhaseInit {
					t.Fatalf("private state of item %s: %+v", n, is)
				}
				if (is.Adopt.Release != nil) != (r.Type == "helm_release") || (len(is.Adopt.Objects) == 1) == (r.Type == "helm_release") {
					t.Fatalf("adoption %+v", is.Adopt)
				}
			}
			raw, err := json.Marshal(mustJSON(t, resp.TargetState, p.executions.vt.resource))
			if err != nil {
				t.Fatal(err)
			}
			up, _ := s.UpgradeResourceState(context.Background(), &tfprotov6.UpgradeResourceStateRequest{TypeName: executionType,
				Version: executionSchemaVersion, RawState: &tfprotov6.RawState{JSON: raw}})
			if len(up.Diagnostics) > 0 {
				t.Fatal(diagnosticsText(up.Diagnostics))
			}
		})
	}
}

// mustJSON is a value as Terraform stores it in state: JSON.
func mustJSON(t *testing.T, dv *tfprotov6.DynamicValue, typ tftypes.Type) any {
	t.Helper()
	v, err := dv.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := valueToAny(v)
	return out
}

// A state holding what cannot be carried over is refused, naming the
// attribute; so is a source this provider does not know, and a move into
// landscaper_installation.
func TestMoveResourceState_refused(t *testing.T) {
	p := newProvider("test")
	s := &server{routes: p.routes()}
	helm := movedtest.Load(t, movedtest.Helm2).With(t, "postrender", []any{map[string]any{"binary_path": "./kustomize", "args": nil}})
	for _, c := range []struct {
		req  *tfprotov6.MoveResourceStateRequest
		want string
	}{
		{moveRequest(t, helm, executionType), "Cannot move helm_release: postrender: helm_release.postrender cannot be carried over"},
		{moveRequest(t, movedtest.Load(t, movedtest.Helm2), installationType), "landscaper_installation takes no state of another resource type"},
		{&tfprotov6.MoveResourceStateRequest{SourceProviderAddress: "registry.terraform.io/hashicorp/kubernetes", SourceTypeName: "kubernetes_config_map_v1",
			SourceState: &tfprotov6.RawState{JSON: []byte(`{}`)}, TargetTypeName: executionType}, "not from kubernetes_config_map_v1"},
	} {
		resp, err := s.MoveResourceState(context.Background(), c.req)
		if err != nil {
			t.Fatal(err)
		}
		if got := diagnosticsText(resp.Diagnostics); resp.TargetState != nil || !strings.Contains(got, c.want) {
			t.Errorf("%s into %s: state %v, diagnostics:\n%s\nwant %q", c.req.SourceTypeName, c.req.TargetTypeName, resp.TargetState != nil, got, c.want)
		}
	}
}

// The plan of a moved execution says what it adopts; it renames the
// execution in place (nothing ran under the moved name); it refuses a
// configuration that drops the moved item or names another release.
func TestPlanMovedExecution(t *testing.T) {
	ctx := context.Background()
	p := newProvider("test")
	s := &server{routes: p.routes()}
	x := p.executions
	moved, err := s.MoveResourceState(ctx, moveRequest(t, movedtest.Load(t, movedtest.Helm2), executionType))
	if err != nil || moved.TargetState == nil {
		t.Fatal(err, diagnosticsText(moved.Diagnostics))
	}
	prior, err := moved.TargetState.Unmarshal(x.vt.resource)
	if err != nil {
		t.Fatal(err)
	}
	movedItem := fields(fields(prior)[attrDeployItems])["release"]
	var helmCfg map[string]any
	if err := json.Unmarshal([]byte(str(fields(movedItem)["config"])), &helmCfg); err != nil {
		t.Fatal(err)
	}
	target := map[string]any{"cluster": map[string]any{"type": "landscaper.gardener.cloud/kubernetes-cluster",
		"config": "kubeconfig: " + strings.ReplaceAll(acctest.UnreachableKubeconfig, "\n", "\n  ")}}
	config := func(name, item string, cfg map[string]any) tftypes.Value {
		b, _ := json.Marshal(cfg)
		return fill(x.vt.resource, map[string]any{"name": name, "targets": target,
			"deploy_items": map[string]any{item: map[string]any{"type": "helm", "target": "cluster", "config": string(b)}}})
	}
	plan := func(proposed tftypes.Value) ([]*tftypes.AttributePath, string) {
		_, replace, ps := x.plan(ctx, prior, proposed, moved.TargetPrivate)
		return replace, diagnosticsText(ps.protocol())
	}

	replace, diags := plan(config("renamed", "release", helmCfg))
	if len(replace) > 0 || strings.Contains(diags, "error") {
		t.Fatalf("rename before the first apply: replace %v, diagnostics:\n%s", replace, diags)
	}
	if !strings.Contains(diags, `warning: Deploy item "release" adopts helm release`) || !strings.Contains(diags, "one revision more") {
		t.Fatalf("the plan does not say what it adopts:\n%s", diags)
	}

	if _, diags = plan(config("app", "web", helmCfg)); !strings.Contains(diags, `error: Moved deploy item not declared: deploy_items has no item "release"`) {
		t.Fatalf("plan without the moved item:\n%s", diags)
	}

	other := map[string]any{}
	for k, v := range helmCfg {
		other[k] = v
	}
	other["name"] = "another"
	if _, diags = plan(config("app", "release", other)); !strings.Contains(diags, "error: Deploy item cannot adopt") ||
		!strings.Contains(diags, "never renames it") {
		t.Fatalf("plan naming another release:\n%s", diags)
	}

	// A destroy before the first apply forgets the item and says so.
	_, _, ps := x.plan(ctx, prior, tftypes.NewValue(x.vt.resource, nil), moved.TargetPrivate)
	if got := diagnosticsText(ps.protocol()); !strings.Contains(got, `Deploy item "release" is forgotten, not deleted`) {
		t.Fatalf("destroy plan of a moved execution:\n%s", got)
	}
}
