package e2e

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
)

// writeExecution writes the Execution of the Installation inst (of the
// UID) in ns as Landscaper leaves it once Succeeded, with its one deploy
// item default-deploy-item: the spec item and the provider status
// (top-level YAML, newline-terminated) its deployer wrote, if any. It
// returns the DeployItem's name, the value of the deployer's managed label.
func (c *landscaperCluster) writeExecution(ns, inst string, uid types.UID, item, providerStatus string) string {
	c.t.Helper()
	in := &lstest.Cluster{T: c.t, D: c.d, Namespace: ns}
	return in.Execution(inst, uid, true, "name: default-deploy-item\n"+item+providerStatus)["default-deploy-item"]
}

// importConfig is the configuration that imports the installation id
// (landscaper/<namespace>/<name>) with the kubeconfig in the workspace
// as the landscaper and my-cluster targets.
func importConfig(id string) string {
	return fmt.Sprintf(`
provider "landscaper" {
  targets = {
    landscaper = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
    my-cluster = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
  }
}

import {
  to = landscaper_installation.hello
  id = %q
}
`, id)
}

// writeInstallation writes the Installation name in ns as Landscaper
// leaves it once Succeeded: the default Context, the inline blueprint, the target my-cluster
// imported as cluster, further imports (lines under imports, indented
// four spaces, newline-terminated) if any, and its Execution of the
// same name. It returns the Installation.
func (c *landscaperCluster) writeInstallation(ns, name, imports, blueprint string) *unstructured.Unstructured {
	c.t.Helper()
	return c.write(installationYAML(ns, name, imports, blueprint))
}

// installationYAML is the Installation writeInstallation writes.
func installationYAML(ns, name, imports, blueprint string) string {
	return fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata: {name: %[1]s, namespace: %[2]s}
spec:
  context: default
  imports:
    targets: [{name: cluster, target: my-cluster}]
%[3]s  blueprint:
    inline:
      filesystem:
        blueprint.yaml: |
%[4]s
status:
  observedGeneration: 1
  phase: Succeeded
  executionRef: {name: %[1]s, namespace: %[2]s}
`, name, ns, imports, indentLines(blueprint, "          "))
}

// myClusterTarget is the Target my-cluster in ns as the guided tour
// writes it; its config is never read.
func myClusterTarget(ns string) string {
	return fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Target
metadata: {name: my-cluster, namespace: %s}
spec:
  type: landscaper.gardener.cloud/kubernetes-cluster
  config: {kubeconfig: "kubeconfig of the target cluster"}
`, ns)
}

// manifestItem is the spec of a kubernetes-manifest DeployItem in ns that
// deploys manifest with the policy to the Target my-cluster.
func manifestItem(ns, policy, manifest string) string {
	return fmt.Sprintf("type: landscaper.gardener.cloud/kubernetes-manifest\ntarget: {name: my-cluster, namespace: %s}\n%s",
		ns, manifestConfig(policy, manifest))
}

// manifestConfig is the config of a kubernetes-manifest item that applies
// manifest with the policy.
func manifestConfig(policy, manifest string) string {
	return fmt.Sprintf(`config:
  apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
  kind: ProviderConfiguration
  updateStrategy: update
  manifests:
    - policy: %s
      manifest:
%s
`, policy, indentLines(manifest, "        "))
}

// labelled is the object manifest as the manifest deployer left it for
// the DeployItem di: with its managed label.
func labelled(manifest, di string) string {
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(manifest), &obj); err != nil {
		panic(fmt.Sprintf("%v\n%s", err, manifest))
	}
	meta, _ := obj["metadata"].(map[string]any)
	meta["labels"] = map[string]any{kube.ManifestManagedLabel: di}
	out, err := yaml.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return string(out)
}

// importWorkspace starts a take-over test: a workspace holding the
// control plane's kubeconfig (the Landscaper cluster and the target
// cluster at once), and the namespaces, the first with the guided tour's
// Target my-cluster.
func importWorkspace(t *testing.T, namespaces ...string) (*acctest.Workspace, *landscaperCluster) {
	t.Helper()
	w := newWorkspace(t)
	c := newLandscaperCluster(t)
	acctest.WriteFile(t, w.Path("kubeconfig"), kubeEnv.Kubeconfig())
	for _, ns := range namespaces {
		c.write("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n")
	}
	c.write(myClusterTarget(namespaces[0]))
	return w, c
}

// manifestBlueprint is a blueprint as the guided tour writes them: the
// target import cluster and the string data imports, one
// kubernetes-manifest deploy item applying manifest (a template, in YAML
// flow style) with the policy, and further top-level lines (exports,
// exportExecutions), if any.
func manifestBlueprint(imports []string, policy, manifest, more string) string {
	var b strings.Builder
	b.WriteString(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
`)
	for _, n := range imports {
		fmt.Fprintf(&b, "  - {name: %s, type: data, schema: {type: string}}\n", n)
	}
	fmt.Fprintf(&b, `deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: default-deploy-item
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
%s
`, indentLines(manifestConfig(policy, manifest), "          "))
	return b.String() + more
}

// expectAdopted fails the test unless the ConfigMap ns/name is still the
// object of the UID, now labelled for the provider's item of the
// execution (the installation, or "<installation>/<sub-installation>").
func (c *landscaperCluster) expectAdopted(ns, name string, uid types.UID, execution string) {
	c.t.Helper()
	const kind = "ConfigMap"
	after := c.get(kind, ns, name)
	if after.GetUID() != uid {
		c.t.Errorf("%s %s/%s was re-created: UID %s, was %s", kind, ns, name, after.GetUID(), uid)
	}
	if got, want := after.GetLabels()[kube.ManifestManagedLabel], kube.OwnerFor(execution, "default-deploy-item"); got != want {
		c.t.Errorf("%s %s/%s: managed label %q, want the provider's %q", kind, ns, name, got, want)
	}
}
