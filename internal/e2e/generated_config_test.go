package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// On Terraform 1.14 and later the framework writes the configuration of
// -generate-config-out (GenerateResourceConfig), not Terraform. What it
// writes for both resources plans as it stands, applies, and plans
// nothing after: landscaper_execution imported by name, and
// landscaper_installation imported from a Landscaper cluster by its ID
// string (the query test and TestImportByIdentity import by identity).
// It sets no computed attribute.
func TestGeneratedConfigPlansAsItStands(t *testing.T) {
	tf := terraform115(t)
	const ns = "cu-generated"
	w, c := importWorkspace(t, ns)
	w.Terraform = tf
	bp := manifestBlueprint([]string{"message"}, "manage",
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: hello-generated, namespace: cu-generated}, data: {message: "{{ .imports.message }}"}}`, "")
	c.write("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DataObject\nmetadata: {name: do-message, namespace: " + ns + "}\ndata: hello\n")
	inst := c.writeInstallation(ns, "hello-generated", "    data: [{name: message, dataRef: do-message}]\n", bp)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello-generated, namespace: " + ns + "}\ndata: {message: hello}"
	di := c.writeExecution(ns, "hello-generated", inst.GetUID(), manifestItem(ns, "manage", cm), "")
	uid := c.write(labelled(cm, di)).GetUID()

	w.Config(importConfig("landscaper/"+ns+"/hello-generated") + `
import {
  to = landscaper_execution.app
  id = "app"
}
`)
	out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-generate-config-out=generated.tf")
	if code != 0 {
		t.Fatalf("plan -generate-config-out exited %d:\n%s", code, out)
	}
	generated := acctest.ReadFile(t, w.Path("generated.tf"))
	for _, typ := range []string{"landscaper_execution", "landscaper_installation"} {
		if !strings.Contains(generated, `resource "`+typ+`"`) {
			t.Errorf("no %s generated:\n%s", typ, generated)
		}
	}
	for _, computed := range []string{"id", "status", "exports", "sensitive_exports", "rollout_plan", "cluster_changes", "deploy_items_status"} {
		if regexp.MustCompile(`(?m)^  ` + computed + `\s*=`).MatchString(generated) {
			t.Errorf("generated configuration sets the computed attribute %s:\n%s", computed, generated)
		}
	}
	if out, code := w.PlanExitCode(); code != 2 {
		t.Fatalf("plan of the generated configuration exited %d, want 2 (the imports):\n%s\n%s", code, out, generated)
	}
	w.Apply()
	c.expectAdopted(ns, "hello-generated", uid, "hello-generated")
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after applying the generated configuration exited %d:\n%s\n%s", code, out, generated)
	}
}
