//go:build unix

package lscluster

import (
	"encoding/json"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
)

// driftSetup writes an installation with a data, a secret and a target
// import (and so every kind a remote installation writes but the
// overwrites) in a namespace of its own, and returns the writer, the
// owner it wrote as, the objects and their records.
func driftSetup(t *testing.T) (c *cluster, w *Writer, own Owner, objs, recs []Object) {
	t.Helper()
	c = newCluster(t)
	w, err := NewWriter(restConfig())
	if err != nil {
		t.Fatal(err)
	}
	own = Owner{ID: NewOwnerID(), Installation: "app"}
	cfg, _ := json.Marshal(map[string]any{"kubeconfig": targetKubeconfig})
	s := Spec{Namespace: c.ns, Name: "app", Files: testBlueprint, Data: map[string]any{"replicas": 2},
		SecretData: map[string]any{"password": "pw"},
		Targets:    map[string]Target{"cluster": {Type: "landscaper.gardener.cloud/kubernetes-cluster", Config: cfg, Labels: map[string]string{"env": "test"}}},
		Component: &ComponentRef{Name: "github.com/acme/app", Version: "v1.0.0",
			RepositoryContext: map[string]any{"type": "OCIRegistry", "baseUrl": "r.example/ocm"}}}
	if objs, err = s.Objects(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Apply(t.Context(), own, objs); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		recs = append(recs, o.Record())
	}
	return c, w, own, objs, recs
}

// patchAs merge-patches an object as another field manager would
// (kubectl edit, a controller of someone else's).
func (c *cluster) patchAs(t *testing.T, kind, name string, patch map[string]any, subresources ...string) {
	t.Helper()
	body, _ := json.Marshal(patch)
	if _, err := c.d.Resource(lstest.GVRs[kind]).Namespace(c.ns).Patch(t.Context(), name, types.MergePatchType, body,
		metav1.PatchOptions{FieldManager: "kubectl-edit"}, subresources...); err != nil {
		t.Fatalf("patching %s %s: %v", kind, name, err)
	}
}

