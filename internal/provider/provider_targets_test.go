package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// providerTargetsHCL is a provider block defining the target "prod"
// (server and token given) and a configuration using it by name from an
// installation (as a target, in a list and in a map) and an execution,
// whose exec item proves it got the config: it finds the tokens' common
// prefix in its TARGET_PATH file.
func providerTargetsHCL(server, token string) string {
	return fmt.Sprintf(`
provider "landscaper" {
  targets = {
    prod = {
      type = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = yamlencode({
        apiVersion        = "v1"
        kind              = "Config"
        clusters          = [{ name = "c", cluster = { server = %[1]q } }]
        users             = [{ name = "u", user = { token = %[2]q } }]
        contexts          = [{ name = "c", context = { cluster = "c", user = "u" } }]
        "current-context" = "c"
      }) })
      labels = { tier = "gold" }
    }
  }
}

resource "landscaper_installation" "targets" {
  name = "targets"
  blueprint = {
    filesystem = {
      "blueprint.yaml" = %[3]q
      "deploy.yaml"    = %[4]q
    }
  }
  targets      = { main = { name = "prod" } }
  target_lists = { fleet = [{ name = "prod" }] }
  target_maps  = { regions = { eu = { name = "prod" } } }
}

resource "landscaper_execution" "app" {
  name    = "app"
  targets = { cluster = { name = "prod" } }
  deploy_items = {
    check = {
      type   = "exec"
      target = "cluster"
      config = jsonencode({ command = ["sh", "-c", "grep -q \"$WANT\" \"$TARGET_PATH\""], env = { WANT = %[5]q } })
    }
  }
}
`, server, token, targetsBlueprint, targetsDeploy, strings.SplitAfter(token, "-")[0])
}

// notInAttributes fails when a secret is in any attribute of any
// resource in state.
func notInAttributes(secrets ...string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		for addr, r := range s.RootModule().Resources {
			for k, v := range r.Primary.Attributes {
				for _, sec := range secrets {
					if strings.Contains(v, sec) {
						return fmt.Errorf("%s.%s holds a credential", addr, k)
					}
				}
			}
		}
		return nil
	}
}

// Resources use a provider target by name in targets, target lists, target
// maps and an execution's targets; templates see its name and labels;
// deployers get its config. The state keeps none of it; a new token
// plans nothing, another server plans the items again.
func TestAccProviderTargets_referencesRotationAndRepointing(t *testing.T) {
	const t1, t2 = "t0k3n-one-f1c2", "t0k3n-two-9a7b"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: providerTargetsHCL("https://127.0.0.1:1", t1),
				Check: resource.ComposeTestCheckFunc(
					notInAttributes(t1),
					resource.TestCheckResourceAttr("landscaper_installation.targets", "targets.main.name", "prod"),
					resource.TestCheckNoResourceAttr("landscaper_installation.targets", "targets.main.config"),
					resource.TestCheckResourceAttr("landscaper_installation.targets", "deploy_items.main.target",
						`main -> provider target "prod" (https://127.0.0.1:1)`),
					// The fleet item exports the Target's metadata.name.
					resource.TestCheckResourceAttr("landscaper_execution.app", "status.deploy_items.check.phase", "Succeeded"),
				),
			},
			{
				// A rotated token: nothing to do.
				Config:           providerTargetsHCL("https://127.0.0.1:1", t2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            notInAttributes(t1, t2),
			},
			{
				// The name points to another cluster: the items run again,
				// the exec item with the token of now.
				Config: providerTargetsHCL("https://127.0.0.2:1", t2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("landscaper_installation.targets", plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("landscaper_execution.app", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					notInAttributes(t1, t2),
					resource.TestCheckResourceAttr("landscaper_installation.targets", "deploy_items.main.target",
						`main -> provider target "prod" (https://127.0.0.2:1)`),
				),
			},
		},
	})
}

// What templates see of a provider target: its name, type and labels, and
// no config.
func TestAccProviderTargets_templatesSeeMetadataOnly(t *testing.T) {
	bp := `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: cluster, targetType: landscaper.gardener.cloud/kubernetes-cluster}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: seen
          type: mock
          target: {import: cluster}
          config:
            export:
              name: {{ .imports.cluster.metadata.name }}
              tier: {{ .imports.cluster.metadata.labels.tier }}
              type: {{ .imports.cluster.spec.type }}
              config: {{ .imports.cluster.spec.config | toJson }}
`
	cfg := strings.Replace(providerTargetsHCL("https://127.0.0.1:1", "t0k3n-x"), `resource "landscaper_installation" "targets"`,
		fmt.Sprintf(`resource "landscaper_installation" "seen" {
  name      = "seen"
  blueprint = { filesystem = { "blueprint.yaml" = %q } }
  targets   = { cluster = { name = "prod" } }
}

resource "landscaper_installation" "targets"`, bp), 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: cfg,
			Check: resource.ComposeTestCheckFunc(
				resource.TestCheckResourceAttr("landscaper_installation.seen", "deploy_items.seen.config",
					`{"export":{"config":null,"name":"prod","tier":"gold","type":"landscaper.gardener.cloud/kubernetes-cluster"}}`),
			),
		}},
	})
}

