package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// jsonDiagnostic is a diagnostic of terraform's -json output.
type jsonDiagnostic struct {
	Severity, Summary, Detail string
	Range                     *struct {
		Start struct{ Line int }
	}
	Snippet *struct{ Code string }
}

// errorsOf reads the error diagnostics from terraform's -json output.
func errorsOf(t *testing.T, out string) []jsonDiagnostic {
	t.Helper()
	var ds []jsonDiagnostic
	for _, line := range strings.Split(out, "\n") {
		var msg struct {
			Type       string
			Diagnostic jsonDiagnostic
		}
		if json.Unmarshal([]byte(line), &msg) == nil && msg.Type == "diagnostic" && msg.Diagnostic.Severity == "error" {
			ds = append(ds, msg.Diagnostic)
		}
	}
	return ds
}

// Terraform highlights the line of each error's cause, as the real CLI
// shows it (terraform plan -json carries the range): the provider target
// reference, not the resource's name; the deploy item; the blueprint; the
// component. Before, these pointed at the resource's first line, or at
// its name attribute.
func TestDiagnosticsHighlightTheirCause(t *testing.T) {
	t.Parallel()
	kubeconfig := fmt.Sprintf("%q", acctest.UnreachableKubeconfig)
	provider := `provider "landscaper" {
  targets = {
    prod = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = ` + kubeconfig + ` }) }
  }
}
`
	blueprint := `blueprint = { filesystem = { "blueprint.yaml" = <<-EOT
    apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: Blueprint
    imports:
      - {name: cluster, targetType: landscaper.gardener.cloud/kubernetes-cluster, required: false}
    deployExecutions:
      - name: default
        type: GoTemplate
        template: |
          deployItems:
            - {name: app, type: landscaper.gardener.cloud/mock, config: {phase: Failed}}
    EOT
  } }`
	constructor := `components:
- name: github.com/acme/app
  version: v1.0.0
  provider: {name: acme}
`
	cases := []struct {
		// at is in the line Terraform is to highlight (the first such
		// line of the resource).
		name, command, config, at, detail string
	}{
		{"execution: undefined provider target", "plan", `resource "landscaper_execution" "x" {
  targets = {
    cluster = { name = "nope" }
  }
  deploy_items = { a = { type = "mock", target = "cluster" } }
  name = "x"
}`, `cluster = { name = "nope" }`, `"nope" names no target`},
		{"execution: deploy item config", "plan", `resource "landscaper_execution" "x" {
  name = "x"
  deploy_items = {
    a = {
      type   = "exec"
      config = jsonencode({ comand = ["true"] })
    }
  }
}`, `a = {`, `a misspelling of "command"?`},
		{"execution: failed deploy item", "apply", `resource "landscaper_execution" "x" {
  name = "x"
  deploy_items = {
    a = { type = "mock", config = jsonencode({ phase = "Failed" }) }
  }
}`, `a = { type = "mock"`, `Failed`},
		{"installation: undefined provider target", "plan", `resource "landscaper_installation" "x" {
  ` + blueprint + `
  targets = { cluster = { name = "nope" } }
  name    = "x"
}`, `targets = {`, `"nope" names no target`},
		{"installation: blueprint", "plan", `resource "landscaper_installation" "x" {
  name      = "x"
  blueprint = { path = "${path.module}/nowhere" }
}`, `blueprint = {`, `nowhere`},
		{"installation: component version", "plan", `resource "landscaper_installation" "x" {
  name      = "x"
  blueprint = { ref = "blueprint" }
  component = { name = "github.com/acme/app", version = "v1.0.1", constructors = ["${path.module}/constructor.yaml"] }
}`, `component = {`, `the constructor files offer version v1.0.0`},
		{"installation: failed deploy item", "apply", `resource "landscaper_installation" "x" {
  name = "x"
  ` + blueprint + `
}`, `blueprint = {`, `Failed`},
		{"data source: undefined provider target", "plan", `data "landscaper_blueprint" "x" {
  ` + blueprint + `
  targets = { cluster = { name = "nope" } }
}`, `targets = {`, `"nope" names no target`},
		{"data source: component version", "plan", `data "landscaper_blueprint" "x" {
  blueprint = { ref = "blueprint" }
  component = {
    name         = "github.com/acme/app"
    version      = "v1.0.1"
    constructors = ["${path.module}/constructor.yaml"]
  }
}`, `component = {`, `the constructor files offer version v1.0.0`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorkspace(t)
			w.Config(provider + c.config + "\n")
			acctest.WriteFile(t, w.Path("constructor.yaml"), constructor)
			want, inBlock := 0, false
			for i, line := range strings.Split(acctest.ReadFile(t, w.Path("main.tf")), "\n") {
				inBlock = inBlock || strings.HasPrefix(line, "resource ") || strings.HasPrefix(line, "data ")
				if inBlock && want == 0 && strings.Contains(line, c.at) {
					want = i + 1
				}
			}
			args := []string{c.command, "-json", "-input=false"}
			if c.command == "apply" {
				args = append(args, "-auto-approve")
			}
			out, _ := w.Run(nil, args...)
			errs := errorsOf(t, out)
			if len(errs) != 1 || errs[0].Range == nil || errs[0].Range.Start.Line != want || !strings.Contains(errs[0].Detail, c.detail) {
				t.Fatalf("want one error on line %d saying %q, got %+v\n%s", want, c.detail, errs, out)
			}
		})
	}
}
