package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/privatestate"
)

// providerTargetsConfig deploys a ConfigMap through an execution and one
// through an installation, both on the provider's target "test-cluster",
// whose kubeconfig comes from an ephemeral variable. The installation's
// template writes what it sees of the target into its ConfigMap.
func providerTargetsConfig(ns, targetName string) string {
	return fmt.Sprintf(`
variable "kubeconfig" {
  type      = string
  ephemeral = true
}

provider "landscaper" {
  targets = {
    %[2]q = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = var.kubeconfig })
      labels = { env = "e2e" }
    }
  }
}

resource "landscaper_execution" "app" {
  name    = "app"
  targets = { cluster = { name = "test-cluster" } }
  deploy_items = {
    ns = {
      type   = "kubernetes-manifest"
      target = "cluster"
      config = yamlencode({ manifests = [{ manifest = { apiVersion = "v1", kind = "Namespace", metadata = { name = %[1]q } } }] })
    }
    cm = {
      type       = "kubernetes-manifest"
      target     = "cluster"
      depends_on = ["ns"]
      config = yamlencode({ manifests = [{ manifest = {
        apiVersion = "v1", kind = "ConfigMap", metadata = { name = "from-execution", namespace = %[1]q }
      } }] })
    }
  }
}

resource "landscaper_installation" "inst" {
  name       = "inst"
  targets    = { cluster = { name = "test-cluster" } }
  imports    = { namespace = %[1]q }
  depends_on = [landscaper_execution.app]
  blueprint = { filesystem = { "blueprint.yaml" = <<-EOT
    apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: Blueprint
    imports:
      - {name: cluster, targetType: landscaper.gardener.cloud/kubernetes-cluster}
      - {name: namespace, schema: {type: string}}
    deployExecutions:
      - name: x
        type: GoTemplate
        template: |
          deployItems:
            - name: cm
              type: landscaper.gardener.cloud/kubernetes-manifest
              target: {import: cluster}
              config:
                manifests:
                  - manifest:
                      apiVersion: v1
                      kind: ConfigMap
                      metadata: {name: from-installation, namespace: {{ .imports.namespace }}}
                      data:
                        name: {{ .imports.cluster.metadata.name | quote }}
                        env: {{ index .imports.cluster.metadata.labels "env" | quote }}
                        type: {{ .imports.cluster.spec.type | quote }}
                        config: {{ .imports.cluster.spec.config | toJson | quote }}
  EOT
  } }
}
`, ns, targetName)
}

