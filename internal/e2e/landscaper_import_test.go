package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
)

// landscaperCluster writes objects into the test control plane as
// Landscaper and its guided tour write them: the control plane is the
// Landscaper resource cluster and the target cluster at once. Landscaper's
// own CRDs come from the reader's testdata (origin and licence noted
// there).
type landscaperCluster struct {
	t  *testing.T
	d  dynamic.Interface
	ls *lstest.Cluster
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
	if err := lstest.InstallCRDs(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	return &landscaperCluster{t: t, d: d, ls: &lstest.Cluster{T: t, D: d}}
}

// write creates the object (which names its namespace), then its status
// as a controller writes it.
func (c *landscaperCluster) write(text string) *unstructured.Unstructured {
	c.t.Helper()
	return c.ls.Write(text)
}

// writeSecret creates a Secret with string data.
func (c *landscaperCluster) writeSecret(ns, name string, data map[string]string) {
	c.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": name, "namespace": ns}, "stringData": toAny(data)}}
	if _, err := c.d.Resource(lstest.GVRs["Secret"]).Namespace(ns).Create(c.t.Context(), u, metav1.CreateOptions{}); err != nil {
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
	u, err := c.d.Resource(lstest.GVRs[kind]).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	return u
}

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
	inst := c.write(strings.ReplaceAll(lstest.TourManifestInstallation, "${namespace}", "cu-example"))
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
	di := c.writeExecution("cu-example", "hello-world", inst.GetUID(), item, `providerStatus:
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
`, kube.ManifestManagedLabel, di))

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
