//go:build unix

package lscluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/testenv"
)

// The writer's tests run against Landscaper's own controllers: a control
// plane of its own (testenv.SharedLandscaper), started by the first test
// that asks for it.
var landscaper testenv.SharedLandscaper

// remote is one test's namespace of the Landscaper cluster.
type remote struct {
	t  *testing.T
	ns string
	w  *Writer
	d  dynamic.Interface
	// kubeconfig is Landscaper's own cluster, the target of every item.
	kubeconfig string
	own        Owner
	// uid is the Installation the last run wrote.
	uid types.UID
}

var remoteSeq atomic.Int64

func newRemote(t *testing.T) *remote {
	t.Helper()
	env, _ := landscaper.Get(t)
	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(env.Kubeconfig()))
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWriter(rc)
	if err != nil {
		t.Fatal(err)
	}
	w.Poll = 100 * time.Millisecond
	d, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	r := &remote{t: t, ns: fmt.Sprintf("remote-%d", remoteSeq.Add(1)), w: w, d: d, kubeconfig: env.Kubeconfig(),
		own: Owner{ID: NewOwnerID(), Installation: "hello"}}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": r.ns}}}
	if _, err := d.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return r
}

var configMapsOf = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func (r *remote) configMap(name string) (*unstructured.Unstructured, error) {
	return r.d.Resource(configMapsOf).Namespace(r.ns).Get(r.t.Context(), name, metav1.GetOptions{})
}

func (r *remote) target() Target {
	cfg, _ := json.Marshal(map[string]any{"kubeconfig": r.kubeconfig})
	return Target{Type: "landscaper.gardener.cloud/kubernetes-cluster", Config: cfg, Labels: map[string]string{"env": "test"}}
}

// greetingBlueprint writes a ConfigMap of the greeting (a data import)
// and the password (a secret import) into the namespace it imports, and
// exports the greeting and the cluster it was given.
const greetingBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: greeting, type: data, schema: {type: string}}
  - {name: password, type: data, schema: {type: string}}
  - {name: namespace, type: data, schema: {type: string}}
