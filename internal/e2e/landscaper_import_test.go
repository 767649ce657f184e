package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
)

// landscaperCluster writes objects into the test control plane as
// Landscaper and its guided tour write them: the control plane is the
// Landscaper resource cluster and the target cluster at once. Landscaper's
// own CRDs come from the reader's testdata (origin and licence noted
// there).
type landscaperCluster struct {
	t *testing.T
	d dynamic.Interface
}

var lsGroup = "landscaper.gardener.cloud"

var kinds = map[string]schema.GroupVersionResource{
	"Namespace":    {Version: "v1", Resource: "namespaces"},
	"ConfigMap":    {Version: "v1", Resource: "configmaps"},
	"Installation": {Group: lsGroup, Version: "v1alpha1", Resource: "installations"},
	"Target":       {Group: lsGroup, Version: "v1alpha1", Resource: "targets"},
	"Execution":    {Group: lsGroup, Version: "v1alpha1", Resource: "executions"},
	"DeployItem":   {Group: lsGroup, Version: "v1alpha1", Resource: "deployitems"},
	"DataObject":   {Group: lsGroup, Version: "v1alpha1", Resource: "dataobjects"},
	"Context":      {Group: lsGroup, Version: "v1alpha1", Resource: "contexts"},
}

func newLandscaperCluster(t *testing.T) *landscaperCluster {
	t.Helper()
	rc, err := clientcmd.RESTConfigFromKubeConfig([]byte(kubeEnv.Kubeconfig()))
	if err != nil {
		t.Fatal(err)
	}
	d, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	c := &landscaperCluster{t: t, d: d}
	c.installCRDs()
	return c
}

