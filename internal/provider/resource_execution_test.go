package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

const app = "landscaper_execution.app"

func statusItem(name string) tfjsonpath.Path {
	return tfjsonpath.New("status").AtMapKey("deploy_items").AtMapKey(name)
}

// Behaviour 1: order, and concurrency bounded by max_parallelism.
func TestAccExecution_orderAndParallelism(t *testing.T) {
	w := newWorld(t)
	// Each item logs its start and end with a timestamp.
	timed := func(deps ...string) string {
		d := `["` + strings.Join(deps, `", "`) + `"]`
		if len(deps) == 0 {
			d = "[]"
		}
		return fmt.Sprintf(`{
      type = "exec"
      config = jsonencode({ command = ["sh", "-c", "echo \"start $DEPLOY_ITEM_NAME $(date +%%s%%N)\" >> %[1]s/times; sleep 0.4; echo \"end $DEPLOY_ITEM_NAME $(date +%%s%%N)\" >> %[1]s/times"] })
      depends_on = %[2]s
    }`, w.Dir, d)
	}
	items := map[string]string{"a": timed(), "b": timed(), "c": timed(), "after": timed("a", "b")}
	times := func() map[string][2]int64 {
		b, err := os.ReadFile(filepath.Join(w.Dir, "times"))
		if err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(filepath.Join(w.Dir, "times"))
		out := map[string][2]int64{}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			f := strings.Fields(l)
			ns, _ := strconv.ParseInt(f[2], 10, 64)
			v := out[f[1]]
			if f[0] == "start" {
				v[0] = ns
			} else {
				v[1] = ns
			}
			out[f[1]] = v
		}
		return out
	}
	overlap := func(x, y [2]int64) bool { return x[0] < y[1] && y[0] < x[1] }

	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: w.config("", items),
				Check: func(*terraform.State) error {
					tm := times()
					for _, dep := range []string{"a", "b"} {
						if tm["after"][0] < tm[dep][1] {
							return fmt.Errorf("after started before %s ended: %v", dep, tm)
						}
					}
					if !overlap(tm["a"], tm["b"]) || !overlap(tm["b"], tm["c"]) {
						return fmt.Errorf("independent items did not run concurrently: %v", tm)
					}
					return nil
				},
			},
		},
	})

	serial := newWorld(t)
	w = serial
	items = map[string]string{"a": timed(), "b": timed(), "c": timed()}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: w.config("max_parallelism = 1", items),
			Check: func(*terraform.State) error {
				tm := times()
				names := []string{"a", "b", "c"}
				for i, x := range names {
					for _, y := range names[i+1:] {
						if overlap(tm[x], tm[y]) {
							return fmt.Errorf("%s and %s overlapped with max_parallelism = 1: %v", x, y, tm)
						}
					}
				}
				return nil
			},
		}},
	})
}

// Behaviours 2, 3 and 4: a failed item stops new triggering while running
// items finish; the state tells each item's truth; the next plan resumes
// in place and its apply runs only what failed or never ran.
func TestAccExecution_failureAndResume(t *testing.T) {
	testExecutionFailureAndResume(t, protoV6ProviderFactories)
}