exports:
  - {name: greeted, type: data, schema: {type: string}}
  - {name: cluster-out, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
deployExecutions:
  - name: default
    type: GoTemplate
    file: /deploy.yaml
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        greeted: {{ .values.deployitems.hello.greeting | quote }}
        cluster-out: {{ toJson .imports.cluster.spec }}
`

const greetingDeploy = `deployItems:
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
            metadata: {name: {{ .imports.greeting | lower | replace " " "-" }}, namespace: {{ .imports.namespace }}}
            data: {greeting: {{ .imports.greeting | quote }}, password: {{ .imports.password | b64enc | quote }}}
      exports:
        exports:
          - key: greeting
            fromResource: {apiVersion: v1, kind: ConfigMap, name: {{ .imports.greeting | lower | replace " " "-" }}, namespace: {{ .imports.namespace }}}
            jsonPath: .data.greeting
`

func (r *remote) spec(greeting string) Spec {
	return Spec{
		Namespace: r.ns, Name: "hello",
		Files:         map[string][]byte{"blueprint.yaml": []byte(greetingBlueprint), "deploy.yaml": []byte(greetingDeploy)},
		Data:          map[string]any{"greeting": greeting, "namespace": r.ns},
		SecretData:    map[string]any{"password": "s3cret-value"},
		Targets:       map[string]Target{"cluster": r.target()},
		DataExports:   []string{"greeted"},
		TargetExports: []string{"cluster-out"},
	}
}

func (r *remote) run(s Spec) *Tree {
	r.t.Helper()
	objs, err := s.Objects()
	if err != nil {
		r.t.Fatal(err)
	}
	if r.uid, err = r.w.Apply(r.t.Context(), r.own, objs); err != nil {
		r.t.Fatal(err)
	}
	before, err := r.w.Reconcile(r.t.Context(), s.Namespace, s.Name, r.uid)
	if err != nil {
		r.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(r.t.Context(), 3*time.Minute)
	defer cancel()
	tree, err := r.w.Wait(ctx, s.Namespace, s.Name, before, r.uid)
	if err != nil {
		r.t.Fatal(err)
	}
	return tree
}

// TestWriterRunsAnInstallationOnLandscaper hands an installation to
// Landscaper's controllers: the objects written, a job started and waited
// for, the exports read, the objects read back as written, an update, and
// the uninstall that removes what the deploy item installed.
func TestWriterRunsAnInstallationOnLandscaper(t *testing.T) {
	r := newRemote(t)
	s := r.spec("Hello World")
	tree := r.run(s)
	if tree.Phase != phaseSucceeded {
		t.Fatalf("phase %s: %+v", tree.Phase, tree)
	}
	if di := tree.DeployItems["hello"]; di.Phase != phaseSucceeded || di.JobIDFinished != tree.JobID {
		t.Errorf("deploy item hello: %+v (job %s)", di, tree.JobID)
	}
	cm, err := r.configMap("hello-world")
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(cm.Object, "data", "password"); got != "czNjcmV0LXZhbHVl" {
		t.Errorf("the secret import reached the ConfigMap as %q", got)
	}
	data, targets, err := r.w.Exports(t.Context(), s, r.uid)
	if err != nil {
		t.Fatal(err)
	}
	if data["greeted"] != "Hello World" {
		t.Errorf("exports %v", data)
	}
	out := targets["cluster-out"]
	if out.Type != "landscaper.gardener.cloud/kubernetes-cluster" || out.Secret != TargetSecret("hello", "cluster") ||
		!strings.Contains(string(out.Config), "kubeconfig") {
		t.Errorf("target export %+v", out)
	}

	objs, _ := s.Objects()
	live, err := r.w.Live(t.Context(), objs)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		l, ok := live[o.Key()]
		if !ok || !Equal(o, l) {
			t.Errorf("%s reads back as\n%s\nwritten as\n%s", o.Key(), l.Masked(), o.Masked())
		}
	}

	recs := make([]Object, len(objs))
	for i, o := range objs {
		recs[i] = o.Record()
	}
	if d, err := r.w.Drifted(t.Context(), recs); err != nil || len(d) > 0 {
		t.Errorf("drifted right after the apply: %v %v", d, err)
	}
	// Someone changes the password's Secret and a DataObject behind the
	// writer's back.
	for _, p := range []struct {
		gvr  schema.GroupVersionResource
		name string
		body string
	}{
		{secretsGVR, ObjectName("hello", "import", "password"), `{"data":{"value":"ImNoYW5nZWQi"}}`},
		{dataObjectsGVR, ObjectName("hello", "import", "greeting"), `{"data":"Hello Drift"}`},
	} {
		if _, err := r.d.Resource(p.gvr).Namespace(r.ns).Patch(t.Context(), p.name, types.MergePatchType, []byte(p.body), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A record keeps no Secret data: SecretsChanged asks the cluster.
	d, err := r.w.Drifted(t.Context(), recs)
	if want := []string{"DataObject/hello.import.greeting"}; err != nil || !slices.Equal(d, want) {
		t.Errorf("drifted: %v %v, want %v", d, err, want)
	}
	if d, err := r.w.SecretsChanged(t.Context(), objs); err != nil || !slices.Equal(d, []string{"Secret/hello.import.password"}) {
		t.Errorf("Secrets changed: %v %v", d, err)
	}

	s2 := r.spec("Hello Again")
	if tree := r.run(s2); tree.Phase != phaseSucceeded {
		t.Fatalf("update: phase %s", tree.Phase)
	}
	if _, err := r.configMap("hello-again"); err != nil {
		t.Errorf("after the update: %v", err)
	}
	if _, err := r.configMap("hello-world"); err == nil {
		t.Errorf("the ConfigMap the update no longer renders is still there")
	}

	tree, err = r.w.Uninstall(t.Context(), r.own, r.ns, "hello")
	if err != nil || tree != nil {
		t.Fatalf("Uninstall: %v, %+v", err, tree)
	}
	if _, err := r.configMap("hello-again"); err == nil {
		t.Errorf("the ConfigMap is still there after the uninstall")
	}
	refs := make([]ObjectRef, len(objs))
	for i, o := range objs {
		refs[i] = o.Ref()
	}
	if notOwned, err := r.w.Delete(t.Context(), r.own, refs); err != nil || notOwned != nil {
		t.Fatal(err)
	}
	if live, err := r.w.Live(t.Context(), objs); err != nil || len(live) > 0 {
		t.Errorf("left behind: %v %v", live, err)
	}
}

// TestWriterReportsFailedDeployItems: a deploy item Landscaper's deployer
// cannot apply fails the installation, and the tree names it with its
// error.
func TestWriterReportsFailedDeployItems(t *testing.T) {
	r := newRemote(t)
	s := r.spec("Hello World")
	// Landscaper retries an object it cannot apply until the item's
	// timeout, then fails it.
	s.Files["deploy.yaml"] = []byte(strings.NewReplacer("kind: ConfigMap\n", "kind: NoSuchKind\n",
		"    target: {import: cluster}", "    target: {import: cluster}\n    timeout: 2s").Replace(greetingDeploy))
	tree := r.run(s)
	if tree.Phase != phaseFailed {
		t.Fatalf("phase %s", tree.Phase)
	}
	di := tree.DeployItems["hello"]
	if di.Phase != phaseFailed || di.LastError == nil || di.LastError.Message == "" {
		t.Fatalf("deploy item hello: %+v", di)
	}
	t.Logf("error: %+v", *di.LastError)
	if _, err := r.w.Uninstall(t.Context(), r.own, r.ns, "hello"); err != nil {
		t.Fatal(err)
	}
}

// TestWriterReleaseKeepsWhatWasInstalled: Release removes the tree from
// Landscaper and leaves the ConfigMap, labelled by Landscaper's DeployItem
// as the returned adoption says.
func TestWriterReleaseKeepsWhatWasInstalled(t *testing.T) {
	r := newRemote(t)
	s := r.spec("Hello World")
	if tree := r.run(s); tree.Phase != phaseSucceeded {
		t.Fatalf("phase %s", tree.Phase)
	}
	before, err := r.configMap("hello-world")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := r.w.Release(t.Context(), r.own, r.ns, "hello")
	if err != nil {
		t.Fatal(err)
	}
	a := inst.Adoptions()["hello"]
	if a == nil || len(a.Objects) != 1 || a.Objects[0].Name != "hello-world" {
		t.Fatalf("adoption %+v", a)
	}
	after, err := r.configMap("hello-world")
	if err != nil {
		t.Fatalf("the ConfigMap went with the Installation: %v", err)
	}
	if after.GetUID() != before.GetUID() || after.GetLabels()[ManifestManagedLabel] != a.DeployItem {
		t.Errorf("ConfigMap %s labelled %v; adoption from %s", after.GetUID(), after.GetLabels(), a.DeployItem)
	}
	if tree, err := r.w.Tree(t.Context(), r.ns, "hello"); err != nil || tree != nil {
		t.Errorf("Installation still there: %+v %v", tree, err)
	}
}

// TestWriterUninstallRespectsContext: a wait that ends with its context
// says so and returns where Landscaper got to.
func TestWriterUninstallRespectsContext(t *testing.T) {
	r := newRemote(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.w.Wait(ctx, r.ns, "nothing", "", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait on a cancelled context: %v", err)
	}
}
