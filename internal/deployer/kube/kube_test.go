package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	return u
}

func manifest(t *testing.T, policy Policy, y string) Manifest {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return Manifest{Policy: policy, Manifest: js}
}

func TestPlanOrder(t *testing.T) {
	ms := []Manifest{
		manifest(t, "", "{apiVersion: example.test/v1, kind: Widget, metadata: {name: w}}"),
		manifest(t, "", "{apiVersion: v1, kind: ConfigMap, metadata: {name: cm}}"),
		manifest(t, PolicyIgnore, "{apiVersion: v1, kind: Secret, metadata: {name: ignored}}"),
		manifest(t, "", "{apiVersion: v1, kind: Namespace, metadata: {name: ns, namespace: bogus}}"),
		manifest(t, "", "{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: widgets.example.test}, spec: {group: example.test, scope: Namespaced, names: {kind: Widget, plural: widgets}}}"),
		manifest(t, "", "{apiVersion: example.test/v1, kind: Gadget, metadata: {name: g, namespace: x}}"),
		manifest(t, PolicyKeep, "{apiVersion: v1, kind: List, items: [{apiVersion: v1, kind: ConfigMap, metadata: {name: l1, namespace: other}}, {apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: cr}}]}"),
		manifest(t, "", "{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, metadata: {name: gadgets.example.test}, spec: {group: example.test, scope: Cluster, names: {kind: Gadget, plural: gadgets}}}"),
	}
	served := map[string]bool{"ConfigMap": true, "Namespace": false, "ClusterRole": false}
	namespaced := func(gvk schema.GroupVersionKind) (bool, error) {
		ns, ok := served[gvk.Kind]
		if !ok {
			return false, &meta.NoKindMatchError{GroupKind: gvk.GroupKind()}
		}
		return ns, nil
	}
	groups, err := plan(ms, "def", namespaced)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for g, list := range groups {
		for _, p := range list {
			got = append(got, fmt.Sprintf("%d:%s:%s/%s:new=%v", g, p.GVK.Kind, p.Object.GetNamespace(), p.Object.GetName(), p.newKind))
		}
	}
	want := []string{
		"0:CustomResourceDefinition:/widgets.example.test:new=false",
		"0:CustomResourceDefinition:/gadgets.example.test:new=false",
		"1:Namespace:/ns:new=false",
		"1:Gadget:/g:new=true",
		"1:ClusterRole:/cr:new=false",
		"2:Widget:def/w:new=true",
		"2:ConfigMap:def/cm:new=false",
		"2:ConfigMap:other/l1:new=false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("plan\n got %v\nwant %v", got, want)
	}
	if groups[groupNamespaced][2].Manifest.Policy != PolicyKeep {
		t.Error("list items must keep the list's policy")
	}

	_, err = plan([]Manifest{manifest(t, "", "{apiVersion: x.test/v1, kind: Unknown, metadata: {name: u}}")}, "def", namespaced)
	var ce *core.Error
	if !errors.As(err, &ce) || !ce.Transient {
		t.Errorf("an unknown kind must be transient: %v", err)
	}
	_, err = plan([]Manifest{manifest(t, "", "{apiVersion: v1, kind: ConfigMap}")}, "def", namespaced)
	if !errors.As(err, &ce) || ce.Transient || !slices.Contains(ce.Codes, core.CodeConfigurationProblem) {
		t.Errorf("a manifest without name must be a configuration problem: %v", err)
	}
}

