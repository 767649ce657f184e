//go:build unix

package manifest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
)

// landscaperObject creates a ConfigMap as Landscaper's manifest deployer
// leaves it for a DeployItem: labelled with the DeployItem's name.
func landscaperObject(t *testing.T, ns, name, owner string) string {
	t.Helper()
	u := create(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s, labels: {%q: %s}}\ndata: {v: old}\n",
		name, ns, kube.ManifestManagedLabel, owner))
	return string(u.GetUID())
}

// An item imported from a Landscaper DeployItem takes over its objects in
// place whatever their policy: same UID, updated (immutable: only
// relabelled), the managed label moved to the item. Objects of other
// owners stay untouched, and what the DeployItem managed but the item no
// longer renders is deleted, not orphaned.
func TestAdoptionOfLandscaperObjects(t *testing.T) {
	ns := namespace(t)
	const di = "hello-world-di-x7k2p"
	uids := map[string]string{}
	for _, name := range []string{"manage", "fallback", "immutable", "keep", "gone"} {
		uids[name] = landscaperObject(t, ns, name, di)
	}
	uids["other"] = landscaperObject(t, ns, "other", "another-di")
	uids["other-listed"] = landscaperObject(t, ns, "other-listed", "another-di")
	entry := func(policy, name string) string {
		return fmt.Sprintf(`
  - policy: %s
    manifest:
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: %s, namespace: %s}
      data: {v: new}`, policy, name, ns)
	}
	it := newItem(t, config("manifests:"+entry("manage", "manage")+entry("fallback", "fallback")+entry("immutable", "immutable")+
		entry("keep", "keep")+entry("fallback", "other")))
	var listed []deployer.ObjectRef
	for _, name := range []string{"manage", "fallback", "immutable", "keep", "gone", "other-listed"} {
		listed = append(listed, deployer.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: name})
	}
	it.req.Adopt = &deployer.Adoption{DeployItem: di, Objects: listed}
	res := it.mustReconcile()

	owner := kube.OwnerFor(it.req.Execution, it.req.Item)
	for name, v := range map[string]string{"manage": "new", "fallback": "new", "immutable": "old", "keep": "new"} {
		u := mustGet(t, cmGVK, ns, name)
		if string(u.GetUID()) != uids[name] {
			t.Errorf("%s was re-created: UID %s, was %s", name, u.GetUID(), uids[name])
		}
		if got := u.GetLabels()[kube.ManifestManagedLabel]; got != owner {
			t.Errorf("%s: managed label %q, want the item's %q", name, got, owner)
		}
		if got := data(t, u)["v"]; got != v {
			t.Errorf("%s: v=%s, want %s", name, got, v)
		}
	}
	for _, name := range []string{"other", "other-listed"} {
		u := mustGet(t, cmGVK, ns, name)
		if u.GetLabels()[kube.ManifestManagedLabel] != "another-di" || data(t, u)["v"] != "old" {
			t.Errorf("%s of another DeployItem was touched: %v %v", name, u.GetLabels(), data(t, u))
		}
	}
	if get(t, cmGVK, ns, "gone") != nil {
		t.Error("gone: managed by the DeployItem, no longer rendered, still exists")
	}
	want := []string{"ConfigMap/fallback", "ConfigMap/immutable", "ConfigMap/keep", "ConfigMap/manage"}
	if got := managedNames(t, res); !slices.Equal(got, want) {
		t.Errorf("managed %v, want %v", got, want)
	}

	// The next run owns them by its own label.
	it.req.Adopt = nil
	it.mustReconcile()
	if d := it.drift(); d != "" {
		t.Errorf("drift after adoption: %s", d)
	}
	it.mustDelete()
	for name, exists := range map[string]bool{"manage": false, "fallback": false, "immutable": false, "keep": true, "other": true, "other-listed": true} {
		if (get(t, cmGVK, ns, name) != nil) != exists {
			t.Errorf("%s: exists=%v after delete, want %v", name, !exists, exists)
		}
	}
}

// An item imported but destroyed before it ever ran deletes what the
// DeployItem managed, and only what still carries its label.
func TestDeleteBeforeTheFirstRunDeletesWhatWouldBeAdopted(t *testing.T) {
	ns := namespace(t)
	const di = "hello-world-di-d3l"
	landscaperObject(t, ns, "mine", di)
	landscaperObject(t, ns, "taken", "another-di")
	it := newItem(t, config("manifests:"+cm(ns, "mine", "{v: new}")))
	it.req.Adopt = &deployer.Adoption{DeployItem: di, Objects: []deployer.ObjectRef{
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "mine"},
		{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "taken"},
	}}
	it.mustDelete()
	if get(t, cmGVK, ns, "mine") != nil {
		t.Error("mine still exists")
	}
	if get(t, cmGVK, ns, "taken") == nil {
		t.Error("taken, relabelled by another DeployItem, was deleted")
	}
}

// An item moved from another provider's resource (kubernetes_manifest,
// kubectl_manifest) takes over the objects that resource's state recorded,
// which carry no label to know them by: the recorded objects are adopted
// by group, kind, namespace and name, in place whatever their policy, and
// deleted when no longer rendered; an object not recorded is not the
// item's, even when the item renders it as fallback.
func TestAdoptionOfMovedObjects(t *testing.T) {
	ns := namespace(t)
	uids := map[string]string{}
	for _, name := range []string{"fallback", "immutable", "gone", "unrecorded"} {
		u := create(t, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {v: old}\n", name, ns))
		uids[name] = string(u.GetUID())
	}
	entry := func(policy, name string) string {
		return fmt.Sprintf("\n  - policy: %s\n    manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: %s, namespace: %s}, data: {v: new}}",
			policy, name, ns)
	}
	it := newItem(t, config("manifests:"+entry("fallback", "fallback")+entry("immutable", "immutable")+entry("fallback", "unrecorded")))
	var recorded []deployer.ObjectRef
	for _, name := range []string{"fallback", "immutable", "gone"} {
		recorded = append(recorded, deployer.ObjectRef{APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: name})
	}
	it.req.Adopt = &deployer.Adoption{Source: "kubernetes_manifest", Objects: recorded}
	it.mustReconcile()

	owner := kube.OwnerFor(it.req.Execution, it.req.Item)
	for name, v := range map[string]string{"fallback": "new", "immutable": "old"} {
		u := mustGet(t, cmGVK, ns, name)
		if string(u.GetUID()) != uids[name] || u.GetLabels()[kube.ManifestManagedLabel] != owner || data(t, u)["v"] != v {
			t.Errorf("%s: UID %s (was %s), label %q (want %q), v=%s (want %s)", name, u.GetUID(), uids[name],
				u.GetLabels()[kube.ManifestManagedLabel], owner, data(t, u)["v"], v)
		}
	}
	if u := mustGet(t, cmGVK, ns, "unrecorded"); len(u.GetLabels()) > 0 || data(t, u)["v"] != "old" {
		t.Errorf("unrecorded, not the moved resource's, was touched: %v %v", u.GetLabels(), data(t, u))
	}
	if get(t, cmGVK, ns, "gone") != nil {
		t.Error("gone: recorded by the moved resource, no longer rendered, still exists")
	}
}
