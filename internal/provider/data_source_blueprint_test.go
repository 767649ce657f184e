package provider

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/masking"
)

const blueprintDS = "data.landscaper_blueprint.app"

// renderConfig reads testdata/installation/render with env, and targets
// when given (HCL of the targets attribute).
func renderConfig(t *testing.T, env, targets string) string {
	return fmt.Sprintf(`
locals {
  kubeconfig = jsonencode({ kubeconfig = "clusters: [{name: c, cluster: {server: 'https://secret.example'}}]" })
}

data "landscaper_blueprint" "app" {
  blueprint = { path = %q }
  imports   = { env = %q }
  %s
}
`, testdataPath(t, "installation", "render"), env, targets)
}

const renderTargets = `targets = {
    cluster = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = local.kubeconfig }
  }
  target_maps = {
    fleet = { eu = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = local.kubeconfig } }
  }`

// The data source renders the tree as the installation's plan would:
// the root's item with its target's import name (never its config), a
// sub-installation fed from the root's imports, and one fed from a
// sibling's export left unrendered; the root's declarations.
func TestAccBlueprintDataSource_rendersTree(t *testing.T) {
	item := func(key string) tfjsonpath.Path { return tfjsonpath.New(attrDeployItems).AtMapKey(key) }
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: renderConfig(t, "staging", renderTargets),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(blueprintDS, item("app").AtMapKey("type"), knownvalue.StringExact("landscaper.gardener.cloud/mock")),
				statecheck.ExpectKnownValue(blueprintDS, item("app").AtMapKey("target"), knownvalue.StringExact("cluster")),
				statecheck.ExpectKnownValue(blueprintDS, item("app").AtMapKey("config"), knownvalue.StringExact(
					`{"apiVersion":"mock.deployer.landscaper.gardener.cloud/v1alpha1","export":{"env":"staging","replicas":1},"kind":"ProviderConfiguration"}`)),
				statecheck.ExpectKnownValue(blueprintDS, item("web/site").AtMapKey("target"), knownvalue.Null()),
				statecheck.ExpectKnownValue(blueprintDS, item("web/site").AtMapKey("config"), knownvalue.StringRegexp(regexp.MustCompile(`"export":"hello-staging"`))),
				statecheck.ExpectKnownValue(blueprintDS, item("edge").AtMapKey("target"), knownvalue.StringExact("fleet[eu]")),
				statecheck.ExpectKnownValue(blueprintDS, item("web/inner/deep").AtMapKey("config"), knownvalue.StringExact(`{"export":"deep-staging"}`)),
				statecheck.ExpectKnownValue(blueprintDS, tfjsonpath.New(attrDeployItems), knownvalue.MapSizeExact(4)),
				statecheck.ExpectKnownValue(blueprintDS, tfjsonpath.New("installations"), knownvalue.MapExact(map[string]knownvalue.Check{
					"":          knownvalue.ObjectExact(map[string]knownvalue.Check{"imports": knownvalue.StringExact(`{"env":"staging"}`)}),
					"web":       knownvalue.ObjectExact(map[string]knownvalue.Check{"imports": knownvalue.StringExact(`{"stage":"staging"}`)}),
					"web/inner": knownvalue.ObjectExact(map[string]knownvalue.Check{"imports": knownvalue.StringExact(`{"where":"staging"}`)}),
					"later":     knownvalue.ObjectExact(map[string]knownvalue.Check{"imports": knownvalue.Null()}),
				})),
				statecheck.ExpectKnownValue(blueprintDS, tfjsonpath.New("import_declarations"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.ObjectExact(map[string]knownvalue.Check{"name": knownvalue.StringExact("env"), "type": knownvalue.StringExact("data"), "required": knownvalue.Bool(true)}),
					knownvalue.ObjectExact(map[string]knownvalue.Check{"name": knownvalue.StringExact("replicas"), "type": knownvalue.StringExact("data"), "required": knownvalue.Bool(false)}),
					knownvalue.ObjectExact(map[string]knownvalue.Check{"name": knownvalue.StringExact("cluster"), "type": knownvalue.StringExact("target"), "required": knownvalue.Bool(true)}),
					knownvalue.ObjectExact(map[string]knownvalue.Check{"name": knownvalue.StringExact("fleet"), "type": knownvalue.StringExact("targetMap"), "required": knownvalue.Bool(true)}),
				})),
				statecheck.ExpectKnownValue(blueprintDS, tfjsonpath.New("export_declarations"), knownvalue.ListExact([]knownvalue.Check{
					knownvalue.ObjectExact(map[string]knownvalue.Check{"name": knownvalue.StringExact("greeting"), "type": knownvalue.StringExact("data"), "required": knownvalue.Bool(false)}),
				})),
			},
		}},
	})
}