func (c *cluster) get(t *testing.T, kind, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := c.d.Resource(lstest.GVRs[kind]).Namespace(c.ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Fields someone else adds to the objects the provider wrote, which
// Landscaper acts on, are drift; and the provider's next apply (Apply,
// then Restore) takes them back. Server-side apply alone leaves another
// manager's fields in place (second remote review, R2).
func TestDriftedSeesWhatOthersAddAndRestoreTakesItBack(t *testing.T) {
	c, w, own, objs, recs := driftSetup(t)
	if d, err := w.Drifted(t.Context(), recs); err != nil || len(d) > 0 {
		t.Fatalf("drifted right after the apply: %v %v", d, err)
	}
	ann := func(k, v string) map[string]any {
		return map[string]any{"metadata": map[string]any{"annotations": map[string]any{k: v}}}
	}
	for _, tc := range []struct {
		name, kind, object string
		patch              map[string]any
		// path is where the added field sits.
		path []string
	}{
		// Landscaper templates importDataMappings into the imports.
		{"import data mappings", "Installation", "app",
			map[string]any{"spec": map[string]any{"importDataMappings": map[string]any{"replicas": 0}}}, []string{"spec", "importDataMappings"}},
		{"export data mappings", "Installation", "app",
			map[string]any{"spec": map[string]any{"exportDataMappings": map[string]any{"out": "x"}}}, []string{"spec", "exportDataMappings"}},
		{"a blueprint reference next to the inline one", "Installation", "app",
			map[string]any{"spec": map[string]any{"blueprint": map[string]any{"ref": map[string]any{"resourceName": "other"}}}},
			[]string{"spec", "blueprint", "ref"}},
		{"delete-without-uninstall", "Installation", "app", ann(deleteWithoutUninstall, "true"),
			[]string{"metadata", "annotations", deleteWithoutUninstall}},
		{"an operation other than reconcile", "Installation", "app", ann(OperationAnnotation, "force-reconcile"),
			[]string{"metadata", "annotations", OperationAnnotation}},
		{"a root installation made a sub-installation", "Installation", "app",
			map[string]any{"metadata": map[string]any{"labels": map[string]any{labelEncompassedBy: "other"}}},
			[]string{"metadata", "labels", labelEncompassedBy}},
		{"component version overwrites on the Context", "Context", "app.context",
			map[string]any{"componentVersionOverwrites": "someone-elses"}, []string{"componentVersionOverwrites"}},
		{"registry pull secrets on the Context", "Context", "app.context",
			map[string]any{"registryPullSecrets": []any{map[string]any{"name": "theirs"}}}, []string{"registryPullSecrets"}},
		{"configurations on the Context", "Context", "app.context",
			map[string]any{"configurations": map[string]any{"helm": map[string]any{"x": 1}}}, []string{"configurations"}},
		{"a Target's config next to its secretRef", "Target", "app.target.cluster",
			map[string]any{"spec": map[string]any{"config": map[string]any{"kubeconfig": "theirs"}}}, []string{"spec", "config"}},
		{"a label Landscaper's cleanup selects DataObjects by", "DataObject", "app.import.replicas",
			map[string]any{"metadata": map[string]any{"labels": map[string]any{labelDOContext: "Inst.other"}}},
			[]string{"metadata", "labels", labelDOContext}},
		{"a key added to a Secret", "Secret", "app.import.password",
			map[string]any{"data": map[string]any{"extra": "eHg="}}, []string{"data", "extra"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.patchAs(t, tc.kind, tc.object, tc.patch)
			d, err := w.Drifted(t.Context(), recs)
			if want := []string{tc.kind + "/" + tc.object}; err != nil || !slices.Equal(d, want) {
				t.Errorf("drifted %v %v, want %v", d, err, want)
			}
			if _, err := w.Apply(t.Context(), own, objs); err != nil {
				t.Fatal(err)
			}
			restored, err := w.Restore(t.Context(), own, objs)
			if want := []string{tc.kind + "/" + tc.object}; err != nil || !slices.Equal(restored, want) {
				t.Fatalf("restored %v %v, want %v", restored, err, want)
			}
			if v, found, _ := unstructured.NestedFieldNoCopy(c.get(t, tc.kind, tc.object).Object, tc.path...); found {
				t.Errorf("the apply left %v = %v", tc.path, v)
			}
			if d, err := w.Drifted(t.Context(), recs); err != nil || len(d) > 0 {
				t.Errorf("drifted after the apply: %v %v", d, err)
			}
		})
	}
}

// What Landscaper writes on the objects during a job (status, finalizer,
// the reconcile operation and its reason) and what means nothing to it
// (another tool's annotations and labels) is no drift, and stays.
func TestDriftedIgnoresWhatLandscaperAndOthersWriteHarmlessly(t *testing.T) {
	c, w, own, objs, recs := driftSetup(t)
	c.patchAs(t, "Installation", "app", map[string]any{"metadata": map[string]any{
		"finalizers":  []any{"finalizer.landscaper.gardener.cloud"},
		"labels":      map[string]any{"team": "a"},
		"annotations": map[string]any{OperationAnnotation: ReconcileOperation, group + "/reconcile-reason": "retry", "example.com/note": "x"},
	}})
	c.patchAs(t, "Installation", "app", map[string]any{"status": map[string]any{"phase": "Succeeded", "jobID": "j1", "observedGeneration": 1}}, "status")
	// Landscaper updates the Installation from its Go types, which write
	// the exports the provider leaves out as an empty object.
	c.patchAs(t, "Installation", "app", map[string]any{"spec": map[string]any{"exports": map[string]any{}}})
	c.patchAs(t, "Target", "app.target.cluster", map[string]any{"metadata": map[string]any{"annotations": map[string]any{"argocd.argoproj.io/tracking-id": "x"}}})
	if d, err := w.Drifted(t.Context(), recs); err != nil || len(d) > 0 {
		t.Errorf("drifted: %v %v", d, err)
	}
	if _, err := w.Apply(t.Context(), own, objs); err != nil {
		t.Fatal(err)
	}
	if restored, err := w.Restore(t.Context(), own, objs); err != nil || len(restored) > 0 {
		t.Fatalf("restored %v %v: nothing Landscaper acts on changed", restored, err)
	}
	inst := c.get(t, "Installation", "app")
	if inst.GetAnnotations()["example.com/note"] != "x" || inst.GetLabels()["team"] != "a" || len(inst.GetFinalizers()) != 1 {
		t.Errorf("the apply took away what is not the provider's: %v %v %v", inst.GetAnnotations(), inst.GetLabels(), inst.GetFinalizers())
	}
	if phase, _, _ := unstructured.NestedString(inst.Object, "status", "phase"); phase != "Succeeded" {
		t.Errorf("status.phase %q after the apply", phase)
	}
	if c.get(t, "Target", "app.target.cluster").GetAnnotations()["argocd.argoproj.io/tracking-id"] != "x" {
		t.Errorf("the apply took another tool's annotation off the Target")
	}
}

// A destroy uninstalls even when someone else annotated the Installation
// for Landscaper to delete it without uninstalling: the destroy would
// report success and leave everything deployed (second remote review,
// R2).
func TestUninstallTakesBackAnotherManagersDeleteWithoutUninstall(t *testing.T) {
	r := newRemote(t)
	s := r.spec("Hello Keep")
	if tree := r.run(s); tree.Phase != phaseSucceeded {
		t.Fatalf("phase %s", tree.Phase)
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{deleteWithoutUninstall: "true"}}})
	if _, err := r.d.Resource(installationsGVR).Namespace(r.ns).Patch(t.Context(), "hello", types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	if tree, err := r.w.Uninstall(t.Context(), r.own, r.ns, "hello"); err != nil || tree != nil {
		t.Fatalf("Uninstall: %v, %+v", err, tree)
	}
	if _, err := r.configMap("hello-keep"); err == nil {
		t.Errorf("the ConfigMap the installation deployed is still there after the uninstall")
	}
}