// tokenKubeconfig is the test cluster's kubeconfig with its static token
// as the credential.
func tokenKubeconfig(token string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: testenv
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: testenv
  context: {cluster: testenv, user: admin}
current-context: testenv
`, kubeEnv.Host(), base64.StdEncoding.EncodeToString(kubeEnv.CAData()), token)
}

// clientKeyData is the private key of the cluster's certificate kubeconfig.
func clientKeyData(kubeconfig string) string {
	for _, l := range strings.Split(kubeconfig, "\n") {
		if k, ok := strings.CutPrefix(strings.TrimSpace(l), "client-key-data: "); ok {
			return k
		}
	}
	return ""
}

// configMap reads a ConfigMap from the test cluster; nil when there is none.
// deleteConfigMap deletes a ConfigMap behind Terraform's back.
func deleteConfigMap(t *testing.T, ns, name string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, kubeEnv.Host()+"/api/v1/namespaces/"+ns+"/configmaps/"+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := kubeEnv.HTTPClient().Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("deleting the ConfigMap: %v %v", resp, err)
	}
	_ = resp.Body.Close()
}

func configMap(t *testing.T, ns, name string) map[string]any {
	t.Helper()
	resp, err := kubeEnv.HTTPClient().Get(kubeEnv.Host() + "/api/v1/namespaces/" + ns + "/configmaps/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusNotFound {
		return nil
	}
	var cm map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

// assertNotInState fails when a secret is in the state file, in any
// resource's attributes or in its private state decoded (its JSON
// document and every blob).
func assertNotInState(t *testing.T, w *acctest.Workspace, secrets map[string]string) {
	t.Helper()
	raw := acctest.ReadFile(t, w.Path("terraform.tfstate"))
	for what, s := range secrets {
		if strings.Contains(raw, s) {
			t.Errorf("the %s is in terraform.tfstate", what)
		}
	}
	for _, r := range [][2]string{{"landscaper_execution", "app"}, {"landscaper_installation", "inst"}} {
		doc, err := privatestate.Decode(w.Private(r[0], r[1]))
		if err != nil {
			t.Fatalf("%s.%s: private state: %v", r[0], r[1], err)
		}
		if len(doc.JSON) == 0 {
			t.Fatalf("%s.%s: no private state", r[0], r[1])
		}
		parts := map[string][]byte{"document": doc.JSON}
		for k, b := range doc.Blobs {
			parts["blob "+k] = b
		}
		for part, b := range parts {
			for what, s := range secrets {
				if strings.Contains(string(b), s) {
					t.Errorf("the %s is in the private state of %s.%s (%s)", what, r[0], r[1], part)
				}
			}
		}
		// What is kept of the target: its name and where it points.
		if !strings.Contains(string(doc.JSON), `"ref":"test-cluster"`) || !strings.Contains(string(doc.JSON), kubeEnv.Host()) {
			t.Errorf("%s.%s: private state does not keep the target's name and server:\n%.600s", r[0], r[1], doc.JSON)
		}
	}
}

// Credentials given to a provider-level target from an ephemeral variable
// never reach the state: apply, an empty plan, a new credential for the
// same cluster (nothing to do), pointing the name elsewhere (the items run
// again), destroy with the credential of the day.
func TestProviderTargetCredentialsStayOutOfState(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	if kubeEnv == nil {
		t.Fatal("no control plane")
	}
	const ns = "e2e-provider-targets"
	tokenCfg, certCfg := tokenKubeconfig(kubeEnv.Token()), kubeEnv.Kubeconfig()
	secrets := map[string]string{"token": kubeEnv.Token(), "client key": clientKeyData(certCfg)}
	if secrets["client key"] == "" {
		t.Fatal("the test cluster's kubeconfig has no client-key-data")
	}
	withToken, withCert := []string{"TF_VAR_kubeconfig=" + tokenCfg}, []string{"TF_VAR_kubeconfig=" + certCfg}

	w.Config(providerTargetsConfig(ns, "test-cluster"))
	logPath := w.Path("tf.log")
	out, code := w.Run(append([]string{"TF_LOG=TRACE", "TF_LOG_PATH=" + logPath}, withToken...), "apply", "-input=false", "-no-color", "-auto-approve")
	if code != 0 {
		t.Fatalf("apply exited %d:\n%s", code, out)
	}
	if strings.Contains(out, kubeEnv.Token()) {
		t.Error("the token is in the apply output")
	}
	for _, e := range readLog(t, logPath) {
		if strings.Contains(e.text, kubeEnv.Token()) {
			t.Errorf("the token is in the TRACE log at %s: %.300s", e.level, e.text)
		}
	}
	if configMap(t, ns, "from-execution") == nil {
		t.Fatal("the execution's ConfigMap was not created")
	}
	cm := configMap(t, ns, "from-installation")
	if cm == nil {
		t.Fatal("the installation's ConfigMap was not created")
	}
	// Templates see the target's name, type and labels, not its config.
	data, _ := cm["data"].(map[string]any)
	want := map[string]any{"name": "test-cluster", "env": "e2e", "type": "landscaper.gardener.cloud/kubernetes-cluster", "config": "null"}
	for k, v := range want {
		if data[k] != v {
			t.Errorf("the template saw %s = %v, want %v", k, data[k], v)
		}
	}
	assertNotInState(t, w, secrets)
	// The plan's review surface names the provider target and its server.
	target := acctest.Dig(w.Attributes("landscaper_installation", "inst"), "deploy_items", "cm", "target")
	if s, _ := target.(string); !strings.Contains(s, `provider target "test-cluster"`) || !strings.Contains(s, kubeEnv.Host()) {
		t.Errorf("deploy_items.cm.target = %v, want it to name the provider target and its server", target)
	}

	plan := func(env []string, want int) string {
		t.Helper()
		out, code := w.Run(env, "plan", "-input=false", "-no-color", "-detailed-exitcode")
		if code != want {
			t.Fatalf("plan exited %d, want %d:\n%s", code, want, out)
		}
		return out
	}
	plan(withToken, 0)
	if out, code := w.Run(withToken, "show", "-no-color"); code != 0 || strings.Contains(out, kubeEnv.Token()) {
		t.Errorf("terraform show exited %d or shows the token", code)
	}
	// Rotation: another credential for the same cluster plans nothing.
	plan(withCert, 0)
	if out, code := w.Run(withCert, "apply", "-input=false", "-no-color", "-auto-approve"); code != 0 || !strings.Contains(out, "0 changed") {
		t.Fatalf("apply after the rotation exited %d or changed something:\n%s", code, out)
	}
	assertNotInState(t, w, secrets)

	// Refresh checks for drift with the provider's credential: a ConfigMap
	// deleted behind Terraform's back is seen, and the apply restores it.
	deleteConfigMap(t, ns, "from-execution")
	plan(withCert, 2)
	if out, code := w.Run(withCert, "apply", "-input=false", "-no-color", "-auto-approve"); code != 0 {
		t.Fatalf("apply after the drift exited %d:\n%s", code, out)
	}
	if configMap(t, ns, "from-execution") == nil {
		t.Error("the drifted ConfigMap was not restored")
	}

	// The same name pointing to another server plans the items that use it.
	elsewhere := strings.ReplaceAll(certCfg, kubeEnv.Host(), strings.Replace(kubeEnv.Host(), "127.0.0.1", "localhost", 1))
	out = plan([]string{"TF_VAR_kubeconfig=" + elsewhere}, 2)
	for _, s := range []string{"landscaper_execution.app", "landscaper_installation.inst", "localhost"} {
		if !strings.Contains(out, s) {
			t.Errorf("the plan after pointing the target elsewhere does not show %q:\n%s", s, out)
		}
	}

	if out, code := w.Run(withCert, "destroy", "-auto-approve", "-input=false", "-no-color"); code != 0 {
		t.Fatalf("destroy: %s", out)
	}
	if configMap(t, ns, "from-execution") != nil || configMap(t, ns, "from-installation") != nil {
		t.Error("destroy left ConfigMaps behind")
	}
}

// A provider target that is not defined is a plan-time error naming it;
// so is one that stored items use when the resource is destroyed.
func TestProviderTargetMissing(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	if kubeEnv == nil {
		t.Fatal("no control plane")
	}
	const ns = "e2e-provider-targets-missing"
	env := []string{"TF_VAR_kubeconfig=" + kubeEnv.Kubeconfig()}

	w.Config(providerTargetsConfig(ns, "other"))
	out, code := w.Run(env, "plan", "-input=false", "-no-color")
	if code == 0 || !strings.Contains(out, "Provider target not defined") || !strings.Contains(out, `"test-cluster" names no target`) {
		t.Fatalf("plan with an undefined provider target exited %d:\n%s", code, out)
	}

	w.Config(providerTargetsConfig(ns, "test-cluster"))
	if out, code := w.Run(env, "apply", "-input=false", "-no-color", "-auto-approve"); code != 0 {
		t.Fatalf("apply exited %d:\n%s", code, out)
	}
	// The resources and their provider target leave the configuration:
	// destroying them needs the target, and the plan says so.
	w.Config(`
variable "kubeconfig" {
  type      = string
  ephemeral = true
}

provider "landscaper" {
  targets = { other = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = yamlencode({ kubeconfig = var.kubeconfig }) } }
}
`)
	out, code = w.Run(env, "apply", "-auto-approve", "-input=false", "-no-color")
	if code == 0 {
		t.Fatalf("destroying without the provider target succeeded:\n%s", out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, s := range []string{"Provider target not defined", `The deploy items "cm", "ns" use the provider's target "test-cluster"`,
		`The deploy items "cm" use`, "destroying them needs it", `Define "test-cluster" in the provider's targets again`} {
		if !strings.Contains(flat, s) {
			t.Errorf("the destroy error does not say %q:\n%s", s, out)
		}
	}
	// terraform destroy with the reference still configured names it too.
	w.Config(providerTargetsConfig(ns, "other"))
	out, code = w.Run(env, "destroy", "-auto-approve", "-input=false", "-no-color")
	if code == 0 || !strings.Contains(out, `"test-cluster" names no target`) {
		t.Fatalf("destroy without the provider target exited %d:\n%s", code, out)
	}
	if strings.Contains(out, "Unknown target") || strings.Contains(out, "Invalid deploy item target") {
		t.Errorf("an undefined provider target is reported more than once:\n%s", out)
	}
	if configMap(t, ns, "from-execution") == nil {
		t.Error("the refused destroy deleted something")
	}
	w.Config(providerTargetsConfig(ns, "test-cluster"))
	if out, code := w.Run(env, "destroy", "-auto-approve", "-input=false", "-no-color"); code != 0 {
		t.Fatalf("destroy: %s", out)
	}
}