func testExecutionFailureAndResume(t *testing.T, factories factories) {
	w := newWorld(t)
	base := map[string]string{
		"a": execItem(nil, ""),
		"b": execItem([]string{"a"}, ""),
		"c": execItem(nil, ""),
	}
	grown := map[string]string{
		"a":    execItem(nil, `V = "2"`),
		"b":    execItem([]string{"a"}, ""),
		"c":    execItem(nil, ""),
		"d":    execItem([]string{"a"}, ""),
		"slow": `{ type = "mock", config = jsonencode({ duration = "1s", export = "slow-done" }) }`,
	}
	var firstJob string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{
				Config: w.config("", base),
				Check: resource.ComposeTestCheckFunc(
					func(*terraform.State) error { return w.ExpectRuns("a:RECONCILE", "b:RECONCILE", "c:RECONCILE") },
					func(s *terraform.State) error {
						firstJob = s.RootModule().Resources[app].Primary.Attributes["status.job_id"]
						return nil
					},
				),
				ConfigPlanChecks: resource.ConfigPlanChecks{PostApplyPostRefresh: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
			{
				// a changes and fails; d (after a) must never run; slow is
				// already running when a fails and must finish.
				PreConfig:   func() { w.Flag("fail-a-RECONCILE") },
				Config:      w.config("", grown),
				ExpectError: regexp.MustCompile(`(?s)Deploy item "a" failed.*operation: Reconcile.*reason: CommandFailed.*exit code 3.*flagged to fail`),
			},
			{
				// The same config plans an in-place update that resumes
				// only a and d; the prior state tells every item's truth.
				PreConfig: func() {
					if err := w.ExpectRuns("a:RECONCILE"); err != nil {
						t.Fatal(err)
					}
					w.Unflag("fail-a-RECONCILE")
				},
				Config: w.config("", grown),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(app, plancheck.ResourceActionUpdate),
					acctest.PlanFunc(func(req plancheck.CheckPlanRequest) error {
						prior, err := priorItems(req)
						if err != nil {
							return err
						}
						want := map[string]string{"a": "Failed", "b": "Succeeded", "c": "Succeeded", "d": "Init", "slow": "Succeeded"}
						if got := phases(prior); fmt.Sprint(got) != fmt.Sprint(want) {
							return fmt.Errorf("phases after the failed apply: %v, want %v", got, want)
						}
						le, _ := prior["a"]["last_error"].(map[string]any)
						if le["reason"] != "CommandFailed" || le["operation"] != "Reconcile" {
							return fmt.Errorf("a's last_error: %v", le)
						}
						if prior["c"]["job_id_finished"] != firstJob || prior["d"]["job_id_finished"] != nil {
							return fmt.Errorf("c must keep job %s and d have none: %v / %v", firstJob, prior["c"], prior["d"])
						}
						_, unknown, err := plannedAfter(req)
						if err != nil {
							return err
						}
						planned := acctest.Dig(unknown, "status", "deploy_items")
						for _, n := range []string{"a", "d"} {
							if acctest.Dig(planned, n) != true {
								return fmt.Errorf("status of %s must be unknown in the plan: %v", n, planned)
							}
						}
						for _, n := range []string{"b", "c", "slow"} {
							if acctest.Dig(planned, n) == true {
								return fmt.Errorf("status of %s must stay known: %v", n, planned)
							}
						}
						return nil
					}),
				}},
				Check: resource.ComposeTestCheckFunc(
					func(*terraform.State) error { return w.ExpectRuns("a:RECONCILE", "d:RECONCILE") },
					resource.TestCheckResourceAttr(app, "status.phase", "Succeeded"),
					resource.TestCheckResourceAttr(app, "exports.slow", "slow-done"),
				),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(app, statusItem("d").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
					statecheck.ExpectKnownValue(app, statusItem("c").AtMapKey("job_id_finished"), knownvalue.StringFunc(func(v string) error {
						if v != firstJob {
							return fmt.Errorf("c re-ran: job %s, want %s", v, firstJob)
						}
						return nil
					})),
				},
			},
		},
	})
}

// Behaviour 5: a changed item re-runs alone; a removed item is deleted
// during apply; update_on_change_only = false re-runs an item in every job.
func TestAccExecution_changesRunOnlyWhatChanged(t *testing.T) {
	w := newWorld(t)
	v1 := map[string]string{
		"a": execItem(nil, ""), "b": execItem([]string{"a"}, ""), "c": execItem(nil, ""),
		"gone": execItem([]string{"a"}, ""), "always": execItem(nil, "", "update_on_change_only = false"),
	}
	v2 := map[string]string{
		"a": execItem(nil, ""), "b": execItem([]string{"a"}, `V = "2"`), "c": execItem(nil, ""),
		"always": execItem(nil, "", "update_on_change_only = false"),
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: w.config("", v1),
				Check: func(*terraform.State) error {
					return w.ExpectRuns("a:RECONCILE", "b:RECONCILE", "c:RECONCILE", "gone:RECONCILE", "always:RECONCILE")
				},
			},
			{
				Config: w.config("", v2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					acctest.PlanFunc(func(req plancheck.CheckPlanRequest) error {
						after, unknown, err := plannedAfter(req)
						if err != nil {
							return err
						}
						// Known entries are in after, unknown ones in after_unknown.
						keys := map[string]bool{}
						for _, m := range []any{acctest.Dig(after, "status", "deploy_items"), acctest.Dig(unknown, "status", "deploy_items")} {
							items, _ := m.(map[string]any)
							for k := range items {
								keys[k] = true
							}
						}
						if keys["gone"] || len(keys) != 4 {
							return fmt.Errorf("a deleted item must leave status.deploy_items in the plan: %v", keys)
						}
						return nil
					}),
				}},
				Check: resource.ComposeTestCheckFunc(
					func(*terraform.State) error { return w.ExpectRuns("gone:DELETE", "b:RECONCILE", "always:RECONCILE") },
					resource.TestCheckNoResourceAttr(app, "status.deploy_items.gone.phase"),
				),
			},
		},
	})
}