func TestUpdateFor(t *testing.T) {
	live := `
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: n, resourceVersion: "42", uid: u1, labels: {theirs: tv}, annotations: {a: live}}
data: {a: live, extra: x, nested: "n"}
`
	manifestYAML := `
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: n, labels: {mine: mv}}
data: {a: new, b: b}
`
	cases := map[UpdateStrategy]struct {
		data        map[string]any
		labels      map[string]any
		annotations bool
	}{
		StrategyUpdate:         {map[string]any{"a": "new", "b": "b"}, map[string]any{"mine": "mv", "l": "o"}, false},
		StrategyPatch:          {map[string]any{"a": "new", "b": "b"}, map[string]any{"mine": "mv", "l": "o"}, false},
		StrategyMerge:          {map[string]any{"a": "live", "b": "b", "extra": "x", "nested": "n"}, map[string]any{"theirs": "tv", "mine": "mv", "l": "o"}, true},
		StrategyMergeOverwrite: {map[string]any{"a": "new", "b": "b", "extra": "x", "nested": "n"}, map[string]any{"theirs": "tv", "mine": "mv", "l": "o"}, true},
	}
	for s, want := range cases {
		t.Run(string(s), func(t *testing.T) {
			l := obj(t, live)
			body, patch, err := updateFor(ApplyOptions{UpdateStrategy: s, ManagedLabel: "l", Owner: "o"}, l, obj(t, manifestYAML))
			if err != nil {
				t.Fatal(err)
			}
			if patch != nil {
				// What the API server does with a JSON merge patch.
				lj, _ := json.Marshal(l.Object)
				out, err := jsonpatch.MergePatch(lj, patch)
				if err != nil {
					t.Fatal(err)
				}
				body = &unstructured.Unstructured{}
				if err := body.UnmarshalJSON(out); err != nil {
					t.Fatal(err)
				}
			}
			if fmt.Sprint(body.Object["data"]) != fmt.Sprint(want.data) {
				t.Errorf("data %v, want %v", body.Object["data"], want.data)
			}
			labels, _, _ := unstructured.NestedMap(body.Object, "metadata", "labels")
			if fmt.Sprint(labels) != fmt.Sprint(want.labels) {
				t.Errorf("labels %v, want %v", labels, want.labels)
			}
			if _, has := body.GetAnnotations()["a"]; has != want.annotations {
				t.Errorf("annotations %v", body.GetAnnotations())
			}
			if body.GetResourceVersion() != "42" {
				t.Errorf("resourceVersion %q: updates must carry the live one", body.GetResourceVersion())
			}
		})
	}
	if _, _, err := updateFor(ApplyOptions{UpdateStrategy: "replace"}, obj(t, live), obj(t, manifestYAML)); err == nil {
		t.Error("unknown strategy accepted")
	}
}

func TestKeepRequiredFields(t *testing.T) {
	cases := []struct {
		live, manifest, path string
		want                 any
	}{
		{"{apiVersion: v1, kind: Service, metadata: {name: s, resourceVersion: '1'}, spec: {clusterIP: 10.0.0.7}}",
			"{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {ports: [{port: 80}]}}", "spec.clusterIP", "10.0.0.7"},
		{"{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {selector: {matchLabels: {uid: x}}, template: {metadata: {labels: {uid: x}}}}}",
			"{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {template: {metadata: {labels: {app: a}}}}}", "spec.selector.matchLabels.uid", "x"},
		{"{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {selector: {matchLabels: {uid: x}}, template: {metadata: {labels: {uid: x}}}}}",
			"{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {template: {metadata: {labels: {app: a}}}}}", "spec.template.metadata.labels.uid", "x"},
		{"{apiVersion: v1, kind: ServiceAccount, metadata: {name: a}, secrets: [{name: tok}]}",
			"{apiVersion: v1, kind: ServiceAccount, metadata: {name: a}}", "secrets", "[map[name:tok]]"},
		{"{apiVersion: v1, kind: ServiceAccount, metadata: {name: a}, secrets: [{name: tok}]}",
			"{apiVersion: v1, kind: ServiceAccount, metadata: {name: a}, secrets: [{name: mine}]}", "secrets", "[map[name:mine]]"},
		{"{apiVersion: v1, kind: ConfigMap, metadata: {name: c, resourceVersion: '9'}}",
			"{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}", "metadata.resourceVersion", "9"},
	}
	for _, c := range cases {
		o := obj(t, c.manifest)
		if err := keepRequiredFields(obj(t, c.live), o); err != nil {
			t.Fatal(err)
		}
		v, _, _ := unstructured.NestedFieldNoCopy(o.Object, strings.Split(c.path, ".")...)
		if fmt.Sprint(v) != fmt.Sprint(c.want) {
			t.Errorf("%s: %s = %v, want %v", o.GetKind(), c.path, v, c.want)
		}
	}
}

