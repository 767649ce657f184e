package kube

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A change names the paths that differ: into maps, into lists of equal
// length by index, a list whose length changed as a whole; the server's
// bookkeeping and the status do not count.
func TestChangeOfNamesChangedPaths(t *testing.T) {
	live := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "resourceVersion": "1", "generation": int64(1)},
		"spec": map[string]any{"replicas": int64(1), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "c", "image": "v1"}}, "volumes": []any{}}}},
		"status": map[string]any{"readyReplicas": int64(1)},
	}}
	written := live.DeepCopy()
	written.Object["metadata"].(map[string]any)["resourceVersion"] = "2" //nolint:forcetypeassert // built above
	written.Object["metadata"].(map[string]any)["generation"] = int64(2) //nolint:forcetypeassert // built above
	written.Object["status"] = map[string]any{}
	spec := written.Object["spec"].(map[string]any) //nolint:forcetypeassert // built above
	spec["replicas"] = int64(3)
	tpl := spec["template"].(map[string]any)["spec"].(map[string]any) //nolint:forcetypeassert // built above
	tpl["containers"] = []any{map[string]any{"name": "c", "image": "v2"}}
	tpl["volumes"] = []any{map[string]any{"name": "data"}}
	c := changeOf(live, live, written)
	want := []string{"spec.replicas", "spec.template.spec.containers[0].image", "spec.template.spec.volumes"}
	if c.Action != ActionUpdate || !slices.Equal(c.Fields, want) || c.Object != "apps/v1 Deployment ns/web" {
		t.Fatalf("got %+v, want update of %v", c, want)
	}
	if c.Summary() != "update: spec.replicas, spec.template.spec.containers[0].image, spec.template.spec.volumes" {
		t.Errorf("summary %q", c.Summary())
	}
	if c := changeOf(live, live, live.DeepCopy()); c.Action != ActionUnchanged || c.Summary() != "unchanged" {
		t.Errorf("an equal write: %+v", c)
	}
	if c := changeOf(live, nil, live); c.Action != ActionCreate {
		t.Errorf("no live object: %+v", c)
	}
}
