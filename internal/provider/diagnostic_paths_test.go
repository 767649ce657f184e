package provider

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// protoServer is the provider's whole protocol server, configured, as
// Terraform drives it: the diagnostics its RPCs return are what Terraform
// highlights, by their attribute paths.
type protoServer struct {
	t *testing.T
	s *server
}

// unreachableKubeconfig points at a port nothing listens on: enough for a
// provider target that nothing here connects to.
const unreachableKubeconfig = "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n" +
	"users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"

func newProtoServer(t *testing.T) *protoServer {
	t.Helper()
	ps, err := NewServer("test")()
	if err != nil {
		t.Fatal(err)
	}
	s, ok := ps.(*server)
	if !ok {
		t.Fatalf("NewServer serves a %T", ps)
	}
	ctx := context.Background()
	sch, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	p := &protoServer{t: t, s: s}
	cfg := map[string]any{"targets": map[string]any{"prod": map[string]any{
		"type":   "landscaper.gardener.cloud/kubernetes-cluster",
		"config": `{"kubeconfig": ` + jsonString(unreachableKubeconfig) + `}`,
	}}}
	resp, err := s.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{Config: p.dv(sch.Provider.ValueType(), cfg)})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("configure: %v %v", err, diagText(resp.Diagnostics))
	}
	return p
}

func jsonString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func (p *protoServer) dv(typ tftypes.Type, v any) *tfprotov6.DynamicValue {
	p.t.Helper()
	d, err := tfprotov6.NewDynamicValue(typ, fill(typ, v))
	if err != nil {
		p.t.Fatal(err)
	}
	return &d
}

// planApply validates, plans and, when the plan has no errors, applies a
// resource's creation; it returns every diagnostic on the way.
func (p *protoServer) planApply(typeName string, config map[string]any) []*tfprotov6.Diagnostic {
	p.t.Helper()
	ctx := context.Background()
	// The type the server decodes with: the schema's own has optional
	// object attributes, which tftypes cannot build values of.
	typ := p.s.routes[typeName].objectType()
	cfg, null := p.dv(typ, config), p.dv(typ, nil)
	v, err := p.s.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: typeName, Config: cfg})
	if err != nil {
		p.t.Fatal(err)
	}
	if hasError(v.Diagnostics) {
		return v.Diagnostics
	}
	plan, err := p.s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{TypeName: typeName,
		PriorState: null, ProposedNewState: cfg, Config: cfg})
	if err != nil {
		p.t.Fatal(err)
	}
	if hasError(plan.Diagnostics) {
		return plan.Diagnostics
	}
	applied, err := p.s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{TypeName: typeName,
		PriorState: null, PlannedState: plan.PlannedState, Config: cfg, PlannedPrivate: plan.PlannedPrivate})
	if err != nil {
		p.t.Fatal(err)
	}
	return applied.Diagnostics
}

// read validates and reads a data source.
func (p *protoServer) read(typeName string, config map[string]any) []*tfprotov6.Diagnostic {
	p.t.Helper()
	ctx := context.Background()
	cfg := p.dv(p.s.dataRoutes[typeName].objectType(), config)
	v, err := p.s.ValidateDataResourceConfig(ctx, &tfprotov6.ValidateDataResourceConfigRequest{TypeName: typeName, Config: cfg})
	if err != nil {
		p.t.Fatal(err)
	}
	if hasError(v.Diagnostics) {
		return v.Diagnostics
	}
	r, err := p.s.ReadDataSource(ctx, &tfprotov6.ReadDataSourceRequest{TypeName: typeName, Config: cfg})
	if err != nil {
		p.t.Fatal(err)
	}
	return r.Diagnostics
}

func hasError(ds []*tfprotov6.Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			return true
		}
	}
	return false
}

func diagText(ds []*tfprotov6.Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("\n  " + pathString(d.Attribute) + ": " + d.Summary + ": " + d.Detail)
	}
	return b.String()
}

