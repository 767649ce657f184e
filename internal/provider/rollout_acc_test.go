package provider

import (
	"fmt"
	"maps"
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

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// rolloutConfig is landscaper_execution "app" with members m0..m{n-1} of
// group "fleet" exporting version, a non-member "db", the rollout
// attribute body and a reconcile trigger.
func (w *world) rolloutConfig(n int, version, rolloutBody, trigger string) string {
	items := map[string]string{"db": execItem(nil, `EXPORT = "db"`)}
	for i := range n {
		items[fmt.Sprintf("m%d", i)] = execItem(nil, fmt.Sprintf(`EXPORT = %q`, version), `rollout_group = "fleet"`)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "locals {\n  script = %q\n  w = %q\n}\n", acctest.Script, w.Dir)
	b.WriteString("resource \"landscaper_execution\" \"app\" {\n  name = \"app\"\n")
	if trigger != "" {
		fmt.Fprintf(&b, "  reconcile_trigger = %q\n", trigger)
	}
	if rolloutBody != "" {
		fmt.Fprintf(&b, "  rollout = {\n%s\n  }\n", rolloutBody)
	}
	b.WriteString("  deploy_items = {\n")
	for _, k := range slices.Sorted(maps.Keys(items)) {
		fmt.Fprintf(&b, "    %q = %s\n", k, items[k])
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// healthLog returns what health commands logged to health.log in the
// world's directory, and removes it.
func (w *world) healthLog() string {
	p := filepath.Join(w.Dir, "health.log")
	b, _ := os.ReadFile(p)
	_ = os.Remove(p)
	return string(b)
}

func rolloutStatus(field ...string) tfjsonpath.Path {
	p := tfjsonpath.New("status").AtMapKey("rollout").AtMapKey("fleet")
	for _, f := range field {
		p = p.AtMapKey(f)
	}
	return p
}

// onSpec checks which members report the new spec in status.rollout.
func onSpec(newSpec ...string) []statecheck.StateCheck {
	var out []statecheck.StateCheck
	for i := range 4 {
		m := fmt.Sprintf("m%d", i)
		out = append(out, statecheck.ExpectKnownValue(app, rolloutStatus("members", m, "new_spec"), knownvalue.Bool(slices.Contains(newSpec, m))))
	}
	return out
}

// exportsAre checks the members' exports: which spec each one runs.
func exportsAre(want map[string]string) resource.TestCheckFunc {
	var fs []resource.TestCheckFunc
	for m, v := range want {
		fs = append(fs, resource.TestCheckResourceAttr(app, "exports."+m, v))
	}
	return resource.ComposeTestCheckFunc(fs...)
}

// rolloutPlanIs checks rollout_plan.fleet in the plan.
func rolloutPlanIs(canary string, batches string, hold string) plancheck.PlanCheck {
	return rolloutPlanOf(app, "fleet", canary, batches, hold)
}

// rolloutPlanOf checks rollout_plan[group] of the resource at address in
// the plan: its canary, batches and held members, as fmt prints them.
func rolloutPlanOf(address, group, canary, batches, hold string) plancheck.PlanCheck {
	return acctest.PlanFunc(func(req plancheck.CheckPlanRequest) error {
		after, _, err := plannedAfterOf(req, address)
		if err != nil {
			return err
		}
		p, _ := acctest.Dig(after, "rollout_plan", group).(map[string]any)
		got := fmt.Sprintf("canary=%v batches=%v hold=%v", p["canary"], p["batches"], p["hold"])
		want := fmt.Sprintf("canary=%s batches=%s hold=%s", canary, batches, hold)
		if got != want {
			return fmt.Errorf("rollout_plan: %s, want %s", got, want)
		}
		return nil
	})
}

// inRounds checks members ran in order: first, then each batch (in any
// order within a batch).
func inRounds(got []string, first string, batches ...[]string) error {
	n := 1
	for _, b := range batches {
		n += len(b)
	}
	if len(got) != n || got[0] != first {
		return fmt.Errorf("members ran %v: want the canary %s first, %d in all", got, first, n)
	}
	i := 1
	for _, b := range batches {
		if !slices.Equal(slices.Sorted(slices.Values(got[i:i+len(b)])), b) {
			return fmt.Errorf("members ran %v: want batch %v", got, b)
		}
		i += len(b)
	}
	return nil
}

// orderOf returns the members' RECONCILE runs in order.
func orderOf(w *world) []string {
	var out []string
	for _, r := range w.Runs() {
		if n, ok := strings.CutSuffix(r, ":RECONCILE"); ok && strings.HasPrefix(n, "m") {
			out = append(out, n)
		}
	}
	return out
}

func TestAccExecutionRollout_canaryBatchesCompleted(t *testing.T) {
	w := newWorld(t)
	body := fmt.Sprintf(`    canary   = { members = ["m2"] }
    duration = "2s"
    batches  = ["33%%", "100%%"]
    auto_fail = { max_restarts = 0 }
    health   = { command = ["sh", "-c", "echo $LANDSCAPER_MEMBER $LANDSCAPER_MEMBER_EXPORT >> %s/health.log"], interval = "1s" }`, w.Dir)
	checkOrder := func(first string, batches ...[]string) resource.TestCheckFunc {
		return func(*terraform.State) error { return inRounds(orderOf(w), first, batches...) }
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// A first create goes canary first too.
				Config: w.rolloutConfig(4, "v1", body, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					rolloutPlanIs("[m2]", "[[m0] [m1 m3]]", "[]"),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkOrder("m2", []string{"m0"}, []string{"m1", "m3"}),
					exportsAre(map[string]string{"m0": "v1", "m1": "v1", "m2": "v1", "m3": "v1", "db": "db"}),
					resource.TestCheckResourceAttr(app, "status.phase", "Succeeded"),
					func(*terraform.State) error {
						lines := w.healthLog()
						if n := strings.Count(lines, "m2 \"v1\""); n < 3 || strings.Count(lines, "\n") != n {
							return fmt.Errorf("health checks during a 1s bake every 200ms: %q", lines)
						}
						return nil
					},
				),
				ConfigStateChecks: append(onSpec("m0", "m1", "m2", "m3"),
					statecheck.ExpectKnownValue(app, rolloutStatus("phase"), knownvalue.StringExact("Completed")),
					statecheck.ExpectKnownValue(app, rolloutStatus("canary"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("m2")})),
					statecheck.ExpectKnownValue(app, rolloutStatus("members", "m2", "canary"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(app, rolloutStatus("members", "m2", "revision"), knownvalue.StringRegexp(regexp.MustCompile(`^[0-9a-f]{12}$`))),
				),
			},
			{
				// A new spec: the canary first again, then the batches;
				// db, not a member and unchanged, does not run.
				Config: w.rolloutConfig(4, "v2", body, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(app, plancheck.ResourceActionUpdate),
					rolloutPlanIs("[m2]", "[[m0] [m1 m3]]", "[]"),
				}, PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: resource.ComposeTestCheckFunc(
					checkOrder("m2", []string{"m0"}, []string{"m1", "m3"}),
					exportsAre(map[string]string{"m0": "v2", "m1": "v2", "m2": "v2", "m3": "v2"}),
				),
				ConfigStateChecks: append(onSpec("m0", "m1", "m2", "m3"),
					statecheck.ExpectKnownValue(app, rolloutStatus("phase"), knownvalue.StringExact("Completed")),
					statecheck.ExpectKnownValue(app, tfjsonpath.New("rollout_plan").AtMapKey("fleet").AtMapKey("bake"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(app, rolloutStatus("conditions"), knownvalue.ListPartial(map[int]knownvalue.Check{
						0: knownvalue.ObjectPartial(map[string]knownvalue.Check{"type": knownvalue.StringExact("Canary"), "status": knownvalue.StringExact("False"),
							"reason": knownvalue.StringExact("CanaryHealthy"), "last_transition_time": knownvalue.NotNull()}),
						3: knownvalue.ObjectPartial(map[string]knownvalue.Check{"type": knownvalue.StringExact("Completed"), "status": knownvalue.StringExact("True")}),
					})),
				),
			},
			{
				// Without rollout, nothing runs and the rollout leaves the state.
				PreConfig: func() { w.Runs() },
				Config:    w.rolloutConfig(4, "v2", "", ""),
				Check: func(*terraform.State) error {
					if got := w.Runs(); len(got) != 0 {
						return fmt.Errorf("removing rollout ran %v", got)
					}
					return nil
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(app, tfjsonpath.New("status").AtMapKey("rollout"), knownvalue.Null()),
					statecheck.ExpectKnownValue(app, tfjsonpath.New("rollout_plan"), knownvalue.Null()),
				},
			},
		},
	})
}

// priorIs checks values of landscaper_execution.app in the plan's prior
// state: what the last (failed) apply left in state. want maps dotted
// paths to fmt.Sprint of the value.
func priorIs(want map[string]string) plancheck.PlanCheck { return priorIsOf(app, want) }

// priorIsOf is priorIs for the resource at address.
func priorIsOf(address string, want map[string]string) plancheck.PlanCheck {
	return acctest.PlanFunc(func(req plancheck.CheckPlanRequest) error {
		if req.Plan.PriorState == nil || req.Plan.PriorState.Values == nil {
			return fmt.Errorf("no prior state")
		}
		for _, r := range req.Plan.PriorState.Values.RootModule.Resources {
			if r.Address != address {
				continue
			}
			for path, v := range want {
				if got := fmt.Sprint(acctest.Dig(r.AttributeValues, strings.Split(path, ".")...)); got != v {
					return fmt.Errorf("prior %s = %s, want %s", path, got, v)
				}
			}
			return nil
		}
		return fmt.Errorf("%s not in prior state", address)
	})
}

// wrapRe compiles a pattern whose spaces match any white space, since
// Terraform wraps the lines of diagnostics.
func wrapRe(p string) *regexp.Regexp { return regexp.MustCompile(strings.ReplaceAll(p, " ", `\s+`)) }

func expectMemberRuns(t *testing.T, w *world, want ...string) {
	t.Helper()
	if got := orderOf(w); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("member runs %v, want %v", got, want)
	}
}

func TestAccExecutionRollout_autoFailRevertsCanary(t *testing.T) {
	w := newWorld(t)
	body := fmt.Sprintf(`    canary    = { members = ["m0"] }
    duration  = "2s"
    auto_fail = { max_restarts = 0 }
    health    = { command = ["sh", "-c", "test ! -e %s/sick-$LANDSCAPER_MEMBER"], interval = "1s" }`, w.Dir)
	v2 := w.rolloutConfig(4, "v2", body, "")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: w.rolloutConfig(4, "v1", body, "")},
			{
				PreConfig: func() { w.Runs(); w.Flag("sick-m0") },
				Config:    v2,
				ExpectError: wrapRe(`(?s)Rollout of group "fleet" failed at the canary.*AutoFail.*m0 restarted 1 times.*` +
					`canary reverted to the previous spec: m0.*New spec \(revision [0-9a-f]+\): \(none\).*Old spec: m0, m1, m2, m3`),
			},
			{
				// State tells the truth: m0 runs v1 again; nothing moves
				// while the spec and the trigger stay.
				PreConfig: func() { expectMemberRuns(t, w, "m0", "m0") },
				Config:    v2,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					priorIs(map[string]string{"exports.m0": "v1", "exports.m1": "v1", "status.phase": "Failed",
						"status.rollout.fleet.phase": "CanaryFailed", "status.rollout.fleet.reason": "AutoFail",
						"status.rollout.fleet.members.m0.new_spec": "false", "status.rollout.fleet.members.m0.restarts": "1"}),
					rolloutPlanIs("[]", "[]", "[m0 m1 m2 m3]"),
				}},
				ExpectError: wrapRe(`Rollout of group "fleet" failed at the canary`),
			},
			{
				// A new trigger tries the canary again; healthy now.
				PreConfig: func() { expectMemberRuns(t, w); w.Unflag("sick-m0") },
				Config:    w.rolloutConfig(4, "v2", body, "retry"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					rolloutPlanIs("[m0]", "[[m1 m2 m3]]", "[]"),
				}},
				Check: exportsAre(map[string]string{"m0": "v2", "m1": "v2", "m2": "v2", "m3": "v2"}),
				ConfigStateChecks: append(onSpec("m0", "m1", "m2", "m3"),
					statecheck.ExpectKnownValue(app, rolloutStatus("phase"), knownvalue.StringExact("Completed"))),
			},
		},
	})
}

