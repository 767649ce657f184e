package e2e

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/privatestate"
)

// atRestBlueprint uses the password import in a Kubernetes Secret (whose
// data an item exports, as Landscaper's guided tour exports a token), a
// helm value, an exec item (when execSecret is true) and an export; ns and
// plain are items no secret reaches.
const atRestBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: cluster, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: namespace, schema: {type: string}}
  - {name: chart, schema: {type: string}}
  - {name: script, schema: {type: string}}
  - {name: execSecret, schema: {type: boolean}}
  - {name: password, schema: {type: string}}
exports:
  - {name: namespace, schema: {type: string}}
  - {name: token, schema: {type: string}}
  - {name: stored, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: ns
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          config:
            manifests:
              - manifest: {apiVersion: v1, kind: Namespace, metadata: {name: {{ .imports.namespace }}}}
        - name: secret
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          dependsOn: [ns]
          config:
            manifests:
              - manifest:
                  apiVersion: v1
                  kind: Secret
                  metadata: {name: db, namespace: {{ .imports.namespace }}}
                  stringData: {password: {{ .imports.password | quote }}}
            exports:
              exports:
                - key: stored
                  jsonPath: .data.password
                  fromResource: {apiVersion: v1, kind: Secret, name: db, namespace: {{ .imports.namespace }}}
        - name: release
          type: landscaper.gardener.cloud/helm
          target: {import: cluster}
          dependsOn: [ns]
          config:
            name: app
            namespace: {{ .imports.namespace }}
            chart: {archive: {raw: {{ .imports.chart | quote }}}}
            values: {message: {{ .imports.password | quote }}}
        - name: shell
          type: exec
          config:
            command: [sh, {{ .imports.script | quote }}, shell]
            importValues: {password: {{ if .imports.execSecret }}{{ .imports.password | quote }}{{ else }}none{{ end }}}
        - name: plain
          type: exec
          config:
            command: [sh, {{ .imports.script | quote }}, plain]
exportExecutions:
  - name: x
    type: GoTemplate
    template: |
      exports:
        namespace: {{ .imports.namespace }}
        token: {{ printf "tok-%s" .imports.password | quote }}
        stored: {{ .deployitems.secret.stored | quote }}
`

// atRestConfig is an installation given its password through
// sensitive_imports_wo from an ephemeral variable (or, when plain, through
// sensitive_imports from a sensitive one), on the provider's target.
func atRestConfig(ns, chart, script string, plain bool) string {
	password := `  sensitive_imports_wo         = { password = var.password }
  sensitive_imports_wo_version = var.password_version`
	variable := `variable "password" {
  type      = string
  ephemeral = true
}`
	if plain {
		password = `  sensitive_imports = { password = var.password }`
		variable = `variable "password" {
  type      = string
  sensitive = true
}`
	}
	return fmt.Sprintf(`
variable "kubeconfig" {
  type      = string
  ephemeral = true
}

%[5]s

variable "password_version" {
  type    = number
  default = 1
}

variable "exec_secret" {
  type    = bool
  default = true
}

provider "landscaper" {
  targets = {
    test-cluster = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = var.kubeconfig })
    }
  }
}

resource "landscaper_installation" "app" {
  name    = "app"
  targets = { cluster = { name = "test-cluster" } }
  imports = { namespace = %[1]q, chart = %[2]q, script = %[3]q, execSecret = var.exec_secret }
%[4]s
  blueprint = { filesystem = { "blueprint.yaml" = %[6]q } }
}

