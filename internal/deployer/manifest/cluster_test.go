//go:build unix

package manifest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
)

func cm(ns, name, dataYAML string) string {
	return fmt.Sprintf(`
  - manifest:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: %s, namespace: %s}
      data: %s`, name, ns, dataYAML)
}

func config(body string) string {
	return "apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2\nkind: ProviderConfiguration\n" + body
}

func TestCRDThenCustomResourceInOneItem(t *testing.T) {
	ns := namespace(t)
	it := newItem(t, config(`
manifests:
  - manifest:
      apiVersion: example.landscaper.test/v1
      kind: Widget
      metadata: {name: w1, namespace: `+ns+`}
      spec: {size: 3}
  - manifest:
      apiVersion: apiextensions.k8s.io/v1
      kind: CustomResourceDefinition
      metadata: {name: widgets.example.landscaper.test}
      spec:
        group: example.landscaper.test
        scope: Namespaced
        names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
        versions:
          - name: v1
            served: true
            storage: true
            schema:
              openAPIV3Schema:
                type: object
                x-kubernetes-preserve-unknown-fields: true
readinessChecks:
  custom:
    - name: size
      resourceSelector:
        - {apiVersion: example.landscaper.test/v1, kind: Widget, name: w1, namespace: `+ns+`}
      requirements:
        - {jsonPath: .spec.size, operator: "==", values: [{value: 3}]}
exports:
  exports:
    - key: widget.size
      jsonPath: .spec.size
      fromResource: {apiVersion: example.landscaper.test/v1, kind: Widget, name: w1, namespace: `+ns+`}
`))
	res := it.mustReconcile()
	if got := managedNames(t, res); !slices.Equal(got, []string{"CustomResourceDefinition/widgets.example.landscaper.test", "Widget/w1"}) {
		t.Errorf("managed %v: CRDs first, then the rest", got)
	}
	if string(res.Export) != `{"widget":{"size":3}}` {
		t.Errorf("export %s", res.Export)
	}
	wgvk := schema.GroupVersionKind{Group: "example.landscaper.test", Version: "v1", Kind: "Widget"}
	mustGet(t, wgvk, ns, "w1")
	if d := it.drift(); d != "" {
		t.Errorf("drift right after reconcile: %s", d)
	}

	it.mustDelete()
	if get(t, wgvk, ns, "w1") != nil {
		t.Error("widget still exists")
	}
	if get(t, schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "", "widgets.example.landscaper.test") != nil {
		t.Error("CRD still exists")
	}
}