func TestAccExecutionRollout_failingCanaryMemberFailsApply(t *testing.T) {
	w := newWorld(t)
	body := `    canary = { count = 1 }`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: w.rolloutConfig(4, "v1", body, "")},
			{
				PreConfig:   func() { w.Runs(); w.Flag("fail-m0-RECONCILE") },
				Config:      w.rolloutConfig(4, "v2", body, ""),
				ExpectError: wrapRe(`(?s)Rollout of group "fleet" failed.*CanaryMemberFailed.*m0 failed:.*exit code 3.*Old spec: m0, m1, m2, m3`),
			},
			{
				// The revert of m0 failed too (its flag stays): the state
				// says m0 failed, the rest never moved.
				PreConfig: func() { expectMemberRuns(t, w, "m0", "m0") },
				Config:    w.rolloutConfig(4, "v2", body, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					priorIs(map[string]string{"exports.m1": "v1", "status.rollout.fleet.phase": "CanaryFailed",
						"status.deploy_items.m0.phase": "Failed", "status.deploy_items.m1.phase": "Succeeded"}),
					rolloutPlanIs("[]", "[]", "[m0 m1 m2 m3]"),
				}},
				ExpectError: wrapRe(`Rollout of group "fleet" failed`),
			},
		},
	})
}

func TestAccExecutionRollout_autoPauseResumable(t *testing.T) {
	w := newWorld(t)
	body := fmt.Sprintf(`    canary     = { percent = 10 }
    duration   = "2s"
    auto_pause = { max_restarts = 1 }
    auto_fail  = { max_restarts = 50 }
    health     = { command = ["sh", "-c", "test ! -e %s/sick-$LANDSCAPER_MEMBER"], interval = "100ms" }`, w.Dir)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// A create that pauses warns (an error would taint it).
				PreConfig:          func() { w.Flag("sick-m0") },
				Config:             w.rolloutConfig(4, "v1", body, ""),
				ExpectNonEmptyPlan: true,
				ConfigStateChecks: append(onSpec("m0"),
					statecheck.ExpectKnownValue(app, rolloutStatus("phase"), knownvalue.StringExact("CanaryPaused")),
					statecheck.ExpectKnownValue(app, rolloutStatus("reason"), knownvalue.StringExact("AutoPause")),
					statecheck.ExpectKnownValue(app, rolloutStatus("members", "m0", "restarts"), knownvalue.Int64Exact(2))),
			},
			{
				// Still paused while the trigger stays, and now an error;
				// the canary keeps v1 (its first spec), the rest never ran.
				PreConfig: func() { expectMemberRuns(t, w, "m0"); w.Unflag("sick-m0") },
				Config:    w.rolloutConfig(4, "v1", body, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					priorIs(map[string]string{"exports.m0": "v1", "status.rollout.fleet.phase": "CanaryPaused",
						"status.deploy_items.m1.phase": "Init", "status.phase": "Progressing"}),
					rolloutPlanIs("[]", "[]", "[m1 m2 m3]"),
				}},
				ExpectError: wrapRe(`Rollout of group "fleet" paused: the canary restarted too often`),
			},
			{
				// A new trigger lifts the pause: the canary bakes again.
				PreConfig: func() { expectMemberRuns(t, w) },
				Config:    w.rolloutConfig(4, "v1", body, "resume"),
				Check: resource.ComposeTestCheckFunc(
					exportsAre(map[string]string{"m0": "v1", "m1": "v1", "m2": "v1", "m3": "v1"}),
					resource.TestCheckResourceAttr(app, "status.phase", "Succeeded"),
				),
				ConfigStateChecks: append(onSpec("m0", "m1", "m2", "m3"),
					statecheck.ExpectKnownValue(app, rolloutStatus("phase"), knownvalue.StringExact("Completed"))),
			},
		},
	})
}