// A name the provider does not define is a plan-time error naming it,
// on the reference's path, in targets, lists, maps and executions.
func TestAccProviderTargets_undefinedName(t *testing.T) {
	cfg := strings.NewReplacer(`{ name = "prod" }`, `{ name = "prod-eu" }`).Replace(providerTargetsHCL("https://127.0.0.1:1", "t0k3n-x"))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      cfg,
			ExpectError: spaced(`Provider target not defined.*"prod-eu" names no target of the provider's targets; the provider defines: prod`),
		}},
	})
}

// Inline targets give type and config together; a name alone is a
// reference, type or config alone an error.
func TestAccProviderTargets_halfInlineTarget(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
resource "landscaper_execution" "app" {
  name    = "app"
  targets = { cluster = { type = "landscaper.gardener.cloud/kubernetes-cluster" } }
  deploy_items = { a = { type = "mock", config = "{}" } }
}
`,
			ExpectError: regexp.MustCompile(`an inline target has both type and config`),
		}},
	})
}

// allowedDeployersHCL is a provider allowing mock items only, an
// execution with an exec item that would leave a file, and an
// installation whose sub-installation renders such an item.
func allowedDeployersHCL(marker string, allowed string) string {
	sub := `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: fine
          type: landscaper.gardener.cloud/mock
          config: {}
        - name: shell
          type: exec
          config:
            command: [touch, ` + marker + `.sub]
`
	root := `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
subinstallations:
  - name: worker
    blueprint: {filesystem: {blueprint.yaml: ` + fmt.Sprintf("%q", sub) + `}}
`
	return fmt.Sprintf(`
provider "landscaper" {
  allowed_deployers = %s
}

resource "landscaper_execution" "app" {
  name = "app"
  deploy_items = {
    fine  = { type = "mock", config = "{}" }
    shell = { type = "exec", config = jsonencode({ command = ["touch", %q] }) }
  }
}

resource "landscaper_installation" "tree" {
  name      = "tree"
  blueprint = { filesystem = { "blueprint.yaml" = %q } }
}
`, allowed, marker+".exec", root)
}

// allowed_deployers refuses an execution's item and a sub-installation's
// item of another type at plan time, naming item, type and list; nothing
// runs. Aliases and full type names mean the same.
func TestAccAllowedDeployers_refusesAtPlanTime(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	ranNothing := func(*terraform.State) error {
		for _, f := range []string{marker + ".exec", marker + ".sub"} {
			if _, err := os.Stat(f); err == nil {
				return fmt.Errorf("%s exists: a refused item ran", f)
			}
		}
		return nil
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      allowedDeployersHCL(marker, `["landscaper.gardener.cloud/mock"]`),
				ExpectError: spaced(`Deployer not allowed.*deploy item "shell": its type "exec" is not in the provider's allowed_deployers \[landscaper.gardener.cloud/mock\]`),
			},
			{
				Config:      allowedDeployersHCL(marker, `["mock"]`),
				ExpectError: spaced(`deploy item "worker/shell": its type "exec" is not in the provider's allowed_deployers \[mock\]; nothing runs`),
			},
			{
				// Allowed: everything runs.
				PreConfig: func() {
					if err := ranNothing(nil); err != nil {
						t.Error(err)
					}
				},
				Config: allowedDeployersHCL(marker, `["mock", "exec"]`),
				Check: func(*terraform.State) error {
					for _, f := range []string{marker + ".exec", marker + ".sub"} {
						if _, err := os.Stat(f); err != nil {
							return fmt.Errorf("an allowed item did not run: %w", err)
						}
					}
					return nil
				},
			},
		},
	})
}

