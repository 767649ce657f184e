package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// maskingPassword is the canary: a sensitive import that the masking
// blueprint (internal/provider/testdata/installation/masking) turns into
// base64, upper case, hashes, a basic-auth header, substrings, YAML, JSON,
// a Spiff concatenation, and an export that a sibling renders.
const maskingPassword = "p4ss-w0rd-sec-61"

func maskingCanaries() []string {
	pw := maskingPassword
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	sha := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
	return []string{
		pw, b64(pw), strings.ToUpper(pw), sha(pw), b64("admin:" + pw), pw[:9],
		"tok-" + pw, b64("tok-" + pw), sha(pw)[:12],
		"literal-api-key-1234",
		"exported-target-t0ken-4242", sha("exported-target-t0ken-4242"),
	}
}

// TestDerivedSecretsStayOutOfEverything drives the real CLI over the
// masking blueprint and an exec item that fails printing a basic-auth
// header made from the canary: neither the canary nor anything made of it
// is in the apply output (its diagnostics), the TRACE log of Terraform
// and the provider, the plan, `terraform show`, an output of `exports`, or
// a state attribute that is not sensitive.
func TestDerivedSecretsStayOutOfEverything(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	dir, err := filepath.Abs(filepath.Join("..", "provider", "testdata", "installation", "masking"))
	if err != nil {
		t.Fatal(err)
	}
	config := func(plain string) string {
		return `
resource "landscaper_installation" "app" {
  name              = "app"
  blueprint         = { path = "` + dir + `" }
  imports           = { plain = "` + plain + `" }
  sensitive_imports = { password = "` + maskingPassword + `" }
}

resource "landscaper_installation" "fails" {
  name              = "fails"
  sensitive_imports = { password = "` + maskingPassword + `" }
  blueprint = { filesystem = { "blueprint.yaml" = <<-EOT
    apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: Blueprint
    imports:
      - {name: password, type: data, schema: {type: string}}
    deployExecutions:
      - name: x
        type: GoTemplate
        template: |
          deployItems:
            - name: login
              type: exec
              timeout: 5s
              config:
                command: ["sh", "-c", "echo 'Authorization: Basic {{ printf "admin:%s" .imports.password | b64enc }}' >&2; exit 3"]
  EOT
  } }
}

output "exports" { value = landscaper_installation.app.exports }
`
	}
	canaries := maskingCanaries()
	scan := func(what, text string) {
		t.Helper()
		for _, c := range canaries {
			if strings.Contains(text, c) {
				i := strings.Index(text, c)
				t.Errorf("%s shows %q: …%s…", what, c, text[max(0, i-200):min(len(text), i+len(c)+100)])
			}
		}
	}

	w.Config(config("blue"))
	logPath := w.Path("tf.log")
	out, code := w.Run([]string{"TF_LOG=TRACE", "TF_LOG_PATH=" + logPath}, "apply", "-input=false", "-no-color", "-auto-approve")
	if code == 0 || !strings.Contains(out, `Deploy item "login" failed`) {
		t.Fatalf("apply did not fail on the exec item (exit %d):\n%s", code, out)
	}
	if !strings.Contains(out, "Authorization: Basic") {
		t.Errorf("the diagnostic lost the item's output, not only the secret in it:\n%s", out)
	}
	scan("apply output", out)
	scan("TRACE log", traceLog(t, logPath))

	// A change of the plain import plans the items again, the consumer
	// rendered from the producer's exports of the last apply.
	w.Config(config("green"))
	plan, _ := w.Run([]string{"TF_LOG=TRACE", "TF_LOG_PATH=" + logPath}, "plan", "-input=false", "-no-color")
	if !strings.Contains(plan, "green") {
		t.Fatalf("the plan does not show the new plain value:\n%s", plan)
	}
	scan("plan", plan)
	scan("TRACE log of the plan", traceLog(t, logPath))
	show, _ := w.Run(nil, "show", "-no-color")
	if !strings.Contains(show, `plain = "blue"`) {
		t.Errorf("terraform show lost the values no secret touched:\n%s", show)
	}
	scan("terraform show", show)
	outputs, _ := w.Run(nil, "output", "-json")
	scan("terraform output", outputs)

	for _, name := range []string{"app", "fails"} {
		attrs := w.Attributes("landscaper_installation", name)
		delete(attrs, "sensitive_imports")
		delete(attrs, "sensitive_exports")
		b, _ := json.Marshal(attrs)
		scan("state of "+name, string(b))
	}
	if b, _ := json.Marshal(w.Attributes("landscaper_installation", "app")["sensitive_exports"]); !strings.Contains(string(b), `"fromSibling":"tok-`+maskingPassword+`"`) {
		t.Errorf("sensitive_exports = %s", b)
	}
}

// traceLog is a TF_LOG=TRACE log without the lines in which Terraform
// itself prints the state's dynamic attributes as they are, sensitive or
// not (UpgradeResourceState: ignoring dynamic block): sensitive_imports is
// one, so those lines show the canary whatever the provider does.
func traceLog(t *testing.T, path string) string {
	var b strings.Builder
	for _, e := range readLog(t, path) {
		if !strings.Contains(e.text, "UpgradeResourceState: ignoring dynamic block") {
			b.WriteString(e.text + "\n")
		}
	}
	return b.String()
}
