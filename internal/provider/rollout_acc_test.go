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
	fmt.Fprintf(&b, "  rollout = {\n%s\n  }\n  deploy_items = {\n", rolloutBody)
	for _, k := range slices.Sorted(maps.Keys(items)) {
		fmt.Fprintf(&b, "    %q = %s\n", k, items[k])
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// read returns a file of the world's directory, and removes it.
func (w *world) read(name string) string {
	p := filepath.Join(w.Dir, name)
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
	return acctest.PlanFunc(func(req plancheck.CheckPlanRequest) error {
		after, _, err := plannedAfter(req)
		if err != nil {
			return err
		}
		p, _ := acctest.Dig(after, "rollout_plan", "fleet").(map[string]any)
		got := fmt.Sprintf("canary=%v batches=%v hold=%v", p["canary"], p["batches"], p["hold"])
		want := fmt.Sprintf("canary=%s batches=%s hold=%s", canary, batches, hold)
		if got != want {
			return fmt.Errorf("rollout_plan: %s, want %s", got, want)
		}
		return nil
	})
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
    duration = "1s"
    batches  = ["33%%", "100%%"]
    auto_fail = { max_restarts = 0 }
    health   = { command = ["sh", "-c", "echo $LANDSCAPER_MEMBER $LANDSCAPER_MEMBER_EXPORT >> %s/health.log"], interval = "200ms" }`, w.Dir)
	checkOrder := func(first string, batches ...[]string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			got := orderOf(w)
			if len(got) != 4 || got[0] != first {
				return fmt.Errorf("runs %v: want the canary %s first", got, first)
			}
			i := 1
			for _, b := range batches {
				if !slices.Equal(slices.Sorted(slices.Values(got[i:i+len(b)])), b) {
					return fmt.Errorf("runs %v: want batch %v", got, b)
				}
				i += len(b)
			}
			return nil
		}
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
						lines := w.read("health.log")
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
					statecheck.ExpectKnownValue(app, rolloutStatus("conditions"), knownvalue.ListPartial(map[int]knownvalue.Check{
						0: knownvalue.ObjectPartial(map[string]knownvalue.Check{"type": knownvalue.StringExact("Canary"), "status": knownvalue.StringExact("False"),
							"reason": knownvalue.StringExact("CanaryHealthy"), "last_transition_time": knownvalue.NotNull()}),
						3: knownvalue.ObjectPartial(map[string]knownvalue.Check{"type": knownvalue.StringExact("Completed"), "status": knownvalue.StringExact("True")}),
					})),
				),
			},
		},
	})
}
