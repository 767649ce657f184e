package e2e

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ctf/ctftest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
)

// The real provider binary trusts a private registry CA through
// SSL_CERT_FILE alone; the registry password reaches neither the state,
// nor the output, nor a TRACE log; and with the registry down and the
// cache warm, a plan still works and says so in a warning.
func TestRegistryCredentialsStayOutOfLogs(t *testing.T) {
	t.Parallel()
	ca, err := ocitest.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	password := "pw-" + rand.Text()
	reg := ocitest.Start(t, ocitest.Options{CA: ca, Auth: ocitest.Basic, Username: "acme-ci", Password: password})
	acctest.Push(t, reg, ocitest.OCM, acctest.Publish(t, false, filepath.Join("..", "..", "examples", "installation", "component-constructor.yaml")))
	w := newWorkspace(t)
	caFile, err := ca.WriteFile(w.Dir)
	if err != nil {
		t.Fatal(err)
	}
	scripts, _ := filepath.Abs(filepath.Join("..", "..", "examples", "installation", "scripts"))
	w.Config(fmt.Sprintf(`
variable "password" {
  type      = string
  sensitive = true
}

provider "landscaper" {
  repository_context   = { type = "OCIRegistry", baseUrl = "%s/ocm" }
  registry_credentials = { %q = { username = "acme-ci", password = var.password } }
  cache_dir            = %q
}

resource "landscaper_installation" "app" {
  name      = "app"
  blueprint = { ref = "blueprint" }
  component = { name = "github.com/acme/app", version = "v1.0.0" }
  imports   = { environment = "staging", replicas = 3, scripts = %q }
}
`, reg.Host, reg.Host, filepath.Join(w.Dir, "cache"), scripts))
	logPath := w.Path("tf.log")
	env := []string{"SSL_CERT_FILE=" + caFile, "TF_VAR_password=" + password, "TF_LOG=TRACE", "TF_LOG_PATH=" + logPath}
	out, code := w.Run(env, "apply", "-input=false", "-no-color", "-auto-approve")
	if code != 0 {
		t.Fatalf("apply: %d\n%s", code, out)
	}
	reg.SetDown(true)
	plan, code := w.Run(env, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if code != 0 {
		t.Fatalf("plan with the registry down exited %d (want 0, no changes):\n%s", code, plan)
	}
	if !strings.Contains(plan, "Warning: Component served from the cache") || !strings.Contains(plan, reg.Host) {
		t.Errorf("no warning that the cache stood in for the registry:\n%s", plan)
	}
	if strings.Contains(out+plan, password) {
		t.Errorf("the password is in the output")
	}
	state, err := os.ReadFile(w.Path("terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(state), password) {
		t.Errorf("the password is in the state")
	}
	entries := readLog(t, logPath)
	for _, e := range entries {
		if strings.Contains(e.text, password) {
			t.Errorf("the password is in the log at %s: %.300s", e.level, e.text)
		}
	}
}

// examples/registry, as documented: its component published to a registry
// (TLS with a private CA, basic auth, the password from a variable), then
// the same module with var.transport set to a CTF archive and no registry.
func TestExampleRegistry(t *testing.T) {
	t.Parallel()
	ca, err := ocitest.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	password := "pw-" + rand.Text()
	reg := ocitest.Start(t, ocitest.Options{CA: ca, Auth: ocitest.Basic, Username: "acme-ci", Password: password})
	versions := acctest.Publish(t, false, filepath.Join("..", "..", "examples", "installation", "component-constructor.yaml"))
	acctest.Push(t, reg, ocitest.OCM, versions)
	w := newWorkspace(t)
	copyTree(t, filepath.Join("..", "..", "examples", "registry"), filepath.Join(w.Dir, "registry"))
	copyTree(t, filepath.Join("..", "..", "examples", "installation", "scripts"), filepath.Join(w.Dir, "installation", "scripts"))
	caFile, err := ca.WriteFile(w.Dir)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"SSL_CERT_FILE=" + caFile, "TF_VAR_registry=" + reg.Host + "/ocm", "TF_VAR_registry_password=" + password,
		"XDG_CACHE_HOME=" + filepath.Join(w.Dir, "cache")}
	out, code := w.Run(env, "-chdir=registry", "apply", "-input=false", "-no-color", "-auto-approve")
	if code != 0 || !strings.Contains(out, `url = "https://app.staging.example.com"`) {
		t.Fatalf("apply from the registry: %d\n%s", code, out)
	}
	if plan, code := w.Run(env, "-chdir=registry", "plan", "-input=false", "-no-color", "-detailed-exitcode"); code != 0 {
		t.Fatalf("second plan exit %d, want no changes:\n%s", code, plan)
	}
	// Air-gapped: the same module from a CTF archive; the registry is gone.
	reg.SetDown(true)
	transport := ctftest.WriteArchive(t, filepath.Join(w.Dir, "transport.tgz"), ctftest.Files(t, acctest.CTFVersions(versions)...))
	env = []string{"TF_VAR_transport=" + transport, "XDG_CACHE_HOME=" + filepath.Join(w.Dir, "cache")}
	out, code = w.Run(env, "-chdir=registry", "apply", "-input=false", "-no-color", "-auto-approve")
	if code != 0 {
		t.Fatalf("apply from the CTF: %d\n%s", code, out)
	}
	if plan, code := w.Run(env, "-chdir=registry", "plan", "-input=false", "-no-color", "-detailed-exitcode"); code != 0 {
		t.Fatalf("plan from the CTF exit %d, want no changes:\n%s", code, plan)
	}
}
