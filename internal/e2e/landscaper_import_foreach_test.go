package e2e

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// foreachBlueprint deploys a ConfigMap named by the import configmap:
// one blueprint the namespace's installations share.
var foreachBlueprint = manifestBlueprint([]string{"message", "configmap"}, "manage",
	`{apiVersion: v1, kind: ConfigMap, metadata: {name: "{{ .imports.configmap }}", namespace: cu-foreach}, data: {message: "{{ .imports.message }}"}}`, "")

// TestImportFromLandscaper_forEach checks what the migration guide says of
// import blocks with for_each over a namespace's installations: Terraform
// 1.11 generates no configuration for them (it refuses the import block
// while the resource it imports to has no for_each), and with the
// landscaper_installation written with the same for_each the import takes
// every installation over, one of them through `terraform import`.
func TestImportFromLandscaper_forEach(t *testing.T) {
	const ns = "cu-foreach"
	w, c := importWorkspace(t, ns)
	c.write("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DataObject\nmetadata: {name: do-message, namespace: " + ns + "}\ndata: hello\n")
	names := []string{"hello-one", "hello-two"}
	uids := map[string]types.UID{}
	for _, n := range names {
		c.write(fmt.Sprintf("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DataObject\nmetadata: {name: do-%s, namespace: %s}\ndata: %s\n", n, ns, n))
		inst := c.writeInstallation(ns, n, fmt.Sprintf("    data: [{name: message, dataRef: do-message}, {name: configmap, dataRef: do-%s}]\n", n), foreachBlueprint)
		cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {message: hello}", n, ns)
		di := c.writeExecution(ns, n, inst.GetUID(), manifestItem(ns, "manage", cm), "")
		uids[n] = c.write(labelled(cm, di)).GetUID()
	}
	acctest.WriteFile(t, w.Path("blueprint.yaml"), foreachBlueprint)
	w.Config(`
provider "landscaper" {
  targets = {
    landscaper = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
    my-cluster = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
  }
}

locals {
  installations = toset(["hello-one", "hello-two"])
}

import {
  for_each = local.installations
  to       = landscaper_installation.hello[each.key]
  id       = "landscaper/cu-foreach/${each.key}"
}
`)
	out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-generate-config-out=generated.tf")
	if flat := strings.Join(strings.Fields(out), " "); code == 0 || !strings.Contains(flat, "The target resource does not use for_each") {
		t.Fatalf("plan -generate-config-out with a for_each import exited %d; the guide says Terraform refuses it:\n%s", code, out)
	}
	acctest.WriteFile(t, w.Path("installations.tf"), `resource "landscaper_installation" "hello" {
  for_each  = local.installations
  name      = each.key
  blueprint = { filesystem = { "blueprint.yaml" = file("${path.module}/blueprint.yaml") } }
  targets   = { cluster = { name = "my-cluster" } }
  imports   = { message = "hello", configmap = each.key }
}
`)
	// `terraform import` takes the same ID; the import block then has
	// only the other installation left to import.
	if out, code := w.Run(nil, "import", "-input=false", "-no-color", `landscaper_installation.hello["hello-one"]`, "landscaper/cu-foreach/hello-one"); code != 0 ||
		!strings.Contains(out, "Import successful") {
		t.Fatalf("terraform import exited %d:\n%s", code, out)
	}
	out, code = w.Run(nil, "plan", "-input=false", "-no-color")
	if code != 0 || !strings.Contains(out, "1 to import") {
		t.Fatalf("plan with for_each on both the import and the resource exited %d:\n%s", code, out)
	}
	w.Apply()
	for _, n := range names {
		c.expectAdopted(ns, n, uids[n], n)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the take-over exited %d:\n%s", code, out)
	}
}
