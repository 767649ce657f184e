package e2e

import (
	"strings"
	"testing"
)

// TestImportFromLandscaper_goneImports: an Installation whose DataObject
// or Secret is gone is not imported; the plan fails naming the object
// looked up, in which namespace, and which import of which Installation
// needed it. So is one importing a Target the provider does not define:
// the diagnostic names the Target and its type, for the user to add.
func TestImportFromLandscaper_goneImports(t *testing.T) {
	const ns = "cu-gone"
	w, c := importWorkspace(t, ns)
	blueprint := manifestBlueprint([]string{"message"}, "manage", `{apiVersion: v1, kind: ConfigMap, metadata: {name: gone, namespace: cu-gone}}`, "")
	c.writeInstallation(ns, "needs-data", "    data: [{name: message, dataRef: do-gone}]\n", blueprint)
	c.writeInstallation(ns, "needs-secret", "    data: [{name: message, secretRef: {name: gone-credentials, key: message}}]\n", blueprint)
	c.write(strings.Replace(myClusterTarget(ns), "name: my-cluster", "name: other-cluster", 1))
	c.write("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DataObject\nmetadata: {name: do-message, namespace: " + ns + "}\ndata: hello\n")
	c.write(strings.Replace(installationYAML(ns, "needs-target", "    data: [{name: message, dataRef: do-message}]\n", blueprint),
		"target: my-cluster", "target: other-cluster", 1))

	w.Config(importConfig("landscaper/"+ns+"/needs-data") + `
import {
  to = landscaper_installation.secret
  id = "landscaper/` + ns + `/needs-secret"
}

import {
  to = landscaper_installation.target
  id = "landscaper/` + ns + `/needs-target"
}
`)
	out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-generate-config-out=generated.tf")
	flat := strings.Join(strings.Fields(out), " ")
	if code == 0 {
		t.Fatalf("the plan imported Installations whose imports are gone:\n%s", out)
	}
	for _, want := range []string{
		`Installation cu-gone/needs-data: DataObject cu-gone/do-gone (import "message", dataRef "do-gone"): not found`,
		`Installation cu-gone/needs-secret: Secret cu-gone/gone-credentials (import "message", secretRef): not found`,
		`the Installation imports Target "other-cluster" (object other-cluster) of type landscaper.gardener.cloud/kubernetes-cluster; ` +
			`define a provider target of that name and type, with its config, and import again; the provider defines: landscaper, my-cluster`,
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
}
