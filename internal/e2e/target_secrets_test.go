package e2e

import (
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
)

// A target's kubeconfig (its token here) never reaches the provider log,
// a diagnostic or a status: not when the cluster is unreachable and the
// deploy items fail, not from an execution, not from an installation.
func TestTargetConfigsStayOutOfLogs(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	token := "t0k3n-" + rand.Text()
	w.Config(`
locals {
  cluster = {
    type = "landscaper.gardener.cloud/kubernetes-cluster"
    config = yamlencode({ kubeconfig = yamlencode({
      apiVersion        = "v1"
      kind              = "Config"
      clusters          = [{ name = "c", cluster = { server = "https://127.0.0.1:1" } }]
      users             = [{ name = "u", user = { token = "` + token + `" } }]
      contexts          = [{ name = "c", context = { cluster = "c", user = "u" } }]
      "current-context" = "c"
    }) })
  }
  manifest = yamlencode({
    apiVersion = "manifest.deployer.landscaper.gardener.cloud/v1alpha2"
    kind       = "ProviderConfiguration"
    manifests  = [{ manifest = { apiVersion = "v1", kind = "ConfigMap", metadata = { name = "x", namespace = "default" } } }]
  })
}

resource "landscaper_execution" "app" {
  name    = "app"
  targets = { cluster = local.cluster }
  deploy_items = {
    cm = { type = "kubernetes-manifest", target = "cluster", timeout = "3s", config = local.manifest }
  }
}

resource "landscaper_installation" "inst" {
  name    = "inst"
  targets = { cluster = local.cluster }
  blueprint = { filesystem = { "blueprint.yaml" = <<-EOT
    apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: Blueprint
    imports:
      - {name: cluster, targetType: landscaper.gardener.cloud/kubernetes-cluster}
    deployExecutions:
      - name: x
        type: GoTemplate
        template: |
          deployItems:
            - name: cm
              type: landscaper.gardener.cloud/kubernetes-manifest
              timeout: 3s
              target: {import: cluster}
              config:
                manifests:
                  - manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: cm-y, namespace: default}}
  EOT
  } }
}
`)
	logPath := w.Path("tf.log")
	out, code := w.Run([]string{"TF_LOG_PROVIDER=TRACE", "TF_LOG_PATH=" + logPath}, "apply", "-input=false", "-no-color", "-auto-approve")
	if code == 0 {
		t.Fatalf("apply against an unreachable cluster succeeded:\n%s", out)
	}
	if strings.Contains(out, token) {
		t.Errorf("the token is in the apply output:\n%s", out)
	}
	if !strings.Contains(out, `Deploy item "cm" failed`) {
		t.Fatalf("apply did not fail on the items:\n%s", out)
	}
	for _, e := range readLog(t, logPath) {
		if strings.Contains(e.text, token) {
			t.Errorf("the token is in the log at %s: %.300s", e.level, e.text)
		}
	}
	for _, name := range []string{"landscaper_execution.app", "landscaper_installation.inst"} {
		typ, res, _ := strings.Cut(name, ".")
		attrs := w.Attributes(typ, res)
		delete(attrs, "targets")
		if b, _ := json.Marshal(attrs); strings.Contains(string(b), token) {
			t.Errorf("the token is in %s's state outside targets", name)
		}
	}
}