// Behaviour 6: destroy deletes in reverse dependency order; a failing
// DELETE keeps the resource and the undeleted items in state, and a later
// destroy finishes the job.
func TestAccExecution_destroyOrderAndFailedDelete(t *testing.T) {
	testExecutionDestroyOrderAndFailedDelete(t, protoV6ProviderFactories)
}

func testExecutionDestroyOrderAndFailedDelete(t *testing.T, factories factories) {
	w := newWorld(t)
	items := map[string]string{
		"base": execItem(nil, ""), "mid": execItem([]string{"base"}, ""),
		"top": execItem([]string{"mid"}, ""), "side": execItem(nil, ""),
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{Config: w.config("", items)},
			{
				PreConfig: func() {
					w.Runs()
					w.Flag("fail-mid-DELETE")
				},
				Config:      w.config("", items),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`(?s)Deploy item "mid" could not be deleted.*operation: Delete`),
			},
			{
				// A second destroy finishes the job; its plan starts from
				// the state the failed one left.
				PreConfig: func() {
					runs := w.Runs()
					if slices.Index(runs, "top:DELETE") < 0 || slices.Index(runs, "top:DELETE") > slices.Index(runs, "mid:DELETE") ||
						slices.Index(runs, "base:DELETE") >= 0 {
						t.Fatalf("first destroy: %v", runs)
					}
					w.Unflag("fail-mid-DELETE")
				},
				Config:  w.config("", items),
				Destroy: true,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					acctest.PlanFunc(func(req plancheck.CheckPlanRequest) error {
						prior, err := priorItems(req)
						if err != nil {
							return err
						}
						want := map[string]string{"base": "Succeeded", "mid": "DeleteFailed"}
						if fmt.Sprint(phases(prior)) != fmt.Sprint(want) {
							return fmt.Errorf("left after the failed destroy: %v, want %v", phases(prior), want)
						}
						return nil
					}),
				}},
			},
		},
		CheckDestroy: func(*terraform.State) error {
			// The second destroy deleted only what was left, in order.
			runs := w.Runs()
			if fmt.Sprint(runs) != "[mid:DELETE base:DELETE]" {
				return fmt.Errorf("final destroy ran %v", runs)
			}
			return nil
		},
	})
}

// Behaviour 7: invalid configs fail at plan time with the item named, and
// nothing runs.
func TestAccExecution_planTimeErrors(t *testing.T) {
	w := newWorld(t)
	ok := execItem(nil, "")
	cases := []struct {
		name  string
		items map[string]string
		want  string
	}{
		{"unknown type", map[string]string{"a": ok, "x": `{ type = "helmet" }`}, `unknown deploy item type "helmet"`},
		{"missing dependency", map[string]string{"a": execItem([]string{"ghost"}, "")}, `"ghost" is not a deploy item`},
		{"cycle", map[string]string{"a": execItem([]string{"c"}, ""), "b": execItem([]string{"a"}, ""), "c": execItem([]string{"b"}, "")},
			`dependency cycle: a -> c -> b -> a`},
		{"timeout", map[string]string{"a": execItem(nil, "", `timeout = "ten minutes"`)}, `timeout "ten minutes" is neither a Go duration`},
		{"config text", map[string]string{"a": `{ type = "mock", config = "phase: [" }`}, `config is neither JSON nor YAML`},
		{"mock field type", map[string]string{"a": `{ type = "mock", config = jsonencode({ transientErrors = "two" }) }`}, `transientErrors`},
		{"mock phase", map[string]string{"a": `{ type = "mock", config = "phase: Running" }`}, `phase`},
		{"item name with a slash", map[string]string{"a/b": ok}, `"a/b" is not a valid name;`},
		{"item name starting with a dash", map[string]string{"-a": ok}, `"-a" is not a valid name`},
		{"item name too long", map[string]string{strings.Repeat("x", 64): ok}, `Invalid deploy item name`},
		{"exec command", map[string]string{"a": `{ type = "exec", config = jsonencode({ env = { A = "b" } }) }`}, `command`},
		{"exec field type", map[string]string{"a": `{ type = "exec", config = jsonencode({ command = "true" }) }`}, `cannot unmarshal`},
		{"no target for a cluster deployer", map[string]string{"a": `{ type = "kubernetes-manifest", config = jsonencode({ manifests = [] }) }`}, `acts on a target of type`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      w.config("", tc.items),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(regexp.QuoteMeta(tc.want)),
				}},
			})
			if runs := w.Runs(); len(runs) != 0 {
				t.Fatalf("something ran: %v", runs)
			}
		})
	}
}

