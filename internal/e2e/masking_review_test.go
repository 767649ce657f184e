package e2e

import (
	"net/url"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// reviewPassword is a password with characters a URL must escape.
const reviewPassword = "Tr0ub4dor&3x"

// TestAlignedApplyMasksDerivedPartsInLogs: an apply whose items align
// with its plan renders no shadow of them, yet an exec item's output
// quotes what a template made of a secret (a `set -x` trace of a URL that
// escapes the password, a part of the password), not the whole config
// leaf the plan masked, and its imports file holds the password as JSON
// escapes it (& as \u0026). The provider's log must not show any of it.
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
                    cat "$IMPORTS_PATH" >&2
                importValues: {pw: {{ .imports.pw | quote }}}
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

// reviewUser is a secret an honest blueprint names an item and an object
// after.
const reviewUser = "zed-4711-ops"

// TestRefreshDriftWarningMasksSecretNames: a refresh that finds an object
// deleted behind Terraform's back warns, naming the deploy item and the
// object; an item and an object named after a secret are named as the
// plan showed them, masked.
func TestRefreshDriftWarningMasksSecretNames(t *testing.T) {
	if kubeEnv == nil {
		t.Skip("acceptance tests only (TF_ACC)")
	}
	t.Parallel()
	const ns = "review-drift"
	w := newWorkspace(t)
	acctest.WriteFile(t, w.Path("kubeconfig"), kubeEnv.Kubeconfig())
	w.Config(`
resource "landscaper_installation" "app" {
  name              = "app"
  imports           = { namespace = "` + ns + `" }
  sensitive_imports = { user = "` + reviewUser + `" }
  targets = { cluster = {
    type   = "landscaper.gardener.cloud/kubernetes-cluster"
    config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") })
  } }
  blueprint = { filesystem = { "blueprint.yaml" = <<-EOT
    apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: Blueprint
    imports:
      - {name: cluster, targetType: landscaper.gardener.cloud/kubernetes-cluster}
      - {name: namespace, type: data, schema: {type: string}}
      - {name: user, type: data, schema: {type: string}}
    deployExecutions:
      - name: go
        type: GoTemplate
        template: |
          deployItems:
            - name: home-{{ .imports.user }}
              type: landscaper.gardener.cloud/kubernetes-manifest
              target: {import: cluster}
              config:
                manifests:
                  - manifest: {apiVersion: v1, kind: Namespace, metadata: {name: {{ .imports.namespace }}}}
                  - manifest:
                      apiVersion: v1
                      kind: ConfigMap
                      metadata: {name: {{ .imports.user }}-home, namespace: {{ .imports.namespace }}}
                      data: {owner: plain}
  EOT
  } }
}
`)
	if out, code := w.Run(nil, "apply", "-input=false", "-no-color", "-auto-approve"); code != 0 {
		t.Fatalf("apply exited %d:\n%s", code, out)
	}
	deleteConfigMap(t, ns, reviewUser+"-home")
	out, code := w.Run(nil, "plan", "-refresh-only", "-input=false", "-no-color")
	if code != 0 || !strings.Contains(out, "changed outside Terraform") || !strings.Contains(out, "was deleted") {
		t.Fatalf("refresh-only plan exited %d, or without the drift warning:\n%s", code, out)
	}
	if strings.Contains(out, reviewUser) {
		t.Errorf("the drift warning shows the secret:\n%s", out)
	}
	if out, code := w.Run(nil, "destroy", "-input=false", "-no-color", "-auto-approve"); code != 0 {
		t.Errorf("destroy exited %d:\n%s", code, out)
	}
}