func TestAccExecutionRollout_manualPauseBetweenBatches(t *testing.T) {
	w := newWorld(t)
	body := func(paused bool) string {
		return fmt.Sprintf(`    canary  = { count = 1 }
    batches = ["50%%", "100%%"]
    paused  = %v`, paused)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// A manual pause warns: the apply did what was asked.
				Config: w.rolloutConfig(4, "v1", body(true), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					rolloutPlanIs("[m0]", "[]", "[m1 m2 m3]"),
				}},
				ExpectNonEmptyPlan: true,
				ConfigStateChecks: append(onSpec("m0"),
					statecheck.ExpectKnownValue(app, rolloutStatus("message"), knownvalue.StringExact("paused by hand (paused = true) after the canary"))),
			},
			{
				PreConfig: func() { expectMemberRuns(t, w, "m0") },
				Config:    w.rolloutConfig(4, "v1", body(true), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					priorIs(map[string]string{"status.rollout.fleet.phase": "CanaryPaused", "status.rollout.fleet.reason": "ManualPause"}),
					rolloutPlanIs("[]", "[[m1 m2]]", "[m3]"),
				}},
				ExpectNonEmptyPlan: true,
				ConfigStateChecks: append(onSpec("m0", "m1", "m2"),
					statecheck.ExpectKnownValue(app, rolloutStatus("phase"), knownvalue.StringExact("RollingOut")),
					statecheck.ExpectKnownValue(app, rolloutStatus("message"), knownvalue.StringExact("paused by hand (paused = true) after batch 1"))),
			},
			{
				PreConfig: func() { expectMemberRuns(t, w, "m1", "m2") },
				Config:    w.rolloutConfig(4, "v1", body(false), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					priorIs(map[string]string{"status.rollout.fleet.phase": "RollingOut"}),
					rolloutPlanIs("[]", "[[m3]]", "[]"),
				}, PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
				Check: func(*terraform.State) error {
					if got := orderOf(w); !slices.Equal(got, []string{"m3"}) {
						return fmt.Errorf("member runs %v, want [m3]", got)
					}
					return nil
				},
				ConfigStateChecks: append(onSpec("m0", "m1", "m2", "m3"),
					statecheck.ExpectKnownValue(app, rolloutStatus("phase"), knownvalue.StringExact("Completed"))),
			},
		},
	})
}

