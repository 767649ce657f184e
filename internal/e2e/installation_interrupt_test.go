package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/privatestate"
)

// installationConfig is a root installation with an inline blueprint: a
// quick mock item of its own (whose config carries a field the mock does
// not know), a sub-installation "slow" running command, and a
// sub-installation "after" importing slow's export.
func installationConfig(command string) string {
	sub := func(name, item, imports, exports string) string {
		return fmt.Sprintf(`  - name: %s
    blueprint:
      filesystem:
        blueprint.yaml: |
          apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: Blueprint
          imports:
            - {name: cmd, type: data, required: false, schema: {type: string}}
            - {name: in, type: data, required: false, schema: {type: string}}
          exports:
            - {name: out, type: data, schema: {type: string}}
          deployExecutions:
            - name: x
              type: GoTemplate
              template: |
%s
          exportExecutions:
            - name: x
              type: GoTemplate
              template: |
                exports:
                  out: done
    imports:
      data:
%s
    exports:
      data:
%s
`, name, item, imports, exports)
	}
	slowItem := `                deployItems:
                  - name: work
                    type: exec
                    config:
                      command: ["sh", "-c", {{ toJson .imports.cmd }}]`
	afterItem := `                deployItems:
                  - name: work
                    type: mock
                    config: {export: {{ .imports.in }}}`
	bp := "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n" +
		"imports:\n  - {name: cmd, type: data, schema: {type: string}}\n" +
		"deployExecutions:\n  - name: own\n    type: GoTemplate\n    template: |\n" +
		"      deployItems:\n        - name: quick\n          type: landscaper.gardener.cloud/mock\n          config: {export: quick, colour: blue}\n" +
		"subinstallations:\n" +
		sub("slow", slowItem, "        - {name: cmd, dataRef: cmd}", "        - {name: out, dataRef: slow-out}") +
		sub("after", afterItem, "        - {name: in, dataRef: slow-out}", "        - {name: out, dataRef: after-out}")
	return fmt.Sprintf(`resource "landscaper_installation" "app" {
  name      = "app"
  blueprint = { filesystem = { "blueprint.yaml" = %q } }
  imports   = { cmd = %q }
}
`, bp, command)
}

// jobs reads the installation's stored status from private state: the
// jobs its nodes and items last finished are kept there, not in the
// resource's status.
func jobs(t *testing.T, w *acctest.Workspace) map[string]any {
	t.Helper()
	doc, err := privatestate.Decode(w.Private("landscaper_installation", "app"))
	if err != nil {
		t.Fatal(err)
	}
	var stored struct {
		Status map[string]any `json:"status"`
	}
	if err := json.Unmarshal(doc.JSON, &stored); err != nil {
		t.Fatal(err)
	}
	return stored.Status
}

// Ctrl-C during an installation's update stops the running item of a
// sub-installation, records the truth about every installation and item,
// and the next apply resumes only the unfinished part. The plan also
// warns about a deployer config field the deployer does not know.
func TestCtrlCInterruptsAnInstallation(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	pids := w.Path("pids")
	slow := fmt.Sprintf("sleep 60 & echo $$ $! > %[1]s.tmp && mv %[1]s.tmp %[1]s; wait", pids)
	// 1. Create with a fast command; 2. update to the slow one and stop it.
	w.Config(installationConfig("echo v1"))
	w.Apply()
	w.Config(installationConfig(slow))

	plan, _ := w.PlanExitCode()
	if !strings.Contains(plan, "Warning: Deploy item config has unknown fields") || !strings.Contains(plan, `unknown field "colour"`) {
		t.Errorf("the plan does not warn about the unknown field:\n%s", plan)
	}

	bg := startApply(t, w)
	procs := waitForPids(t, pids, bg.done, bg.out)
	bg.interrupt()
	expectGone(t, procs)

	st := w.Attributes("landscaper_installation", "app")
	if p := acctest.Dig(st, "status", "deploy_items", "slow/work"); p != "Failed" {
		t.Errorf("slow/work: phase %v, want Failed", p)
	}
	if codes := errorCodes(acctest.Dig(st, "status", "deploy_item_errors", "slow/work")); !slices.Contains(codes, "ERR_INTERRUPTED") {
		t.Errorf("slow/work: codes %v, want ERR_INTERRUPTED", codes)
	}
	// after never ran in this job: it keeps what its last job left.
	stored := jobs(t, w)
	if j := acctest.Dig(stored, "subs", "after", "jobIDFinished"); j == nil || j == acctest.Dig(st, "status", "job_id") {
		t.Errorf("after: job_id_finished %v is the interrupted job: it must not have run", j)
	}
	if p := acctest.Dig(st, "status", "deploy_items", "quick"); p != "Succeeded" {
		t.Errorf("quick: phase %v, want Succeeded", p)
	}
	if p := acctest.Dig(st, "status", "phase"); p != "Failed" {
		t.Errorf("root: phase %v, want Failed", p)
	}
	quickJob := acctest.Dig(stored, "execution", "items", "quick", "jobIDFinished")

	if plan, code := w.PlanExitCode(); code != 2 || !strings.Contains(plan, "1 to change") {
		t.Errorf("plan after the interrupt: exit %d, want an in-place update:\n%s", code, plan)
	}
	w.Config(installationConfig("echo fast"))
	w.Apply()
	resumed := w.Attributes("landscaper_installation", "app")
	for _, key := range []string{"quick", "slow/work", "after/work"} {
		if p := acctest.Dig(resumed, "status", "deploy_items", key); p != "Succeeded" {
			t.Errorf("after resume: %s phase %v", key, p)
		}
	}
	if j := acctest.Dig(jobs(t, w), "execution", "items", "quick", "jobIDFinished"); j != quickJob || j == nil {
		t.Errorf("quick ran again on resume (job %v, was %v)", j, quickJob)
	}
	if plan, code := w.PlanExitCode(); code != 0 {
		t.Errorf("plan after the resume exited %d, want 0:\n%s", code, plan)
	}
}
