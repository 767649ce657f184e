//go:build unix

package helm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/target"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/testenv"
)

// The control plane starts on first use, so the unit tests of this
// package run without one.
var (
	envOnce sync.Once
	env     *testenv.Env
	envErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if env != nil {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: stop: %v\n", err)
		}
	}
	os.Exit(code)
}

// cluster returns a target of the shared test control plane. A missing
// control plane fails the test: it is never skipped.
func cluster(t *testing.T) (*deployer.Target, kubernetes.Interface) {
	t.Helper()
	envOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		env, envErr = testenv.Start(ctx, testenv.Options{})
	})
	if envErr != nil {
		t.Fatalf("testenv: %v", envErr)
	}
	cfg, _ := json.Marshal(target.KubernetesClusterConfig{Kubeconfig: env.Kubeconfig()})
	tgt := &deployer.Target{Name: "cluster", Type: target.KubernetesClusterType, Config: cfg}
	cl, err := target.ClusterFor(tgt.Config)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cl.Config)
	if err != nil {
		t.Fatal(err)
	}
	return tgt, cs
}

// run drives one operation the way the engine does: again after
// RequeueAfter, with the returned state, until done or failed.
func run(t *testing.T, d *Deployer, op core.Operation, req deployer.Request) (deployer.Result, error) {
	t.Helper()
	req.Operation = op
	for i := 0; i < 100; i++ {
		var res deployer.Result
		var err error
		if op == core.OperationDelete {
			res, err = d.Delete(t.Context(), req)
		} else {
			res, err = d.Reconcile(t.Context(), req)
		}
		if err != nil || res.RequeueAfter <= 0 {
			return res, err
		}
		req.State = res.State
		time.Sleep(res.RequeueAfter)
	}
	t.Fatal("never done")
	return deployer.Result{}, nil
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReleaseLifecycle(t *testing.T) {
	tgt, cs := cluster(t)
	repo := helmtest.NewRepo(t)
	repo.Add(t, helmtest.Archive(t, helmtest.Demo, "0.1.0"))
	reg := helmtest.NewRegistry(t)
	ociRef := reg.Push(t, helmtest.Archive(t, helmtest.Demo, "0.2.0"))

	sources := map[string]map[string]any{
		"archive": {"archive": map[string]any{"raw": helmtest.ArchiveBase64(t, helmtest.Demo, "")}},
		"repo":    {"helmChartRepo": map[string]any{"helmChartRepoUrl": repo.URL, "helmChartName": "demo", "helmChartVersion": "0.1.0"}},
		"oci":     {"ref": ociRef},
	}
	d := New(Options{PollInterval: 100 * time.Millisecond})
	for src, chart := range sources {
		t.Run(src, func(t *testing.T) {
			ns, name := "helm-"+src, "rel-"+src
			config := func(message string) json.RawMessage {
				return mustJSON(t, map[string]any{
					"apiVersion": APIVersion, "kind": Kind,
					"name": name, "namespace": ns, "createNamespace": true,
					"chart":  chart,
					"values": map[string]any{"message": message},
					"helmDeploymentConfig": map[string]any{
						"install": map[string]any{"wait": true, "timeout": "2m"},
					},
					"exports": map[string]any{"exports": []any{
						map[string]any{"key": "message", "jsonPath": ".Values.message"},
						map[string]any{"key": "chart.color", "jsonPath": ".Values.nested.color"},
					}},
				})
			}
			req := deployer.Request{Execution: "e", Item: src, Config: config("one"), Target: tgt}
			res, err := run(t, d, core.OperationReconcile, req)
			if err != nil {
				t.Fatal(err)
			}
			var export map[string]any
			if err := json.Unmarshal(res.Export, &export); err != nil {
				t.Fatal(err)
			}
			if export["message"] != "one" || fmt.Sprint(export["chart"]) != "map[color:blue]" {
				t.Fatalf("export %s", res.Export)
			}
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(t.Context(), name+"-config", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if cm.Data["message"] != "one" {
				t.Fatalf("configmap %v", cm.Data)
			}
			var ps ProviderStatus
			if err := json.Unmarshal(res.ProviderStatus, &ps); err != nil {
				t.Fatal(err)
			}
			if ps.Release == nil || ps.Release.Revision != 1 || len(ps.ManagedResources) != 2 {
				t.Fatalf("provider status %s", res.ProviderStatus)
			}
			if drift, err := d.Drift(t.Context(), req, res); err != nil || drift != "" {
				t.Fatalf("drift right after install: %q %v", drift, err)
			}

			// Upgrade with changed values: revision 2, history kept.
			req.Config, req.State = config("two"), res.State
			res2, err := run(t, d, core.OperationReconcile, req)
			if err != nil {
				t.Fatal(err)
			}
			cm, err = cs.CoreV1().ConfigMaps(ns).Get(t.Context(), name+"-config", metav1.GetOptions{})
			if err != nil || cm.Data["message"] != "two" {
				t.Fatalf("after upgrade: %v %v", cm, err)
			}
			if got := strings.Join(helmtest.History(t, cs, ns, name), ","); !strings.Contains(got, "1:superseded") || !strings.Contains(got, "2:deployed") {
				t.Fatalf("release history %s", got)
			}
			// The first result no longer describes the release.
			if drift, _ := d.Drift(t.Context(), req, res); !strings.Contains(drift, "revision 2, not 1") {
				t.Fatalf("drift %q", drift)
			}

			req.State = res2.State
			if _, err := run(t, d, core.OperationDelete, req); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CoreV1().ConfigMaps(ns).Get(t.Context(), name+"-config", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("configmap after uninstall: %v", err)
			}
			if got := helmtest.History(t, cs, ns, name); len(got) != 0 {
				t.Fatalf("release records after uninstall: %v", got)
			}
			if drift, _ := d.Drift(t.Context(), req, res2); !strings.Contains(drift, "is gone") {
				t.Fatalf("drift after uninstall %q", drift)
			}
			// Deleting again finds nothing and succeeds.
			if _, err := run(t, d, core.OperationDelete, req); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestReleaseRenderErrorIsTerminal(t *testing.T) {
	tgt, cs := cluster(t)
	d := New(Options{})
	req := deployer.Request{Item: "broken", Target: tgt, Config: mustJSON(t, map[string]any{
		"name": "broken", "namespace": "helm-broken", "createNamespace": true,
		"chart": map[string]any{"archive": map[string]any{"raw": helmtest.ArchiveBase64(t, helmtest.Broken, "")}},
	})}
	_, err := run(t, d, core.OperationReconcile, req)
	ce, ok := err.(*core.Error) //nolint:errorlint // the deployer returns it unwrapped
	if !ok || ce.Transient || len(ce.Codes) != 1 || ce.Codes[0] != core.CodeConfigurationProblem {
		t.Fatalf("want a terminal configuration problem, got %#v", err)
	}
	if !strings.Contains(ce.Message, "broken/templates/configmap.yaml:6") {
		t.Fatalf("message lacks template and line: %s", ce.Message)
	}
	if got := helmtest.History(t, cs, "helm-broken", "broken"); len(got) != 0 {
		t.Fatalf("a chart that does not render leaves no release: %v", got)
	}
}