// allowed_deployers holds for an installation handed to a Landscaper
// cluster (landscaper_cluster): a sub-installation's exec item is refused
// at plan time as in-process, before any object is written (the cluster
// is never contacted: its kubeconfig points nowhere).
func TestAccAllowedDeployers_refusesInRemoteMode(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	hcl := strings.Replace(allowedDeployersHCL(marker, `["mock"]`), `allowed_deployers = ["mock"]`, `allowed_deployers = ["mock"]
  targets = {
    landscaper = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = yamlencode({ apiVersion = "v1", kind = "Config", clusters = [{ name = "c", cluster = { server = "https://127.0.0.1:1" } }], contexts = [{ name = "c", context = { cluster = "c", user = "u" } }], users = [{ name = "u", user = { token = "t0k" } }], current-context = "c" }) })
    }
  }`, 1)
	hcl = strings.Replace(hcl, `  name      = "tree"`, `  name      = "tree"
  landscaper_cluster = { target = "landscaper", namespace = "ls-tree" }`, 1)
	// Only the installation: the execution has no remote mode.
	hcl = hcl[:strings.Index(hcl, `resource "landscaper_execution"`)] + hcl[strings.Index(hcl, `resource "landscaper_installation"`):]
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      hcl,
			PlanOnly:    true,
			ExpectError: spaced(`deploy item "worker/shell": its type "exec" is not in the provider's allowed_deployers \[mock\]; nothing runs`),
		}, {
			// A namespace Kubernetes would refuse at apply is refused at
			// plan time, on its attribute.
			Config:      strings.Replace(hcl, `namespace = "ls-tree"`, `namespace = "LS_tree"`, 1),
			PlanOnly:    true,
			ExpectError: spaced(`Invalid namespace.*"LS_tree" is not a namespace name`),
		}},
	})
}

// deleteMarkerHCL is allowedDeployersHCL's setup for deletions: an
// execution and an installation (root item and a sub-installation's
// item) with exec items whose command leaves a file only when it runs
// with OPERATION=DELETE. orphaned drops the exec items from the
// execution and the root blueprint, and the sub-installation from it;
// removed replaces both resources with removed blocks.
func deleteMarkerHCL(script, marker, allowed string, orphaned, removed bool) string {
	shell := func(name, suffix string) string {
		return fmt.Sprintf("        - name: %s\n          type: exec\n          config: {command: [sh, %q, %q]}\n", name, script, marker+suffix)
	}
	sub := "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\ndeployExecutions:\n  - name: x\n    type: GoTemplate\n" +
		"    template: |\n      deployItems:\n" + shell("shell", ".sub")
	root := "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\ndeployExecutions:\n  - name: x\n    type: GoTemplate\n" +
		"    template: |\n      deployItems:\n        - name: fine\n          type: landscaper.gardener.cloud/mock\n          config: {}\n"
	execItems := fmt.Sprintf(`fine  = { type = "mock", config = "{}" }
    shell = { type = "exec", config = jsonencode({ command = ["sh", %q, %q] }) }`, script, marker+".exec")
	if orphaned {
		execItems = `fine = { type = "mock", config = "{}" }`
	} else {
		root += shell("shell", ".root") + "subinstallations:\n  - name: worker\n    blueprint: {filesystem: {blueprint.yaml: " + fmt.Sprintf("%q", sub) + "}}\n"
	}
	resources := fmt.Sprintf(`
resource "landscaper_execution" "app" {
  name = "app"
  deploy_items = {
    %s
  }
}

resource "landscaper_installation" "tree" {
  name      = "tree"
  blueprint = { filesystem = { "blueprint.yaml" = %q } }
}
`, execItems, root)
	if removed {
		resources = `
removed {
  from = landscaper_execution.app
  lifecycle { destroy = false }
}

removed {
  from = landscaper_installation.tree
  lifecycle { destroy = false }
}
`
	}
	return fmt.Sprintf("provider \"landscaper\" {\n  allowed_deployers = %s\n}\n%s", allowed, resources)
}