// An execution name outside Landscaper's name rule is a plan-time error
// on the name.
func TestAccExecution_invalidName(t *testing.T) {
	w := newWorld(t)
	cfg := strings.Replace(w.config("", map[string]string{"a": execItem(nil, "")}), `name = "app"`, `name = "App_"`, 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      cfg,
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`(?s)Invalid name.*"App_" is not a valid name; a name has at most 63 characters`),
		}},
	})
}

// Behaviour 8: an item over its timeout fails with ERR_TIMEOUT.
func TestAccExecution_itemTimeout(t *testing.T) {
	w := newWorld(t)
	items := map[string]string{
		"slow": `{
      type = "exec", timeout = "300ms"
      config = jsonencode({ command = ["sh", "-c", "if [ \"$OPERATION\" = RECONCILE ]; then sleep 30; fi"] })
    }`,
		"next": execItem([]string{"slow"}, ""),
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      w.config("", items),
				ExpectError: regexp.MustCompile(`(?s)Deploy item "slow" failed.*reason: ProgressingTimeout.*300ms.*codes: ERR_TIMEOUT`),
			},
			{
				// The prior state of the next plan shows what happened.
				Config:      w.config("", items),
				ExpectError: regexp.MustCompile(`Deploy item "slow" failed`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					// A failed create is tainted by Terraform (the docs show
					// `terraform untaint` to resume in place instead).
					plancheck.ExpectResourceAction(app, plancheck.ResourceActionReplace),
					acctest.PlanFunc(func(req plancheck.CheckPlanRequest) error {
						prior, err := priorItems(req)
						if err != nil {
							return err
						}
						if p := phases(prior); p["slow"] != "Failed" || p["next"] != "Init" {
							return fmt.Errorf("phases %v", p)
						}
						codes := acctest.Dig(prior["slow"], "last_error", "codes")
						if fmt.Sprint(codes) != "[ERR_TIMEOUT]" {
							return fmt.Errorf("codes %v", codes)
						}
						// Landscaper's error times, and the run's first error
						// (here the only one).
						for _, e := range []string{"last_error", "first_error"} {
							for _, f := range []string{"last_transition_time", "last_update_time"} {
								v, _ := acctest.Dig(prior["slow"], e, f).(string)
								if _, err := time.Parse(time.RFC3339, v); err != nil {
									return fmt.Errorf("%s.%s = %q: %v", e, f, v, err)
								}
							}
						}
						if r := acctest.Dig(prior["slow"], "first_error", "reason"); r != "ProgressingTimeout" {
							return fmt.Errorf("first_error.reason %v", r)
						}
						return nil
					}),
				}},
			},
		},
	})
}

// Behaviours 10 and 11: exports from exec and mock, routed to
// sensitive_exports on request; the plan keeps exports of items that do
// not run known, so their readers are not disturbed.
func TestAccExecution_exportsAndPlanTruth(t *testing.T) {
	testExecutionExportsAndPlanTruth(t, protoV6ProviderFactories)
}

