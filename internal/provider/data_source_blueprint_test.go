package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
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

// A rendered item's target is named by the import it came from, never by
// its config; a target matched by name (target: {name: ...}) by its name.
func TestTargetImportName(t *testing.T) {
	single, listed, keyed := &deployer.Target{Name: "main"}, &deployer.Target{Name: "l[1]"}, &deployer.Target{Name: "custom"}
	imp := installation.Imports{
		Targets:     map[string]*deployer.Target{"cluster": single},
		TargetLists: map[string][]*deployer.Target{"l": {{}, listed}},
		TargetMaps:  map[string]map[string]*deployer.Target{"m": {"eu": keyed}},
	}
	for want, tg := range map[string]*deployer.Target{"cluster": single, "l[1]": listed, "m[eu]": keyed, "other": {Name: "other", Config: []byte(`{"secret":1}`)}} {
		if got := targetImportName(imp, tg); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
