package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// terraform115Env names a Terraform 1.15 binary for the tests of features
// Terraform 1.11 lacks (resource identity, list resources, `terraform
// query`); without it they look in build.sh's default output.
const terraform115Env = "LANDSCAPER_TERRAFORM_1_15"

// terraform115 returns the Terraform 1.15 binary, or skips the test:
// every other test keeps the installed Terraform 1.11.
func terraform115(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(terraform115Env)
	if bin == "" {
		home, _ := os.UserHomeDir()
		bin = filepath.Join(home, ".cache", "terraform-1.15.9", "terraform")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no Terraform 1.15 at %s (set %s, or build it with shared/terraform/build.sh): %v", bin, terraform115Env, err)
	}
	return bin
}

// identities reads each resource instance's identity from terraform.tfstate.
func identities(t *testing.T, w *acctest.Workspace) map[string]map[string]any {
	t.Helper()
	var st struct {
		Resources []struct {
			Type, Name string
			Instances  []struct {
				Identity map[string]any `json:"identity"`
			}
		}
	}
	if err := json.Unmarshal([]byte(acctest.ReadFile(t, w.Path("terraform.tfstate"))), &st); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, r := range st.Resources {
		for _, in := range r.Instances {
			out[r.Type+"."+r.Name] = in.Identity
		}
	}
	return out
}

// A Landscaper Installation is imported with an import block giving its
// identity { target, namespace, name } (Terraform 1.12+) instead of the ID
// string: -generate-config-out writes configuration that applies as it
// stands (the ConfigMap keeps its UID), the state holds that identity
// through apply and refresh, and an installation created here has its
// name alone as identity. An identity with a target but no namespace is
// refused, saying what to give.
func TestImportByIdentity(t *testing.T) {
	tf := terraform115(t)
	const ns = "cu-identity"
	w, c := importWorkspace(t, ns)
	w.Terraform = tf
	bp := manifestBlueprint([]string{"message"}, "manage",
		`{apiVersion: v1, kind: ConfigMap, metadata: {name: hello-identity, namespace: cu-identity}, data: {message: "{{ .imports.message }}"}}`, "")
	c.write("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DataObject\nmetadata: {name: do-message, namespace: " + ns + "}\ndata: hello\n")
	inst := c.writeInstallation(ns, "hello-identity", "    data: [{name: message, dataRef: do-message}]\n", bp)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello-identity, namespace: " + ns + "}\ndata: {message: hello}"
	di := c.writeExecution(ns, "hello-identity", inst.GetUID(), manifestItem(ns, "manage", cm), "")
	uid := c.write(labelled(cm, di)).GetUID()

	providerBlock := `
provider "landscaper" {
  targets = {
    landscaper = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
    my-cluster = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = file("${path.module}/kubeconfig") }) }
  }
}
`
	importBlock := func(identity string) string {
		return fmt.Sprintf("import {\n  to       = landscaper_installation.hello\n  identity = %s\n}\n", identity)
	}
	// Half a Landscaper identity is refused before anything is read.
	w.Config(providerBlock + importBlock(`{ target = "landscaper", name = "hello-identity" }`))
	out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-generate-config-out=generated.tf")
	if flat := strings.Join(strings.Fields(out), " "); code == 0 || !strings.Contains(flat, "target and namespace name an Installation") {
		t.Fatalf("an identity without namespace: plan exited %d:\n%s", code, out)
	}
	_ = os.Remove(w.Path("generated.tf"))

	want := map[string]any{"target": "landscaper", "namespace": ns, "name": "hello-identity"}
	w.Config(providerBlock + importBlock(`{ target = "landscaper", namespace = "cu-identity", name = "hello-identity" }`) + `
resource "landscaper_installation" "local" {
  name      = "local-identity"
  targets   = { cluster = { name = "my-cluster" } }
  imports   = { message = "local" }
  blueprint = { filesystem = { "blueprint.yaml" = <<-EOT
` + indentLines(strings.ReplaceAll(strings.ReplaceAll(bp, "hello-identity", "local-identity"), "${", "$${"), "    ") + `
  EOT
  } }
}
`)
	out, code = w.Run(nil, "plan", "-input=false", "-no-color", "-generate-config-out=generated.tf")
	if code != 0 {
		t.Fatalf("plan -generate-config-out with an import by identity exited %d:\n%s", code, out)
	}
	generated := acctest.ReadFile(t, w.Path("generated.tf"))
	if flat := strings.Join(strings.Fields(generated), " "); !strings.Contains(flat, `name = "hello-identity"`) || !strings.Contains(flat, `name = "my-cluster"`) {
		t.Errorf("generated configuration lacks the installation's name or target:\n%s", generated)
	}
	w.Apply()
	c.expectAdopted(ns, "hello-identity", uid, "hello-identity")
	ids := identities(t, w)
	if got := ids["landscaper_installation.hello"]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("identity of the taken-over installation after apply: %v, want %v", got, want)
	}
	if got, want := ids["landscaper_installation.local"], map[string]any{"target": nil, "namespace": nil, "name": "local-identity"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("identity of an installation created here: %v, want %v", got, want)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the take-over exited %d:\n%s", code, out)
	}
	if out, code := w.Run(nil, "apply", "-refresh-only", "-auto-approve", "-input=false", "-no-color"); code != 0 {
		t.Fatalf("apply -refresh-only exited %d:\n%s", code, out)
	}
	if got := identities(t, w)["landscaper_installation.hello"]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("identity after a refresh: %v, want %v", got, want)
	}
	if got := c.get("ConfigMap", ns, "hello-identity").GetUID(); got != uid {
		t.Errorf("the ConfigMap was re-created: UID %s, was %s", got, uid)
	}
}
