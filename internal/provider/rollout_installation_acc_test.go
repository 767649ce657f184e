package provider

import (
	"fmt"
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

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// fleetBlueprint renders, like a blueprint for a fleet does, one item
// "db" for no cluster and two items per key of the target map
// "clusters": "app-<key>" (exporting the version) and "agent-<key>".
const fleetBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - name: clusters
    type: targetMap
    targetType: landscaper.gardener.cloud/kubernetes-cluster
  - name: version
    type: data
    schema: {type: string}
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
        - name: db
          type: exec
          config:
            command: ["sh", "-c", {{ toJson .imports.script }}]
            env: {W: {{ toJson .imports.w }}, EXPORT: '"db"'}
      {{- range $key, $t := .imports.clusters }}
      {{- range $kind := list "app" "agent" }}
        - name: {{ $kind }}-{{ $key }}
          type: exec
          target: {import: clusters, key: {{ $key }}}
          config:
            command: ["sh", "-c", {{ toJson $.imports.script }}]
            env: {W: {{ toJson $.imports.w }}, EXPORT: {{ toJson (toJson $.imports.version) }}}
      {{- end }}
      {{- end }}
`

// fleetConfig is landscaper_installation "app" of blueprint over clusters
// eu-1, eu-2, us-1, us-2 with the data imports imports (HCL), a rollout
// body and a reconcile trigger ("" for none).
func fleetConfig(blueprint, imports, rolloutBody, trigger string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "locals {\n  kubeconfig = jsonencode({ kubeconfig = %q })\n}\n", acctest.UnreachableKubeconfig)
	fmt.Fprintf(&b, `resource "landscaper_installation" "app" {
  name      = "fleet"
  blueprint = { filesystem = { "blueprint.yaml" = %q } }
  imports   = { %s }
  target_maps = { clusters = {
    for k in ["eu-1", "eu-2", "us-1", "us-2"] : k => { type = "landscaper.gardener.cloud/kubernetes-cluster", config = local.kubeconfig }
  } }
`, blueprint, imports)
	if trigger != "" {
		fmt.Fprintf(&b, "  reconcile_trigger = %q\n", trigger)
	}
	if rolloutBody != "" {
		fmt.Fprintf(&b, "  rollout = {\n%s\n  }\n", rolloutBody)
	}
	b.WriteString("}\n")
	return b.String()
}

// fleetInstallation is fleetConfig of fleetBlueprint with version.
func (w *world) fleetInstallation(version, rolloutBody, trigger string) string {
	return fleetConfig(fleetBlueprint, fmt.Sprintf("version = %q, w = %q, script = %q", version, w.Dir, acctest.Script), rolloutBody, trigger)
}

var fleetKeys = []string{"eu-1", "eu-2", "us-1", "us-2"}

func instRollout(field ...string) tfjsonpath.Path {
	p := tfjsonpath.New("status").AtMapKey("rollout").AtMapKey("clusters")
	for _, f := range field {
		p = p.AtMapKey(f)
	}
	return p
}

// fleetOnSpec checks which members (keys) report the new spec.
func fleetOnSpec(newSpec ...string) []statecheck.StateCheck {
	var out []statecheck.StateCheck
	for _, k := range fleetKeys {
		out = append(out, statecheck.ExpectKnownValue(inst, instRollout("members", k, "new_spec"), knownvalue.Bool(slices.Contains(newSpec, k))))
	}
	return out
}

// memberRounds reads the run log: the keys whose items ran, in order of
// their first item, and checks each key's two items ran together.
func memberRounds(w *world) []string {
	var keys []string
	for _, r := range w.Runs() {
		n, ok := strings.CutSuffix(r, ":RECONCILE")
		if !ok || n == "db" {
			continue
		}
		_, key, _ := strings.Cut(n, "-")
		if !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	return keys
}

// fleetPlanIs checks rollout_plan.clusters of the installation.
func fleetPlanIs(canary, batches, hold string) plancheck.PlanCheck {
	return rolloutPlanOf(inst, "clusters", canary, batches, hold)
}

// An installation's members are the target keys its blueprint renders
// items for: the canary key's items run first and bake, then the rest
// batch by batch; an item for no target runs at once.
func TestAccInstallationRollout_canaryBatchesCompleted(t *testing.T) {
	w := newWorld(t)
	body := fmt.Sprintf(`    canary   = { members = ["us-1"] }
    duration = "2s"
    batches  = ["34%%", "100%%"]
    auto_fail = { max_restarts = 0 }
    health   = { command = ["sh", "-c", "echo $LANDSCAPER_MEMBER $LANDSCAPER_MEMBER_ITEMS >> %s/health.log"], interval = "1s" }`, w.Dir)
	order := func(canary string, batches ...[]string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			if err := inRounds(memberRounds(w), canary, batches...); err != nil {
				return err
			}
			if h := w.healthLog(); !strings.Contains(h, canary+" agent-"+canary+",app-"+canary) {
				return fmt.Errorf("health command saw %q", h)
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// A first create goes canary first too.
				Config: w.fleetInstallation("v1", body, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					fleetPlanIs("[us-1]", "[[eu-1 eu-2] [us-2]]", "[]"),
					plancheck.ExpectUnknownValue(inst, tfjsonpath.New("status")),
				}},
				Check: order("us-1", []string{"eu-1", "eu-2"}, []string{"us-2"}),
				ConfigStateChecks: append(fleetOnSpec(fleetKeys...),
					statecheck.ExpectKnownValue(inst, instRollout("phase"), knownvalue.StringExact("Completed")),
					statecheck.ExpectKnownValue(inst, instRollout("canary"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("us-1")})),
					statecheck.ExpectKnownValue(inst, tfjsonpath.New("status").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
				),
			},
			{
				// Nothing changed: an empty plan.
				Config:           w.fleetInstallation("v1", body, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// A new version: canary, bake, batches, and db does not run again.
				Config: w.fleetInstallation("v2", body, ""),
				Check:  order("us-1", []string{"eu-1", "eu-2"}, []string{"us-2"}),
				ConfigStateChecks: append(fleetOnSpec(fleetKeys...),
					statecheck.ExpectKnownValue(inst, instRollout("phase"), knownvalue.StringExact("Completed")),
					statecheck.ExpectKnownValue(inst, tfjsonpath.New(attrDeployItems).AtMapKey("app-eu-2").AtMapKey("config"),
						knownvalue.StringRegexp(regexp.MustCompile(`"EXPORT":"\\"v2\\""`))),
				),
			},
		},
	})
}

// A manual pause runs one stage per apply (a new spec meanwhile starts a
// new rollout, canary first), and the plan says which
// members move and which stay; held members keep their rendered config
// in deploy_items until they move.
func TestAccInstallationRollout_manualPause(t *testing.T) {
	w := newWorld(t)
	body := func(paused bool) string {
		return fmt.Sprintf("    canary = { count = 1 }\n    batches = [\"2\", \"100%%\"]\n    paused = %t", paused)
	}
	appConfig := func(key, version string) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(inst, tfjsonpath.New(attrDeployItems).AtMapKey("app-"+key).AtMapKey("config"),
			knownvalue.StringRegexp(regexp.MustCompile(`"EXPORT":"\\"`+version+`\\""`)))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: w.fleetInstallation("v1", body(false), "")},
			{
				Config: w.fleetInstallation("v2", body(true), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					fleetPlanIs("[eu-1]", "[]", "[eu-2 us-1 us-2]"),
				}},
				ExpectNonEmptyPlan: true,
				ConfigStateChecks: append(fleetOnSpec("eu-1"),
					statecheck.ExpectKnownValue(inst, instRollout("reason"), knownvalue.StringExact("ManualPause")),
					statecheck.ExpectKnownValue(inst, tfjsonpath.New("status").AtMapKey("phase"), knownvalue.StringExact("Progressing")),
					appConfig("eu-1", "v2"), appConfig("us-2", "v1"),
				),
			},
			{
				// Still paused: the next batch of two.
				Config: w.fleetInstallation("v2", body(true), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					fleetPlanIs("[]", "[[eu-2 us-1]]", "[us-2]"),
				}},
				ExpectNonEmptyPlan: true,
				ConfigStateChecks:  append(fleetOnSpec("eu-1", "eu-2", "us-1"), appConfig("us-1", "v2"), appConfig("us-2", "v1")),
			},
			{
				// A new spec while paused: a new rollout, canary first;
				// us-2 never saw v2.
				Config: w.fleetInstallation("v3", body(true), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					fleetPlanIs("[eu-1]", "[]", "[eu-2 us-1 us-2]"),
				}},
				ExpectNonEmptyPlan: true,
				ConfigStateChecks:  append(fleetOnSpec("eu-1"), appConfig("eu-1", "v3"), appConfig("us-1", "v2"), appConfig("us-2", "v1")),
			},
			{
				// Unpaused: the rest, and the installation succeeds.
				Config: w.fleetInstallation("v3", body(false), ""),
				ConfigStateChecks: append(fleetOnSpec(fleetKeys...),
					statecheck.ExpectKnownValue(inst, instRollout("phase"), knownvalue.StringExact("Completed")),
					statecheck.ExpectKnownValue(inst, tfjsonpath.New("status").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
					appConfig("us-2", "v3"),
				),
			},
		},
	})
}

// A canary whose health fails during the bake trips auto-fail: both of
// its items go back to the previous spec, nobody else moves, and the
// apply fails naming which member runs what. The same spec again moves
// nothing; a new reconcile_trigger tries the canary again.
func TestAccInstallationRollout_autoFailRevertsCanary(t *testing.T) {
	w := newWorld(t)
	body := fmt.Sprintf(`    canary    = { members = ["eu-2"] }
    duration  = "300ms"
    auto_fail = { max_restarts = 0 }
    health    = { command = ["sh", "-c", "test ! -e %s/sick-$LANDSCAPER_MEMBER"], interval = "2s" }`, w.Dir)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: w.fleetInstallation("v1", body, ""), Check: func(*terraform.State) error { w.Runs(); return nil }},
			{
				PreConfig:   func() { w.Flag("sick-eu-2") },
				Config:      w.fleetInstallation("v2", body, ""),
				ExpectError: regexp.MustCompile(`(?s)Rollout of group "clusters" failed at the canary.*New spec \(revision [0-9a-f]+\): \(none\).*Old spec: eu-1, eu-2, us-1, us-2`),
			},
			{
				PreConfig: func() {
					// The canary's two items ran v2, then v1 again; nobody else ran.
					runs := slices.Sorted(slices.Values(w.Runs()))
					want := []string{"agent-eu-2:RECONCILE", "agent-eu-2:RECONCILE", "app-eu-2:RECONCILE", "app-eu-2:RECONCILE"}
					if !slices.Equal(runs, want) {
						t.Errorf("runs %v, want %v", runs, want)
					}
				},
				RefreshState:       true,
				ExpectNonEmptyPlan: true,
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr(inst, "status.rollout.clusters.phase", "CanaryFailed"),
					resource.TestCheckResourceAttr(inst, "status.rollout.clusters.reason", "AutoFail"),
					resource.TestCheckResourceAttr(inst, "status.rollout.clusters.members.eu-2.new_spec", "false"),
					resource.TestCheckResourceAttr(inst, "status.rollout.clusters.members.eu-2.restarts", "1"),
					resource.TestCheckResourceAttr(inst, "status.phase", "Failed"),
					resource.TestMatchResourceAttr(inst, "deploy_items.app-eu-2.config", regexp.MustCompile(`"EXPORT":"\\"v1\\""`)),
					resource.TestCheckResourceAttr(inst, "status.deploy_items.app-eu-2", "Succeeded"),
				),
			},
			{
				// Same spec: the failure stands, nothing runs.
				Config:      w.fleetInstallation("v2", body, ""),
				ExpectError: regexp.MustCompile(`Rollout of group "clusters" failed`),
			},
			{
				PreConfig: func() {
					if runs := w.Runs(); len(runs) != 0 {
						t.Errorf("a held rollout ran %v", runs)
					}
					w.Unflag("sick-eu-2")
				},
				Config:            w.fleetInstallation("v2", body, "again"),
				ConfigStateChecks: append(fleetOnSpec(fleetKeys...), statecheck.ExpectKnownValue(inst, instRollout("phase"), knownvalue.StringExact("Completed"))),
			},
		},
	})
}

// canary.members names target keys; one that no item targets is a plan
// error at its path, as are bad batches and an unreadable strategy, and
// nothing runs.
func TestAccInstallationRollout_badCanaryMember(t *testing.T) {
	w := newWorld(t)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      w.fleetInstallation("v1", `    canary = { members = ["eu-9"] }`, ""),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Invalid rollout.*"eu-9" is not a target map key.*members: eu-1, eu-2, us-1, us-2`),
			},
			{
				Config:      w.fleetInstallation("v1", `    batches = ["50%", "40%"]`, ""),
				PlanOnly:    true,
				ExpectError: wrapRe(`(?s)rollout.batches\[1\]: batches are cumulative: 40% must be more than 50% before it.*rollout.batches\[1\]: the last batch must be "100%"`),
			},
			{
				Config:      w.fleetInstallation("v1", `    canary = { count = 1, percent = 10 }`+"\n"+`    duration = "soon"`, ""),
				PlanOnly:    true,
				ExpectError: wrapRe(`(?s)rollout.canary: set exactly one of members, count and percent.*rollout.duration: "soon" is not a non-negative Go duration`),
			},
		},
	})
}

