package e2e

import (
	"net/url"
	"strings"
	"testing"
)

// reviewPassword is a password with characters a URL must escape.
const reviewPassword = "Tr0ub4dor&3x"

// TestAlignedApplyMasksDerivedPartsInLogs: an apply whose items align
// with its plan renders no shadow of them, yet an exec item's output
// quotes what a template made of a secret (a `set -x` trace of a URL that
// escapes the password, a part of the password), not the whole config
// leaf the plan masked. The provider's log must not show those parts.
func TestAlignedApplyMasksDerivedPartsInLogs(t *testing.T) {
	t.Parallel()
	escaped := url.QueryEscape(reviewPassword)
	canaries := []string{reviewPassword, escaped, reviewPassword[:9]}
	scan := func(what, text string) {
		t.Helper()
		for _, c := range canaries {
			if i := strings.Index(text, c); i >= 0 {
				t.Errorf("%s shows %q: …%s…", what, c, text[max(0, i-200):min(len(text), i+len(c)+100)])
			}
		}
	}
	w := newWorkspace(t)
	w.Config(`
resource "landscaper_installation" "app" {
  name              = "app"
  sensitive_imports = { pw = "` + reviewPassword + `" }
  blueprint = { filesystem = { "blueprint.yaml" = <<-EOT
    apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: Blueprint
    imports:
      - {name: pw, type: data, schema: {type: string}}
    deployExecutions:
      - name: go
        type: GoTemplate
        template: |
          deployItems:
            - name: migrate
              type: exec
              timeout: 10s
              config:
                command:
                  - sh
                  - -c
                  - |
                    set -x
                    true "postgres://app:{{ .imports.pw | urlquery }}@db/app"
                    echo "first part: {{ .imports.pw | trunc 9 }}" >&2
  EOT
  } }
}
`)
	logPath := w.Path("apply.log")
	out, code := w.Run([]string{"TF_LOG=TRACE", "TF_LOG_PATH=" + logPath}, "apply", "-input=false", "-no-color", "-auto-approve")
	if code != 0 {
		t.Fatalf("apply exited %d:\n%s", code, out)
	}
	scan("apply output", out)
	log := traceLog(t, logPath)
	if !strings.Contains(log, "first part: ") {
		t.Fatalf("the exec item's output is not in the log:\n%s", log)
	}
	scan("TRACE log of the apply", log)
}