func TestAccExecutionRollout_newSpecDuringPause(t *testing.T) {
	w := newWorld(t)
	body := func(paused bool) string {
		return fmt.Sprintf(`    canary = { members = ["m3"] }
    paused = %v`, paused)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: w.rolloutConfig(4, "v1", body(false), "")},
			{
				Config:             w.rolloutConfig(4, "v2", body(true), ""),
				ExpectNonEmptyPlan: true,
			},
			{
				// v3 while v2 is paused at the canary: a new canary, v3.
				PreConfig: func() { w.Runs() },
				Config:    w.rolloutConfig(4, "v3", body(true), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					priorIs(map[string]string{"exports.m3": "v2", "exports.m0": "v1", "status.rollout.fleet.phase": "CanaryPaused"}),
					rolloutPlanIs("[m3]", "[]", "[m0 m1 m2]"),
				}},
				ExpectNonEmptyPlan: true,
				ConfigStateChecks: append(onSpec("m3"),
					statecheck.ExpectKnownValue(app, rolloutStatus("phase"), knownvalue.StringExact("CanaryPaused"))),
			},
			{
				PreConfig: func() { expectMemberRuns(t, w, "m3") },
				Config:    w.rolloutConfig(4, "v3", body(false), ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					priorIs(map[string]string{"exports.m3": "v3", "exports.m0": "v1"}),
					rolloutPlanIs("[]", "[[m0 m1 m2]]", "[]"),
				}},
				Check: exportsAre(map[string]string{"m0": "v3", "m1": "v3", "m2": "v3", "m3": "v3"}),
			},
		},
	})
}

func TestAccExecutionRollout_planTimeValidation(t *testing.T) {
	w := newWorld(t)
	var steps []resource.TestStep
	for body, want := range map[string]string{
		`canary = { percent = 120 }`:                            `120 is not a percentage`,
		`canary = { members = ["m9"] }`:                         `"m9" is not a deploy item with a rollout_group; members: m0, m1`,
		"canary = { count = 1 }\n batches = [\"25%\", \"50%\"]": `the last batch must be "100%"`,
		`batches = ["quarter", "100%"]`:                         `"quarter" is neither a percentage`,
		`duration = "soon"`:                                     `"soon" is not a non-negative Go duration`,
		`canary = { count = 1, percent = 5 }`:                   `set exactly one of members, count and percent`,
	} {
		steps = append(steps, resource.TestStep{Config: w.rolloutConfig(2, "v1", body, ""), PlanOnly: true, ExpectError: wrapRe(want)})
	}
	resource.ParallelTest(t, resource.TestCase{ProtoV6ProviderFactories: protoV6ProviderFactories, Steps: steps})
}