// A kubeconfig whose user runs a credential plugin (users[].user.exec)
// works as a target, inline here: the state holds the command, never the
// token the plugin prints.
func TestExecCredentialPluginKubeconfig(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	if kubeEnv == nil {
		t.Fatal("no control plane")
	}
	const ns = "default"
	tokenFile, plugin := w.Path("token"), w.Path("get-token.sh")
	acctest.WriteFile(t, tokenFile, kubeEnv.Token())
	acctest.WriteFile(t, plugin, "#!/bin/sh\nprintf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","+
		"\"status\":{\"token\":\"%s\"}}' \"$(cat "+tokenFile+")\"\n")
	if err := os.Chmod(plugin, 0o755); err != nil {
		t.Fatal(err)
	}
	w.Config(fmt.Sprintf(`
resource "landscaper_execution" "app" {
  name = "app"
  targets = { cluster = {
    type = "landscaper.gardener.cloud/kubernetes-cluster"
    config = yamlencode({ kubeconfig = yamlencode({
      apiVersion = "v1"
      kind       = "Config"
      clusters   = [{ name = "c", cluster = { server = %[1]q, "certificate-authority-data" = %[2]q } }]
      users = [{ name = "u", user = { exec = {
        apiVersion      = "client.authentication.k8s.io/v1"
        command         = %[3]q
        interactiveMode = "Never"
      } } }]
      contexts          = [{ name = "c", context = { cluster = "c", user = "u" } }]
      "current-context" = "c"
    }) })
  } }
  deploy_items = {
    cm = {
      type   = "kubernetes-manifest"
      target = "cluster"
      config = yamlencode({ manifests = [{ manifest = {
        apiVersion = "v1", kind = "ConfigMap", metadata = { name = "from-exec-plugin", namespace = %[4]q }
      } }] })
    }
  }
}
`, kubeEnv.Host(), base64.StdEncoding.EncodeToString(kubeEnv.CAData()), plugin, ns))
	w.Apply()
	if configMap(t, ns, "from-exec-plugin") == nil {
		t.Fatal("the ConfigMap was not created")
	}
	if strings.Contains(acctest.ReadFile(t, w.Path("terraform.tfstate")), kubeEnv.Token()) {
		t.Error("the plugin's token is in terraform.tfstate")
	}
	if plan, code := w.PlanExitCode(); code != 0 {
		t.Errorf("plan after apply exited %d:\n%s", code, plan)
	}
	if out, code := w.Run(nil, "destroy", "-auto-approve", "-input=false", "-no-color"); code != 0 {
		t.Fatalf("destroy: %s", out)
	}
	if configMap(t, ns, "from-exec-plugin") != nil {
		t.Error("destroy left the ConfigMap")
	}
}
