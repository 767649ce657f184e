package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

const inst = "landscaper_installation.app"

// treeScript is the command of the exec items of testdata/installation:
// it logs "<execution>.<item> <OPERATION>" (the execution's path in the
// tree with dots), fails when flagged, and exports what $EXPORT says.
const treeScript = `id=$(printf '%s/%s' "$EXECUTION_NAME" "$DEPLOY_ITEM_NAME" | tr / .)
echo "$id $OPERATION" >> "$W/runs.log"
if [ -e "$W/fail-$id-$OPERATION" ]; then echo "flagged to fail" >&2; exit 3; fi
if [ -n "$EXPORT" ]; then printf '%s' "$EXPORT" > "$EXPORTS_PATH"; fi`

func testdataPath(t *testing.T, elem ...string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(append([]string{"testdata"}, elem...)...))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// treeConfig is an installation of testdata/installation/tree: a root with
// sub-installations a, b, c, d (a diamond by data flow), b three deep.
func treeConfig(t *testing.T, w *world, prefix string) string {
	return fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name      = "app"
  blueprint = { ref = "root" }
  component = {
    name         = "example.com/tree"
    version      = "v1.0.0"
    constructors = [%q]
  }
  imports = {
    w      = %q
    script = %q
    prefix = %q
  }
}

