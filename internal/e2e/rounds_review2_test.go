package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Review 2 (sameNames): an item named after a write-only tenant and gated
// by a write-only boolean. Round 0 flips the boolean, so the shadow has no
// item in its place: the tree is refused, saying why, and the tenant is in
// neither the output nor the state.
func TestReview2AtRestGatedItemNamedAfterSecret(t *testing.T) {
	t.Parallel()
	const bp = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: enabled, schema: {type: boolean}}
  - {name: tenant, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
      {{- if .imports.enabled }}
        - name: db-{{ .imports.tenant }}
          type: landscaper.gardener.cloud/mock
          config: {}
      {{- end }}
`
	w := newWorkspace(t)
	w.Config(fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name                         = "app"
  blueprint                    = { filesystem = { "blueprint.yaml" = %q } }
  sensitive_imports_wo         = { enabled = true, tenant = "tenant-canary-42" }
  sensitive_imports_wo_version = 1
}
`, bp))
	r := &atRestRun{t: t, w: w, found: map[string]bool{}, canaries: map[string]string{"write-only tenant": "tenant-canary-42"}}
	out, code := w.Run(nil, "apply", "-input=false", "-no-color", "-auto-approve")
	r.scan("the output of the apply", out)
	if code == 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), "exists only because of one") {
		t.Errorf("apply exited %d, want refused saying an item exists because of a write-only secret:\n%s", code, out)
	}
	if _, err := os.Stat(w.Path("terraform.tfstate")); err == nil { // refused at plan time: none
		r.scanState("after the apply")
	}
}
