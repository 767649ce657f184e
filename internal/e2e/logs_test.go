package e2e

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// logEntry is one entry of a Terraform log file. Lines without a
// timestamp and level continue the previous entry (multi-line messages).
type logEntry struct {
	level string
	text  string
}

var levelRe = regexp.MustCompile(`^\S+ \[(TRACE|DEBUG|INFO|WARN|ERROR)\]\s+`)

func readLog(t *testing.T, path string) []logEntry {
	t.Helper()
	var entries []logEntry
	sc := bufio.NewScanner(strings.NewReader(acctest.ReadFile(t, path)))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := levelRe.FindStringSubmatch(line); m != nil {
			entries = append(entries, logEntry{level: m[1], text: line})
		} else if len(entries) > 0 {
			entries[len(entries)-1].text += "\n" + line
		}
	}
	if len(entries) == 0 {
		t.Fatalf("log %s is empty", path)
	}
	return entries
}

// hasField reports whether a provider log line carries key=value.
func hasField(text, key, value string) bool {
	return regexp.MustCompile(`(^|\s)` + regexp.QuoteMeta(key+"="+value) + `(\s|$)`).MatchString(text)
}

var (
	execPhaseRe = regexp.MustCompile(`provider\.terraform-provider-landscaper: execution "app": (\w+) after ([^:\s]+):`)
	itemPhaseRe = regexp.MustCompile(`provider\.terraform-provider-landscaper: deploy item "(\w+)": (\w+)(?: after ([^:\s]+))?:`)
)

// TestInfoLogIsAProgressLog: at TF_LOG=INFO an apply logs every phase
// transition of the execution and of each deploy item exactly once, with
// the job ID and elapsed time.
func TestInfoLogIsAProgressLog(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	w.Config(`
resource "landscaper_execution" "app" {
  name = "app"
  deploy_items = {
    a = { type = "mock", config = jsonencode({ duration = "100ms" }) }
    b = { type = "mock", depends_on = ["a"] }
    c = { type = "mock", config = jsonencode({ export = "c" }) }
  }
}
`)
	logPath := w.Path("tf.log")
	w.Apply("TF_LOG=INFO", "TF_LOG_PATH="+logPath)
	jobID, _ := acctest.Dig(execution(w), "status", "job_id").(string)
	if jobID == "" {
		t.Fatal("status.job_id is empty")
	}

	// seen maps "execution Init", "a Succeeded"... to the indexes of their lines.
	seen := map[string][]int{}
	for i, e := range readLog(t, logPath) {
		subject, phase, elapsed := "", "", ""
		if m := execPhaseRe.FindStringSubmatch(e.text); m != nil {
			subject, phase, elapsed = "execution", m[1], m[2]
		} else if m := itemPhaseRe.FindStringSubmatch(e.text); m != nil {
			subject, phase, elapsed = m[1], m[2], m[3]
			if !hasField(e.text, "deploy_item", subject) {
				t.Errorf("line without deploy_item=%s: %s", subject, e.text)
			}
		} else {
			continue
		}
		key := subject + " " + phase
		seen[key] = append(seen[key], i)
		if e.level != "INFO" {
			t.Errorf("%s logged at %s, want INFO: %s", key, e.level, e.text)
		}
		if !hasField(e.text, "job_id", jobID) || !hasField(e.text, "phase", phase) {
			t.Errorf("%s: line lacks job_id=%s or phase=%s: %s", key, jobID, phase, e.text)
		}
		if phase == "Progressing" && subject != "execution" {
			continue // an item's start has no elapsed time yet
		}
		if d, err := time.ParseDuration(elapsed); err != nil || d < 0 || d > 30*time.Second {
			t.Errorf("%s: elapsed %q is not a plausible duration: %s", key, elapsed, e.text)
		}
		if subject != "execution" && !hasField(e.text, "elapsed", elapsed) {
			t.Errorf("%s: line lacks elapsed=%s: %s", key, elapsed, e.text)
		}
	}

	want := []string{
		"execution Init", "execution Progressing", "execution Completing", "execution Succeeded",
		"a Progressing", "a Succeeded", "b Progressing", "b Succeeded", "c Progressing", "c Succeeded",
	}
	for _, k := range want {
		if n := len(seen[k]); n != 1 {
			t.Errorf("%q logged %d times, want once", k, n)
		}
	}
	for k, idx := range seen {
		if !slices.Contains(want, k) {
			t.Errorf("unexpected phase line %q (%d times)", k, len(idx))
		}
	}
	if t.Failed() {
		return
	}
	// Log order follows the phase machine and the dependency a -> b.
	for _, o := range [][2]string{
		{"execution Init", "execution Progressing"},
		{"execution Progressing", "a Progressing"},
		{"execution Progressing", "c Progressing"},
		{"a Succeeded", "b Progressing"},
		{"b Succeeded", "execution Completing"},
		{"c Succeeded", "execution Completing"},
		{"execution Completing", "execution Succeeded"},
	} {
		if seen[o[0]][0] >= seen[o[1]][0] {
			t.Errorf("%q logged after %q", o[0], o[1])
		}
	}
}

