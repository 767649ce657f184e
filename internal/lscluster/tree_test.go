//go:build unix

package lscluster

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
)

// The guided tour's subinstallations/export-import: a root installation
// whose blueprint renders three sub-installations, each with a manifest
// deploy item, as Landscaper's controllers leave them.
func TestReadSubinstallations(t *testing.T) {
	c := newCluster(t)
	c.write(targetYAML("my-cluster"))
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Context
metadata:
  name: landscaper-examples
repositoryContext:
  baseUrl: europe-docker.pkg.dev/sap-gcp-cp-k8s-stable-hub/landscaper-examples/examples
  type: ociRegistry
`)
	c.write("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DataObject\nmetadata:\n  name: do-configmap-name-base\ndata: example-configmap\n")
	subs := []string{"subinst1", "subinst2", "subinst3"}
	objects := map[string]string{}
	cache := ""
	for i, s := range subs {
		objects[s] = fmt.Sprintf("%s-%05d", s, i+7)
		cache += fmt.Sprintf("    - specName: %s\n      objectName: %s\n", s, objects[s])
	}
	rootUID := c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata:
  name: export-import
  namespace: ${namespace}
  annotations:
    landscaper.gardener.cloud/operation: reconcile
spec:
  context: landscaper-examples
  componentDescriptor:
    ref:
      componentName: github.com/gardener/landscaper-examples/guided-tour/export-import
      version: 1.0.0
  blueprint:
    ref:
      resourceName: blueprint-root
  imports:
    targets:
      - name: cluster
        target: my-cluster
    data:
      - name: configmap-name-base
        dataRef: do-configmap-name-base
  exports:
    data:
      - name: configmap-names
        dataRef: do-configmap-names
status:
  observedGeneration: 1
  phase: Succeeded
  subInstCache:
    activeSubs:
` + cache)
	for i, s := range subs {
		// A sub-installation as Landscaper creates it: generated name,
		// owned by the parent, labelled and annotated with its name in
		// the blueprint, its blueprint a resource of the same component.
		uid := c.write(fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata:
  name: %[1]s
  labels:
    landscaper.gardener.cloud/encompassed-by: export-import
  annotations:
    landscaper.gardener.cloud/subinstallation-name: %[2]s
  ownerReferences:
  - apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: Installation
    name: export-import
    uid: %[3]s
    controller: true
    blockOwnerDeletion: true
spec:
  context: landscaper-examples
  componentDescriptor:
    ref:
      componentName: github.com/gardener/landscaper-examples/guided-tour/export-import
      version: 1.0.0
  blueprint:
    ref:
      resourceName: blueprint-sub
  imports:
    targets:
      - name: cluster
        target: cluster
    data:
      - name: configmap-name-in
        dataRef: configmap-name-%[4]d
status:
  observedGeneration: 1
  phase: Succeeded
  executionRef:
    name: %[1]s
    namespace: ${namespace}
`, objects[s], s, rootUID, i+1))
		c.execution(objects[s], uid, true, manifestItem)
	}
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: DataObject
metadata:
  name: do-configmap-names
  labels:
    data.landscaper.gardener.cloud/source: Inst.export-import
    data.landscaper.gardener.cloud/sourceType: export
    data.landscaper.gardener.cloud/key: do-configmap-names
  ownerReferences:
  - apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: Installation
    name: export-import
    uid: ` + rootUID + `
data: [example-configmap, example-configmap-x, example-configmap-x-x]
`)

	inst := c.mustRead("export-import")
	if inst.Execution != nil {
		t.Errorf("root execution = %+v, want none (its blueprint deploys nothing itself)", inst.Execution)
	}
	var names []string
	for n, sub := range inst.Subinstallations {
		names = append(names, n)
		if sub.Name != n || sub.Object != objects[n] || sub.Phase != "Succeeded" || sub.Blueprint.Ref != "blueprint-sub" || len(sub.Subinstallations) != 0 {
			t.Errorf("sub-installation %s = %+v", n, sub)
		}
		wantItem := DeployItem{Object: lstest.DeployItemName(objects[n], "default-deploy-item"), Type: TypeManifest, Target: "my-cluster", Phase: "Succeeded",
			JobIDFinished: lstest.JobID, ManagedLabel: ManifestManagedLabel, ManagedResources: []ObjectRef{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "example", Name: "hello-world"}}}
		if sub.Execution != nil {
			di := sub.Execution.DeployItems["default-deploy-item"]
			if !bytes.Contains(di.Config, []byte(`"kind":"ConfigMap"`)) {
				t.Errorf("sub-installation %s: the item's config is not read: %s", n, di.Config)
			}
			di.Config = nil
			sub.Execution.DeployItems["default-deploy-item"] = di
		}
		if sub.Execution == nil || !reflect.DeepEqual(sub.Execution.DeployItems, map[string]DeployItem{"default-deploy-item": wantItem}) {
			t.Errorf("sub-installation %s: execution = %+v", n, sub.Execution)
		}
	}
	sort.Strings(names)
	if !reflect.DeepEqual(names, subs) {
		t.Errorf("sub-installations %v, want %v", names, subs)
	}
	var keys []string
	for k, di := range inst.DeployItems() {
		keys = append(keys, k+"="+di.Object)
	}
	sort.Strings(keys)
	wantKeys := []string{
		"subinst1/default-deploy-item=" + lstest.DeployItemName(objects["subinst1"], "default-deploy-item"),
		"subinst2/default-deploy-item=" + lstest.DeployItemName(objects["subinst2"], "default-deploy-item"),
		"subinst3/default-deploy-item=" + lstest.DeployItemName(objects["subinst3"], "default-deploy-item"),
	}
	if !reflect.DeepEqual(keys, wantKeys) {
		t.Errorf("deploy items by key = %v, want %v", keys, wantKeys)
	}
	wantExports := map[string]Export{"configmap-names": {DataRef: "do-configmap-names", Known: true,
		Value: []any{"example-configmap", "example-configmap-x", "example-configmap-x-x"}}}
	if !reflect.DeepEqual(inst.Exports, wantExports) {
		t.Errorf("exports = %#v", inst.Exports)
	}
	if len(inst.Warnings) != 0 {
		t.Errorf("warnings: %q", inst.Warnings)
	}

	// Reading a sub-installation is refused: it comes with its root.
	_, err := c.read(objects["subinst2"])
	wantErr(t, err, nil, "Installation "+c.ns+"/"+objects["subinst2"]+` is a sub-installation of "export-import"`)

	// Without subInstCache (older Landscapers), sub-installations are
	// found by their label.
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata:
  name: no-cache
spec:
  blueprint:
    ref:
      resourceName: blueprint-root
status:
  observedGeneration: 1
  phase: Succeeded
`)
	// The label alone does not make a sub-installation: the owner decides.
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata:
  name: stray
  labels:
    landscaper.gardener.cloud/encompassed-by: no-cache
spec:
  blueprint:
    ref:
      resourceName: blueprint-sub
`)
	got := c.mustRead("no-cache")
	if len(got.Subinstallations) != 0 {
		t.Errorf("sub-installations of no-cache = %+v, want none", got.Subinstallations)
	}

	// The namespace's root installations are what can be taken over: by
	// owner, as Read tells them; the label alone makes none a sub-installation.
	r, err := New(restConfig())
	if err != nil {
		t.Fatal(err)
	}
	roots, err := r.Roots(t.Context(), c.ns)
	if want := []string{"export-import", "no-cache", "stray"}; err != nil || !reflect.DeepEqual(roots, want) {
		t.Errorf("roots of %s = %q (%v), want %q", c.ns, roots, err, want)
	}
	if roots, err := r.Roots(t.Context(), "no-such-namespace"); err != nil || len(roots) != 0 {
		t.Errorf("roots of a namespace without installations = %q (%v), want none", roots, err)
	}
}