// perKeySubBlueprint is a root blueprint that renders one
// sub-installation "<prefix>-<key>" per key of the target map "clusters"
// (`target: clusters[<key>]`, Landscaper's form), running the blueprint
// given as the import "sub", which gets the data imports data and the
// importDataMappings mappings (YAML lines, indented as they go); the
// root imports extra besides.
func perKeySubBlueprint(prefix string, data, extra []string, mappings string) string {
	var imports, refs strings.Builder
	for _, d := range slices.Concat(data, extra, []string{"sub"}) {
		fmt.Fprintf(&imports, "  - {name: %s, type: data, schema: {type: string}}\n", d)
	}
	for _, d := range data {
		fmt.Fprintf(&refs, "              - {name: %s, dataRef: %s}\n", d, d)
	}
	return `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: clusters, type: targetMap, targetType: landscaper.gardener.cloud/kubernetes-cluster}
` + imports.String() + `subinstallationExecutions:
  - name: per-cluster
    type: GoTemplate
    template: |
      subinstallations:
      {{- range $key, $t := .imports.clusters }}
        - apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: InstallationTemplate
          name: ` + prefix + `-{{ $key }}
          blueprint:
            filesystem:
              blueprint.yaml: {{ toJson $.imports.sub }}
          imports:
            targets:
              - {name: cluster, target: "clusters[{{ $key }}]"}
            data:
` + refs.String() + mappings + `      {{- end }}
`
}

