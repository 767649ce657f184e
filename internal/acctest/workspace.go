package acctest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// BuildProvider builds the provider binary into a fresh directory, for a
// TestMain whose tests drive the real CLI. It builds nothing unless
// TF_ACC is set; cleanup removes the directory.
func BuildProvider() (dir string, cleanup func(), err error) {
	cleanup = func() {}
	if os.Getenv("TF_ACC") == "" {
		return "", cleanup, nil
	}
	dir, err = os.MkdirTemp("", "landscaper-e2e-")
	if err != nil {
		return "", cleanup, err
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "terraform-provider-landscaper"),
		"github.com/landscaper-tf/terraform-provider-landscaper").CombinedOutput()
	if err != nil {
		return dir, cleanup, fmt.Errorf("building the provider: %v\n%s", err, out)
	}
	return dir, cleanup, nil
}

// Workspace is one Terraform working directory with its own state, run by
// the real terraform CLI against a provider binary found through
// dev_overrides, so `terraform init` (and the network) is never needed.
type Workspace struct {
	T         testing.TB
	Dir       string
	Terraform string
	Env       []string
	// overrides are the CLI configuration's dev_overrides, by provider
	// source address.
	overrides map[string]string
}

// NewWorkspace skips the test unless acceptance tests are enabled and
// terraform is installed, and returns a workspace in a fresh temp dir
// that uses the provider built into providerDir (buildErr: why there is none).
func NewWorkspace(t testing.TB, providerDir string, buildErr error) *Workspace {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("end-to-end test; set TF_ACC=1 to run it")
	}
	tfBin, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal("terraform not found on PATH")
	}
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	dir := t.TempDir()
	cliConfig := filepath.Join(dir, "cli.tfrc")
	w := &Workspace{T: t, Dir: dir, Terraform: tfBin, overrides: map[string]string{"landscaper-tf/landscaper": providerDir}}
	w.writeCLIConfig()
	// Nothing of the caller's Terraform settings (TF_LOG, TF_CLI_ARGS...)
	// may change what these tests see.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TF_") {
			env = append(env, kv)
		}
	}
	w.Env = append(env, "TF_CLI_CONFIG_FILE="+cliConfig, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	return w
}

// Override makes Terraform find the provider source (namespace/type) in
// dir, through dev_overrides as this provider is found; an empty dir
// removes the override.
func (w *Workspace) Override(source, dir string) {
	w.T.Helper()
	if dir == "" {
		delete(w.overrides, source)
	} else {
		w.overrides[source] = dir
	}
	w.writeCLIConfig()
}

func (w *Workspace) writeCLIConfig() {
	w.T.Helper()
	var b strings.Builder
	b.WriteString("provider_installation {\n  dev_overrides {\n")
	for _, src := range slices.Sorted(maps.Keys(w.overrides)) {
		fmt.Fprintf(&b, "    %q = %q\n", src, w.overrides[src])
	}
	b.WriteString("  }\n  direct {}\n}\n")
	WriteFile(w.T, w.Path("cli.tfrc"), b.String())
}

// Path returns the absolute path of name in the workspace.
func (w *Workspace) Path(name string) string { return filepath.Join(w.Dir, name) }

// Config writes main.tf: the required_providers block plus body.
func (w *Workspace) Config(body string) {
	w.T.Helper()
	WriteFile(w.T, w.Path("main.tf"), `terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
}
`+body)
}

// Command prepares a terraform command in the workspace; extraEnv entries
// are KEY=VALUE.
func (w *Workspace) Command(extraEnv []string, args ...string) *exec.Cmd {
	cmd := exec.Command(w.Terraform, args...)
	cmd.Dir = w.Dir
	cmd.Env = append(append([]string(nil), w.Env...), extraEnv...)
	return cmd
}

// Run runs terraform and returns its combined output and exit code.
func (w *Workspace) Run(extraEnv []string, args ...string) (string, int) {
	w.T.Helper()
	var out bytes.Buffer
	cmd := w.Command(extraEnv, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exitErr):
		return out.String(), exitErr.ExitCode()
	default:
		w.T.Fatalf("terraform %s: %v", strings.Join(args, " "), err)
		return "", -1
	}
}

// Apply runs `terraform apply` and fails the test unless it succeeds.
func (w *Workspace) Apply(extraEnv ...string) string {
	w.T.Helper()
	out, code := w.Run(extraEnv, "apply", "-input=false", "-no-color", "-auto-approve")
	if code != 0 {
		w.T.Fatalf("terraform apply exited %d:\n%s", code, out)
	}
	return out
}

// PlanExitCode runs `terraform plan -detailed-exitcode`: 0 means no
// changes, 2 means changes, 1 an error.
func (w *Workspace) PlanExitCode() (string, int) {
	w.T.Helper()
	return w.Run(nil, "plan", "-input=false", "-no-color", "-detailed-exitcode")
}

// Attributes returns the attributes of the resource typ.name as stored in
// terraform.tfstate.
func (w *Workspace) Attributes(typ, name string) map[string]any {
	w.T.Helper()
	attrs, _ := w.instance(typ, name)
	return attrs
}

// Private returns the private state of the resource typ.name, as
// Terraform stores it (base64-decoded).
func (w *Workspace) Private(typ, name string) []byte {
	w.T.Helper()
	_, private := w.instance(typ, name)
	return private
}

func (w *Workspace) instance(typ, name string) (map[string]any, []byte) {
	w.T.Helper()
	raw, err := os.ReadFile(w.Path("terraform.tfstate"))
	if err != nil {
		w.T.Fatal(err)
	}
	var st struct {
		Resources []struct {
			Type, Name string
			Instances  []struct {
				Attributes map[string]any `json:"attributes"`
				Private    []byte         `json:"private"`
			} `json:"instances"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		w.T.Fatalf("terraform.tfstate: %v", err)
	}
	for _, r := range st.Resources {
		if r.Type == typ && r.Name == name && len(r.Instances) == 1 {
			return r.Instances[0].Attributes, r.Instances[0].Private
		}
	}
	w.T.Fatalf("%s.%s not in state:\n%s", typ, name, raw)
	return nil, nil
}

// WriteFile writes a file or fails the test.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ReadFile reads a file or fails the test.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