func testExecutionExportsAndPlanTruth(t *testing.T, factories factories) {
	w := newWorld(t)
	items := func(webVersion string, sensitive bool) map[string]string {
		return map[string]string{
			"db": execItem(nil, `EXPORT = jsonencode({ host = "db.local", port = 5432, tags = ["a", 1, true] })`),
			"web": fmt.Sprintf(`{ type = "landscaper.gardener.cloud/mock", depends_on = ["db"], config = jsonencode({
        apiVersion = "mock.deployer.landscaper.gardener.cloud/v1alpha1", kind = "ProviderConfiguration",
        export = { url = "http://web/%s" }, providerStatus = { replicas = 2 } }) }`, webVersion),
			"secret": execItem(nil, `EXPORT = "password: hunter2"`, fmt.Sprintf("sensitive_export = %t", sensitive)),
			"quiet":  `{ type = "mock" }`,
		}
	}
	readers := `
resource "terraform_data" "db_reader" {
  input = landscaper_execution.app.exports.db.host
}
resource "terraform_data" "web_reader" {
  input = landscaper_execution.app.exports.web.url
}`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{
				Config: w.config("", items("v1", true), readers),
				Check:  func(*terraform.State) error { return w.ExpectRuns("db:RECONCILE", "secret:RECONCILE") },
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(app, tfjsonpath.New("exports").AtMapKey("db"), knownvalue.ObjectExact(map[string]knownvalue.Check{
						"host": knownvalue.StringExact("db.local"),
						"port": knownvalue.Int64Exact(5432),
						"tags": knownvalue.TupleExact([]knownvalue.Check{knownvalue.StringExact("a"), knownvalue.Int64Exact(1), knownvalue.Bool(true)}),
					})),
					statecheck.ExpectKnownValue(app, tfjsonpath.New("exports").AtMapKey("web").AtMapKey("url"), knownvalue.StringExact("http://web/v1")),
					statecheck.ExpectKnownValue(app, tfjsonpath.New("exports").AtMapKey("secret"), knownvalue.Null()),
					statecheck.ExpectKnownValue(app, tfjsonpath.New("exports").AtMapKey("quiet"), knownvalue.Null()),
					statecheck.ExpectKnownValue(app, tfjsonpath.New("sensitive_exports").AtMapKey("secret").AtMapKey("password"), knownvalue.StringExact("hunter2")),
					statecheck.ExpectKnownValue(app, tfjsonpath.New("sensitive_exports").AtMapKey("db"), knownvalue.Null()),
					statecheck.ExpectKnownValue(app, statusItem("web").AtMapKey("provider_status"), knownvalue.StringExact(`{"replicas":2}`)),
					statecheck.ExpectKnownValue(app, statusItem("quiet").AtMapKey("provider_status"), knownvalue.Null()),
					statecheck.ExpectKnownValue("terraform_data.db_reader", tfjsonpath.New("output"), knownvalue.StringExact("db.local")),
				},
			},
			{
				// web changes: its export is unknown in the plan, db's stays
				// known, so db_reader is untouched while web_reader updates.
				Config: w.config("", items("v2", true), readers),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(app, plancheck.ResourceActionUpdate),
					plancheck.ExpectResourceAction("terraform_data.db_reader", plancheck.ResourceActionNoop),
					plancheck.ExpectResourceAction("terraform_data.web_reader", plancheck.ResourceActionUpdate),
					plancheck.ExpectKnownValue(app, tfjsonpath.New("exports").AtMapKey("db").AtMapKey("host"), knownvalue.StringExact("db.local")),
					plancheck.ExpectUnknownValue(app, tfjsonpath.New("exports").AtMapKey("web")),
					plancheck.ExpectUnknownValue(app, statusItem("web")),
					plancheck.ExpectKnownValue(app, statusItem("db").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
					plancheck.ExpectUnknownValue(app, tfjsonpath.New("status").AtMapKey("job_id")),
				}},
				Check: func(*terraform.State) error { return w.ExpectRuns() },
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("terraform_data.web_reader", tfjsonpath.New("output"), knownvalue.StringExact("http://web/v2")),
				},
			},
			{
				// Routing an export elsewhere does not re-run its item.
				Config: w.config("", items("v2", false), readers),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(app, tfjsonpath.New("exports").AtMapKey("secret").AtMapKey("password"), knownvalue.StringExact("hunter2")),
					statecheck.ExpectKnownValue(app, tfjsonpath.New("sensitive_exports").AtMapKey("secret"), knownvalue.Null()),
				},
				Check: func(*terraform.State) error { return w.ExpectRuns() },
			},
		},
	})
}

// Import, then the next apply reconciles all items.
func TestAccExecution_import(t *testing.T) {
	w := newWorld(t)
	items := map[string]string{"a": execItem(nil, ""), "b": execItem([]string{"a"}, "")}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// Import adopts an execution Terraform knows nothing about.
				Config:             w.config("", items),
				ResourceName:       app,
				ImportState:        true,
				ImportStateId:      "app",
				ImportStatePersist: true,
				ImportStateCheck: func(s []*terraform.InstanceState) error {
					if len(s) != 1 || s[0].Attributes["name"] != "app" || s[0].ID != "app" {
						return fmt.Errorf("imported %v", s)
					}
					return nil
				},
			},
			{
				Config: w.config("", items),
				Check: resource.ComposeTestCheckFunc(
					func(*terraform.State) error { return w.ExpectRuns("a:RECONCILE", "b:RECONCILE") },
					resource.TestCheckResourceAttr(app, "status.phase", "Succeeded"),
				),
			},
		},
	})
}

