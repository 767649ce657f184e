package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
)

// TestImportFromLandscaper_dataImports takes over an installation whose
// imports come from a DataObject, a ConfigMap and a Secret: the first two
// become imports, the Secret's sensitive_imports, which the generated
// configuration holds as null (the import warns, and that plan fails
// naming the missing import); set there, the apply adopts the rendered
// ConfigMap and the plan after is empty. The export that copies a Secret
// never shows.
func TestImportFromLandscaper_dataImports(t *testing.T) {
	w := newWorkspace(t)
	c := newLandscaperCluster(t)
	acctest.WriteFile(t, w.Path("kubeconfig"), kubeEnv.Kubeconfig())
	c.write("apiVersion: v1\nkind: Namespace\nmetadata: {name: cu-data}\n")
	c.write("apiVersion: v1\nkind: Namespace\nmetadata: {name: example-data}\n")
	c.write(myClusterTarget("cu-data"))
	c.write("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DataObject\nmetadata: {name: do-message, namespace: cu-data}\ndata: hello\n")
	c.write("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: cu-data}\ndata: {color: blue}\n")
	c.writeSecret("cu-data", "credentials", map[string]string{"password": "s3cr3t-pw", "token": "t0k3n"})
	manifest := `apiVersion: v1
kind: ConfigMap
metadata: {name: hello-data, namespace: example-data}
data:
  message: {{ .imports.message }}
  color: {{ .imports.color }}
  passwordLength: "{{ len .imports.password }}"
  tokenLength: "{{ len (index .imports "api-token") }}"`
	rendered := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hello-data, namespace: example-data}\ndata:\n  message: hello\n  color: blue\n  passwordLength: \"9\"\n  tokenLength: \"5\""
	item := func(m string) string {
		return fmt.Sprintf(`type: landscaper.gardener.cloud/kubernetes-manifest
target: {name: my-cluster, namespace: cu-data}
config:
  apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
  kind: ProviderConfiguration
  manifests:
    - policy: manage
      manifest:
%s
`, indentLines(m, "        "))
	}
	blueprint := fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: message, type: data, schema: {type: string}}
  - {name: color, type: data, schema: {type: string}}
  - {name: password, type: data, schema: {type: string}}
  - {name: api-token, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: default-deploy-item
          target:
            import: cluster
%s
exports:
  - {name: token, type: data, schema: {type: string}}
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        token: "{{ index .imports "api-token" }}"
`, indentLines(item(manifest), "          "))
	// Landscaper exported the token: its DataObject holds the Secret's
	// value.
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: DataObject
metadata:
  name: do-token
  namespace: cu-data
  labels: {data.landscaper.gardener.cloud/source: Inst.hello-data, data.landscaper.gardener.cloud/sourceType: export, data.landscaper.gardener.cloud/key: do-token}
data: t0k3n
`)
	inst := c.writeInstallation("cu-data", "hello-data", `    data:
      - {name: message, dataRef: do-message}
      - {name: color, configMapRef: {name: settings, key: color}}
      - {name: password, secretRef: {name: credentials, key: password}}
      - {name: api-token, secretRef: {name: credentials, key: token}}
  exports:
    data: [{name: token, dataRef: do-token}]
`, blueprint)
	di := c.writeExecution("cu-data", "hello-data", inst.GetUID(), item(rendered), "")
	cm := c.write(fmt.Sprintf("%s\n", strings.Replace(rendered, "metadata: {name: hello-data, namespace: example-data}",
		fmt.Sprintf("metadata: {name: hello-data, namespace: example-data, labels: {%q: %s}}", kube.ManifestManagedLabel, di), 1)))

	w.Config(importConfig("landscaper/cu-data/hello-data"))
	// sensitive_imports is sensitive as a whole, so Terraform generates
	// it as null: the plan of the generated configuration then lacks the
	// Secrets' imports. The import's warning names each with its Secret
	// and gives the line to write instead; the file is written.
	out, _ := w.Run(nil, "plan", "-input=false", "-no-color", "-generate-config-out=generated.tf")
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"Set sensitive_imports in the configuration",
		"These imports of Installation cu-data/hello-data hold Secrets' values",
		"- api-token: Secret cu-data/credentials#token", "- password: Secret cu-data/credentials#password",
		`variable "hello_data_api_token" { sensitive = true }`, `variable "hello_data_password" { sensitive = true }`} {
		if !strings.Contains(flat, want) {
			t.Errorf("the warning does not say %q:\n%s", want, out)
		}
	}
	line := regexp.MustCompile(`(?m)^\s*(sensitive_imports = \{.*\})\s*$`).FindStringSubmatch(out)
	if line == nil || line[1] != `sensitive_imports = { "api-token" = var.hello_data_api_token, password = var.hello_data_password }` {
		t.Fatalf("the warning gives no line for sensitive_imports, or another (%q):\n%s", line, out)
	}
	generated := acctest.ReadFile(t, w.Path("generated.tf"))
	flatGen := strings.Join(strings.Fields(generated), " ")
	for _, want := range []string{`color = "blue"`, `message = "hello"`, `sensitive_imports = null`} {
		if !strings.Contains(flatGen, want) {
			t.Errorf("generated configuration lacks %s:\n%s", want, generated)
		}
	}
	if strings.Contains(generated, "s3cr3t") {
		t.Fatalf("the Secret's value is in the generated configuration:\n%s", generated)
	}
	// The user does what the warning says.
	generated = regexp.MustCompile(`sensitive_imports\s*=\s*null[^\n]*`).ReplaceAllString(generated, line[1])
	acctest.WriteFile(t, w.Path("generated.tf"), generated)
	acctest.WriteFile(t, w.Path("variables.tf"), "variable \"hello_data_api_token\" {\n  sensitive = true\n}\nvariable \"hello_data_password\" {\n  sensitive = true\n}\n")
	w.Env = append(w.Env, "TF_VAR_hello_data_password=s3cr3t-pw", "TF_VAR_hello_data_api_token=t0k3n")
	// An export of an installation with Secret imports may carry one:
	// the imported exports are held as sensitive until the first apply
	// knows which a secret influenced.
	if out := w.Apply(); strings.Contains(out, "t0k3n") || strings.Contains(out, "s3cr3t") {
		t.Fatalf("a Secret's value shows in the apply:\n%s", out)
	}
	if got := acctest.Dig(w.Attributes("landscaper_installation", "hello"), "sensitive_exports", "value", "token"); got != "t0k3n" {
		t.Errorf("sensitive_exports.token = %v after the apply, want the Secret's value there", got)
	}

	after := c.get("ConfigMap", "example-data", "hello-data")
	if after.GetUID() != cm.GetUID() {
		t.Fatalf("the ConfigMap was re-created: UID %s, was %s", after.GetUID(), cm.GetUID())
	}
	if got, want := after.GetLabels()[kube.ManifestManagedLabel], kube.OwnerFor("hello-data", "default-deploy-item"); got != want {
		t.Fatalf("managed label %q, want %q", got, want)
	}
	if out, code := w.PlanExitCode(); code != 0 {
		t.Fatalf("plan after the take-over exited %d:\n%s", code, out)
	}
}