func TestCheckObjectReady(t *testing.T) {
	cases := []struct {
		y     string
		ready bool
	}{
		{"{apiVersion: v1, kind: ConfigMap, metadata: {name: x}}", true},
		{"{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 2}, spec: {replicas: 2}, status: {observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2}}", false},
		{"{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 2}, spec: {replicas: 2}, status: {observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 1}}", false},
		{"{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 2}, spec: {replicas: 2}, status: {observedGeneration: 2, replicas: 3, updatedReplicas: 2, availableReplicas: 2}}", false},
		{"{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 2}, spec: {replicas: 2}, status: {observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2}}", true},
		{"{apiVersion: apps/v1, kind: Deployment, metadata: {name: d, generation: 1}, spec: {replicas: 0}, status: {observedGeneration: 1}}", true},
		{"{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s, generation: 1}, status: {observedGeneration: 1, updatedReplicas: 1, availableReplicas: 0}}", false},
		{"{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: s, generation: 1}, status: {observedGeneration: 1, updatedReplicas: 1, availableReplicas: 1}}", true},
		{"{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: d, generation: 1}, spec: {updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1}}}, status: {observedGeneration: 1, desiredNumberScheduled: 3, currentNumberScheduled: 2}}", true},
		{"{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: d, generation: 1}, spec: {updateStrategy: {type: OnDelete}}, status: {observedGeneration: 1, desiredNumberScheduled: 3, currentNumberScheduled: 2}}", false},
		{"{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: r, generation: 1}, spec: {replicas: 2}, status: {observedGeneration: 1, readyReplicas: 2, conditions: [{type: ReplicaFailure, status: 'True'}]}}", false},
		{"{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: r, generation: 1}, spec: {replicas: 2}, status: {observedGeneration: 1, readyReplicas: 2}}", true},
		{"{apiVersion: v1, kind: ReplicationController, metadata: {name: r, generation: 1}, status: {observedGeneration: 1, readyReplicas: 0}}", false},
		{"{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {conditions: [{type: Ready, status: 'True'}]}}", true},
		{"{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {conditions: [{type: Ready, status: 'False', reason: PodCompleted}]}}", true},
		{"{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {conditions: [{type: Ready, status: 'False'}]}}", false},
		{"{apiVersion: v1, kind: Pod, metadata: {name: p}, status: {}}", false},
		// Only group and kind select the check, not the version.
		{"{apiVersion: apps/v1beta2, kind: Deployment, metadata: {name: d, generation: 2}, status: {observedGeneration: 1}}", false},
	}
	for _, c := range cases {
		err := CheckObjectReady(obj(t, c.y))
		var nr *NotReadyError
		if c.ready && err != nil || !c.ready && !errors.As(err, &nr) {
			t.Errorf("%s: %v, want ready=%v", c.y, err, c.ready)
		}
	}
}

