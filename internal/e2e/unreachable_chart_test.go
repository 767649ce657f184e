package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// A helm item whose chart host does not resolve fails with that cause
// once the engine's grace period (a minute) has passed, not at its
// timeout of ten minutes; meanwhile each retry is an INFO line that says
// why, names the URL and when the next attempt is.
func TestUnresolvableChartHostFailsAfterTheGrace(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	if kubeEnv == nil {
		t.Fatal("no control plane")
	}
	kubeconfig := w.Path("kubeconfig")
	acctest.WriteFile(t, kubeconfig, kubeEnv.Kubeconfig())
	const chart = "https://charts.invalid/demo-0.1.0.tgz"
	w.Config(fmt.Sprintf(`resource "landscaper_execution" "app" {
  name = "app"
  targets = { cluster = {
    type   = "landscaper.gardener.cloud/kubernetes-cluster"
    config = yamlencode({ kubeconfig = file(%[1]q) })
  } }
  deploy_items = {
    release = {
      type    = "landscaper.gardener.cloud/helm"
      target  = "cluster"
      config  = yamlencode({ name = "demo", namespace = "e2e-unreachable", chart = { archive = { remote = { url = %[2]q } } } })
    }
  }
}
`, kubeconfig, chart))
	logPath := w.Path("tf.log")
	start := time.Now()
	out, code := w.Run([]string{"TF_LOG_PROVIDER=INFO", "TF_LOG_PATH=" + logPath}, "apply", "-auto-approve", "-input=false", "-no-color")
	took := time.Since(start)
	flat := strings.Join(strings.Fields(out), " ")
	if code == 0 || !strings.Contains(flat, "lookup charts.invalid") || !strings.Contains(flat, "no such host") ||
		!strings.Contains(flat, "longer than the grace period of 1m0s") {
		t.Fatalf("apply exit %d:\n%s", code, out)
	}
	// The grace, not the ten-minute timeout, ended it (generous margins:
	// the machine may be busy).
	if took < time.Minute || took > 5*time.Minute {
		t.Errorf("the apply took %s", took)
	}
	var retries []string
	for _, e := range readLog(t, logPath) {
		if strings.Contains(e.text, `deploy item "release": attempt `) {
			retries = append(retries, e.text)
			if e.level != "INFO" || !strings.Contains(e.text, "retrying at ") || !strings.Contains(e.text, chart) ||
				!strings.Contains(e.text, "no such host") || !hasField(e.text, "reason", "FetchChart") {
				t.Errorf("retry line: %s", e.text)
			}
		}
	}
	if len(retries) < 5 {
		t.Errorf("%d retry lines, want one per retry (six with the default backoff)", len(retries))
	}
}
