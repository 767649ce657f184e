package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
)

// podinfoArchive is a stand-in for the podinfo chart examples/kubernetes
// installs (the tests have no internet): the same name and version, one
// Deployment, whose pods never run on a cluster without nodes.
func podinfoArchive(t *testing.T) []byte {
	t.Helper()
	files := map[string]string{
		"podinfo/Chart.yaml":  "apiVersion: v2\nname: podinfo\nversion: 6.7.1\n",
		"podinfo/values.yaml": "replicaCount: 1\nui: {message: hello}\n",
		"podinfo/templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Release.Name }}, namespace: {{ .Release.Namespace }}}
spec:
  replicas: {{ .Values.replicaCount }}
  selector: {matchLabels: {app: podinfo}}
  template:
    metadata: {labels: {app: podinfo}}
    spec: {containers: [{name: podinfo, image: "ghcr.io/stefanprodan/podinfo:6.7.1"}]}
`,
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// runMake runs a make target of the repository and returns its output.
func runMake(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// `make cluster` starts the local control plane in the background and
// prints KUBECONFIG=<file> last; examples/kubernetes applies against it as
// the README says (readiness checks off: there are no nodes), the
// Deployment exists without ever becoming ready; `make cluster-down` stops
// every process.
func TestMakeClusterRunsTheKubernetesExample(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	dir := filepath.Join(t.TempDir(), "cluster")
	out := runMake(t, "cluster", "CLUSTER_DIR="+dir)
	t.Cleanup(func() { runMake(t, "cluster-down", "CLUSTER_DIR="+dir) })
	lines := strings.Split(strings.TrimSpace(out), "\n")
	kubeconfig, ok := strings.CutPrefix(lines[len(lines)-1], "KUBECONFIG=")
	if !ok || kubeconfig != filepath.Join(dir, "kubeconfig") {
		t.Fatalf("the last line is not KUBECONFIG=<file>:\n%s", out)
	}
	pidText, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidText)))
	// A second `make cluster` finds it running and says where it is.
	if again := runMake(t, "cluster", "CLUSTER_DIR="+dir); !strings.HasSuffix(strings.TrimSpace(again), "KUBECONFIG="+kubeconfig) {
		t.Fatalf("second make cluster:\n%s", again)
	}

	repo := helmtest.NewRepo(t)
	repo.Add(t, podinfoArchive(t))
	copyTree(t, filepath.Join(repoRoot, "examples", "kubernetes"), w.Dir)
	vars := []string{"TF_VAR_kubeconfig=" + kubeconfig, "TF_VAR_readiness_checks=false", "TF_VAR_chart_repository=" + repo.URL}
	applied := w.Apply(vars...)
	if !strings.Contains(applied, `greeting = "hello from Terraform"`) {
		t.Fatalf("apply:\n%s", applied)
	}
	cs, _ := clients(t, kubeconfig)
	d, err := cs.AppsV1().Deployments("demo").Get(t.Context(), "podinfo", metav1.GetOptions{})
	if err != nil || d.Status.ReadyReplicas != 0 {
		t.Fatalf("podinfo Deployment: %v, %d ready", err, d.Status.ReadyReplicas)
	}
	if out, code := w.Run(vars, "destroy", "-auto-approve", "-input=false", "-no-color"); code != 0 {
		t.Fatalf("destroy exit %d:\n%s", code, out)
	}

	runMake(t, "cluster-down", "CLUSTER_DIR="+dir)
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("the cluster's server (pid %d) still runs after make cluster-down", pid)
	}
	if out, err := exec.Command("pgrep", "-f", filepath.Join(dir, "cluster")).Output(); err == nil {
		t.Errorf("processes of the cluster still run after make cluster-down: %s", out)
	}
}