// exec's STATE_PATH survives between runs of an item, through Terraform
// state; a transient exit (75) is retried.
func TestAccExecution_execStateAndTransientExit(t *testing.T) {
	w := newWorld(t)
	counter := func(v string) string {
		return fmt.Sprintf(`{
      type = "exec"
      config = jsonencode({ env = { V = %q }, command = ["sh", "-c", <<-EOT
        n=$(cat "$STATE_PATH/count" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$STATE_PATH/count"
        if [ ! -e %s/flaky-passed ]; then touch %s/flaky-passed; exit 75; fi
        echo "{\"count\": $n}" > "$EXPORTS_PATH"
      EOT
      ] })
    }`, v, w.Dir, w.Dir)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: w.config("", map[string]string{"c": counter("1")}),
				ConfigStateChecks: []statecheck.StateCheck{
					// The transient first attempt counted too: state is kept
					// across attempts.
					statecheck.ExpectKnownValue(app, tfjsonpath.New("exports").AtMapKey("c").AtMapKey("count"), knownvalue.Int64Exact(2)),
				},
			},
			{
				Config: w.config("", map[string]string{"c": counter("2")}),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(app, tfjsonpath.New("exports").AtMapKey("c").AtMapKey("count"), knownvalue.Int64Exact(3)),
				},
			},
		},
	})
}

// Renaming replaces the execution: the old one's items are deleted and the
// new one runs everything, planned from nothing (not from the old status).
func TestAccExecution_renameReplaces(t *testing.T) {
	testExecutionRenameReplaces(t, protoV6ProviderFactories)
}

func testExecutionRenameReplaces(t *testing.T, factories factories) {
	w := newWorld(t)
	items := map[string]string{"a": execItem(nil, ""), "b": execItem([]string{"a"}, "")}
	renamed := strings.Replace(w.config("", items), `name = "app"`, `name = "app2"`, 1)
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		Steps: []resource.TestStep{
			{Config: w.config("", items), Check: func(*terraform.State) error { return w.ExpectRuns("a:RECONCILE", "b:RECONCILE") }},
			{
				Config: renamed,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(app, plancheck.ResourceActionDestroyBeforeCreate),
					// Planned as a create: everything runs, nothing is known.
					plancheck.ExpectUnknownValue(app, tfjsonpath.New("status")),
					plancheck.ExpectUnknownValue(app, tfjsonpath.New("exports")),
				}},
				Check: resource.ComposeTestCheckFunc(
					func(*terraform.State) error {
						runs := w.Runs()
						want := "[b:DELETE a:DELETE a:RECONCILE b:RECONCILE]"
						if fmt.Sprint(runs) != want {
							return fmt.Errorf("runs %v, want %s", runs, want)
						}
						return nil
					},
					resource.TestCheckResourceAttr(app, "id", "app2"),
					resource.TestCheckResourceAttr(app, "status.phase", "Succeeded"),
				),
			},
		},
	})
}

// Optional attributes are not computed: removing one from the
// configuration brings its default back.
func TestAccExecution_removedAttributeRestoresDefault(t *testing.T) {
	w := newWorld(t)
	v1 := map[string]string{"a": execItem(nil, "", "update_on_change_only = false"), "b": execItem(nil, "")}
	v2 := map[string]string{"a": execItem(nil, ""), "b": execItem(nil, "")}
	v3 := map[string]string{"a": execItem(nil, ""), "b": execItem(nil, `V = "3"`)}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: w.config("", v1), Check: func(*terraform.State) error { return w.ExpectRuns("a:RECONCILE", "b:RECONCILE") }},
			{
				// Only the flag changes: an update in place that runs nothing.
				Config: w.config("", v2),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(app, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error { return w.ExpectRuns() },
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(app, tfjsonpath.New("deploy_items").AtMapKey("a").AtMapKey("update_on_change_only"), knownvalue.Null()),
				},
			},
			{
				// With the default back, a is no longer re-run when b changes.
				Config: w.config("", v3),
				Check:  func(*terraform.State) error { return w.ExpectRuns("b:RECONCILE") },
			},
		},
	})
}

