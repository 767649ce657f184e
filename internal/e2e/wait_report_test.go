package e2e

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

var waitReportRe = regexp.MustCompile(`\[INFO\]\s+provider\.terraform-provider-landscaper: deploy item "gated": still waiting after (\S+) for: (.*?): `)

// TestInfoLogReportsAWaitEvery30s: while an apply waits for objects that
// are not ready, TF_LOG=INFO says every 30 seconds which objects and why,
// through the real CLI and a real API server, so a long wait never goes
// quiet. The wait here is a custom readiness check the test satisfies
// once the report is in the log.
func TestInfoLogReportsAWaitEvery30s(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	if kubeEnv == nil {
		t.Fatal("no control plane")
	}
	kubeconfig := w.Path("kubeconfig")
	acctest.WriteFile(t, kubeconfig, kubeEnv.Kubeconfig())
	const ns = "e2e-wait-report"
	w.Config(fmt.Sprintf(`
resource "landscaper_execution" "app" {
  name = "app"
  targets = { cluster = {
    type   = "landscaper.gardener.cloud/kubernetes-cluster"
    config = yamlencode({ kubeconfig = file(%[1]q) })
  } }
  deploy_items = {
    gated = {
      type    = "kubernetes-manifest"
      target  = "cluster"
      timeout = "3m"
      config = yamlencode({
        manifests = [
          { manifest = { apiVersion = "v1", kind = "Namespace", metadata = { name = %[2]q } } },
          { manifest = { apiVersion = "v1", kind = "ConfigMap", metadata = { name = "gate", namespace = %[2]q }, data = { open = "no" } } },
        ]
        readinessChecks = { custom = [{
          name             = "gate"
          resourceSelector = [{ apiVersion = "v1", kind = "ConfigMap", name = "gate", namespace = %[2]q }]
          requirements     = [{ jsonPath = ".data.open", operator = "==", values = [{ value = "yes" }] }]
        }] }
      })
    }
  }
}
`, kubeconfig, ns))
	logPath := w.Path("tf.log")
	type result struct {
		out  string
		code int
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		out, code := w.Run([]string{"TF_LOG=INFO", "TF_LOG_PATH=" + logPath}, "apply", "-input=false", "-no-color", "-auto-approve")
		done <- result{out, code}
	}()

	// The first report comes at the first look after 30 s.
	var reports []string
	for deadline := time.Now().Add(90 * time.Second); len(reports) == 0; time.Sleep(500 * time.Millisecond) {
		select {
		case r := <-done:
			t.Fatalf("the apply ended (exit %d) without a wait report:\n%s", r.code, r.out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no wait report within 90s; log:\n%s", tail(readIfThere(logPath), 40))
		}
		reports = waitReports(readIfThere(logPath))
	}
	if since := time.Since(start); since < 30*time.Second {
		t.Errorf("a wait report came %s after the apply started, before 30s", since)
	}

	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Patch(context.Background(), "gate", types.MergePatchType,
		[]byte(`{"data":{"open":"yes"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the apply did not end within 60s of the gate opening")
	}
	if r.code != 0 {
		t.Fatalf("apply exited %d:\n%s", r.code, r.out)
	}

	reports = waitReports(acctest.ReadFile(t, logPath))
	if len(reports) != 1 {
		t.Errorf("%d wait reports for a wait of %s, want 1: %q", len(reports), time.Since(start).Round(time.Second), reports)
	}
	want := `ConfigMap e2e-wait-report/gate: custom readiness check "gate": requirement .data.open == "yes" not met`
	for _, line := range reports {
		m := waitReportRe.FindStringSubmatch(line)
		elapsed, err := time.ParseDuration(m[1])
		if err != nil || elapsed < 30*time.Second || elapsed > 40*time.Second {
			t.Errorf("report after %q, want 30s to 40s: %s", m[1], line)
		}
		if !strings.Contains(line, want) {
			t.Errorf("report does not name the ConfigMap and the requirement (%s): %s", want, line)
		}
		if !hasField(line, "deploy_item", "gated") || !hasField(line, "elapsed", m[1]) {
			t.Errorf("report lacks deploy_item=gated or elapsed=%s: %s", m[1], line)
		}
	}
	if p := itemField(execution(w), "gated", "phase"); p != "Succeeded" {
		t.Errorf("gated: phase %v, want Succeeded", p)
	}
}

// waitReports returns the wait reports of item "gated" in a log.
func waitReports(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if waitReportRe.MatchString(line) {
			out = append(out, line)
		}
	}
	return out
}

// readIfThere is the file's content, empty while it does not exist yet.
func readIfThere(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
