//go:build unix

package helm

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
)

// manifestConfig is a helmDeployment: false config of the workload chart;
// extra is merged over it.
func manifestConfig(t *testing.T, ns, name string, values map[string]any, extra map[string]any) json.RawMessage {
	t.Helper()
	c := map[string]any{
		"name": name, "namespace": ns, "createNamespace": true, "helmDeployment": false,
		"chart":  map[string]any{"archive": map[string]any{"raw": helmtest.ArchiveBase64(t, helmtest.Workload, "")}},
		"values": values,
	}
	for k, v := range extra {
		c[k] = v
	}
	return mustJSON(t, c)
}

func managedNames(t *testing.T, ps json.RawMessage) []string {
	t.Helper()
	var s ProviderStatus
	if err := json.Unmarshal(ps, &s); err != nil {
		t.Fatal(err)
	}
	if s.Release != nil {
		t.Fatalf("a helm release in manifest mode: %s", ps)
	}
	var out []string
	for _, mr := range s.ManagedResources {
		out = append(out, fmt.Sprintf("%s/%s:%s", mr.Resource.Kind, mr.Resource.Name, mr.Policy))
	}
	slices.Sort(out)
	return out
}

func configMapExists(t *testing.T, cs kubernetes.Interface, ns, name string) bool {
	t.Helper()
	_, err := cs.CoreV1().ConfigMaps(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	return err == nil
}

func TestManifestModeLifecycle(t *testing.T) {
	tgt, cs := cluster(t)
	d := New(Options{})
	ns, name := "hm-life", "life"
	exports := map[string]any{"exports": []any{
		map[string]any{"key": "fromValues", "jsonPath": ".Values.message"},
		map[string]any{"key": "fromObject.message", "jsonPath": ".data.message",
			"fromResource": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": name + "-config", "namespace": ns}},
	}}
	req := deployer.Request{Execution: "e", Item: "life", JobID: "j1", Target: tgt,
		Config: manifestConfig(t, ns, name, map[string]any{"message": "one", "extra": true}, map[string]any{"exports": exports})}
	res, err := run(t, d, core.OperationReconcile, req)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ConfigMap/life-config:manage", "ConfigMap/life-extra:manage", "Namespace/hm-life:keep", "Secret/life-secret:manage"}
	if got := managedNames(t, res.ProviderStatus); !slices.Equal(got, want) {
		t.Fatalf("managed %v, want %v", got, want)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(t.Context(), name+"-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cm.Data["message"] != "one" || cm.Labels[ManagedDeployItemLabel] != kube.OwnerFor("e", "life") {
		t.Fatalf("configmap %v labels %v", cm.Data, cm.Labels)
	}
	if got := helmtest.History(t, cs, ns, name); len(got) != 0 {
		t.Fatalf("manifest mode wrote helm release records: %v", got)
	}
	var export map[string]any
	if err := json.Unmarshal(res.Export, &export); err != nil {
		t.Fatal(err)
	}
	if export["fromValues"] != "one" || fmt.Sprint(export["fromObject"]) != "map[message:one]" {
		t.Fatalf("export %s", res.Export)
	}
	if strings.Contains(string(res.ProviderStatus), "one-token") || strings.Contains(string(res.State), "one-token") {
		t.Fatal("object content leaked into the provider status or state")
	}

	// Drift: none at first; a changed field the chart sets, then a
	// deleted object, are drift.
	if drift, err := d.Drift(t.Context(), req, res); err != nil || drift != "" {
		t.Fatalf("drift right after apply: %q %v", drift, err)
	}
	cm.Data["message"] = "edited"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if drift, err := d.Drift(t.Context(), req, res); err != nil || !strings.Contains(drift, "life-config was changed") {
		t.Fatalf("drift after an edit: %q %v", drift, err)
	}
	if err := cs.CoreV1().ConfigMaps(ns).Delete(t.Context(), name+"-extra", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if drift, err := d.Drift(t.Context(), req, res); err != nil || !strings.Contains(drift, "life-extra was deleted") {
		t.Fatalf("drift after a deletion: %q %v", drift, err)
	}

	// Upgrade without the extra template: its object is deleted, and
	// the edit is repaired.
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), cm2(ns, name+"-extra", kube.OwnerFor("e", "life")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	req.JobID, req.State = "j2", res.State
	req.Config = manifestConfig(t, ns, name, map[string]any{"message": "two"}, map[string]any{"exports": exports})
	res, err = run(t, d, core.OperationReconcile, req)
	if err != nil {
		t.Fatal(err)
	}
	if configMapExists(t, cs, ns, name+"-extra") {
		t.Fatal("the object of a removed template survived the upgrade")
	}
	want = []string{"ConfigMap/life-config:manage", "Namespace/hm-life:keep", "Secret/life-secret:manage"}
	if got := managedNames(t, res.ProviderStatus); !slices.Equal(got, want) {
		t.Fatalf("managed after upgrade %v, want %v", got, want)
	}
	if err := json.Unmarshal(res.Export, &export); err != nil || fmt.Sprint(export["fromObject"]) != "map[message:two]" {
		t.Fatalf("export after upgrade %s", res.Export)
	}
	if drift, err := d.Drift(t.Context(), req, res); err != nil || drift != "" {
		t.Fatalf("drift after upgrade: %q %v", drift, err)
	}

	// Changing to a helm release is refused while objects exist.
	bad := req
	bad.Config = mustJSON(t, map[string]any{"name": name, "namespace": ns,
		"chart": map[string]any{"archive": map[string]any{"raw": helmtest.ArchiveBase64(t, helmtest.Workload, "")}}})
	if _, err := run(t, d, core.OperationReconcile, bad); err == nil || !strings.Contains(err.Error(), "cannot change from false to true") {
		t.Fatalf("switching to helmDeployment: %v", err)
	}

	req.State = res.State
	res, err = run(t, d, core.OperationDelete, req)
	if err != nil {
		t.Fatal(err)
	}
	if configMapExists(t, cs, ns, name+"-config") {
		t.Fatal("configmap survived the delete")
	}
	if _, err := cs.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); err != nil {
		t.Fatalf("the release namespace (policy keep) was deleted: %v", err)
	}
	if got := managedNames(t, res.ProviderStatus); len(got) != 0 {
		t.Fatalf("managed after delete: %v", got)
	}
}

// cm2 is a ConfigMap as the chart's extra template renders it.
func cm2(ns, name, owner string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
		Labels: map[string]string{ManagedDeployItemLabel: owner}}, Data: map[string]string{"extra": "yes"}}
}

func TestManifestModeDefaultReadiness(t *testing.T) {
	tgt, cs := cluster(t)
	d := New(Options{})
	ns, name := "hm-ready", "ready"
	req := deployer.Request{Execution: "e", Item: "ready", JobID: "j1", Target: tgt,
		Config: manifestConfig(t, ns, name, map[string]any{"deployment": true}, nil)}
	var logs []string
	req.Log = func(m string) { logs = append(logs, m) }
	res, err := d.Reconcile(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter <= 0 || !strings.Contains(strings.Join(logs, "\n"), "Deployment "+ns+"/"+name+": ") {
		t.Fatalf("an unready deployment must be waited for: requeue %v, logs %q", res.RequeueAfter, logs)
	}
	// Waiting does not apply again: a second call only looks.
	req.State = res.State
	res, err = d.Reconcile(t.Context(), req)
	if err != nil || res.RequeueAfter <= 0 {
		t.Fatalf("second look: %v %v", res.RequeueAfter, err)
	}

	// No controller runs in the test control plane: the test plays the
	// deployment controller.
	dep, err := cs.AppsV1().Deployments(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	if _, err := cs.AppsV1().Deployments(ns).UpdateStatus(t.Context(), dep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	req.State = res.State
	res, err = run(t, d, core.OperationReconcile, req)
	if err != nil {
		t.Fatal(err)
	}
	req.State = res.State
	if _, err := run(t, d, core.OperationDelete, req); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().Deployments(ns).Get(t.Context(), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("deployment after delete: %v", err)
	}
}

func TestCustomReadinessChecks(t *testing.T) {
	tgt, cs := cluster(t)
	check := func(ns, name string) map[string]any {
		return map[string]any{"disableDefault": true, "custom": []any{map[string]any{
			"name": "configured",
			"resourceSelector": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"name": name + "-config", "namespace": ns}},
			"requirements": []any{map[string]any{"jsonPath": ".data.ready", "operator": "==",
				"values": []any{map[string]any{"value": "yes"}}}},
		}}}
	}
	for _, helmDeployment := range []bool{false, true} {
		t.Run(fmt.Sprintf("helmDeployment=%v", helmDeployment), func(t *testing.T) {
			d := New(Options{PollInterval: 50 * time.Millisecond})
			ns := fmt.Sprintf("hm-custom-%v", helmDeployment)
			name := "custom"
			cfg := manifestConfig(t, ns, name, nil, map[string]any{"readinessChecks": check(ns, name), "helmDeployment": helmDeployment})
			req := deployer.Request{Execution: "e", Item: "custom", JobID: "j1", Target: tgt, Config: cfg}
			var res deployer.Result
			var err error
			for range 3 {
				if res, err = d.Reconcile(t.Context(), req); err != nil || res.RequeueAfter <= 0 {
					t.Fatalf("the check cannot pass yet: %v %v", res.RequeueAfter, err)
				}
				req.State = res.State
			}
			cm, err := cs.CoreV1().ConfigMaps(ns).Get(t.Context(), name+"-config", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cm.Data["ready"] = "yes"
			if _, err := cs.CoreV1().ConfigMaps(ns).Update(t.Context(), cm, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if res, err = run(t, d, core.OperationReconcile, req); err != nil {
				t.Fatal(err)
			}
			req.State = res.State
			if _, err := run(t, d, core.OperationDelete, req); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestManifestModeDeletionGroups(t *testing.T) {
	tgt, cs := cluster(t)
	d := New(Options{})
	ns, name := "hm-groups", "groups"
	groups := map[string]any{
		// Only ConfigMaps are in a group: the Secret is left in place,
		// as Landscaper leaves objects no group names.
		"deletionGroups": []any{map[string]any{"customResourceGroup": map[string]any{
			"resources": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}}}},
		// During an update, removed objects go in their own group order.
		"deletionGroupsDuringUpdate": []any{map[string]any{"predefinedResourceGroup": map[string]any{"type": "namespaced-resources"}}},
	}
	req := deployer.Request{Execution: "e", Item: "groups", JobID: "j1", Target: tgt,
		Config: manifestConfig(t, ns, name, map[string]any{"extra": true}, groups)}
	res, err := run(t, d, core.OperationReconcile, req)
	if err != nil {
		t.Fatal(err)
	}
	req.JobID, req.State = "j2", res.State
	req.Config = manifestConfig(t, ns, name, map[string]any{"extra": false}, groups)
	if res, err = run(t, d, core.OperationReconcile, req); err != nil {
		t.Fatal(err)
	}
	if configMapExists(t, cs, ns, name+"-extra") {
		t.Fatal("removed template's object survived the update")
	}
	req.State = res.State
	if _, err := run(t, d, core.OperationDelete, req); err != nil {
		t.Fatal(err)
	}
	if configMapExists(t, cs, ns, name+"-config") {
		t.Fatal("the ConfigMap group was not deleted")
	}
	if _, err := cs.CoreV1().Secrets(ns).Get(t.Context(), name+"-secret", metav1.GetOptions{}); err != nil {
		t.Fatalf("an object in no deletion group must stay: %v", err)
	}

	bad := req
	bad.Config = manifestConfig(t, ns, name, nil, map[string]any{"deletionGroups": []any{map[string]any{}}})
	if err := d.Validate(bad.Config); err == nil || !strings.Contains(err.Error(), "deletionGroups[0]") {
		t.Fatalf("an empty deletion group must be rejected: %v", err)
	}
}