// allowed_deployers covers deletions: an orphaned exec item (of an
// execution, of an installation's root, under a sub-installation the
// blueprint dropped) and a destroy are refused at plan time once exec is
// no longer listed, naming each item by its attribute path, and no delete
// command runs; a removed block then drops the resources without running
// anything. Allowed, the same deletions run their commands.
func TestAccAllowedDeployers_refusesDeletes(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "delete.sh")
	if err := os.WriteFile(script, []byte("[ \"$OPERATION\" = DELETE ] && touch \"$1\"\nexit 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(dir, "deleted")
	suffixes := []string{".exec", ".root", ".sub"}
	deleted := func(want bool) func(*terraform.State) error {
		return func(*terraform.State) error {
			for _, s := range suffixes {
				if _, err := os.Stat(marker + s); (err == nil) != want {
					return fmt.Errorf("delete command of the %s item ran: %v, want %v", s, err == nil, want)
				}
			}
			return nil
		}
	}
	check := func(f func(*terraform.State) error) func() {
		return func() {
			if err := f(nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	const mockOnly = `["landscaper.gardener.cloud/mock"]`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: deleteMarkerHCL(script, marker, "null", false, false), Check: deleted(false)},
			{
				Config: deleteMarkerHCL(script, marker, mockOnly, true, false),
				ExpectError: spaced(`Deployer not allowed to delete.*deploy item "shell" \(deploy_items\["shell"\]\) is no longer in ` +
					`deploy_items, and deleting it runs its deployer, but its type "exec" is not in the provider's allowed_deployers ` +
					`\[landscaper.gardener.cloud/mock\]; nothing runs. To delete it, allow "exec" in the provider's allowed_deployers ` +
					`for this apply.*removed block: removed { from = <this resource's address> lifecycle { destroy = false } }` +
					`.*deploy item "shell" \(deploy_items\["shell"\]\) is no longer rendered` +
					`.*deploy item "worker/shell" \(deploy_items\["worker/shell"\]\) is no longer rendered`),
			},
			{
				PreConfig:   check(deleted(false)),
				Config:      deleteMarkerHCL(script, marker, mockOnly, false, false),
				Destroy:     true,
				ExpectError: spaced(`deploy item "shell" \(deploy_items\["shell"\]\) is deleted when the resource is destroyed.*deploy item "worker/shell" \(deploy_items\["worker/shell"\]\) is deleted when the resource is destroyed`),
			},
			{
				// The way out the message names: nothing runs, and the
				// resources leave the state.
				PreConfig: check(deleted(false)),
				Config:    deleteMarkerHCL(script, marker, mockOnly, false, true),
				Check: resource.ComposeTestCheckFunc(deleted(false), func(s *terraform.State) error {
					if n := len(s.RootModule().Resources); n != 0 {
						return fmt.Errorf("%d resources left in state", n)
					}
					return nil
				}),
			},
			{Config: deleteMarkerHCL(script, marker, "null", false, false), Check: deleted(false)},
			{
				// Allowed, the same orphans are deleted: their commands run.
				Config: deleteMarkerHCL(script, marker, `["mock", "exec"]`, true, false),
				Check:  deleted(true),
			},
		},
	})
}

// An unknown name in allowed_deployers is a provider configuration error.
func TestAccAllowedDeployers_unknownType(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      allowedDeployersHCL(filepath.Join(t.TempDir(), "x"), `["container"]`),
			ExpectError: regexp.MustCompile(`"container" is not a deployer type`),
		}},
	})
}

// spaced matches pattern with any whitespace (Terraform wraps lines)
// wherever it has a space.
func spaced(pattern string) *regexp.Regexp {
	return regexp.MustCompile(`(?s)` + strings.ReplaceAll(pattern, " ", `\s+`))
}

// References are not secrets: Terraform writes attributes sensitive as a
// whole as null into generated configuration (-generate-config-out), and
// hides them in plans, so only the configs of targets are sensitive.
func TestTargetReferencesAreNotSensitive(t *testing.T) {
	for _, r := range []interface {
		Schema(context.Context, fwresource.SchemaRequest, *fwresource.SchemaResponse)
	}{&executionResource{}, &installationResource{}} {
		var s fwresource.SchemaResponse
		r.Schema(t.Context(), fwresource.SchemaRequest{}, &s)
		a, ok := s.Schema.Attributes[attrTargets].(rschema.MapNestedAttribute)
		if !ok || a.Sensitive {
			t.Fatalf("%T: targets is sensitive as a whole (or not a map of objects)", r)
		}
		for n, want := range map[string]bool{"name": false, "type": false, "config": true} {
			if got := a.NestedObject.Attributes[n].IsSensitive(); got != want {
				t.Errorf("%T: targets[*].%s sensitive = %v, want %v", r, n, got, want)
			}
		}
	}
}

