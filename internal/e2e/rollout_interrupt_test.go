package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// rolloutScript is the command of the fleet's items: it logs
// "<key>:<version>", and for us-1 under v2, unless the file "fast" exists,
// sleeps in a child whose pids it writes, so the test can press Ctrl-C
// in the middle of the last batch.
const rolloutScript = `echo "$KEY:$VERSION" >> "$W/runs.log"
if [ "$KEY" = us-1 ] && [ "$VERSION" = v2 ] && [ ! -e "$W/fast" ]; then
  sleep 60 & echo $$ $! > "$W/pids.tmp" && mv "$W/pids.tmp" "$W/pids"; wait
fi`

const rolloutBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: clusters, type: targetMap, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: version, type: data, schema: {type: string}}
  - {name: w, type: data, schema: {type: string}}
  - {name: script, type: data, schema: {type: string}}
deployExecutions:
  - name: per-cluster
    type: GoTemplate
    template: |
      deployItems:
      {{- range $key, $t := .imports.clusters }}
        - name: app-{{ $key }}
          type: exec
          target: {import: clusters, key: {{ $key }}}
          config:
            command: ["sh", "-c", {{ toJson $.imports.script }}]
            env: {W: {{ toJson $.imports.w }}, KEY: {{ $key }}, VERSION: {{ $.imports.version }}}
      {{- end }}
`

func rolloutInstallation(w *acctest.Workspace, version string) string {
	return fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name      = "fleet"
  blueprint = { filesystem = { "blueprint.yaml" = %q } }
  imports   = { version = %q, w = %q, script = %q }
  target_maps = { clusters = {
    for k in ["eu-1", "eu-2", "us-1", "us-2"] : k => {
      type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = %q })
    }
  } }
  rollout = {
    canary  = { members = ["eu-1"] }
    batches = ["1", "100%%"]
  }
}
`, rolloutBlueprint, version, w.Dir, rolloutScript, acctest.UnreachableKubeconfig)
}

// Ctrl-C in the middle of a rollout's last batch: the interrupted member
// is recorded as such, the members that moved keep the new spec, the
// rollout is RollingOut (Interrupted), and the next apply finishes the
// batch without running the canary or the first batch again.
func TestCtrlCDuringAnInstallationRollout(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.Config(rolloutInstallation(w, "v1"))
	w.Apply()
	runs := func() string {
		s := acctest.ReadFile(t, w.Path("runs.log"))
		acctest.WriteFile(t, w.Path("runs.log"), "")
		return strings.Join(strings.Fields(s), " ")
	}
	runs()
	w.Config(rolloutInstallation(w, "v2"))
	bg := startApply(t, w)
	procs := waitForPids(t, w.Path("pids"), bg.done, bg.out)
	bg.interrupt()
	expectGone(t, procs)

	// The canary, then batch 1 (eu-2), then the last batch started.
	if got := runs(); !strings.HasPrefix(got, "eu-1:v2 eu-2:v2 ") || !strings.Contains(got, "us-1:v2") {
		t.Errorf("runs %q: want the canary, batch 1, then the last batch", got)
	}
	st := w.Attributes("landscaper_installation", "app")
	if p := acctest.Dig(st, "status", "deploy_items", "app-us-1"); p != "Failed" {
		t.Errorf("app-us-1: phase %v, want Failed", p)
	}
	if codes := errorCodes(acctest.Dig(st, "status", "deploy_item_errors", "app-us-1")); !strings.Contains(strings.Join(codes, " "), "ERR_INTERRUPTED") {
		t.Errorf("app-us-1: codes %v, want ERR_INTERRUPTED", codes)
	}
	for _, m := range []string{"eu-1", "eu-2"} {
		if v := acctest.Dig(st, "status", "rollout", "clusters", "members", m, "new_spec"); v != true {
			t.Errorf("member %s: new_spec %v, want true", m, v)
		}
	}
	if v := acctest.Dig(st, "status", "rollout", "clusters", "members", "us-1", "new_spec"); v != false {
		t.Errorf("member us-1: new_spec %v, want false", v)
	}
	if r := acctest.Dig(st, "status", "rollout", "clusters", "reason"); r != "Interrupted" {
		t.Errorf("rollout reason %v, want Interrupted", r)
	}

	acctest.WriteFile(t, w.Path("fast"), "")
	w.Apply()
	got := runs()
	if !strings.Contains(got, "us-1:v2") || strings.Contains(got, "eu-1") || strings.Contains(got, "eu-2") {
		t.Errorf("resume ran %q: want the last batch only", got)
	}
	st = w.Attributes("landscaper_installation", "app")
	if p := acctest.Dig(st, "status", "rollout", "clusters", "phase"); p != "Completed" {
		t.Errorf("after resume: rollout %v", p)
	}
	if plan, code := w.PlanExitCode(); code != 0 {
		t.Errorf("plan after the resume exited %d, want 0:\n%s", code, plan)
	}
}
