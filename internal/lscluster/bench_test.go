//go:build unix

package lscluster

import (
	"fmt"
	"testing"
)

// BenchmarkReadTree reads a root installation with 50 sub-installations
// of two deploy items each (251 objects), as a fleet blueprint leaves
// them: the cost of one import of a large installation.
func BenchmarkReadTree(b *testing.B) {
	c := newCluster(b)
	write := c.write
	write(targetYAML("my-cluster"))
	const n = 50
	cache := ""
	for i := range n {
		cache += fmt.Sprintf("    - specName: member-%02d\n      objectName: member-%02d-x\n", i, i)
	}
	root := write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata:
  name: fleet
spec:
  blueprint:
    ref:
      resourceName: blueprint
  imports:
    targets:
      - name: cluster
        target: my-cluster
status:
  observedGeneration: 1
  phase: Succeeded
  subInstCache:
    activeSubs:
` + cache)
	second := `name: second
type: landscaper.gardener.cloud/helm
target:
  name: my-cluster
config:
  apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1
  kind: ProviderConfiguration
  name: app
  namespace: example
`
	for i := range n {
		obj := fmt.Sprintf("member-%02d-x", i)
		uid := write(fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata:
  name: %s
  ownerReferences:
  - apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: Installation
    name: fleet
    uid: %s
spec:
  blueprint:
    ref:
      resourceName: blueprint-member
status:
  observedGeneration: 1
  phase: Succeeded
  executionRef:
    name: %s
`, obj, root, obj))
		c.execution(obj, uid, true, manifestItem, second)
	}
	r, err := New(restConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		inst, err := r.Read(b.Context(), c.ns, "fleet")
		if err != nil {
			b.Fatal(err)
		}
		if len(inst.Subinstallations) != n {
			b.Fatalf("%d sub-installations, want %d", len(inst.Subinstallations), n)
		}
	}
}
