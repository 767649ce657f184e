// Package e2e drives the real terraform CLI against the real provider
// binary, for what terraform-plugin-testing cannot do: send Ctrl-C and
// read the provider's logs. Like acceptance tests, it runs only with TF_ACC
// set, and needs terraform on PATH. No network is needed: the provider is
// found through dev_overrides, so `terraform init` is skipped.
package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// providerDir holds the provider binary built by TestMain; buildErr says
// why there is none.
var (
	providerDir string
	buildErr    error
)

func TestMain(m *testing.M) {
	if os.Getenv("TF_ACC") != "" {
		dir, err := os.MkdirTemp("", "landscaper-e2e-")
		if err == nil {
			providerDir = dir
			out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "terraform-provider-landscaper"),
				"github.com/landscaper-tf/terraform-provider-landscaper").CombinedOutput()
			if err != nil {
				buildErr = fmt.Errorf("building the provider: %v\n%s", err, out)
			}
		} else {
			buildErr = err
		}
	}
	code := m.Run()
	if providerDir != "" {
		_ = os.RemoveAll(providerDir)
	}
	os.Exit(code)
}

// workspace is one Terraform working directory with its own state.
type workspace struct {
	t         *testing.T
	dir       string
	terraform string
	env       []string
}

// newWorkspace skips the test unless acceptance tests are enabled and
// terraform is installed, and returns a workspace in a fresh temp dir.
func newWorkspace(t *testing.T) *workspace {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("end-to-end test; set TF_ACC=1 to run it")
	}
	tfBin, err := exec.LookPath("terraform")
	if err != nil {
		t.Skip("terraform not found on PATH")
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	dir := t.TempDir()
	cliConfig := filepath.Join(dir, "cli.tfrc")
	writeFile(t, cliConfig, fmt.Sprintf(`provider_installation {
  dev_overrides {
    "landscaper-tf/landscaper" = %q
  }
  direct {}
}
`, providerDir))
	// Nothing of the caller's Terraform settings (TF_LOG, TF_CLI_ARGS...)
	// may change what these tests see.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TF_") {
			env = append(env, kv)
		}
	}
	env = append(env, "TF_CLI_CONFIG_FILE="+cliConfig, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	return &workspace{t: t, dir: dir, terraform: tfBin, env: env}
}

// path returns the absolute path of name in the workspace.
func (w *workspace) path(name string) string { return filepath.Join(w.dir, name) }

// config writes main.tf: the required_providers block plus body.
func (w *workspace) config(body string) {
	w.t.Helper()
	writeFile(w.t, w.path("main.tf"), `terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
}
`+body)
}

// command prepares a terraform command in the workspace; extraEnv entries
// are KEY=VALUE.
func (w *workspace) command(extraEnv []string, args ...string) *exec.Cmd {
	cmd := exec.Command(w.terraform, args...)
	cmd.Dir = w.dir
	cmd.Env = append(append([]string(nil), w.env...), extraEnv...)
	return cmd
}

// run runs terraform and returns its combined output and exit code.
func (w *workspace) run(extraEnv []string, args ...string) (string, int) {
	w.t.Helper()
	var out bytes.Buffer
	cmd := w.command(extraEnv, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exitErr):
		return out.String(), exitErr.ExitCode()
	default:
		w.t.Fatalf("terraform %s: %v", strings.Join(args, " "), err)
		return "", -1
	}
}

// apply runs `terraform apply` and fails the test unless it succeeds.
func (w *workspace) apply(extraEnv ...string) string {
	w.t.Helper()
	out, code := w.run(extraEnv, "apply", "-input=false", "-no-color", "-auto-approve")
	if code != 0 {
		w.t.Fatalf("terraform apply exited %d:\n%s", code, out)
	}
	return out
}

// planExitCode runs `terraform plan -detailed-exitcode`: 0 means no
// changes, 2 means changes, 1 an error.
func (w *workspace) planExitCode() (string, int) {
	w.t.Helper()
	return w.run(nil, "plan", "-input=false", "-no-color", "-detailed-exitcode")
}

// execution returns the attributes of landscaper_execution.app as stored
// in terraform.tfstate.
func (w *workspace) execution() map[string]any {
	w.t.Helper()
	raw, err := os.ReadFile(w.path("terraform.tfstate"))
	if err != nil {
		w.t.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Type, Name string
			Instances  []struct {
				Attributes map[string]any `json:"attributes"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		w.t.Fatalf("terraform.tfstate: %v", err)
	}
	for _, r := range st.Resources {
		if r.Type == "landscaper_execution" && r.Name == "app" && len(r.Instances) == 1 {
			return r.Instances[0].Attributes
		}
	}
	w.t.Fatalf("landscaper_execution.app not in state:\n%s", raw)
	return nil
}

// dig follows keys through nested JSON objects; nil when one is missing.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// itemField reads status.deploy_items[item][field] from state attributes.
func itemField(attrs map[string]any, item, field string) any {
	return dig(attrs, "status", "deploy_items", item, field)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
