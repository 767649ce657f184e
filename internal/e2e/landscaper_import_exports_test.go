package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster"
)

// writeExportingInstallation writes the Installation name in ns whose
// blueprint deploys a ConfigMap of its name and exports greeting
// ("<message>, world"), with the export DataObject Landscaper wrote for
// it holding held.
func (c *landscaperCluster) writeExportingInstallation(ns, name, held string) {
	c.t.Helper()
	cm := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: %s}\ndata: {message: hello}", name, ns)
	blueprint := manifestBlueprint([]string{"message"}, "manage",
		fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: %s, namespace: %s}, data: {message: "{{ .imports.message }}"}}`, name, ns), `exports:
  - {name: greeting, type: data, schema: {type: string}}
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        greeting: "{{ .imports.message }}, world"
`)
	inst := c.writeInstallation(ns, name, "    data: [{name: message, dataRef: do-message}]\n  exports:\n    data: [{name: greeting, dataRef: do-"+name+"}]\n", blueprint)
	di := c.writeExecution(ns, name, inst.GetUID(), manifestItem(ns, "manage", cm), "")
	c.write(labelled(cm, di))
	data, err := json.Marshal(held)
	if err != nil {
		c.t.Fatal(err)
	}
	c.write(fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: DataObject
metadata:
  name: %s
  namespace: %s
  labels:
    data.landscaper.gardener.cloud/source: %s
    data.landscaper.gardener.cloud/sourceType: export
    data.landscaper.gardener.cloud/key: do-%s
data: %s
`, lscluster.DataObjectName("", "do-"+name), ns, lscluster.InstallationContext(name), name, data))
}

// planned is what `terraform show -json` says a saved plan does to the
// resource address: its planned values, which of them are unknown, and
// whether it is imported.
func planned(t *testing.T, w *acctest.Workspace, plan, address string) (after, unknown map[string]any, importing bool) {
	t.Helper()
	out, code := w.Run(nil, "show", "-json", plan)
	if code != 0 {
		t.Fatalf("terraform show -json exited %d:\n%s", code, out)
	}
	var p struct {
		ResourceChanges []struct {
			Address string
			Change  struct {
				After        map[string]any `json:"after"`
				AfterUnknown map[string]any `json:"after_unknown"`
				Importing    any            `json:"importing"`
			}
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("terraform show -json: %v\n%s", err, out)
	}
	for _, rc := range p.ResourceChanges {
		if rc.Address == address {
			return rc.Change.After, rc.Change.AfterUnknown, rc.Change.Importing != nil
		}
	}
	t.Fatalf("%s is not in the plan:\n%s", address, out)
	return nil, nil, false
}

// TestImportFromLandscaper_exportsKnown: the exports an Installation's
// export DataObjects hold are known in the plan that imports it, so a
// resource reading them plans with their values in that same plan. An
// export the first apply computes otherwise than Landscaper's DataObject
// held fails that apply, naming it; the state holds the new value and the
// next apply passes it on.
func TestImportFromLandscaper_exportsKnown(t *testing.T) {
	const ns = "cu-exports"
	w, c := importWorkspace(t, ns)
	c.write("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DataObject\nmetadata: {name: do-message, namespace: " + ns + "}\ndata: hello\n")
	c.writeExportingInstallation(ns, "hello-exports", "hello, world")

	w.Config(importConfig("landscaper/" + ns + "/hello-exports"))
	if out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-generate-config-out=generated.tf"); code != 0 {
		t.Fatalf("plan -generate-config-out exited %d:\n%s", code, out)
	}
	acctest.WriteFile(t, w.Path("reader.tf"), `resource "terraform_data" "greeting" {
  input = landscaper_installation.hello.exports.greeting
}
`)
	if out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-out=tfplan"); code != 0 {
		t.Fatalf("plan -out exited %d:\n%s", code, out)
	}
	if _, _, importing := planned(t, w, "tfplan", "landscaper_installation.hello"); !importing {
		t.Fatal("the plan does not import landscaper_installation.hello")
	}
	after, unknown, _ := planned(t, w, "tfplan", "terraform_data.greeting")
	if after["input"] != "hello, world" || unknown["input"] != nil {
		t.Fatalf("terraform_data.greeting plans input %v (unknown: %v), want the export Landscaper's DataObject holds", after["input"], unknown["input"])
	}
	if out, code := w.Run(nil, "apply", "-input=false", "-no-color", "tfplan"); code != 0 {
		t.Fatalf("apply of the saved plan exited %d:\n%s", code, out)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the take-over exited %d:\n%s", code, out)
	}

	// Landscaper's DataObject holds a value its inputs no longer give.
	c.writeExportingInstallation(ns, "hello-stale", "goodbye, world")
	acctest.WriteFile(t, w.Path("stale.tf"), `import {
  to = landscaper_installation.stale
  id = "landscaper/`+ns+`/hello-stale"
}
`)
	if out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-generate-config-out=generated-stale.tf"); code != 0 {
		t.Fatalf("plan -generate-config-out exited %d:\n%s", code, out)
	}
	acctest.WriteFile(t, w.Path("stale-reader.tf"), `resource "terraform_data" "stale" {
  input = landscaper_installation.stale.exports.greeting
}
`)
	out, code := w.Run(nil, "apply", "-input=false", "-no-color", "-auto-approve")
	if flat := strings.Join(strings.Fields(out), " "); code == 0 || !strings.Contains(flat, "Exports differ from Landscaper's") ||
		!strings.Contains(flat, "computed the exports greeting otherwise") {
		t.Fatalf("apply with a stale export DataObject exited %d, want an error naming the export:\n%s", code, out)
	}
	if got := acctest.Dig(w.Attributes("landscaper_installation", "stale"), "exports", "value", "greeting"); got != "hello, world" {
		t.Fatalf("the state holds the export %v, want what the run computed", got)
	}
	w.Apply()
	if got := acctest.Dig(w.Attributes("terraform_data", "stale"), "input", "value"); got != "hello, world" {
		t.Fatalf("terraform_data.stale has input %v after the second apply", got)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the second apply exited %d:\n%s", code, out)
	}
}