func TestUpdateStrategies(t *testing.T) {
	ns := namespace(t)
	cases := map[kube.UpdateStrategy]map[string]string{
		kube.StrategyUpdate:         {"a": "new", "b": "b"},
		kube.StrategyPatch:          {"a": "new", "b": "b"},
		kube.StrategyMerge:          {"a": "live", "b": "b", "extra": "x"},
		kube.StrategyMergeOverwrite: {"a": "new", "b": "b", "extra": "x"},
	}
	for strategy, want := range cases {
		t.Run(string(strategy), func(t *testing.T) {
			name := "s-" + strings.ToLower(string(strategy))
			create(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s, labels: {other: keep}}\ndata: {a: live, extra: x}\n", name, ns))
			it := newItem(t, config("updateStrategy: "+string(strategy)+"\nmanifests:"+cm(ns, name, "{a: new, b: b}")))
			it.mustReconcile()
			u := mustGet(t, cmGVK, ns, name)
			if got := data(t, u); !mapsEqual(got, want) {
				t.Errorf("data %v, want %v", got, want)
			}
			if u.GetLabels()[kube.ManifestManagedLabel] != kube.OwnerFor(it.req.Execution, it.req.Item) {
				t.Errorf("labels %v lack the managed label", u.GetLabels())
			}
			if d := it.drift(); d != "" {
				t.Errorf("drift right after reconcile: %s", d)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestPolicies(t *testing.T) {
	ns := namespace(t)
	create(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: immutable, namespace: %s}\ndata: {v: old}\n", ns))
	create(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fallback-other, namespace: %s, labels: {%q: someone-else}}\ndata: {v: old}\n", ns, kube.ManifestManagedLabel))
	create(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: manage-other, namespace: %s, labels: {%q: someone-else}}\ndata: {v: old}\n", ns, kube.ManifestManagedLabel))
	entry := func(policy, name string) string {
		return fmt.Sprintf(`
  - policy: %s
    manifest:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: %s, namespace: %s}
      data: {v: new}`, policy, name, ns)
	}
	it := newItem(t, config("manifests:"+entry("ignore", "ignore")+entry("keep", "keep")+entry("immutable", "immutable")+
		entry("fallback", "fallback-other")+entry("fallback", "fallback-new")+entry("manage", "manage-other")))
	res := it.mustReconcile()

	if get(t, cmGVK, ns, "ignore") != nil {
		t.Error("ignore: created")
	}
	wantData := map[string]string{"keep": "new", "immutable": "old", "fallback-other": "old", "fallback-new": "new", "manage-other": "new"}
	for name, v := range wantData {
		if got := data(t, mustGet(t, cmGVK, ns, name))["v"]; got != v {
			t.Errorf("%s: v=%s, want %s", name, got, v)
		}
	}
	got := managedNames(t, res)
	want := []string{"ConfigMap/fallback-new", "ConfigMap/immutable", "ConfigMap/keep", "ConfigMap/manage-other"}
	if !slices.Equal(got, want) {
		t.Errorf("managed %v, want %v", got, want)
	}

	it.mustDelete()
	for name, exists := range map[string]bool{"keep": true, "immutable": false, "fallback-other": true, "fallback-new": false, "manage-other": false} {
		if (get(t, cmGVK, ns, name) != nil) != exists {
			t.Errorf("%s: exists=%v after delete, want %v", name, !exists, exists)
		}
	}
}

func TestDefaultReadinessOfDeployment(t *testing.T) {
	ns := namespace(t)
	it := newItem(t, config(`
manifests:
  - manifest:
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web, namespace: `+ns+`}
      spec:
        replicas: 1
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec: {containers: [{name: c, image: example.invalid/web:1}]}
`))
	res, err := it.once(core.OperationReconcile, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter <= 0 {
		t.Fatal("a deployment without ready replicas must not be ready")
	}
	// Nothing changes while the deployment is not ready; the job resumes
	// without applying again.
	before := mustGet(t, depGVK, ns, "web").GetResourceVersion()
	res, err = it.once(core.OperationReconcile, true)
	if err != nil || res.RequeueAfter <= 0 {
		t.Fatalf("second check: %v, requeue %v", err, res.RequeueAfter)
	}
	if after := mustGet(t, depGVK, ns, "web").GetResourceVersion(); after != before {
		t.Error("a resumed job applied the manifests again")
	}

	d := mustGet(t, depGVK, ns, "web")
	_ = unstructured.SetNestedField(d.Object, d.GetGeneration(), "status", "observedGeneration")
	for _, f := range []string{"replicas", "updatedReplicas", "availableReplicas", "readyReplicas"} {
		_ = unstructured.SetNestedField(d.Object, int64(1), "status", f)
	}
	update(t, d, "status")

	res, err = it.once(core.OperationReconcile, true)
	if err != nil || res.RequeueAfter > 0 {
		t.Fatalf("after the status is ready: %v, requeue %v", err, res.RequeueAfter)
	}
	if d := it.drift(); d != "" {
		t.Errorf("status changes are not drift: %s", d)
	}
	it.mustDelete()
}

func TestCustomReadinessAndExports(t *testing.T) {
	ns := namespace(t)
	it := newItem(t, config(`
manifests:`+cm(ns, "state", "{ready: \"false\", url: http://svc}")+`
  - manifest:
      apiVersion: rbac.authorization.k8s.io/v1
      kind: Role
      metadata: {name: reader, namespace: `+ns+`}
      rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
  - manifest:
      apiVersion: rbac.authorization.k8s.io/v1
      kind: RoleBinding
      metadata: {name: reader, namespace: `+ns+`}
      roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
      subjects: [{kind: ServiceAccount, name: default, namespace: `+ns+`}]
readinessChecks:
  custom:
    - name: state-ready
      resourceSelector: [{apiVersion: v1, kind: ConfigMap, name: state, namespace: `+ns+`}]
      requirements:
        - {jsonPath: .data.ready, operator: "=", values: [{value: "true"}]}
        - {jsonPath: .data.missing, operator: "!"}
        - {jsonPath: .data.url, operator: exists}
exports:
  exports:
    - key: url
      jsonPath: .data.url
      fromResource: {apiVersion: v1, kind: ConfigMap, name: state, namespace: `+ns+`}
    - key: verbs.first
      jsonPath: .roleRef
      fromResource: {apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, name: reader, namespace: `+ns+`}
      fromObjectRef: {apiVersion: rbac.authorization.k8s.io/v1, kind: Role, jsonPath: ".rules[0].verbs[0]"}
`))
	res, err := it.once(core.OperationReconcile, false)
	if err != nil || res.RequeueAfter <= 0 {
		t.Fatalf("not ready yet expected: %v, requeue %v", err, res.RequeueAfter)
	}
	// A timeout ending this wait says so as Landscaper's readiness check does.
	if fmt.Sprint(res.TimeoutCodes) != "[ERR_FOR_INFO_ONLY]" {
		t.Errorf("timeout codes of a readiness wait %v, want [ERR_FOR_INFO_ONLY]", res.TimeoutCodes)
	}
	if res.Export != nil {
		t.Errorf("export before readiness: %s", res.Export)
	}
	u := mustGet(t, cmGVK, ns, "state")
	_ = unstructured.SetNestedField(u.Object, "true", "data", "ready")
	update(t, u)
	res, err = it.once(core.OperationReconcile, true)
	if err != nil || res.RequeueAfter > 0 {
		t.Fatalf("ready expected: %v, requeue %v", err, res.RequeueAfter)
	}
	var exp map[string]any
	if err := json.Unmarshal(res.Export, &exp); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(exp) != "map[url:http://svc verbs:map[first:get]]" {
		t.Errorf("export %s", res.Export)
	}
}

func TestRemovedManifestsAreDeleted(t *testing.T) {
	ns := namespace(t)
	it := newItem(t, config("manifests:"+cm(ns, "a", "{k: v}")+cm(ns, "b", "{k: v}")))
	it.mustReconcile()
	it.setConfig(config("manifests:" + cm(ns, "a", "{k: v2}")))
	res := it.mustReconcile()
	if get(t, cmGVK, ns, "b") != nil {
		t.Error("b was removed from the manifests but still exists")
	}
	if got := managedNames(t, res); !slices.Equal(got, []string{"ConfigMap/a"}) {
		t.Errorf("managed %v", got)
	}
}

func TestNamespaceAndItsObjects(t *testing.T) {
	ns := fmt.Sprintf("own-ns-%d", seq.Add(1))
	it := newItem(t, config("manifests:"+cm(ns, "in-ns", "{k: v}")+`
  - manifest:
      apiVersion: v1
      kind: Namespace
      metadata: {name: `+ns+`}`))
	res := it.mustReconcile()
	if got := managedNames(t, res); !slices.Equal(got, []string{"Namespace/" + ns, "ConfigMap/in-ns"}) {
		t.Errorf("managed %v: cluster-scoped objects come before namespaced ones", got)
	}
	it.mustDelete()
	if u := get(t, nsGVK, "", ns); u != nil {
		t.Errorf("namespace still exists (phase %v)", u.Object["status"])
	}
}

func TestDeletionGroupsAndHooks(t *testing.T) {
	ns := namespace(t)
	it := newItem(t, config(`
manifests:
  - annotateBeforeCreate: {created: "yes"}
    annotateBeforeDelete: {deleting: "yes"}
    patchAfterDeployment: {data: {patched: "after"}}
    patchBeforeDelete: {data: {patched: "before-delete"}}
    manifest:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: first, namespace: `+ns+`, finalizers: [test.landscaper/hold]}
      data: {k: v}`+cm(ns, "second", "{k: v}")+`
deletionGroups:
  - customResourceGroup:
      resources: [{apiVersion: v1, kind: ConfigMap, names: [first]}]
  - predefinedResourceGroup: {type: namespaced-resources}
`))
	it.mustReconcile()
	first := mustGet(t, cmGVK, ns, "first")
	if first.GetAnnotations()["created"] != "yes" || data(t, first)["patched"] != "after" {
		t.Errorf("annotateBeforeCreate/patchAfterDeployment not applied: %v %v", first.GetAnnotations(), data(t, first))
	}
	if d := it.drift(); d != "" {
		t.Errorf("drift right after reconcile: %s", d)
	}

	// The finalizer holds "first" (group 1), so "second" (group 2) must
	// not be deleted yet.
	res, err := it.once(core.OperationDelete, false)
	if err != nil || res.RequeueAfter <= 0 {
		t.Fatalf("delete must wait for the finalizer: %v, requeue %v", err, res.RequeueAfter)
	}
	first = mustGet(t, cmGVK, ns, "first")
	if first.GetDeletionTimestamp() == nil {
		t.Error("first was not deleted")
	}
	if first.GetAnnotations()["deleting"] != "yes" || data(t, first)["patched"] != "before-delete" {
		t.Errorf("before-delete hooks not applied: %v %v", first.GetAnnotations(), data(t, first))
	}
	if get(t, cmGVK, ns, "second") == nil {
		t.Fatal("second was deleted before the first group was gone")
	}
	first.SetFinalizers(nil)
	update(t, first)
	it.mustDelete()
	if get(t, cmGVK, ns, "second") != nil {
		t.Error("second still exists")
	}
}

func TestForceDelete(t *testing.T) {
	ns := namespace(t)
	it := newItem(t, config(`
manifests:
  - manifest:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: held, namespace: `+ns+`, finalizers: [test.landscaper/hold]}
deletionGroups:
  - predefinedResourceGroup: {type: namespaced-resources, forceDelete: true}
`))
	it.mustReconcile()
	it.mustDelete()
	if get(t, cmGVK, ns, "held") != nil {
		t.Error("forceDelete did not remove the finalizer")
	}
}

func TestDrift(t *testing.T) {
	ns := namespace(t)
	it := newItem(t, config("manifests:"+cm(ns, "a", "{k: v}")+cm(ns, "b", "{k: v}")+`
  - manifest:
      apiVersion: v1
      kind: Service
      metadata: {name: svc, namespace: `+ns+`}
      spec:
        ports: [{port: 80, targetPort: 8080}]
        selector: {app: x}`))
	it.mustReconcile()
	if d := it.drift(); d != "" {
		t.Fatalf("drift right after reconcile: %s", d)
	}

	// Changes to fields the manifest does not set are not drift.
	a := mustGet(t, cmGVK, ns, "a")
	a.SetAnnotations(map[string]string{"someone": "else"})
	update(t, a)
	if d := it.drift(); d != "" {
		t.Errorf("an annotation added by someone else is drift: %s", d)
	}

	a = mustGet(t, cmGVK, ns, "a")
	_ = unstructured.SetNestedField(a.Object, "changed", "data", "k")
	update(t, a)
	remove(t, cmGVK, ns, "b")
	d := it.drift()
	if !strings.Contains(d, "ConfigMap "+ns+"/a was changed") || !strings.Contains(d, "ConfigMap "+ns+"/b was deleted") {
		t.Errorf("drift %q", d)
	}

	it.mustReconcile()
	if d := it.drift(); d != "" {
		t.Errorf("drift after repair: %s", d)
	}
	if got := data(t, mustGet(t, cmGVK, ns, "a"))["k"]; got != "v" {
		t.Errorf("a not repaired: %s", got)
	}
}

func TestAPIServerDownMidReconcile(t *testing.T) {
	ns := namespace(t)
	it := newItem(t, config("manifests:"+cm(ns, "a", "{k: v}")))
	if err := env.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = env.StartAPIServer(context.Background())
		}
	}()
	_, err := it.once(core.OperationReconcile, false)
	var ce *core.Error
	if !errors.As(err, &ce) || !ce.Transient {
		t.Fatalf("want a transient error while the API server is down, got %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := env.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	it.mustReconcile()
	mustGet(t, cmGVK, ns, "a")
}

func TestTerminalErrors(t *testing.T) {
	ns := namespace(t)
	cases := map[string]struct {
		manifests string
		code      string
		transient bool
	}{
		"invalid object": {manifests: `
  - manifest:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: "Not_Valid", namespace: ` + ns + `}`, code: core.CodeConfigurationProblem},
		"unknown kind": {manifests: `
  - manifest:
      apiVersion: nothing.landscaper.test/v1
      kind: Nothing
      metadata: {name: x, namespace: ` + ns + `}`, transient: true},
		"missing namespace": {manifests: cm("does-not-exist-ns", "x", "{}"), transient: true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			it := newItem(t, config("manifests:"+c.manifests))
			_, err := it.once(core.OperationReconcile, false)
			var ce *core.Error
			if !errors.As(err, &ce) {
				t.Fatalf("want a core error, got %v", err)
			}
			if ce.Transient != c.transient || (c.code != "" && !slices.Contains(ce.Codes, c.code)) {
				t.Errorf("%+v", ce)
			}
		})
	}
}