func TestCheckRequirements(t *testing.T) {
	o := obj(t, `
apiVersion: example.test/v1
kind: Thing
metadata: {name: t}
spec: {replicas: 3, mode: fast, flag: true}
status:
  phase: Running
  conditions: [{type: Ready, status: "True"}, {type: Synced, status: "True"}]
`)
	req := func(path string, op Operator, values ...string) RequirementSpec {
		r := RequirementSpec{JSONPath: path, Operator: op}
		for _, v := range values {
			r.Values = append(r.Values, json.RawMessage(`{"value": `+v+`}`))
		}
		return r
	}
	cases := []struct {
		r     RequirementSpec
		ready bool
	}{
		{req(".status.phase", OpEquals, `"Running"`), true},
		{req("status.phase", OpDoubleEquals, `"Running"`), true},
		{req(".status.phase", OpNotEquals, `"Running"`), false},
		{req(".spec.replicas", OpEquals, `3`), true},
		{req(".spec.replicas", OpEquals, `3.0`), true},
		{req(".spec.replicas", OpEquals, `"3"`), false},
		{req(".spec.flag", OpEquals, `true`), true},
		{req(".spec.mode", OpIn, `"slow"`, `"fast"`), true},
		{req(".spec.mode", OpNotIn, `"slow"`, `"fast"`), false},
		{req(".spec.mode", OpNotIn, `"slow"`), true},
		{req(".spec.missing", OpDoesNotExist), true},
		{req(".spec.mode", OpDoesNotExist), false},
		{req(".spec.mode", OpExists), true},
		{req(".spec.missing", OpExists), false},
		{req(".spec.missing", OpEquals, `1`), false},
		{req(".status.conditions[*].status", OpEquals, `"True"`), true},
		{req(`.status.conditions[?(@.type=="Ready")].status`, OpEquals, `"True"`), true},
		{req(`.status.conditions[?(@.type=="Gone")].status`, OpEquals, `"True"`), false},
		{req(".status.conditions[0]", OpEquals, `{"type": "Ready", "status": "True"}`), true},
	}
	for _, c := range cases {
		err := CheckRequirements(o, []RequirementSpec{c.r})
		var nr *NotReadyError
		if c.ready && err != nil || !c.ready && !errors.As(err, &nr) {
			t.Errorf("%s %s %s: %v, want ready=%v", c.r.JSONPath, c.r.Operator, c.r.Values, err, c.ready)
		}
	}
	bad := RequirementSpec{JSONPath: ".spec.mode", Operator: OpEquals, Values: []json.RawMessage{json.RawMessage(`"fast"`)}}
	if err := CheckRequirements(o, []RequirementSpec{bad}); err == nil || errors.As(err, new(*NotReadyError)) {
		t.Errorf("a value without the value key must be an error, not a wait: %v", err)
	}
}

func TestGetValueAndConstruct(t *testing.T) {
	data := obj(t, "{apiVersion: v1, kind: X, metadata: {name: n}, data: {k: v, num: 3}, spec: {list: [a, b], obj: {x: 1}}}").Object
	cases := []struct {
		path, want string
	}{
		{".data.k", "v"},
		{"data.k", "v"},
		{".data.num", "3"},
		{".spec.list[1]", "b"},
		{".spec.obj", "map[x:1]"},
		{".spec.list", "[a b]"},
		{".data.missing", "error"},
		{".spec.list[5]", "error"},
	}
	for _, c := range cases {
		v, err := GetValue(c.path, data)
		got := fmt.Sprint(v)
		if err != nil {
			got = "error"
		}
		if got != c.want {
			t.Errorf("%s: %s (%v), want %s", c.path, got, err, c.want)
		}
	}
	keys := map[string]string{
		"a":      `{"a":1}`,
		".a":     `{"a":1}`,
		"a.b.c":  `{"a":{"b":{"c":1}}}`,
		"a[0]":   "error",
		"a[*].b": "error",
	}
	for k, want := range keys {
		m, err := Construct(k, 1)
		got := "error"
		if err == nil {
			b, _ := json.Marshal(m)
			got = string(b)
		}
		if got != want {
			t.Errorf("Construct(%q) = %s (%v), want %s", k, got, err, want)
		}
	}
	merged := MergeMaps(map[string]any{"a": map[string]any{"x": 1, "y": 1}, "b": 1}, map[string]any{"a": map[string]any{"y": 2}, "c": 3})
	if b, _ := json.Marshal(merged); string(b) != `{"a":{"x":1,"y":2},"b":1,"c":3}` {
		t.Errorf("MergeMaps: %s", b)
	}
}

