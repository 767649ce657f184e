package e2e

import (
	"fmt"
	"testing"
)

// Review (rounds): a write-only secret given as a JSON document in a
// string: the branches on its booleans and its number, which the rounds
// mask for the same values given as an object, are kept in clear.
func TestReviewRoundsAtRestDocument(t *testing.T) {
	t.Parallel()
	const bp = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: creds, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: branch
          type: landscaper.gardener.cloud/mock
          config:
            providerStatus:
              {{- $d := fromYaml .imports.creds }}
              both: {{ if and $d.a $d.b }}{{ "branch-both" | upper }}{{ else }}{{ "branch-neither" | upper }}{{ end }}
              size: {{ if gt (int $d.n) 10 }}{{ "size-large" | upper }}{{ else }}{{ "size-small" | upper }}{{ end }}
`
	w := newWorkspace(t)
	w.Config(fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name                         = "app"
  blueprint                    = { filesystem = { "blueprint.yaml" = %q } }
  sensitive_imports_wo         = { creds = jsonencode({ a = true, b = false, n = 50 }) }
  sensitive_imports_wo_version = 1
}
`, bp))
	r := &atRestRun{t: t, w: w, found: map[string]bool{}, canaries: map[string]string{
		"outcome of a && b": "BRANCH-NEITHER", "outcome of n > 10": "SIZE-LARGE",
	}}
	if out, code := w.Run(nil, "apply", "-input=false", "-no-color", "-auto-approve"); code != 0 {
		t.Fatalf("apply exited %d:\n%s", code, out)
	}
	r.scanState("after the apply")
}
