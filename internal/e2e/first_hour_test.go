package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the repository's top directory, seen from this package.
var repoRoot = filepath.Join("..", "..")

// freshHome is a user's first hour: a HOME with no Terraform settings, no
// CLI config (TF_CLI_CONFIG_FILE unset) and nothing else of the caller's
// Terraform environment. Go's own settings are passed on, so that `make`
// reuses the caller's build and module caches rather than downloading and
// compiling everything again.
type freshHome struct {
	t    *testing.T
	home string
	env  []string
}

func newFreshHome(t *testing.T) *freshHome {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("end-to-end test; set TF_ACC=1 to run it")
	}
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TF_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	out, err := exec.Command("go", "env", "GOENV", "GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOTOOLCHAIN").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	vals := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for i, k := range []string{"GOENV", "GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOTOOLCHAIN"} {
		if i < len(vals) && vals[i] != "" {
			env = append(env, k+"="+vals[i])
		}
	}
	env = append(env, "HOME="+home, "CHECKPOINT_DISABLE=1")
	return &freshHome{t: t, home: home, env: env}
}

// run runs a command in dir and fails the test unless it succeeds.
func (h *freshHome) run(dir, name string, args ...string) string {
	h.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, h.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		h.t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out.String())
	}
	return out.String()
}

// installMirror runs `make install-mirror` and returns the version it
// installed, checked against the directory layout Terraform's implied
// local mirror reads and against what the binary reports.
func (h *freshHome) installMirror() string {
	h.t.Helper()
	out := h.run(repoRoot, "make", "--no-print-directory", "install-mirror")
	bins, _ := filepath.Glob(filepath.Join(h.home, ".terraform.d", "plugins", "registry.terraform.io",
		"landscaper-tf", "landscaper", "*", "*_*", "terraform-provider-landscaper_v*"))
	if len(bins) != 1 {
		h.t.Fatalf("want one provider in the implied local mirror, found %v:\n%s", bins, out)
	}
	version := filepath.Base(filepath.Dir(filepath.Dir(bins[0])))
	if filepath.Base(bins[0]) != "terraform-provider-landscaper_v"+version || !strings.Contains(out, version) {
		h.t.Fatalf("installed %s as version %s:\n%s", bins[0], version, out)
	}
	if got := strings.TrimSpace(h.run(h.home, bins[0], "-version")); got != version {
		h.t.Fatalf("the provider reports version %q, installed as %q", got, version)
	}
	return version
}

// After `make install-mirror` in a fresh HOME, the examples work as the
// README says, with plain terraform commands: init, then apply in
// examples/quickstart, and init, then test in examples/installation. No
// CLI config, no environment variable, no registry.
func TestFirstHourInstallMirror(t *testing.T) {
	t.Parallel()
	h := newFreshHome(t)
	version := h.installMirror()

	quick := t.TempDir()
	copyTree(t, filepath.Join(repoRoot, "examples", "quickstart"), quick)
	out := h.run(quick, "terraform", "init", "-input=false", "-no-color")
	if !strings.Contains(out, "Installed landscaper-tf/landscaper v"+version) {
		t.Errorf("init did not install %s from the mirror:\n%s", version, out)
	}
	out = h.run(quick, "terraform", "apply", "-auto-approve", "-input=false", "-no-color")
	if !strings.Contains(out, `url = "https://shop.local"`) {
		t.Errorf("apply output lacks the url:\n%s", out)
	}

	inst := t.TempDir()
	copyTree(t, filepath.Join(repoRoot, "examples", "installation"), inst)
	h.run(inst, "terraform", "init", "-input=false", "-no-color")
	out = h.run(inst, "terraform", "test", "-no-color")
	for _, want := range []string{`run "staging"... pass`, `run "production"... pass`, `run "plan"... pass`, "0 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("terraform test output lacks %s:\n%s", want, out)
		}
	}

	// A lock file committed with an example would hold the checksum of
	// someone else's build and fail every other user's init.
	if out, err := exec.Command("git", "-C", repoRoot, "ls-files", "--", "examples/**.terraform.lock.hcl", "examples/*.terraform.lock.hcl").Output(); err != nil || len(out) > 0 {
		t.Errorf("lock files committed under examples/ (%v): %s", err, out)
	}
}
