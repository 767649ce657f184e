//go:build unix

package testenv_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/testenv"
)

// helloBlueprint deploys the ConfigMap hello with the imported greeting into
// the namespace ns of the imported cluster, and exports the greeting back.
const helloBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: greeting, type: data, schema: {type: string}}
exports:
  - {name: greeted, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: hello
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            updateStrategy: update
            manifests:
              - policy: manage
                manifest:
                  apiVersion: v1
                  kind: ConfigMap
                  metadata: {name: hello, namespace: ls-hello}
                  data: {greeting: {{ .imports.greeting | quote }}}
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        greeted: {{ .values.dataobjects.greeting | quote }}
`

// TestLandscaper runs Landscaper's own controllers against the environment:
// an Installation as Landscaper's docs write it, with a Target and a
// DataObject, reaches Succeeded, its deploy item creates the ConfigMap and
// its export lands in a DataObject; deleting it removes the ConfigMap; each
// controller and deployer runs the workers asked for (their logs say how
// many they started); Stop leaves no process behind.
func TestLandscaper(t *testing.T) {
	start := time.Now()
	const workers = 3 // not the default, so the count is seen to reach Landscaper
	ls, err := testenv.StartLandscaper(t.Context(), env, testenv.LandscaperOptions{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("StartLandscaper took %s", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() { _ = ls.Stop() })
	ls.Watch(t)

	must(t, http.StatusCreated, http.MethodPost, "/api/v1/namespaces", namespace("ls-hello"))
	ls1 := "/apis/landscaper.gardener.cloud/v1alpha1/namespaces/ls-hello/"
	must(t, http.StatusCreated, http.MethodPost, ls1+"targets", map[string]any{
		"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Target",
		"metadata": map[string]any{"name": "cluster"},
		"spec": map[string]any{"type": "landscaper.gardener.cloud/kubernetes-cluster",
			"config": map[string]any{"kubeconfig": env.Kubeconfig()}},
	})
	must(t, http.StatusCreated, http.MethodPost, ls1+"dataobjects", map[string]any{
		"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "DataObject",
		"metadata": map[string]any{"name": "greeting"}, "data": "hello from Landscaper",
	})
	start = time.Now()
	must(t, http.StatusCreated, http.MethodPost, ls1+"installations", map[string]any{
		"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Installation",
		"metadata": map[string]any{"name": "hello",
			"annotations": map[string]any{"landscaper.gardener.cloud/operation": "reconcile"}},
		"spec": map[string]any{
			"blueprint": map[string]any{"inline": map[string]any{"filesystem": map[string]any{"blueprint.yaml": helloBlueprint}}},
			"imports": map[string]any{
				"targets": []any{map[string]any{"name": "cluster", "target": "cluster"}},
				"data":    []any{map[string]any{"name": "greeting", "dataRef": "greeting"}},
			},
			"exports": map[string]any{"data": []any{map[string]any{"name": "greeted", "dataRef": "greeted"}}},
		},
	})
	inst := waitPhase(t, ls1+"installations/hello", "Succeeded")
	t.Logf("Installation Succeeded after %s", time.Since(start).Round(time.Millisecond))
	if annotations, _ := inst["metadata"].(map[string]any)["annotations"].(map[string]any); annotations["landscaper.gardener.cloud/operation"] != nil {
		t.Errorf("the reconcile annotation is still there: %v", annotations)
	}
	cm := must(t, http.StatusOK, http.MethodGet, "/api/v1/namespaces/ls-hello/configmaps/hello", nil)
	if data, _ := cm["data"].(map[string]any); data["greeting"] != "hello from Landscaper" {
		t.Errorf("ConfigMap data %v", cm["data"])
	}
	if do := must(t, http.StatusOK, http.MethodGet, ls1+"dataobjects/greeted", nil); do["data"] != "hello from Landscaper" {
		t.Errorf("export DataObject %v", do)
	}

	start = time.Now()
	must(t, http.StatusOK, http.MethodDelete, ls1+"installations/hello", nil)
	eventually(t, ls1+"installations/hello", http.StatusNotFound)
	t.Logf("Installation deleted after %s", time.Since(start).Round(time.Millisecond))
	eventually(t, "/api/v1/namespaces/ls-hello/configmaps/hello", http.StatusNotFound)

	logs := ls.Logs()
	for _, name := range []string{"landscaper-central", "landscaper-main", "manifest-deployer", "helm-deployer", "mock-deployer"} {
		if _, err := os.Stat(logs[name]); err != nil {
			t.Errorf("log of %s: %v", name, err)
		}
	}
	if ls.Workers() != workers {
		t.Errorf("Workers() = %d, want %d", ls.Workers(), workers)
	}
	started := startedWorkers(t, logs)
	for _, want := range []string{"landscaper-main Installation", "landscaper-main Execution",
		"landscaper-central DeployItem", "manifest-deployer DeployItem", "helm-deployer DeployItem"} {
		if got, ok := started[want]; !ok || got != workers {
			t.Errorf("%s started %d workers (logged: %t), want %d; all: %v", want, got, ok, workers, started)
		}
	}
	if err := ls.Err(); err != nil {
		t.Fatal(err)
	}
	pids := ls.PIDs()
	if err := ls.Stop(); err != nil {
		t.Fatal(err)
	}
	for name, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still runs after Stop: %v", name, pid, err)
		}
	}
	if _, err := os.Stat(ls.Dir()); !os.IsNotExist(err) {
		t.Errorf("Stop left %s behind: %v", ls.Dir(), err)
	}
}

// startedWorkers reads from each process's log how many workers each of
// its controllers started (controller-runtime's "Starting workers" line),
// by "<process> <reconciled kind>".
func startedWorkers(t *testing.T, logs map[string]string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for name, path := range logs {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			var entry struct {
				Msg     string `json:"msg"`
				Kind    string `json:"reconciledResourceKind"`
				Workers int    `json:"worker count"`
			}
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "Starting workers" {
				out[name+" "+entry.Kind] = entry.Workers
			}
		}
	}
	return out
}

// TestStartLandscaperNegativeWorkers: a negative worker count is refused
// before anything starts.
func TestStartLandscaperNegativeWorkers(t *testing.T) {
	ls, err := testenv.StartLandscaper(t.Context(), env, testenv.LandscaperOptions{Workers: -1, BinDir: t.TempDir()})
	if err == nil {
		_ = ls.Stop()
		t.Fatal("StartLandscaper accepted -1 workers")
	}
	if !strings.Contains(err.Error(), "must not be negative, got -1") {
		t.Errorf("error %v", err)
	}
}

// waitPhase polls the object at path until its status.phase is want, and
// fails the test at once on Failed.
func waitPhase(t *testing.T, path, want string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitFor)
	defer cancel()
	var phase any
	for {
		obj := must(t, http.StatusOK, http.MethodGet, path, nil)
		status, _ := obj["status"].(map[string]any)
		phase = status["phase"]
		if phase == want {
			return obj
		}
		if phase == "Failed" {
			t.Fatalf("%s: Failed, want %s: %v", path, want, status)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: phase %v after %s, want %s: %v", path, phase, waitFor, want, status)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestStartLandscaperFailure: a controller that dies at start fails
// StartLandscaper with the reason from its log, and nothing is left behind.
func TestStartLandscaperFailure(t *testing.T) {
	bin := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	for _, name := range []string{"landscaper-controller", "manifest-deployer-controller", "helm-deployer-controller", "mock-deployer-controller"} {
		body := "exit 1"
		if name == "landscaper-controller" {
			// Appended: the controller starts in more than one mode, and
			// a second start truncating the file raced the read below.
			body = "echo $$ >> " + pidFile + "\necho \"fake landscaper: mode $LANDSCAPER_MODE, pod namespace $MY_POD_NAMESPACE\" >&2\nexit 2"
		}
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	ls, err := testenv.StartLandscaper(t.Context(), env, testenv.LandscaperOptions{BinDir: bin, Dir: dir})
	if err == nil {
		_ = ls.Stop()
		t.Fatal("StartLandscaper succeeded with a controller that exits")
	}
	for _, want := range []string{"landscaper-central exited", "exit status 2",
		"fake landscaper: mode central-landscaper, pod namespace " + testenv.LandscaperNamespace} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "logs", "landscaper-central.log")); err != nil {
		t.Errorf("the failed start's log is gone: %v", err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(data))
	if len(lines) == 0 {
		t.Fatal("the fake controller never ran")
	}
	for _, line := range lines {
		pid, err := strconv.Atoi(line)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("fake controller (pid %d) still exists: %v", pid, err)
		}
	}
}