// TestSecretsStayOutOfLogs: a sensitive export never reaches the provider
// log at any level (the item's own output is masked), configs and exports
// never appear at INFO or above, and the secret is only under
// sensitive_exports in state and outputs.
func TestSecretsStayOutOfLogs(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	// The secret reaches the command through the environment, so it is in
	// no config and no plan: only the command's output and export hold it.
	secret := "s3cr3t-" + rand.Text()
	const configMarker, exportMarker = "CONFIG_MARKER_x1y2", "EXPORT_MARKER_k3j4"
	w.Config(`
resource "landscaper_execution" "app" {
  name = "app"
  deploy_items = {
    creds = {
      type             = "exec"
      sensitive_export = true
      config = jsonencode({
        command = ["sh", "-c", <<-EOT
          echo "generated password: $E2E_SECRET" >&2
          echo "marker: $MARKER"
          printf '{"password": "%s"}' "$E2E_SECRET" > "$EXPORTS_PATH"
        EOT
        ]
        env          = { MARKER = "` + configMarker + `" }
        importValues = { note = "` + configMarker + `" }
      })
    }
    pub = { type = "mock", config = jsonencode({ export = { url = "` + exportMarker + `" } }) }
  }
}

output "password" {
  value     = landscaper_execution.app.sensitive_exports.creds.password
  sensitive = true
}
`)
	logPath := w.Path("tf.log")
	out := w.Apply("TF_LOG_PROVIDER=TRACE", "TF_LOG_PATH="+logPath, "E2E_SECRET="+secret)
	if strings.Contains(out, secret) {
		t.Errorf("apply output shows the secret:\n%s", out)
	}

	maskedOutput := false
	for _, e := range readLog(t, logPath) {
		if strings.Contains(e.text, secret) {
			t.Errorf("secret in the log at %s: %s", e.level, e.text)
		}
		if e.level == "INFO" || e.level == "WARN" || e.level == "ERROR" {
			for _, marker := range []string{configMarker, exportMarker} {
				if strings.Contains(e.text, marker) {
					t.Errorf("%s in the log at %s: %s", marker, e.level, e.text)
				}
			}
		}
		if strings.Contains(e.text, "stderr: generated password: ***") && hasField(e.text, "deploy_item", "creds") {
			maskedOutput = true
		}
	}
	if !maskedOutput {
		t.Error(`the sensitive item's stderr line is not in the log as "generated password: ***"`)
	}

	attrs := execution(w)
	if got := acctest.Dig(attrs, "sensitive_exports", "value", "creds", "password"); got != secret {
		t.Errorf("sensitive_exports.creds.password = %v, want the secret", got)
	}
	if got := acctest.Dig(attrs, "exports", "value", "pub", "url"); got != exportMarker {
		t.Errorf("exports.pub.url = %v, want %s", got, exportMarker)
	}
	if got := acctest.Dig(attrs, "exports", "value", "creds"); got != nil {
		t.Errorf("exports.creds = %v, want null", got)
	}
	delete(attrs, "sensitive_exports")
	if b, _ := json.Marshal(attrs); strings.Contains(string(b), secret) {
		t.Errorf("secret in state outside sensitive_exports: %s", b)
	}

	outputs, code := w.Run(nil, "output", "-no-color")
	if code != 0 || strings.Contains(outputs, secret) || !strings.Contains(outputs, "password = <sensitive>") {
		t.Errorf("terraform output (exit %d) should show the password as <sensitive>:\n%s", code, outputs)
	}
}