output "exports" { value = landscaper_installation.app.exports }
output "deploy_items" { value = landscaper_installation.app.deploy_items }
output "sensitive_exports" {
  value     = landscaper_installation.app.sensitive_exports
  sensitive = true
}
`, ns, chart, script, password, variable, atRestBlueprint)
}

// atRestCanaries are the forms of a password a scan looks for: as it is,
// in base64, in hex, in upper case, and as the export derived from it.
func atRestCanaries(pw string) map[string]string {
	return map[string]string{
		"password": pw, "its base64": base64.StdEncoding.EncodeToString([]byte(pw)), "its hex": hex.EncodeToString([]byte(pw)),
		"its upper case": strings.ToUpper(pw), "the token made of it": "tok-" + pw,
	}
}

// atRestRun is one workspace of the at-rest test and the scans of
// everything Terraform and the provider leave.
type atRestRun struct {
	t        *testing.T
	w        *acctest.Workspace
	ns, dir  string
	canaries map[string]string
	// found counts, by where, what the scans found (for the plain run).
	found map[string]bool
}

func (r *atRestRun) scan(where, text string) {
	r.t.Helper()
	for what, c := range r.canaries {
		if i := strings.Index(text, c); i >= 0 {
			r.found[where] = true
			if r.found["expected"] {
				continue
			}
			r.t.Errorf("%s holds the %s (%q): …%s…", where, what, c, text[max(0, i-150):min(len(text), i+len(c)+80)])
		}
	}
}

// scanState scans the state file, the resource's private state decoded
// (document and every blob), terraform show -json and the outputs.
func (r *atRestRun) scanState(when string) {
	r.t.Helper()
	raw, err := os.ReadFile(r.w.Path("terraform.tfstate"))
	if err != nil {
		r.t.Fatal(err)
	}
	r.scan("the state file "+when, string(raw))
	if strings.Contains(string(raw), `"landscaper_installation"`) {
		doc, err := privatestate.Decode(r.w.Private("landscaper_installation", "app"))
		if err != nil {
			r.t.Fatalf("private state %s: %v", when, err)
		}
		r.scan("the private state's document "+when, string(doc.JSON))
		for k, b := range doc.Blobs {
			r.scan(fmt.Sprintf("the private state's blob %q %s", k, when), string(b))
		}
	}
	show, _ := r.w.Run(nil, "show", "-json")
	r.scan("terraform show -json "+when, show)
	outputs, _ := r.w.Run(nil, "output", "-json")
	r.scan("terraform output -json "+when, outputs)
}

// run runs terraform with the kubeconfig and password (and vars), under
// TF_LOG=TRACE, and scans its output and log. want is the exit code.
func (r *atRestRun) run(what string, password string, vars []string, want int, args ...string) string {
	r.t.Helper()
	logPath := r.w.Path("tf.log")
	_ = os.Remove(logPath)
	env := append([]string{"TF_LOG=TRACE", "TF_LOG_PATH=" + logPath, "TF_VAR_kubeconfig=" + kubeEnv.Kubeconfig(),
		"TF_VAR_password=" + password}, vars...)
	out, code := r.w.Run(env, args...)
	if code != want {
		r.t.Fatalf("%s exited %d, want %d:\n%s", what, code, want, out)
	}
	r.scan("the output of "+what, out)
	r.scan("the TRACE log of "+what, traceLog(r.t, logPath))
	return out
}

// kubeObject reads an object of the test cluster by API path; nil when
// there is none.
func kubeObject(t *testing.T, path string) map[string]any {
	t.Helper()
	resp, err := kubeEnv.HTTPClient().Get(kubeEnv.Host() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusNotFound {
		return nil
	}
	var obj map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

func newAtRestRun(t *testing.T, ns string, plain bool) *atRestRun {
	t.Helper()
	w := newWorkspace(t)
	if kubeEnv == nil {
		t.Fatal("no control plane")
	}
	dir := w.Path("runs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := w.Path("item.sh")
	// Each run appends its imports to <dir>/<item>-<OPERATION>: the items
	// outside the state say what they were given and how often they ran.
	acctest.WriteFile(t, script, `cat "$IMPORTS_PATH" >> "`+dir+`/$1-$OPERATION"; echo >> "`+dir+`/$1-$OPERATION"`+"\n")
	chart := base64.StdEncoding.EncodeToString(helmtest.Archive(t, helmtest.Demo, ""))
	w.Config(atRestConfig(ns, chart, script, plain))
	return &atRestRun{t: t, w: w, ns: ns, dir: dir, found: map[string]bool{}}
}

// runs are the lines an item's command appended for operation op.
func (r *atRestRun) runs(item, op string) []string {
	b, err := os.ReadFile(filepath.Join(r.dir, item+"-"+op))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// What the cluster holds: the Secret's password, the helm release's
// message.
func (r *atRestRun) inCluster() (secret, message string) {
	r.t.Helper()
	if s := kubeObject(r.t, "/api/v1/namespaces/"+r.ns+"/secrets/db"); s != nil {
		encoded, _ := acctest.Dig(s, "data", "password").(string)
		b, _ := base64.StdEncoding.DecodeString(encoded)
		secret = string(b)
	}
	if cm := kubeObject(r.t, "/api/v1/namespaces/"+r.ns+"/configmaps/app-config"); cm != nil {
		message, _ = acctest.Dig(cm, "data", "message").(string)
	}
	return secret, message
}

// With sensitive_imports_wo from an ephemeral variable, no form of the
// password is in the state file, the private state, a saved plan, the
// TRACE log, any command's output or the outputs, across an apply, a
// no-op plan, a new password without a new version (nothing to do), a
// version bump (the items it reaches run, the others not), a refused
// destroy of the exec item given the password, and a destroy. The
// cluster and the exec item got the real password every time.
func TestSecretsAtRest(t *testing.T) {
	t.Parallel()
	const first, second = "Tr0ub4dor-at-rest-41", "c0rrect-h0rse-at-rest-42"
	r := newAtRestRun(t, "e2e-at-rest", false)
	r.canaries = atRestCanaries(first)
	for k, v := range atRestCanaries(second) {
		r.canaries["second "+k] = v
	}

	out := r.run("the first apply", first, nil, 0, "apply", "-input=false", "-no-color", "-auto-approve")
	if !strings.Contains(out, "Apply complete") {
		t.Fatalf("apply:\n%s", out)
	}
	if s, m := r.inCluster(); s != first || m != first {
		t.Fatalf("the cluster got secret %q and helm message %q, want the password", s, m)
	}
	if runs := r.runs("shell", "RECONCILE"); len(runs) != 1 || !strings.Contains(runs[0], first) {
		t.Fatalf("the exec item ran with %q", runs)
	}
	r.scanState("after the first apply")
	attrs := r.w.Attributes("landscaper_installation", "app")
	if attrs["sensitive_imports_wo"] != nil || attrs["sensitive_exports"] != nil {
		t.Errorf("sensitive_imports_wo = %v, sensitive_exports = %v, want both null", attrs["sensitive_imports_wo"], attrs["sensitive_exports"])
	}
	if ex, _ := acctest.Dig(attrs, "exports", "value").(map[string]any); ex["namespace"] != r.ns || ex["token"] != nil || ex["stored"] != nil {
		t.Errorf("exports = %v, want the namespace and null for what the password made", attrs["exports"])
	}

	// Nothing changed: an empty plan, saved and shown.
	r.run("a no-op plan", first, nil, 0, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=noop.out")
	r.run("terraform show of the no-op plan", first, nil, 0, "show", "-json", "noop.out")
	// A new password alone plans nothing: Terraform cannot see it.
	r.run("a plan with a new password", second, nil, 0, "plan", "-input=false", "-no-color", "-detailed-exitcode")

	// A new version: the items the password reaches run, with the new one.
	bump := []string{"TF_VAR_password_version=2"}
	out = r.run("the plan of the version bump", second, bump, 2, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=bump.out")
	if !strings.Contains(out, "sensitive_imports_wo_version = 1 -> 2") {
		t.Errorf("the plan of the version bump does not show the new version:\n%s", out)
	}
	r.run("terraform show of the bump plan", second, bump, 0, "show", "-json", "bump.out")
	r.run("the apply of the bump plan", second, bump, 0, "apply", "-input=false", "-no-color", "bump.out")
	if s, m := r.inCluster(); s != second || m != second {
		t.Errorf("after the bump the cluster has secret %q and helm message %q, want the new password", s, m)
	}
	if runs := r.runs("shell", "RECONCILE"); len(runs) != 2 || !strings.Contains(runs[1], second) {
		t.Errorf("the exec item's runs: %q", runs)
	}
	if runs := r.runs("plain", "RECONCILE"); len(runs) != 1 {
		t.Errorf("an item the password does not reach ran again: %q", runs)
	}
	r.scanState("after the version bump")
	r.run("a no-op plan after the bump", second, bump, 0, "plan", "-input=false", "-no-color", "-detailed-exitcode")

	// The exec item given the password cannot be deleted without it.
	out = r.run("a destroy of the exec item given the password", second, bump, 1, "destroy", "-auto-approve", "-input=false", "-no-color")
	if !strings.Contains(out, `deploy item "shell"`) || !strings.Contains(out, "sensitive_imports_wo influenced its config") {
		t.Errorf("the refused destroy does not name the exec item and why:\n%s", out)
	}
	if runs := r.runs("shell", "DELETE"); len(runs) != 0 {
		t.Errorf("the refused destroy ran the exec item's delete: %q", runs)
	}
	// Given no secret any more, it runs once, keeps its config, and goes.
	noSecret := append(bump, "TF_VAR_exec_secret=false")
	r.run("the apply that takes the password from the exec item", second, noSecret, 0, "apply", "-input=false", "-no-color", "-auto-approve")
	r.scanState("before the destroy")
	r.run("the destroy", second, noSecret, 0, "destroy", "-auto-approve", "-input=false", "-no-color")
	if s, m := r.inCluster(); s != "" || m != "" {
		t.Errorf("destroy left the Secret (%q) or the release's ConfigMap (%q)", s, m)
	}
	if runs := r.runs("shell", "DELETE"); len(runs) != 1 || !strings.Contains(runs[0], "none") {
		t.Errorf("the exec item's delete ran with %q", runs)
	}
	r.scanState("after the destroy")
}

// The same blueprint with sensitive_imports (a sensitive variable): the
// state keeps the password in sensitive_imports and the private state
// keeps the rendered configs that hold it, as the security guide says.
// Outputs, logs and plans do not show it.
func TestSensitiveImportsAreStored(t *testing.T) {
	t.Parallel()
	const pw = "Pl41n-sens1tive-43"
	r := newAtRestRun(t, "e2e-stored", true)
	r.canaries = map[string]string{"password": pw}
	r.run("the apply", pw, nil, 0, "apply", "-input=false", "-no-color", "-auto-approve")
	r.run("a no-op plan", pw, nil, 0, "plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=noop.out")
	r.found["expected"] = true
	r.run("terraform show of the plan", pw, nil, 0, "show", "-json", "noop.out")
	r.scanState("after the apply")
	for _, where := range []string{"the state file after the apply", "the private state's document after the apply",
		"terraform show -json after the apply", "the output of terraform show of the plan"} {
		if !r.found[where] {
			t.Errorf("%s does not hold the password: the guide says it does", where)
		}
	}
	r.run("the destroy", pw, nil, 0, "destroy", "-auto-approve", "-input=false", "-no-color")
}

// A branch on two write-only booleans (a && b with a true and b false)
// comes out the same for the real values and for both flipped; so does a
// comparison of a number and its stand-in. What such a branch chose is
// still not at rest: the state file, the private state and terraform show
// hold neither outcome. The outcomes are upper-cased in the template so
// that the blueprint kept in state does not hold them as they are.
func TestSecretsAtRestBranches(t *testing.T) {
	t.Parallel()
	const bp = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: flags, schema: {type: object}}
  - {name: size, schema: {type: integer}}
exports:
  - {name: both, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: branch
          type: landscaper.gardener.cloud/mock
          config:
            providerStatus:
              both: {{ if and .imports.flags.a .imports.flags.b }}{{ "branch-both" | upper }}{{ else }}{{ "branch-neither" | upper }}{{ end }}
              size: {{ if gt (int .imports.size) 10 }}{{ "size-large" | upper }}{{ else }}{{ "size-small" | upper }}{{ end }}
exportExecutions:
  - name: x
    type: GoTemplate
    template: |
      exports:
        both: {{ if and .imports.flags.a .imports.flags.b }}{{ "export-both" | upper }}{{ else }}{{ "export-neither" | upper }}{{ end }}
`
	w := newWorkspace(t)
	w.Config(fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name                         = "app"
  blueprint                    = { filesystem = { "blueprint.yaml" = %q } }
  sensitive_imports_wo         = { flags = { a = true, b = false }, size = 50 }
  sensitive_imports_wo_version = 1
}
`, bp))
	r := &atRestRun{t: t, w: w, found: map[string]bool{}, canaries: map[string]string{
		"outcome of a && b": "BRANCH-NEITHER", "outcome of size > 10": "SIZE-LARGE", "export of a && b": "EXPORT-NEITHER",
	}}
	if out, code := w.Run(nil, "apply", "-input=false", "-no-color", "-auto-approve"); code != 0 {
		t.Fatalf("apply exited %d:\n%s", code, out)
	}
	r.scanState("after the apply")
	if out, code := w.Run(nil, "plan", "-input=false", "-no-color", "-detailed-exitcode"); code != 0 {
		t.Errorf("the plan after the apply exited %d, want 0 (no changes):\n%s", code, out)
	}
}
