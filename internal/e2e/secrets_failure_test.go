package e2e

import (
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"
)

// secretItemConfig is one exec item with a sensitive export: it prints the
// secret from E2E_SECRET to stderr, exports it, and exits with exitCode.
func secretItemConfig(exitCode string) string {
	return `
resource "landscaper_execution" "app" {
  name = "app"
  deploy_items = {
    creds = {
      type             = "exec"
      sensitive_export = true
      config = jsonencode({
        command = ["sh", "-c", <<-EOT
          echo "password: $E2E_SECRET" >&2
          printf '{"password": "%s"}' "$E2E_SECRET" > "$EXPORTS_PATH"
          exit ` + exitCode + `
        EOT
        ]
      })
    }
  }
}
`
}

// TestSecretsStayOutOfFailedRuns: once a sensitive export is known, a later
// failing run of the same item that prints it must not reveal it either:
// not in the provider log, not in the error shown to the user, and not in
// status.deploy_items[*].last_error, which is not a sensitive attribute.
func TestSecretsStayOutOfFailedRuns(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	secret := "s3cr3t-" + rand.Text()
	env := "E2E_SECRET=" + secret

	w.Config(secretItemConfig("0"))
	w.Apply(env)

	w.Config(secretItemConfig("1"))
	logPath := w.Path("tf.log")
	out, code := w.Run([]string{env, "TF_LOG_PROVIDER=TRACE", "TF_LOG_PATH=" + logPath},
		"apply", "-input=false", "-no-color", "-auto-approve")
	if code == 0 {
		t.Fatalf("apply of a failing item exited 0:\n%s", out)
	}
	if strings.Contains(out, secret) {
		t.Errorf("apply output shows the secret:\n%s", out)
	}
	for _, e := range readLog(t, logPath) {
		if strings.Contains(e.text, secret) {
			t.Errorf("secret in the log at %s: %s", e.level, e.text)
		}
	}

	attrs := execution(w)
	if p := itemField(attrs, "creds", "phase"); p != "Failed" {
		t.Errorf("creds: phase %v, want Failed", p)
	}
	delete(attrs, "sensitive_exports")
	if b, _ := json.Marshal(attrs); strings.Contains(string(b), secret) {
		t.Errorf("secret in state outside sensitive_exports: %s", b)
	}
	if plan, _ := w.Run([]string{env}, "plan", "-input=false", "-no-color"); strings.Contains(plan, secret) {
		t.Errorf("terraform plan shows the secret:\n%s", plan)
	}
}
