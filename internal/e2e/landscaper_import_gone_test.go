package e2e

import (
	"strings"
	"testing"
)

// TestImportFromLandscaper_goneImports: an Installation whose DataObject
// or Secret is gone is not imported; the plan fails naming the object
// looked up, in which namespace, and which import of which Installation
// needed it.
func TestImportFromLandscaper_goneImports(t *testing.T) {
	const ns = "cu-gone"
	w, c := importWorkspace(t, ns)
	blueprint := manifestBlueprint([]string{"message"}, "manage", `{apiVersion: v1, kind: ConfigMap, metadata: {name: gone, namespace: cu-gone}}`, "")
	c.writeInstallation(ns, "needs-data", "    data: [{name: message, dataRef: do-gone}]\n", blueprint)
	c.writeInstallation(ns, "needs-secret", "    data: [{name: message, secretRef: {name: gone-credentials, key: message}}]\n", blueprint)

	w.Config(importConfig("landscaper/"+ns+"/needs-data") + `
import {
  to = landscaper_installation.secret
  id = "landscaper/` + ns + `/needs-secret"
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
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
}