// pathsBlueprint imports an optional cluster and renders one mock item
// that fails when asked to.
const pathsBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: cluster, targetType: landscaper.gardener.cloud/kubernetes-cluster, required: false}
  - {name: phase, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: app
          type: landscaper.gardener.cloud/mock
          config: {phase: {{ .imports.phase }}}
`

// Every diagnostic carries the attribute path of its cause, as far as
// Terraform can point at it: the provider target reference, the deploy
// item, the blueprint, the component; in both resources and in the data
// source. Terraform follows no path deeper than an attribute's map key,
// so a deploy item's config error is on the item (the detail names
// config).
func TestDiagnosticPaths(t *testing.T) {
	dir := t.TempDir()
	ctor := filepath.Join(dir, "component-constructor.yaml")
	if err := os.WriteFile(filepath.Join(dir, "blueprint.yaml"), []byte(pathsBlueprint), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ctor, []byte(`components:
- name: github.com/acme/app
  version: v1.0.0
  provider: {name: acme}
  resources:
  - {name: blueprint, type: blueprint, input: {type: dir, path: .}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	inst := func(more map[string]any) map[string]any {
		cfg := map[string]any{"name": "app", "blueprint": map[string]any{"path": dir}, "imports": dynamic(map[string]any{"phase": "Succeeded"})}
		for k, v := range more {
			cfg[k] = v
		}
		return cfg
	}
	undefined := map[string]any{"cluster": map[string]any{"name": "nope"}}
	component := map[string]any{"blueprint": map[string]any{"ref": "blueprint"},
		"component": map[string]any{"name": "github.com/acme/app", "version": "v1.0.1", "constructors": []string{ctor}}}
	missingBlueprint := map[string]any{"blueprint": map[string]any{"path": filepath.Join(dir, "nowhere")}}

	cases := []struct {
		name, kind, typeName string
		config               map[string]any
		path, detail         string
	}{
		{"execution: undefined provider target", "resource", executionType, map[string]any{"name": "x", "targets": undefined,
			"deploy_items": map[string]any{"a": map[string]any{"type": "mock", "target": "cluster"}}},
			`targets["cluster"]`, `"nope" names no target of the provider's targets`},
		{"execution: deploy item config", "resource", executionType, map[string]any{"name": "x",
			"deploy_items": map[string]any{"a": map[string]any{"type": "exec", "config": `{"comand": ["true"]}`}}},
			`deploy_items["a"]`, `deploy_items["a"].config: command is required (the config has "comand", which this deployer does not know: a misspelling of "command"?)`},
		{"execution: failed deploy item", "resource", executionType, map[string]any{"name": "x",
			"deploy_items": map[string]any{"a": map[string]any{"type": "mock", "config": `{"phase": "Failed"}`}}},
			`deploy_items["a"]`, `Failed`},
		{"installation: undefined provider target", "resource", installationType, inst(map[string]any{"targets": undefined}),
			`targets["cluster"]`, `"nope" names no target of the provider's targets`},
		{"installation: blueprint", "resource", installationType, inst(missingBlueprint), `blueprint`, `nowhere`},
		{"installation: component version", "resource", installationType, inst(component),
			`component`, `component github.com/acme/app version v1.0.1 was not found; the constructor files offer version v1.0.0`},
		{"installation: failed deploy item", "resource", installationType, inst(map[string]any{"imports": dynamic(map[string]any{"phase": "Failed"})}),
			`blueprint`, `Failed`},
		{"data source: undefined provider target", "data", blueprintType, inst(map[string]any{"targets": undefined}),
			`targets["cluster"]`, `"nope" names no target of the provider's targets`},
		{"data source: blueprint", "data", blueprintType, inst(missingBlueprint), `blueprint`, `nowhere`},
		{"data source: component version", "data", blueprintType, inst(component),
			`component`, `the constructor files offer version v1.0.0`},
	}
	p := newProtoServer(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p.t = t
			cfg := c.config
			if c.typeName == blueprintType {
				delete(cfg, "name")
			}
			var diags []*tfprotov6.Diagnostic
			if c.kind == "data" {
				diags = p.read(c.typeName, cfg)
			} else {
				diags = p.planApply(c.typeName, cfg)
			}
			var errs []*tfprotov6.Diagnostic
			for _, d := range diags {
				if d.Severity == tfprotov6.DiagnosticSeverityError {
					errs = append(errs, d)
				}
			}
			if len(errs) != 1 || pathString(errs[0].Attribute) != c.path || !strings.Contains(errs[0].Detail, c.detail) {
				t.Fatalf("want one error on %s saying %q, got:%s", c.path, c.detail, diagText(errs))
			}
		})
	}
}

// dynamic is an object value for a dynamic attribute (imports).
func dynamic(m map[string]any) tftypes.Value {
	types := map[string]tftypes.Type{}
	vals := map[string]tftypes.Value{}
	for k, v := range m {
		types[k] = tftypes.String
		vals[k] = tftypes.NewValue(tftypes.String, v)
	}
	return tftypes.NewValue(tftypes.Object{AttributeTypes: types}, vals)
}