func (c *landscaperCluster) installCRDs() {
	c.t.Helper()
	files, err := filepath.Glob("../lscluster/testdata/crds/*.yaml")
	if err != nil || len(files) == 0 {
		c.t.Fatalf("no CRDs in ../lscluster/testdata/crds: %v", err)
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			c.t.Fatal(err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(data, &obj); err != nil {
			c.t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: obj}
		if _, err := c.d.Resource(crds).Get(c.t.Context(), u.GetName(), metav1.GetOptions{}); err == nil {
			continue // another test installed them
		}
		if _, err := c.d.Resource(crds).Create(c.t.Context(), u, metav1.CreateOptions{}); err != nil {
			c.t.Fatal(err)
		}
	}
	for _, gvr := range kinds {
		if gvr.Group != lsGroup {
			continue
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, err := c.d.Resource(gvr).List(c.t.Context(), metav1.ListOptions{Limit: 1})
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				c.t.Fatalf("%s not served: %v", gvr, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// write creates the object, then its status as a controller writes it.
func (c *landscaperCluster) write(text string) *unstructured.Unstructured {
	c.t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
		c.t.Fatalf("%v\n%s", err, text)
	}
	u := &unstructured.Unstructured{Object: obj}
	status, hasStatus := obj["status"]
	delete(obj, "status")
	var ri dynamic.ResourceInterface = c.d.Resource(kinds[u.GetKind()])
	if u.GetNamespace() != "" {
		ri = c.d.Resource(kinds[u.GetKind()]).Namespace(u.GetNamespace())
	}
	created, err := ri.Create(c.t.Context(), u, metav1.CreateOptions{})
	if err != nil {
		c.t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
	}
	if hasStatus {
		created.Object["status"] = status
		if created, err = ri.UpdateStatus(c.t.Context(), created, metav1.UpdateOptions{}); err != nil {
			c.t.Fatalf("status of %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	return created
}

// writeSecret creates a Secret with string data.
func (c *landscaperCluster) writeSecret(ns, name string, data map[string]string) {
	c.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": name, "namespace": ns}, "stringData": toAny(data)}}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	if _, err := c.d.Resource(gvr).Namespace(ns).Create(c.t.Context(), u, metav1.CreateOptions{}); err != nil {
		c.t.Fatal(err)
	}
}

func toAny(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (c *landscaperCluster) get(kind, ns, name string) *unstructured.Unstructured {
	c.t.Helper()
	u, err := c.d.Resource(kinds[kind]).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	return u
}

// The guided tour's manifest installation (basics/manifest-deployer), with
// what Landscaper wrote for it: its Execution, DeployItem and ConfigMap.
const tourInstallation = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata:
  name: hello-world
  namespace: cu-example
spec:
  imports:
    targets:
      - name: cluster
        target: my-cluster
  blueprint:
    inline:
      filesystem:
        blueprint.yaml: |
          apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: Blueprint
          jsonSchema: "https://json-schema.org/draft/2019-09/schema"
          imports:
            - name: cluster
              type: target
              targetType: landscaper.gardener.cloud/kubernetes-cluster
          deployExecutions:
            - name: default
              type: GoTemplate
              template: |
                deployItems:
                  - name: default-deploy-item
                    type: landscaper.gardener.cloud/kubernetes-manifest
                    target:
                      import: cluster
                    config:
                      apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
                      kind: ProviderConfiguration
                      updateStrategy: update
                      manifests:
                        - policy: manage
                          manifest:
                            apiVersion: v1
                            kind: ConfigMap
                            metadata:
                              name: hello-world
                              namespace: example
                            data:
                              testData: hello
status:
  observedGeneration: 1
  phase: Succeeded
  jobID: job-1
  jobIDFinished: job-1
  executionRef:
    name: hello-world
    namespace: cu-example
`

const tourDeployItem = "hello-world-default-deploy-item-x7k2p"

// TestImportFromLandscaper takes the guided tour's installation over as a
// user would: an import block, `terraform plan -generate-config-out`, and
// apply. The ConfigMap Landscaper created stays the same object (same
// UID) and moves to the provider's label; the plan after is empty.
func TestImportFromLandscaper(t *testing.T) {
	w := newWorkspace(t)
	c := newLandscaperCluster(t)
	c.write("apiVersion: v1\nkind: Namespace\nmetadata: {name: cu-example}\n")
	c.write("apiVersion: v1\nkind: Namespace\nmetadata: {name: example}\n")
	c.write(myClusterTarget("cu-example"))
	c.write(tourInstallation)
	item := `type: landscaper.gardener.cloud/kubernetes-manifest
target: {name: my-cluster, namespace: cu-example}
config:
  apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
  kind: ProviderConfiguration
  updateStrategy: update
  manifests:
    - policy: manage
      manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: hello-world, namespace: example}, data: {testData: hello}}
`
	c.writeExecution("cu-example", "hello-world", tourDeployItem, item)
	c.writeDeployItem("cu-example", "hello-world", tourDeployItem, item, `  providerStatus:
    apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
    kind: ProviderStatus
    managedResources:
      - policy: manage
        resource: {apiVersion: v1, kind: ConfigMap, name: hello-world, namespace: example}
`)
	cm := c.write(fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: hello-world
  namespace: example
  labels: {%q: %s}
data: {testData: hello}
`, kube.ManifestManagedLabel, tourDeployItem))

	acctest.WriteFile(t, w.Path("kubeconfig"), kubeEnv.Kubeconfig())
	w.Config(importConfig("landscaper/cu-example/hello-world"))
	out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-generate-config-out=generated.tf")
	if code != 0 {
		t.Fatalf("plan -generate-config-out exited %d:\n%s", code, out)
	}
	generated := acctest.ReadFile(t, w.Path("generated.tf"))
	for _, want := range []string{`name = "hello-world"`, `name = "my-cluster"`, "blueprint.yaml"} {
		if !strings.Contains(strings.Join(strings.Fields(generated), " "), want) {
			t.Errorf("generated configuration lacks %s:\n%s", want, generated)
		}
	}
	if strings.Contains(generated, "kubeconfig") {
		t.Errorf("generated configuration holds a target config:\n%s", generated)
	}
	w.Apply()

	after := c.get("ConfigMap", "example", "hello-world")
	if after.GetUID() != cm.GetUID() {
		t.Fatalf("the ConfigMap was re-created: UID %s, was %s", after.GetUID(), cm.GetUID())
	}
	if got, want := after.GetLabels()[kube.ManifestManagedLabel], kube.OwnerFor("hello-world", "default-deploy-item"); got != want {
		t.Fatalf("managed label %q, want the provider's %q", got, want)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the take-over exited %d:\n%s", code, out)
	}
	// An Installation that is not there is named, and nothing is imported.
	acctest.WriteFile(t, w.Path("moon.tf"), "import {\n  to = landscaper_installation.moon\n  id = \"landscaper/cu-example/hello-moon\"\n}\n")
	if out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-generate-config-out=moon-generated.tf"); code == 0 ||
		!strings.Contains(strings.Join(strings.Fields(out), " "), "Installation cu-example/hello-moon") {
		t.Errorf("importing a missing Installation exited %d:\n%s", code, out)
	}
	// Nothing in the Landscaper cluster was changed.
	if inst := c.get("Installation", "cu-example", "hello-world"); inst.GetGeneration() != 1 {
		t.Errorf("the Installation was written: generation %d", inst.GetGeneration())
	}
}

func indentLines(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
