package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// The honest-template cases of masking (issue 25): secrets that an
// ordinary blueprint renders, names items after, branches on or fails on,
// none written to leak. Each canary below is a secret, or what the
// blueprint makes of it.
const (
	honestWord  = "äöüßéñø"          // letters, none of them ASCII
	honestPunct = "!#%&*+?"          // punctuation only
	honestNum   = 987654321          // a number; div 10 is 98765432
	honestUser  = "alice-ops"        // names an item and a map key
	honestCode  = "p4ss-w0rd-sec-61" // refused by a schema pattern
)

func honestCanaries() []string {
	sha := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	return []string{
		honestWord, b64(honestWord), strings.ToUpper(honestWord),
		honestPunct, "987654321", "98765432",
		"flag-up",
		honestUser, strings.ToUpper(honestUser), sha(honestUser)[:10],
		honestCode, honestCode[:5], b64(honestCode),
	}
}

// honestSensitive is the sensitive_imports line every resource here sets.
const honestSensitive = `sensitive_imports = {
    word  = "` + honestWord + `"
    punct = "` + honestPunct + `"
    num   = 987654321
    flag  = true
    user  = "` + honestUser + `"
    code  = "` + honestCode + `"
  }`

// honestBlueprint declares the imports of honestSensitive and a plain one,
// with deploy executions and exports of its own.
func honestBlueprint(pinPattern bool, deploy, exports string) string {
	code := "{type: string}"
	if pinPattern {
		code = `{type: string, pattern: "^[0-9]+$"}`
	}
	return `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: plain, type: data, schema: {type: string}}
  - {name: word, type: data, schema: {type: string}}
  - {name: punct, type: data, schema: {type: string}}
  - {name: num, type: data, schema: {type: integer}}
  - {name: flag, type: data, schema: {type: boolean}}
  - {name: user, type: data, schema: {type: string}}
  - {name: code, type: data, schema: ` + code + `}
exports:
  - {name: numPrefix, type: data, schema: {type: integer}}
  - {name: mode, type: data, schema: {type: string}}
  - {name: greeting, type: data, schema: {type: string}}
deployExecutions:
  - name: go
    type: GoTemplate
    template: |
` + indentLines(deploy, "      ") + `
` + exports
}

func honestResource(name, blueprint string) string {
	return `
resource "landscaper_installation" "` + name + `" {
  name      = "` + name + `"
  imports   = { plain = "visible-plain" }
  ` + honestSensitive + `
  blueprint = { filesystem = { "blueprint.yaml" = <<-EOT
` + indentLines(blueprint, "    ") + `
  EOT
  } }
}
`
}

// honestValues renders every honest case into items and exports: a
// non-ASCII and a punctuation-only secret as they are, a number's prefix,
// a branch on a boolean, an item named after a secret and a map key made
// of one; the exports put the number's prefix and the branch's outcome
// beside a plain greeting.
const honestValues = `deployItems:
  - name: values
    type: landscaper.gardener.cloud/mock
    config:
      export:
        word: {{ .imports.word | quote }}
        punct: {{ .imports.punct | quote }}
        prefix: {{ div .imports.num 10 }}
        mode: {{ if .imports.flag }}{{ printf "%s-%s" "flag" "up" }}{{ else }}{{ printf "%s-%s" "flag" "down" }}{{ end }}
        keyed:
          {{ .imports.user | upper }}: admin
        plain: {{ .imports.plain }}
  - name: svc-{{ .imports.user }}
    type: landscaper.gardener.cloud/mock
    config: {export: {plain: {{ .imports.plain }}}}`

const honestExports = `exportExecutions:
  - name: ex
    type: GoTemplate
    template: |
      exports:
        numPrefix: {{ div .imports.num 10 }}
        mode: {{ .deployitems.values.mode }}
        greeting: hello-{{ .imports.plain }}`