// Template, import and source errors are the data source's errors, on
// the attribute they are about, as the installation's plan reports them.
func TestAccBlueprintDataSource_errors(t *testing.T) {
	const head = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n"
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: `
data "landscaper_blueprint" "app" {
  blueprint = { filesystem = { "blueprint.yaml" = ` + fmt.Sprintf("%q", head+
					"deployExecutions:\n  - name: x\n    type: GoTemplate\n    template: |\n      deployItems: {{ .imports.nope.deeper }}\n") + ` } }
}`,
				ExpectError: regexp.MustCompile(`(?s)Blueprint cannot be rendered.*deploy execution "x"`),
			},
			{
				// An error below the root names the sub-installation.
				Config: `
data "landscaper_blueprint" "app" {
  blueprint = { filesystem = { "blueprint.yaml" = ` + fmt.Sprintf("%q", head+
					"subinstallations:\n  - name: broken\n    blueprint:\n      filesystem:\n        blueprint.yaml: |\n"+
					"          apiVersion: landscaper.gardener.cloud/v1alpha1\n          kind: Blueprint\n"+
					"          deployExecutions:\n            - name: y\n              type: GoTemplate\n"+
					"              template: \"deployItems: {{ fail \\\"boom\\\" }}\"\n") + ` } }
}`,
				ExpectError: regexp.MustCompile(`(?s)Sub-installation "broken" cannot be rendered.*boom`),
			},
			{
				// cluster is missing: the import is named.
				Config:      renderConfig(t, "staging", ""),
				ExpectError: regexp.MustCompile(`(?s)Invalid import.*target import "cluster": required import is not given`),
			},
			{
				Config: `
data "landscaper_blueprint" "app" {
  blueprint = { path = "/no/such/blueprint" }
}`,
				ExpectError: regexp.MustCompile(`(?s)Invalid blueprint source`),
			},
			{
				Config: `
data "landscaper_blueprint" "app" {
  blueprint = { path = "/x", ref = "y" }
}`,
				ExpectError: regexp.MustCompile(`(?s)set exactly one of path, filesystem and ref`),
			},
		},
	})
}

// A rendered item names where its target came from, never its config; an
// item recorded before TargetRef existed is named by its target's name.
// With a secret in the tree and no shadow rendering to compare with (a
// state of version 1 filled in), every item is masked whole.
func TestRenderedItems(t *testing.T) {
	mt := newProvider("test").installations.t.AttributeTypes[attrDeployItems]
	specs := map[string]engine.ItemSpec{
		"a":     {Type: "helm", TargetRef: "clusters[eu]", Target: &deployer.Target{Name: "clusters[eu]"}, Config: []byte(`{"b": 1,  "a": "x"}`)},
		"sub/b": {Type: "manifest", Target: &deployer.Target{Name: "cluster"}, Config: []byte(`{"auth": "Bearer s3cr3t-token", "port": 6443}`)},
		"c":     {Type: "mock", Config: []byte(`{}`)},
	}
	check := func(sec *masking.Tree, want map[string][3]any) {
		t.Helper()
		got := fields(renderedItems(mt, specs, sec))
		for k, w := range want {
			f := fields(got[k])
			var target any
			if !f["target"].IsNull() {
				target = str(f["target"])
			}
			if str(f["type"]) != w[0] || target != w[1] || str(f["config"]) != w[2] {
				t.Errorf("%s: got type %q target %v config %s, want %v", k, str(f["type"]), target, str(f["config"]), w)
			}
		}
	}
	check(masking.NewTree(), map[string][3]any{
		"a":     {"helm", "clusters[eu]", `{"b":1,"a":"x"}`},
		"sub/b": {"manifest", "cluster", `{"auth":"Bearer s3cr3t-token","port":6443}`},
		"c":     {"mock", nil, `{}`},
	})
	sec := masking.NewTree()
	sec.AddValue("s3cr3t-token")
	// Nor can its names, types or targets tell whether a secret made
	// them.
	check(sec, map[string][3]any{
		"***":     {"***", "***", `"***"`},
		"****":    {"***", "***", `"***"`},
		"sub/***": {"***", "***", `"***"`},
	})
}

// BenchmarkBlueprintDataSource measures validate and read of
// landscaper_blueprint for testdata/installation/bench: 50
// sub-installations × 20 mock items (1,000 items), rendered and returned
// as Terraform values.
func BenchmarkBlueprintDataSource(b *testing.B) {
	ctx := context.Background()
	p := newProvider("test")
	s := &server{dataRoutes: p.dataRoutes()}
	cc, err := filepath.Abs(filepath.Join("testdata", "installation", "bench", "component-constructor.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	t := p.blueprints.t
	obj := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"subs": tftypes.Number, "items": tftypes.Number, "tag": tftypes.String}}
	config, err := tfprotov6.NewDynamicValue(t, fill(t, map[string]any{
		"blueprint": map[string]any{"ref": "root"},
		"component": map[string]any{"name": "example.com/bench", "version": "v1.0.0", "constructors": []string{cc}},
		"imports": tftypes.NewValue(obj, map[string]tftypes.Value{
			"subs": tftypes.NewValue(tftypes.Number, 50), "items": tftypes.NewValue(tftypes.Number, 20), "tag": tftypes.NewValue(tftypes.String, "a")}),
	}))
	if err != nil {
		b.Fatal(err)
	}
	read := &tfprotov6.ReadDataSourceRequest{TypeName: blueprintType, Config: &config}
	r, _ := s.ReadDataSource(ctx, read)
	if len(r.Diagnostics) > 0 {
		b.Fatal(r.Diagnostics[0].Detail)
	}
	st, err := r.State.Unmarshal(t)
	if err != nil {
		b.Fatal(err)
	}
	if n := len(fields(fields(st)[attrDeployItems])); n != 1000 {
		b.Fatalf("rendered %d items, want 1000", n)
	}
	b.ReportAllocs()
	for range b.N {
		_, _ = s.ValidateDataResourceConfig(ctx, &tfprotov6.ValidateDataResourceConfigRequest{TypeName: blueprintType, Config: &config})
		if r, _ := s.ReadDataSource(ctx, read); len(r.Diagnostics) > 0 {
			b.Fatal(r.Diagnostics[0].Detail)
		}
	}
}
