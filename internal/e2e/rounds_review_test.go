package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// portBlueprint imports a port with the schema a port has; one item uses
// it, one does not. With state, its template keeps a fixed template state.
func portBlueprint(state bool) string {
	st := ""
	if state {
		st = "\n      state:\n        created: fixed"
	}
	return `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: port, schema: {type: integer, minimum: 1, maximum: 65535}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |` + st + `
      deployItems:
        - name: svc
          type: landscaper.gardener.cloud/mock
          config:
            providerStatus: {port: {{ .imports.port }}}
        - name: plain
          type: landscaper.gardener.cloud/mock
          config:
            providerStatus: {fixed: visible-value}
`
}

// Review (rounds): a plan of an installation with a sensitive port shows
// nothing of its items: round 3 (the other sign) fails the port's schema,
// so the node is not compared and every item is masked whole, names
// included.
func TestReviewRoundsPlanPortSchema(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.Config(fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name              = "app"
  blueprint         = { filesystem = { "blueprint.yaml" = %q } }
  sensitive_imports = { port = 443 }
}
`, portBlueprint(false)))
	out, code := w.Run(nil, "plan", "-input=false", "-no-color")
	if code != 0 {
		t.Fatalf("plan exited %d:\n%s", code, out)
	}
	// The blueprint's text is shown too: look at the planned items only.
	items := out[strings.Index(out, "deploy_items"):]
	if !strings.Contains(items, "visible-value") || !strings.Contains(items, `"plain"`) {
		t.Errorf("the plan shows nothing of an item no secret reached:\n%s", items)
	}
}

// Review (rounds): a write-only port and a template state: the apply is
// refused, blaming the template state for holding a secret.
func TestReviewRoundsAtRestPortWithState(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.Config(fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name                         = "app"
  blueprint                    = { filesystem = { "blueprint.yaml" = %q } }
  sensitive_imports_wo         = { port = 443 }
  sensitive_imports_wo_version = 1
}
`, portBlueprint(true)))
	if out, code := w.Run(nil, "apply", "-input=false", "-no-color", "-auto-approve"); code != 0 {
		t.Fatalf("apply exited %d:\n%s", code, out)
	}
}

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