func TestClassify(t *testing.T) {
	gr := schema.GroupResource{Resource: "configmaps"}
	terminating := apierrors.NewForbidden(gr, "x", errors.New("namespace is being terminated"))
	terminating.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: corev1.NamespaceTerminatingCause}}
	refused := &url.Error{Op: "Get", URL: "https://127.0.0.1:1", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	cases := []struct {
		name      string
		err       error
		transient bool
		code      string
	}{
		{"conflict", apierrors.NewConflict(gr, "x", errors.New("changed")), true, ""},
		{"throttled", apierrors.NewTooManyRequests("slow down", 1), true, ""},
		{"internal", apierrors.NewInternalError(errors.New("boom")), true, ""},
		{"unavailable", apierrors.NewServiceUnavailable("down"), true, ""},
		{"server timeout", apierrors.NewServerTimeout(gr, "get", 1), true, ""},
		{"not found", apierrors.NewNotFound(gr, "x"), true, ""},
		{"already exists", apierrors.NewAlreadyExists(gr, "x"), true, ""},
		{"no match", &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "x.test", Kind: "X"}}, true, ""},
		{"connection refused", refused, true, ""},
		{"namespace terminating", terminating, true, ""},
		{"unknown", errors.New("something"), true, ""},
		{"invalid", apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "x", field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), "X_", "bad")}), false, core.CodeConfigurationProblem},
		{"bad request", apierrors.NewBadRequest("nope"), false, core.CodeConfigurationProblem},
		{"method not supported", apierrors.NewMethodNotSupported(gr, "patch"), false, core.CodeConfigurationProblem},
		{"unauthorized", apierrors.NewUnauthorized("who"), false, core.CodeUnauthorized},
		{"forbidden", apierrors.NewForbidden(gr, "x", errors.New("rbac")), false, core.CodeUnauthorized},
		{"core error passes", core.Terminal("R", "m", core.CodeTimeout), false, core.CodeTimeout},
	}
	for _, c := range cases {
		e := Classify(c.err, ReasonApply, "applying")
		if e.Transient != c.transient || (c.code != "" && !slices.Contains(e.Codes, c.code)) || (c.code == "" && len(e.Codes) > 0) {
			t.Errorf("%s: %+v", c.name, e)
		}
		// Only an API server that refuses connections (or whose name does
		// not resolve) is retried for the engine's grace period alone.
		if e.Unreachable != (c.name == "connection refused") {
			t.Errorf("%s: unreachable=%v", c.name, e.Unreachable)
		}
	}
	noHost := &url.Error{Op: "Get", URL: "https://api.cluster.invalid", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Err: "no such host", Name: "api.cluster.invalid", IsNotFound: true}}}
	if e := Classify(noHost, ReasonApply, "applying"); !e.Transient || !e.Unreachable {
		t.Errorf("no such host: %+v", e)
	}
	if Classify(nil, "", "") != nil {
		t.Error("nil error classified")
	}
}

func TestJoinErrors(t *testing.T) {
	a := core.Transient(ReasonApply, "a")
	b := core.Terminal(ReasonApply, "b", core.CodeConfigurationProblem)
	j := joinErrors([]*core.Error{a, b})
	if j.Transient || j.Message != "a; b" || !slices.Equal(j.Codes, []string{core.CodeConfigurationProblem}) {
		t.Errorf("%+v", j)
	}
	if j := joinErrors([]*core.Error{a, core.Transient(ReasonApply, "c")}); !j.Transient || j.Unreachable {
		t.Errorf("all transient must stay transient: %+v", j)
	}
	down := core.TransientCause(ReasonApply, "d", syscall.ECONNREFUSED)
	if j := joinErrors([]*core.Error{down, down}); !j.Unreachable {
		t.Errorf("all unreachable must stay unreachable: %+v", j)
	}
	if j := joinErrors([]*core.Error{down, a}); j.Unreachable {
		t.Errorf("one reachable error makes the group reachable: %+v", j)
	}
}