// An item whose config is only known after another resource's apply is
// expected to run; the other items' exports stay known in the plan.
func TestAccExecution_unknownItemKeepsOtherExportsKnown(t *testing.T) {
	w := newWorld(t)
	config := func(v string) string {
		items := map[string]string{
			"db":   execItem(nil, `EXPORT = jsonencode({ host = "db.local" })`),
			"late": execItem(nil, `SRC = terraform_data.src.output`),
		}
		return w.config("", items, fmt.Sprintf(`
resource "terraform_data" "src" {
  input = %q
}
resource "terraform_data" "reader" {
  input = landscaper_execution.app.exports.db.host
}`, v))
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config("v1"), Check: func(*terraform.State) error { return w.ExpectRuns("db:RECONCILE", "late:RECONCILE") }},
			{
				Config: config("v2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectKnownValue(app, tfjsonpath.New("exports").AtMapKey("db").AtMapKey("host"), knownvalue.StringExact("db.local")),
					plancheck.ExpectUnknownValue(app, tfjsonpath.New("exports").AtMapKey("late")),
					plancheck.ExpectUnknownValue(app, statusItem("late")),
					plancheck.ExpectKnownValue(app, statusItem("db").AtMapKey("phase"), knownvalue.StringExact("Succeeded")),
					plancheck.ExpectResourceAction("terraform_data.reader", plancheck.ResourceActionNoop),
				}},
				Check: func(*terraform.State) error { return w.ExpectRuns("late:RECONCILE") },
			},
		},
	})
}

// The resource's own timeouts bound a whole apply: running items are
// stopped and fail with ERR_TIMEOUT; a malformed one is a plan-time error.
func TestAccExecution_operationTimeout(t *testing.T) {
	w := newWorld(t)
	items := map[string]string{
		"slow": `{
      type = "exec", timeout = "none"
      config = jsonencode({ command = ["sh", "-c", "if [ \"$OPERATION\" = RECONCILE ]; then sleep 30; fi"] })
    }`,
	}
	withTimeouts := func(create string) string {
		return strings.Replace(w.config("", items), `name = "app"`, fmt.Sprintf(`name = "app"
  timeouts = { create = %q }`, create), 1)
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      withTimeouts("soon"),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`"soon" is not a positive Go duration`),
			},
			{
				Config:      withTimeouts("500ms"),
				ExpectError: regexp.MustCompile(`(?s)Deploy item "slow" failed.*reason: ProgressingTimeout.*operation's timeout expired.*codes: ERR_TIMEOUT`),
			},
		},
	})
}

// withTrigger sets reconcile_trigger of landscaper_execution.app.
func withTrigger(cfg, trigger string) string {
	return strings.Replace(cfg, `name = "app"`, fmt.Sprintf("name = \"app\"\n  reconcile_trigger = %q", trigger), 1)
}

// A changed reconcile_trigger re-runs every item in dependency order,
// including unchanged ones and those with update_on_change_only = false,
// and the plan says so; an unchanged trigger runs nothing.
func TestAccExecution_reconcileTrigger(t *testing.T) {
	w := newWorld(t)
	items := map[string]string{
		"a": execItem(nil, ""),
		"b": execItem([]string{"a"}, ""),
		"c": execItem(nil, "", "update_on_change_only = false"),
	}
	base := w.config("", items)
	inOrder := func(*terraform.State) error {
		runs := w.Runs()
		if slices.Index(runs, "a:RECONCILE") > slices.Index(runs, "b:RECONCILE") {
			return fmt.Errorf("b ran before a: %v", runs)
		}
		slices.Sort(runs)
		if fmt.Sprint(runs) != "[a:RECONCILE b:RECONCILE c:RECONCILE]" {
			return fmt.Errorf("runs %v, want every item once", runs)
		}
		return nil
	}
	var triggeredJob string
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: base, Check: inOrder},
			{
				// Setting a trigger for the first time is a change.
				Config: withTrigger(base, "1"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(app, plancheck.ResourceActionUpdate),
					plancheck.ExpectUnknownValue(app, tfjsonpath.New("status")),
				}},
				Check: resource.ComposeTestCheckFunc(inOrder, func(s *terraform.State) error {
					triggeredJob = s.RootModule().Resources[app].Primary.Attributes["status.job_id"]
					for _, n := range []string{"a", "b", "c"} {
						if j := s.RootModule().Resources[app].Primary.Attributes["status.deploy_items."+n+".job_id_finished"]; j != triggeredJob {
							return fmt.Errorf("%s finished in job %s, want the triggered job %s", n, j, triggeredJob)
						}
					}
					return nil
				}),
			},
			{
				// The same trigger again: nothing to do.
				Config: withTrigger(base, "1"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
				Check: func(*terraform.State) error { return w.ExpectRuns() },
			},
			{
				Config: withTrigger(base, "2"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(app, tfjsonpath.New("status")),
					plancheck.ExpectUnknownValue(app, tfjsonpath.New("exports")),
				}},
				Check: inOrder,
			},
			{
				// Removing the trigger is a change too.
				Config: base,
				Check:  inOrder,
			},
		},
	})
}