// TestHonestTemplatesShowNoSecret drives the real CLI over honest
// templates: what they render, the items they name, the exports they
// compute, an exec item named after a secret that fails, and three plans
// that fail on a secret (a template's fail, a type error quoting the
// value, an import refused by its schema). No canary may be in the
// output of plan and apply (diagnostics included), the TRACE log of
// Terraform and the provider, `terraform show`, or a state attribute that
// is not sensitive; the number's prefix and the branch's outcome are
// sensitive exports, the greeting a plain one.
func TestHonestTemplatesShowNoSecret(t *testing.T) {
	t.Parallel()
	canaries := honestCanaries()
	scan := func(what, text string) {
		t.Helper()
		for _, c := range canaries {
			if i := strings.Index(text, c); i >= 0 {
				t.Errorf("%s shows %q: …%s…", what, c, text[max(0, i-300):min(len(text), i+len(c)+100)])
			}
		}
	}
	w := newWorkspace(t)
	logPath := w.Path("tf.log")
	trace := []string{"TF_LOG=TRACE", "TF_LOG_PATH=" + logPath}

	failing := `deployItems:
  - name: run-{{ .imports.user | sha256sum | trunc 10 }}
    type: exec
    timeout: 5s
    config:
      command: ["sh", "-c", "echo 'cannot log in as {{ .imports.user | upper }}' >&2; exit 3"]`
	w.Config(honestResource("honest", honestBlueprint(false, honestValues, honestExports)) +
		honestResource("failing", honestBlueprint(false, failing, "")))
	plan, code := w.Run(trace, "plan", "-input=false", "-no-color")
	if code != 0 || !strings.Contains(plan, "visible-plain") {
		t.Fatalf("plan exited %d or lost the plain value:\n%s", code, plan)
	}
	scan("plan", plan)
	scan("TRACE log of the plan", traceLog(t, logPath))

	applyLog := w.Path("apply.log")
	out, code := w.Run([]string{"TF_LOG=TRACE", "TF_LOG_PATH=" + applyLog}, "apply", "-input=false", "-no-color", "-auto-approve")
	if code == 0 || !strings.Contains(out, "failed") || !strings.Contains(out, "cannot log in as") {
		t.Fatalf("apply did not fail on the exec item with its message (exit %d):\n%s", code, out)
	}
	scan("apply output", out)
	scan("TRACE log of the apply", traceLog(t, applyLog))
	show, _ := w.Run(nil, "show", "-no-color")
	if !strings.Contains(show, "hello-visible-plain") {
		t.Errorf("terraform show lost the plain export:\n%s", show)
	}
	scan("terraform show", show)
	for _, name := range []string{"honest", "failing"} {
		attrs := w.Attributes("landscaper_installation", name)
		delete(attrs, "sensitive_imports")
		delete(attrs, "sensitive_exports")
		b, _ := json.Marshal(attrs)
		scan("state of "+name, string(b))
	}
	attrs := w.Attributes("landscaper_installation", "honest")
	exports, _ := json.Marshal(attrs["exports"])
	sensitive, _ := json.Marshal(attrs["sensitive_exports"])
	if !strings.Contains(string(exports), `"greeting":"hello-visible-plain"`) {
		t.Errorf("exports = %s, want the greeting in clear", exports)
	}
	if !strings.Contains(string(sensitive), `"numPrefix":98765432`) || !strings.Contains(string(sensitive), `"mode":"flag-up"`) {
		t.Errorf("sensitive_exports = %s, want numPrefix and mode", sensitive)
	}

	// Plans that fail on a secret: the diagnostic says where and why,
	// without the value.
	for _, tc := range []struct {
		name, deploy string
		pattern      bool
		want         string
	}{
		{"fail", `{{ fail (printf "refusing %s" (.imports.code | b64enc)) }}`, false, "refusing"},
		{"type-error", `{{ mustToDate "2006-01-02" .imports.code }}`, false, "error calling mustToDate"},
		{"schema", `deployItems: []`, true, "does not match pattern"},
	} {
		w := newWorkspace(t)
		logPath := w.Path("tf.log")
		w.Config(honestResource("broken", honestBlueprint(tc.pattern, tc.deploy, "")))
		out, code := w.Run([]string{"TF_LOG=TRACE", "TF_LOG_PATH=" + logPath}, "plan", "-input=false", "-no-color")
		if code == 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), tc.want) {
			t.Errorf("%s: plan exited %d, or without %q:\n%s", tc.name, code, tc.want, out)
		}
		scan(tc.name+": plan", out)
		scan(tc.name+": TRACE log", traceLog(t, logPath))
	}
}