// fleetSubBlueprint renders a sub-installation "sub-<key>" per cluster.
var fleetSubBlueprint = perKeySubBlueprint("sub", []string{"version", "w", "script"}, nil, "")

const fleetMemberBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: version, type: data, schema: {type: string}}
  - {name: w, type: data, schema: {type: string}}
  - {name: script, type: data, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: app
          type: exec
          target: {import: cluster}
          config:
            command: ["sh", "-c", {{ toJson .imports.script }}]
            env: {W: {{ toJson .imports.w }}, EXPORT: {{ toJson (toJson .imports.version) }}}
`

// fleetSubInstallation is fleetConfig of fleetSubBlueprint with version.
func (w *world) fleetSubInstallation(version, rolloutBody, trigger string) string {
	return fleetConfig(fleetSubBlueprint, fmt.Sprintf("version = %q, w = %q, script = %q, sub = %q",
		version, w.Dir, treeScript, fleetMemberBlueprint), rolloutBody, trigger)
}

// subRounds reads the run log of fleetSubInstallation: the keys whose
// sub-installation ran, in order.
func subRounds(w *world) []string {
	var keys []string
	for _, r := range w.Runs() {
		if n, ok := strings.CutSuffix(r, ".app:RECONCILE"); ok {
			keys = append(keys, strings.TrimPrefix(n, "fleet.sub-"))
		}
	}
	return keys
}

// Sub-installations rendered per target are members too: the canary's
// subtree runs first and bakes (health command per member), then the rest
// batch by batch; auto-fail reverts the canary's subtree; a manual pause
// stops after a stage and leaves the installation Progressing.
func TestAccInstallationRollout_subInstallationMembers(t *testing.T) {
	w := newWorld(t)
	body := func(paused bool) string {
		return fmt.Sprintf(`    canary    = { members = ["eu-2"] }
    duration  = "300ms"
    batches   = ["50%%", "100%%"]
    paused    = %t
    auto_fail = { max_restarts = 0 }
    health    = { command = ["sh", "-c", "echo $LANDSCAPER_MEMBER >> %s/health.log; test ! -e %s/sick-$LANDSCAPER_MEMBER"], interval = "2s" }`, paused, w.Dir, w.Dir)
	}
	subConfig := func(key, version string) statecheck.StateCheck {
		return statecheck.ExpectKnownValue(inst, tfjsonpath.New(attrDeployItems).AtMapKey("sub-"+key+"/app").AtMapKey("config"),
			knownvalue.StringRegexp(regexp.MustCompile(`"EXPORT":"\\"`+version+`\\""`)))
	}
	rounds := func(want ...string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			got := subRounds(w)
			if len(got) != len(want) || got[0] != want[0] {
				return fmt.Errorf("sub-installations ran %v, want %v", got, want)
			}
			// Batches: the same members, in any order within a batch.
			if !slices.Equal(slices.Sorted(slices.Values(got[1:min(3, len(got))])), want[1:min(3, len(want))]) {
				return fmt.Errorf("sub-installations ran %v, want %v", got, want)
			}
			if h := w.healthLog(); !strings.HasPrefix(h, want[0]+"\n") || strings.Contains(h, "us-") {
				return fmt.Errorf("health command ran for %q, want the canary %s only", h, want[0])
			}
			return nil
		}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: w.fleetSubInstallation("v1", body(false), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					fleetPlanIs("[eu-2]", "[[eu-1 us-1] [us-2]]", "[]"),
				}},
				Check: rounds("eu-2", "eu-1", "us-1", "us-2"),
				ConfigStateChecks: append(fleetOnSpec(fleetKeys...),
					statecheck.ExpectKnownValue(inst, instRollout("phase"), knownvalue.StringExact("Completed")),
					statecheck.ExpectKnownValue(inst, tfjsonpath.New("status").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
				),
			},
			{
				Config:           w.fleetSubInstallation("v1", body(false), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// The canary sickens under v2: auto-fail reverts its subtree.
				PreConfig:   func() { w.Flag("sick-eu-2") },
				Config:      w.fleetSubInstallation("v2", body(false), ""),
				ExpectError: regexp.MustCompile(`(?s)Rollout of group "clusters" failed at the canary.*canary reverted to the\s+previous spec: sub-eu-2.*Old spec: eu-1, eu-2, us-1, us-2`),
			},
			{
				PreConfig: func() {
					if got := subRounds(w); !slices.Equal(got, []string{"eu-2", "eu-2"}) {
						t.Errorf("sub-installations ran %v, want eu-2 (v2), then eu-2 (reverted)", got)
					}
					w.healthLog()
				},
				RefreshState:       true,
				ExpectNonEmptyPlan: true,
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr(inst, "status.rollout.clusters.phase", "CanaryFailed"),
					resource.TestCheckResourceAttr(inst, "status.rollout.clusters.reason", "AutoFail"),
					resource.TestCheckResourceAttr(inst, "status.phase", "Failed"),
					resource.TestMatchResourceAttr(inst, "deploy_items.sub-eu-2/app.config", regexp.MustCompile(`"EXPORT":"\\"v1\\""`)),
				),
			},
			{
				// Healthy again, and paused by hand: a new trigger runs
				// the canary only; the plan says so.
				PreConfig: func() { w.Unflag("sick-eu-2") },
				Config:    w.fleetSubInstallation("v2", body(true), "retry"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					fleetPlanIs("[eu-2]", "[]", "[eu-1 us-1 us-2]"),
				}},
				ExpectNonEmptyPlan: true,
				Check: func(*terraform.State) error {
					if got := subRounds(w); !slices.Equal(got, []string{"eu-2"}) {
						return fmt.Errorf("sub-installations ran %v, want the canary eu-2", got)
					}
					w.healthLog()
					return nil
				},
				ConfigStateChecks: append(fleetOnSpec("eu-2"),
					statecheck.ExpectKnownValue(inst, instRollout("reason"), knownvalue.StringExact("ManualPause")),
					statecheck.ExpectKnownValue(inst, tfjsonpath.New("status").AtMapKey("phase"), knownvalue.StringExact("Progressing")),
					subConfig("eu-2", "v2"), subConfig("us-2", "v1"),
				),
			},
			{
				// Unpaused: both batches; the canary baked already.
				Config: w.fleetSubInstallation("v2", body(false), "retry"),
				Check: func(*terraform.State) error {
					got := subRounds(w)
					if len(got) != 3 || got[2] != "us-2" {
						return fmt.Errorf("sub-installations ran %v, want eu-1 and us-1, then us-2", got)
					}
					return nil
				},
				ConfigStateChecks: append(fleetOnSpec(fleetKeys...),
					statecheck.ExpectKnownValue(inst, instRollout("phase"), knownvalue.StringExact("Completed")),
					statecheck.ExpectKnownValue(inst, tfjsonpath.New("status").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
					subConfig("us-2", "v2"),
				),
			},
		},
	})
}

// A create whose canary sub-installation pauses the rollout only warns
// (Terraform would taint a failed create and start over): the state holds
// the canary's items alone, the diagnostic says which members are not
// deployed yet, and a new trigger goes on.
func TestAccInstallationRollout_createPausedAtCanary(t *testing.T) {
	w := newWorld(t)
	body := fmt.Sprintf(`    canary     = { members = ["us-1"] }
    auto_pause = { max_restarts = 0 }
    health     = { command = ["sh", "-c", "test ! -e %s/sick-$LANDSCAPER_MEMBER"], interval = "2s" }`, w.Dir)
	w.Flag("sick-us-1")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: w.fleetSubInstallation("v1", body, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(inst, tfjsonpath.New(attrDeployItems)),
				}},
				ExpectNonEmptyPlan: true,
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr(inst, "status.rollout.clusters.phase", "CanaryPaused"),
					resource.TestCheckResourceAttr(inst, "status.phase", "Progressing"),
					resource.TestCheckResourceAttr(inst, "deploy_items.%", "1"),
					resource.TestCheckResourceAttrSet(inst, "deploy_items.sub-us-1/app.config"),
					func(*terraform.State) error {
						if got := subRounds(w); !slices.Equal(got, []string{"us-1"}) {
							return fmt.Errorf("sub-installations ran %v, want the canary us-1 alone", got)
						}
						return nil
					},
				),
			},
			{
				PreConfig: func() { w.Unflag("sick-us-1") },
				Config:    w.fleetSubInstallation("v1", body, "go-on"),
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr(inst, "status.rollout.clusters.phase", "Completed"),
					resource.TestCheckResourceAttr(inst, "deploy_items.%", "4"),
				),
			},
		},
	})
}