// A reconcile_trigger unknown until apply (the ID of a cluster replaced
// in the same apply) plans every item as running, in an execution and in
// an installation, also when no trigger was set before: the apply runs
// them all once it is known, and the plan must not have promised less.
func TestAccReconcileTrigger_unknownUntilApply(t *testing.T) {
	w := newWorld(t)
	installation := func(trigger string) string {
		return fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name              = "app"
  reconcile_trigger = %s
  imports           = { w = local.w, script = local.script }
  blueprint = { filesystem = { "blueprint.yaml" = <<-EOT
    apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: Blueprint
    imports:
      - {name: w, schema: {type: string}}
      - {name: script, schema: {type: string}}
    deployExecutions:
      - name: x
        type: GoTemplate
        template: |
          deployItems:
            - name: leaf
              type: exec
              config: {command: [sh, -c, {{ .imports.script | quote }}], env: {W: {{ .imports.w | quote }}}}
  EOT
  } }
}`, trigger)
	}
	items := map[string]string{"a": execItem(nil, "")}
	base := w.config("", items, installation("null"))
	triggered := strings.Replace(w.config("", items, installation("terraform_data.cluster.id")), `name = "app"`,
		"name = \"app\"\n  reconcile_trigger = terraform_data.cluster.id", 1) + `
resource "terraform_data" "cluster" {
  input = "created in the same apply"
}`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: base, Check: func(*terraform.State) error { return w.ExpectRuns("a:RECONCILE", "leaf:RECONCILE") }},
			{
				Config: triggered,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectUnknownValue(app, tfjsonpath.New("status")),
					plancheck.ExpectUnknownValue(inst, tfjsonpath.New("status")),
				}},
				Check: func(*terraform.State) error { return w.ExpectRuns("a:RECONCILE", "leaf:RECONCILE") },
			},
			{
				Config:           triggered,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
			},
		},
	})
}

// A mock left Progressing keeps running until its timeout, as in
// Landscaper, and then fails with ProgressingTimeout.
func TestAccExecution_mockLeftProgressing(t *testing.T) {
	w := newWorld(t)
	items := map[string]string{
		"stuck": `{ type = "mock", timeout = "300ms", config = jsonencode({ initialPhase = "Progressing", continuousReconcile = { every = "1h" } }) }`,
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      w.config("", items),
			ExpectError: regexp.MustCompile(`(?s)Deploy item "stuck" failed.*reason: ProgressingTimeout.*300ms.*codes: ERR_TIMEOUT`),
		}},
	})
}

// exec takes args beside command and cleanEnv, and reports exit code,
// duration and attempts as its provider status.
func TestAccExecution_execContainerContract(t *testing.T) {
	// Not parallel: the provider's environment is the test process's.
	t.Setenv("LANDSCAPER_TEST_LEAK", "leaked")
	w := newWorld(t)
	items := map[string]string{
		"c": `{
      type = "exec"
      config = jsonencode({
        command  = ["sh", "-c"]
        args     = ["printf '%s:%s' \"$0\" \"$${LANDSCAPER_TEST_LEAK:-clean}\" > \"$EXPORTS_PATH\"", "arg0"]
        cleanEnv = true
      })
    }`,
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: w.config("", items),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(app, tfjsonpath.New("exports").AtMapKey("c"), knownvalue.StringExact("arg0:clean")),
			},
			Check: func(s *terraform.State) error {
				raw := s.RootModule().Resources[app].Primary.Attributes["status.deploy_items.c.provider_status"]
				var ps struct {
					LastOperation string `json:"lastOperation"`
					ExitCode      *int   `json:"exitCode"`
					Duration      string `json:"duration"`
					Attempts      int    `json:"attempts"`
				}
				if err := json.Unmarshal([]byte(raw), &ps); err != nil {
					return fmt.Errorf("provider_status %q: %v", raw, err)
				}
				if ps.LastOperation != "RECONCILE" || ps.ExitCode == nil || *ps.ExitCode != 0 || ps.Attempts != 1 || ps.Duration == "" {
					return fmt.Errorf("provider_status %s", raw)
				}
				return nil
			},
		}},
	})
}