func TestFingerprint(t *testing.T) {
	desired := obj(t, "{apiVersion: v1, kind: ConfigMap, metadata: {name: c, labels: {a: b}, creationTimestamp: null}, data: {k: v}, status: {x: 1}}")
	live := obj(t, "{apiVersion: v1, kind: ConfigMap, metadata: {name: c, uid: u, resourceVersion: '1', labels: {a: b}, annotations: {z: z}}, data: {k: v}}")
	base := Fingerprint(desired, live)
	mutate := map[string]func(u *unstructured.Unstructured){
		"changed field":   func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "w", "data", "k") },
		"removed field":   func(u *unstructured.Unstructured) { unstructured.RemoveNestedField(u.Object, "data", "k") },
		"changed label":   func(u *unstructured.Unstructured) { u.SetLabels(map[string]string{"a": "c"}) },
		"removed label":   func(u *unstructured.Unstructured) { u.SetLabels(nil) },
		"other field":     func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "x", "data", "other") },
		"annotation":      func(u *unstructured.Unstructured) { u.SetAnnotations(map[string]string{"z": "y"}) },
		"resourceVersion": func(u *unstructured.Unstructured) { u.SetResourceVersion("2") },
		"status":          func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, int64(2), "status", "x") },
	}
	changes := map[string]bool{"changed field": true, "removed field": true, "changed label": true, "removed label": true}
	for name, m := range mutate {
		l := live.DeepCopy()
		m(l)
		if got := Fingerprint(desired, l) != base; got != changes[name] {
			t.Errorf("%s: fingerprint changed=%v, want %v", name, got, changes[name])
		}
	}
}

func TestGroupMatches(t *testing.T) {
	ref := func(apiVersion, kind, ns, name string) ManagedResourceStatus {
		return ManagedResourceStatus{Resource: corev1.ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name}}
	}
	pre := func(t PredefinedResourceGroupType) DeletionGroupDefinition {
		return DeletionGroupDefinition{PredefinedResourceGroup: &PredefinedResourceGroup{Type: t}}
	}
	custom := DeletionGroupDefinition{CustomResourceGroup: &CustomResourceGroup{Resources: []ResourceType{
		{APIVersion: "v1", Kind: "ConfigMap", Namespaces: []string{"a"}, Names: []string{"x"}},
	}}}
	other := "other"
	secondary := DeletionGroupDefinition{CustomResourceGroup: &CustomResourceGroup{TargetName: &other, Resources: []ResourceType{{APIVersion: "v1", Kind: "ConfigMap"}}}}
	crd := ref("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "c")
	cases := []struct {
		g     DeletionGroupDefinition
		mr    ManagedResourceStatus
		match bool
	}{
		{pre(GroupNamespacedResources), ref("v1", "ConfigMap", "a", "x"), true},
		{pre(GroupNamespacedResources), ref("v1", "Namespace", "", "a"), false},
		{pre(GroupClusterScopedResources), ref("v1", "Namespace", "", "a"), true},
		{pre(GroupClusterScopedResources), crd, false},
		{pre(GroupCRDs), crd, true},
		{pre(GroupEmpty), crd, false},
		{custom, ref("v1", "ConfigMap", "a", "x"), true},
		{custom, ref("v1", "ConfigMap", "b", "x"), false},
		{custom, ref("v1", "ConfigMap", "a", "y"), false},
		{custom, ref("v1", "Secret", "a", "x"), false},
		{secondary, ref("v1", "ConfigMap", "a", "x"), false},
	}
	for i, c := range cases {
		if got := groupMatches(c.g, c.mr); got != c.match {
			t.Errorf("case %d: %v, want %v", i, got, c.match)
		}
	}
}

func TestOwnerFor(t *testing.T) {
	cases := map[[2]string]string{
		{"exec", "item"}:               "exec.item",
		{"my-app", "db_main"}:          "my-app.db_main",
		{"my app", "db"}:               "my-app.db-",
		{"-x", "y"}:                    "x.y-",
		{strings.Repeat("e", 70), "i"}: strings.Repeat("e", 52) + "-",
	}
	seen := map[string]bool{}
	for in, prefix := range cases {
		got := OwnerFor(in[0], in[1])
		if !strings.HasPrefix(got, prefix) || len(got) > 63 || !labelValue.MatchString(got) {
			t.Errorf("OwnerFor(%q, %q) = %q", in[0], in[1], got)
		}
		if seen[got] {
			t.Errorf("duplicate owner %q", got)
		}
		seen[got] = true
	}
	if OwnerFor("a b", "c") == OwnerFor("a-b", "c") {
		t.Error("names that sanitise alike must still differ")
	}
}