output "result" {
  value = try(landscaper_installation.app.exports.result, null)
}
`, testdataPath(t, "installation", "tree", "component-constructor.yaml"), w.Dir, treeScript, prefix)
}

// treeResult is what the tree exports for prefix: d imports what b and c
// made of a's export.
func treeResult(p string) string {
	a := p + "-leaf"
	b := a + "-leaf+" + a + "-mid+" + a + "-mid"
	c := a + "-c-leaf"
	return b + "&" + c + "-leaf"
}

// runOrder checks that each pair's first entry ran before its second.
func runOrder(runs []string, before ...[2]string) error {
	for _, p := range before {
		i, j := slices.Index(runs, p[0]), slices.Index(runs, p[1])
		if i < 0 || j < 0 || i > j {
			return fmt.Errorf("%s must come before %s: %v", p[0], p[1], runs)
		}
	}
	return nil
}

var treeWork = []string{"app.own", "app.a.work", "app.c.work", "app.d.work", "app.b.deep.deep.work"}

// reconciled lists run-log entries of items reconciled.
func reconciled(items ...string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it + ":RECONCILE"
	}
	return out
}

// A Landscaper blueprint tree from a component: data flow between
// siblings (a diamond), sub-installations three deep, GoTemplate and Spiff
// executions, subinstallationExecutions, importDataMappings, template
// state kept between applies, a failure in a sub-installation and its
// resume, destroy in reverse data-flow order, and import.
func TestAccInstallation_tree(t *testing.T) {
	w := newWorld(t)
	var secret string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: treeConfig(t, w, "p"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("result", knownvalue.StringExact(treeResult("p"))),
					statecheck.ExpectKnownValue(inst, tfjsonpath.New("status").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
					statecheck.ExpectKnownValue(inst, tfjsonpath.New("status").AtMapKey("installations").AtMapKey("b/deep/deep").AtMapKey("phase"),
						knownvalue.StringExact("Succeeded")),
					statecheck.ExpectKnownValue(inst, tfjsonpath.New("status").AtMapKey("deploy_items").AtMapKey("b/deep/m"),
						knownvalue.StringExact("Succeeded")),
				},
				Check: func(s *terraform.State) error {
					runs := w.Runs()
					if err := runOrder(runs, [2]string{"app.a.work:RECONCILE", "app.c.work:RECONCILE"},
						[2]string{"app.c.work:RECONCILE", "app.d.work:RECONCILE"},
						[2]string{"app.b.deep.deep.work:RECONCILE", "app.d.work:RECONCILE"}); err != nil {
						return err
					}
					slices.Sort(runs)
					if want := slices.Sorted(slices.Values(reconciled(treeWork...))); !slices.Equal(runs, want) {
						return fmt.Errorf("runs %v, want %v", runs, want)
					}
					secret = s.RootModule().Resources[inst].Primary.Attributes["exports.own.secret"]
					if len(secret) != 16 {
						return fmt.Errorf("template state: secret %q", secret)
					}
					return nil
				},
			},
			{
				// Nothing changed: nothing runs.
				Config:           treeConfig(t, w, "p"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check:            func(*terraform.State) error { return w.ExpectRuns() },
			},
			{
				// A new prefix reaches everything; the secret the root's
				// template keeps in its state stays.
				Config: treeConfig(t, w, "q"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("result", knownvalue.StringExact(treeResult("q"))),
				},
				Check: func(s *terraform.State) error {
					if got := s.RootModule().Resources[inst].Primary.Attributes["exports.own.secret"]; got != secret {
						return fmt.Errorf("secret %q after an update, want the kept %q", got, secret)
					}
					return w.ExpectRuns(reconciled(treeWork...)...)
				},
			},
			{
				// c fails: the diagnostic names its path; d, which imports
				// from c, never runs; a and b finish.
				PreConfig:   func() { w.Flag("fail-app.c.work-RECONCILE") },
				Config:      treeConfig(t, w, "r"),
				ExpectError: regexp.MustCompile(`Deploy item "c/work" failed`),
			},
			{
				// Fixed: only what failed or never ran runs again.
				PreConfig: func() {
					if err := w.ExpectRuns(reconciled("app.own", "app.a.work", "app.c.work", "app.b.deep.deep.work")...); err != nil {
						t.Error(err)
					}
					w.Unflag("fail-app.c.work-RECONCILE")
				},
				Config: treeConfig(t, w, "r"),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownOutputValue("result", knownvalue.StringExact(treeResult("r"))),
				},
				Check: func(*terraform.State) error { return w.ExpectRuns(reconciled("app.c.work", "app.d.work")...) },
			},
			{
				ResourceName:            inst,
				ImportState:             true,
				ImportStateId:           "app",
				ImportStateVerify:       false,
				ImportStateCheck:        func(s []*terraform.InstanceState) error { return expectAttr(s, "name", "app") },
				ImportStatePersist:      false,
				ImportStateVerifyIgnore: []string{"status", "exports"},
			},
		},
		CheckDestroy: func(*terraform.State) error {
			// Deleted in reverse data-flow order: d before what it imports
			// from, b and c before a.
			runs := w.Runs()
			return runOrder(runs, [2]string{"app.d.work:DELETE", "app.c.work:DELETE"},
				[2]string{"app.d.work:DELETE", "app.b.deep.deep.work:DELETE"},
				[2]string{"app.c.work:DELETE", "app.a.work:DELETE"},
				[2]string{"app.b.deep.deep.work:DELETE", "app.a.work:DELETE"})
		},
	})
}

func expectAttr(s []*terraform.InstanceState, key, want string) error {
	if len(s) != 1 || s[0].Attributes[key] != want {
		return fmt.Errorf("imported %v, want %s = %s", s, key, want)
	}
	return nil
}

// Imports are checked against the blueprint's declarations at plan time,
// each problem on its own attribute path, and nothing runs.
func TestAccInstallation_importErrors(t *testing.T) {
	w := newWorld(t)
	cfg := func(imports string) string {
		return fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name      = "app"
  blueprint = { ref = "root" }
  component = {
    name         = "example.com/tree"
    version      = "v1.0.0"
    constructors = [%q]
  }
  imports = %s
}`, testdataPath(t, "installation", "tree", "component-constructor.yaml"), imports)
	}
	cases := map[string]struct{ imports, want string }{
		"schema":     {fmt.Sprintf(`{ w = %q, script = "x", prefix = "" }`, w.Dir), `(?s)Invalid import.*prefix.*(minLength|length)`},
		"type":       {fmt.Sprintf(`{ w = %q, script = "x", prefix = 3 }`, w.Dir), `(?s)Invalid import.*prefix`},
		"missing":    {`{ script = "x", prefix = "p" }`, `(?s)Invalid import.*required`},
		"undeclared": {fmt.Sprintf(`{ w = %q, script = "x", prefix = "p", extra = 1 }`, w.Dir), `(?s)Invalid import.*no import "extra"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      cfg(tc.imports),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
	if runs := w.Runs(); len(runs) != 0 {
		t.Fatalf("something ran: %v", runs)
	}
}

// A blueprint directory edited between applies: the edit shows as an
// update; a sub-installation dropped from the blueprint is deleted
// (CleanupOrphaned); an unchanged directory plans nothing.
func TestAccInstallation_blueprintDirectoryAndOrphans(t *testing.T) {
	w := newWorld(t)
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	leaf := func(name string) string {
		return fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: InstallationTemplate
name: %[1]s
blueprint:
  filesystem:
    blueprint.yaml: |
      apiVersion: landscaper.gardener.cloud/v1alpha1
      kind: Blueprint
      imports:
        - name: w
          type: data
          schema: {type: string}
        - name: script
          type: data
          schema: {type: string}
      deployExecutions:
        - name: default
          type: GoTemplate
          template: |
            deployItems:
              - name: work
                type: exec
                config:
                  command: ["sh", "-c", {{ toJson .imports.script }}]
                  env: {W: {{ .imports.w }}}
imports:
  data:
    - {name: w, dataRef: w}
    - {name: script, dataRef: script}
`, name)
	}
	root := func(subs ...string) string {
		var b strings.Builder
		b.WriteString("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\nimports:\n" +
			"  - {name: w, type: data, schema: {type: string}}\n  - {name: script, type: data, schema: {type: string}}\nsubinstallations:\n")
		for _, s := range subs {
			fmt.Fprintf(&b, "  - file: /%s.yaml\n", s)
		}
		return b.String()
	}
	withTrigger := func(trigger string) string {
		return fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name              = "app"
  blueprint         = { path = %q }
  imports           = { w = %q, script = %q }
  reconcile_trigger = %s
}`, dir, w.Dir, treeScript, trigger)
	}
	cfg := withTrigger("null")
	write("one.yaml", leaf("one"))
	write("two.yaml", leaf("two"))
	write("blueprint.yaml", root("one", "two"))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: cfg,
				Check:  func(*terraform.State) error { return w.ExpectRuns("app.one.work:RECONCILE", "app.two.work:RECONCILE") },
			},
			{
				// two leaves the blueprint: it is deleted, one stays as it is.
				PreConfig: func() { write("blueprint.yaml", root("one")) },
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(inst, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(inst, tfjsonpath.New("status").AtMapKey("installations"),
						knownvalue.MapSizeExact(2)),
				},
				Check: func(*terraform.State) error { return w.ExpectRuns("app.two.work:DELETE") },
			},
			{
				// Editing a file of the directory is an update.
				PreConfig: func() { write("one.yaml", strings.Replace(leaf("one"), "env: {W:", "env: {CHANGED: \"yes\", W:", 1)) },
				Config:    cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(inst, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error { return w.ExpectRuns("app.one.work:RECONCILE") },
			},
			{
				Config:           cfg,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// A new reconcile_trigger re-runs every item of the tree.
				Config: withTrigger(`"again"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(inst, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error { return w.ExpectRuns("app.one.work:RECONCILE") },
			},
			{
				Config:           withTrigger(`"again"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// Installation, sub-installation and deploy item names follow Landscaper's
// name rule; a violation is a plan-time error that states the rule.
func TestAccInstallation_invalidNames(t *testing.T) {
	sub := func(name string) string {
		return fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
subinstallations:
  - name: %q
    blueprint:
      filesystem:
        blueprint.yaml: "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n"
`, name)
	}
	cases := map[string]struct{ name, bp, want string }{
		"installation": {"bad/name", sub("ok"), `(?s)Invalid name.*"bad/name" is not a valid name`},
		"sub":          {"app", sub("-sub"), `(?s)"-sub" is not a valid name`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config: fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name      = %q
  blueprint = { filesystem = { "blueprint.yaml" = %q } }
}`, tc.name, tc.bp),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}
