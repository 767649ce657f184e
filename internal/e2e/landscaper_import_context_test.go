package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
)

// The blueprint of the component the Context test publishes: its
// ConfigMap shows both the import and the component it was rendered for,
// so an apply with the wrong component cannot look right.
var contextBlueprint = manifestBlueprint([]string{"message"}, "manage",
	`{apiVersion: v1, kind: ConfigMap, metadata: {name: hello-context, namespace: example-context}, data: {message: "{{ .imports.message }}", component: "{{ .cd.component.name }}"}}`, "")

const contextComponent = "example.com/cu-context/hello"

// TestImportFromLandscaper_context takes over an Installation as the
// guided tour writes them: its component by name and version only, the
// repository context from the Context its spec.context names, the
// blueprint a resource of that component in an OCI registry. The
// generated configuration carries the Context's repository context, plans
// as it stands, and the apply adopts the ConfigMap in place.
func TestImportFromLandscaper_context(t *testing.T) {
	w, c := importWorkspace(t, "cu-context", "example-context")
	w.Env = append(w.Env, "XDG_CACHE_HOME="+w.Path("cache"))

	reg := ocitest.Start(t, ocitest.Options{})
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "blueprint"), 0o755); err != nil {
		t.Fatal(err)
	}
	acctest.WriteFile(t, filepath.Join(dir, "blueprint", "blueprint.yaml"), contextBlueprint)
	acctest.WriteFile(t, filepath.Join(dir, "component-constructor.yaml"), `components:
  - name: `+contextComponent+`
    version: 1.0.0
    provider: {name: acme}
    resources:
      - name: blueprint
        type: landscaper.gardener.cloud/blueprint
        input: {type: dir, path: ./blueprint, compress: true, mediaType: application/vnd.gardener.landscaper.blueprint.v1+tar+gzip}
`)
	acctest.Push(t, reg, ocitest.OCM, acctest.Publish(t, false, filepath.Join(dir, "component-constructor.yaml")))

	c.write(fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Context
metadata: {name: landscaper-examples, namespace: cu-context}
repositoryContext: {type: ociRegistry, baseUrl: %s/ocm}
`, reg.Host))
	c.write("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DataObject\nmetadata: {name: do-message, namespace: cu-context}\ndata: hello\n")
	inst := c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata: {name: hello-context, namespace: cu-context}
spec:
  context: landscaper-examples
  componentDescriptor:
    ref: {componentName: ` + contextComponent + `, version: 1.0.0}
  blueprint:
    ref: {resourceName: blueprint}
  imports:
    targets: [{name: cluster, target: my-cluster}]
    data: [{name: message, dataRef: do-message}]
status:
  observedGeneration: 1
  phase: Succeeded
  executionRef: {name: hello-context, namespace: cu-context}
`)
	rendered := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello-context, namespace: example-context}\ndata: {message: hello, component: " + contextComponent + "}"
	item := manifestItem("cu-context", "manage", rendered)
	di := c.writeExecution("cu-context", "hello-context", inst.GetUID(), item, "")
	cm := c.write(labelled(rendered, di))

	w.Config(importConfig("landscaper/cu-context/hello-context"))
	out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-generate-config-out=generated.tf")
	if code != 0 {
		t.Fatalf("plan -generate-config-out exited %d:\n%s", code, out)
	}
	generated := strings.Join(strings.Fields(acctest.ReadFile(t, w.Path("generated.tf"))), " ")
	for _, want := range []string{`ref = "blueprint"`, `name = "` + contextComponent + `"`, `version = "1.0.0"`,
		`baseUrl = "` + reg.Host + `/ocm"`, `type = "ociRegistry"`, `message = "hello"`} {
		if !strings.Contains(generated, want) {
			t.Errorf("generated configuration lacks %s:\n%s", want, generated)
		}
	}
	w.Apply()

	c.expectAdopted("example-context", "hello-context", cm.GetUID(), "hello-context")
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the take-over exited %d:\n%s", code, out)
	}
}