// The blueprint data source takes references too, and renders the tree
// as the installation's first plan would.
func TestAccProviderTargets_blueprintDataSource(t *testing.T) {
	cfg := providerTargetsHCL("https://127.0.0.1:1", "t0k3n-ds") + fmt.Sprintf(`
data "landscaper_blueprint" "preview" {
  blueprint = {
    filesystem = {
      "blueprint.yaml" = %q
      "deploy.yaml"    = %q
    }
  }
  targets      = { main = { name = "prod" } }
  target_lists = { fleet = [{ name = "prod" }] }
  target_maps  = { regions = { eu = { name = "prod" } } }
}
`, targetsBlueprint, targetsDeploy)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: cfg,
			Check: resource.ComposeTestCheckFunc(
				resource.TestCheckResourceAttr("data.landscaper_blueprint.preview", "deploy_items.fleet-0.target",
					`fleet[0] -> provider target "prod" (https://127.0.0.1:1)`),
				resource.TestCheckResourceAttr("data.landscaper_blueprint.preview", "deploy_items.fleet-0.config", `{"export":"prod"}`),
				notInAttributes("t0k3n-ds"),
			),
		}},
	})
}

// A provider target whose config alone is unknown (a cluster created in
// the same apply) is pending: references to it resolve, to a target with
// no config that the engine cannot use, and a plan assumes it points where
// stored items saw it. Anything templates would see being unknown (type,
// labels, the map itself) leaves no reference resolvable.
func TestProviderTargetsPending(t *testing.T) {
	ctx := t.Context()
	mt := as[tftypes.Map](providerTargetsAttribute().GetType().TerraformType(ctx))
	et := as[tftypes.Object](mt.ElementType)
	unknown := func(typ tftypes.Type) tftypes.Value { return tftypes.NewValue(typ, tftypes.UnknownValue) }
	target := func(typ, config tftypes.Value) tftypes.Value {
		return tftypes.NewValue(et, map[string]tftypes.Value{"type": typ, "config": config,
			"labels": tftypes.NewValue(et.AttributeTypes["labels"], nil), "annotations": tftypes.NewValue(et.AttributeTypes["annotations"], nil)})
	}
	kube := stringValue("landscaper.gardener.cloud/kubernetes-cluster")
	known := target(kube, stringValue(`{"kubeconfig": `+strconv.Quote(strings.ReplaceAll(acctest.UnreachableKubeconfig, "https://127.0.0.1:1", "https://old:443"))+`}`))
	reg := Deployers()

	pt, diags := decodeProviderTargets(tftypes.NewValue(mt, map[string]tftypes.Value{"old": known, "created": target(kube, unknown(tftypes.String))}), reg)
	if diags.HasError() || !pt.known || !pt.pending["created"] || pt.pending["old"] {
		t.Fatalf("config unknown: known %v, pending %v, %v", pt.known, pt.pending, diags)
	}
	if _, ok := pt.resolve("created"); ok {
		t.Error("the engine resolves a pending target, whose config is unknown")
	}
	if _, ok := pt.resolve("old"); !ok {
		t.Error("the engine does not resolve a known target")
	}
	ref, ps := pt.assuming(map[string]string{"created": "https://new:443"}).reference(map[string]tftypes.Value{"name": stringValue("created")}, nil)
	if len(ps) > 0 || ref.Ref != "created" || ref.Location != "https://new:443" || len(ref.Config) > 0 || !pt.isPending(ref) {
		t.Errorf("a reference to the pending target under an assumption: %+v %v", ref, ps)
	}
	if c, _ := pt.lookup("created"); c.Location != "" {
		t.Errorf("assuming changed the provider's own targets: %+v", c)
	}
	blobs := map[string][]byte{}
	markRefs(blobs, map[string]*deployer.Target{"a": {Ref: "created", Location: "https://elsewhere:443"}, "b": {Ref: "old", Location: "https://old:443"}})
	if !pt.pointAsBefore(blobs) {
		t.Error("a settled plan does not take the pending target to point where it did")
	}
	markRefs(blobs, map[string]*deployer.Target{"b": {Ref: "old", Location: "https://other:443"}})
	if pt.pointAsBefore(blobs) {
		t.Error("a known target pointing elsewhere is taken to point as before")
	}

	for name, v := range map[string]tftypes.Value{
		"map unknown":  unknown(mt),
		"type unknown": tftypes.NewValue(mt, map[string]tftypes.Value{"created": target(unknown(tftypes.String), unknown(tftypes.String))}),
		"labels unknown": tftypes.NewValue(mt, map[string]tftypes.Value{"created": tftypes.NewValue(et, map[string]tftypes.Value{
			"type": kube, "config": unknown(tftypes.String), "labels": unknown(et.AttributeTypes["labels"]),
			"annotations": tftypes.NewValue(et.AttributeTypes["annotations"], nil)})}),
		"target unknown": tftypes.NewValue(mt, map[string]tftypes.Value{"created": unknown(et)}),
	} {
		pt, _ := decodeProviderTargets(v, reg)
		if pt.known {
			t.Errorf("%s: references resolve", name)
		}
	}
}