func TestDecodeAndExpand(t *testing.T) {
	bad := map[string]string{
		``:     "must be defined",
		`null`: "must be defined",
		`[1]`:  "not a Kubernetes object",
		`{"kind": "ConfigMap", "metadata": {"name": "x"}}`:                              "no apiVersion",
		`{"apiVersion": "a/b/c", "kind": "X", "metadata": {"name": "x"}}`:               "invalid apiVersion",
		`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "x-"}}`: "generateName",
		`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}`:                     "no metadata.name",
	}
	for in, want := range bad {
		_, err := DecodeObject(json.RawMessage(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("the error quotes the manifest: %v", err)
		}
	}
	u, err := DecodeObject(json.RawMessage(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"num": 1}}`))
	if err != nil || u.GetName() != "x" {
		t.Fatal(err)
	}
	if _, ok := u.Object["data"].(map[string]any)["num"].(int64); !ok {
		t.Error("integers must decode as int64")
	}
	docs, err := DecodeYAMLManifests([]byte("---\n# comment only\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n"))
	if err != nil || len(docs) != 2 {
		t.Fatalf("%d docs, %v", len(docs), err)
	}
	ms, err := ExpandManifests([]Manifest{{Manifest: docs[0]}, {Policy: PolicyKeep, Manifest: json.RawMessage(`{"apiVersion": "v1", "kind": "List", "items": [` + string(docs[0]) + `,` + string(docs[1]) + `]}`)}})
	if err != nil || len(ms) != 3 || ms[2].Policy != PolicyKeep {
		t.Errorf("expanded %d: %v", len(ms), err)
	}
}

func TestStateAndRequeueDelay(t *testing.T) {
	if (State{}).Encode() != nil {
		t.Error("the empty state must encode as nil")
	}
	st := State{Managed: ManagedResourceStatusList{{Policy: PolicyManage, Resource: corev1.ObjectReference{Kind: "ConfigMap", Name: "a"}}},
		Pending: &Pending{Job: "j", Since: time.Unix(1, 0).UTC()}}
	back, err := DecodeState(st.Encode())
	if err != nil || back.Managed[0].Resource.Name != "a" || back.Pending.Job != "j" {
		t.Errorf("%+v %v", back, err)
	}
	if _, err := DecodeState([]byte("{")); err == nil {
		t.Error("corrupt state accepted")
	}
	var prev time.Duration
	for i := range 8 {
		d := requeueDelay(i)
		if d < prev || d > 5*time.Second || d <= 0 {
			t.Errorf("requeueDelay(%d) = %v", i, d)
		}
		prev = d
	}
	if requeueDelay(10) != 5*time.Second {
		t.Error("the delay must reach Landscaper's five-second interval")
	}
}

func TestProviderStatusHidesSecretPatches(t *testing.T) {
	l := ManagedResourceStatusList{
		{PatchBeforeDelete: json.RawMessage(`{"data":{"k":"c2VjcmV0"}}`), Resource: corev1.ObjectReference{APIVersion: "v1", Kind: "Secret", Name: "s"}},
		{PatchBeforeDelete: json.RawMessage(`{"data":{"k":"v"}}`), Resource: corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "c"}},
	}
	ps := string(NewProviderStatus("x/v1", l))
	if strings.Contains(ps, "c2VjcmV0") || !strings.Contains(ps, `"k":"v"`) {
		t.Errorf("%s", ps)
	}
	if l[0].PatchBeforeDelete == nil {
		t.Error("ForStatus must not change the list")
	}
}
