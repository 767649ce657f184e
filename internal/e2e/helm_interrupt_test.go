//go:build unix

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
)

// helmConfig installs the demo chart as a helm release whose custom
// readiness check waits for message == want.
func helmConfig(kubeconfig, chart, message, want string) string {
	return fmt.Sprintf(`resource "landscaper_execution" "app" {
  name = "app"
  targets = { cluster = {
    type   = "landscaper.gardener.cloud/kubernetes-cluster"
    config = yamlencode({ kubeconfig = file(%[1]q) })
  } }
  deploy_items = {
    release = {
      type    = "landscaper.gardener.cloud/helm"
      target  = "cluster"
      timeout = "5m"
      config = yamlencode({
        name            = "interrupted"
        namespace       = "e2e-helm"
        createNamespace = true
        chart           = { archive = { remote = { url = %[2]q } } }
        values          = { message = %[3]q }
        readinessChecks = { custom = [{
          name             = "message"
          resourceSelector = [{ apiVersion = "v1", kind = "ConfigMap", name = "interrupted-config", namespace = "e2e-helm" }]
          requirements     = [{ jsonPath = ".data.message", operator = "==", values = [{ value = %[4]q }] }]
        }] }
      })
    }
  }
}
`, kubeconfig, chart, message, want)
}

// Ctrl-C while a helm release is being installed (here: waiting for its
// readiness check) leaves truthful state: the item Failed with an
// interrupt error, the plan an in-place update; the next apply converges.
func TestCtrlCDuringAHelmInstall(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	if kubeEnv == nil {
		t.Fatal("no control plane")
	}
	kubeconfig := w.Path("kubeconfig")
	acctest.WriteFile(t, kubeconfig, kubeEnv.Kubeconfig())
	chart := helmtest.Dir(t, helmtest.Demo)

	w.Config(helmConfig(kubeconfig, chart, "hello", "never"))
	bg := startApply(t, w)
	// Wait until the release exists and the item waits for readiness.
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(bg.out.String(), "Still creating") && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	bg.interrupt()
	if !strings.Contains(bg.out.String(), "ERR_INTERRUPTED") {
		t.Errorf("the interrupted apply does not report ERR_INTERRUPTED:\n%s", bg.out.String())
	}
	if _, err := os.Stat(w.Path("terraform.tfstate")); err != nil {
		t.Fatalf("no state after the interrupt: %v\n%s", err, bg.out.String())
	}
	attrs := execution(w)
	if p := itemField(attrs, "release", "phase"); p != "Failed" {
		t.Errorf("release: phase %v, want Failed", p)
	}
	if codes := errorCodes(itemField(attrs, "release", "last_error")); !slices.Contains(codes, "ERR_INTERRUPTED") {
		t.Errorf("release: codes %v, want ERR_INTERRUPTED", codes)
	}
	var ps map[string]any
	_ = json.Unmarshal([]byte(fmt.Sprint(itemField(attrs, "release", "provider_status"))), &ps)
	if acctest.Dig(ps, "release", "name") != "interrupted" {
		t.Errorf("provider_status does not name the installed release: %v", itemField(attrs, "release", "provider_status"))
	}

	// A failed create is tainted: untaint to resume in place, as the docs
	// say, with a readiness check that now holds.
	if out, code := w.Run(nil, "untaint", "-no-color", "landscaper_execution.app"); code != 0 {
		t.Fatalf("untaint: %s", out)
	}
	w.Config(helmConfig(kubeconfig, chart, "hello", "hello"))
	w.Apply()
	if p := itemField(execution(w), "release", "phase"); p != "Succeeded" {
		t.Errorf("after the resume: phase %v", p)
	}
	if plan, code := w.PlanExitCode(); code != 0 {
		t.Errorf("plan after the resume exited %d:\n%s", code, plan)
	}
	if out, code := w.Run(nil, "destroy", "-auto-approve", "-input=false", "-no-color"); code != 0 {
		t.Fatalf("destroy: %s", out)
	}
}
