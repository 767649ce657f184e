package masking

import (
	"context"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/template"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/mock"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/render"
)

// planShowsSchema renders a blueprint whose one sensitive import is s
// (with the schema given) and returns each item's config as a plan shows it.
func planShowsSchema(t *testing.T, schema, tmpl string, secret any) map[string]string {
	t.Helper()
	reg := deployer.NewRegistry()
	reg.Register(mock.New(), "landscaper.gardener.cloud/mock", "mock")
	bp, err := render.Load(context.Background(), render.Source{Filesystem: map[string]string{"blueprint.yaml": `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: s, schema: ` + schema + `}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: app
          type: landscaper.gardener.cloud/mock
          config:
            export: {v: ` + tmpl + `}
`}}, render.Options{Deployers: reg})
	if err != nil {
		t.Fatal(err)
	}
	imp := installation.Imports{Data: map[string]any{"s": secret}}
	rd, err := bp.Render(context.Background(), installation.Input{Imports: imp})
	if err != nil {
		t.Fatal(err)
	}
	tree := NewTree()
	tree.AddValue(secret)
	tree.Shadow(context.Background(), ShadowInput{Blueprint: bp, Imports: imp, Sensitive: map[string]any{"s": secret}}, rd.Items)
	out := map[string]string{}
	for key, spec := range rd.Items {
		out[key] = string(tree.Item(key, spec).Config)
	}
	return out
}

// Review 2 (rounds): failsBeyond leaves out a later round the schema
// refuses. A sensitive count with minimum 1 (5): round 1 (0) and round 3
// (-6) are refused, rounds 0 (6) and 2 (10) agree with the secret on
// "more than one": the plan shows "ha". Masking the node whole (before
// ba34b42) hid it.
func TestReview2PlanRefusedRoundHidesThreshold(t *testing.T) {
	shown := planShowsSchema(t, `{type: integer, minimum: 1}`,
		`{{ if gt (int .imports.s) 1 }}ha{{ else }}single{{ end }}`, float64(5))
	if strings.Contains(shown["app"], "ha") {
		t.Errorf("replicas > 1 of a sensitive count shows: %s", shown["app"])
	}
}

// Review 2 (rounds): the same on purpose, no schema needed: a template
// that fails for small or negative values (a "validation" any template
// may do) removes rounds 1 and 3, and a threshold between a tenth of the
// secret and the secret shows.
func TestReview2PlanTemplateFailRemovesRound(t *testing.T) {
	shown := planShowsSchema(t, `{type: integer}`,
		`{{ if lt (int .imports.s) 100 }}{{ fail "too small" }}{{ end }}{{ if gt (int .imports.s) 300 }}above{{ else }}below{{ end }}`,
		float64(500))
	if strings.Contains(shown["app"], "above") {
		t.Errorf("n > 300 of a sensitive number shows: %s", shown["app"])
	}
}

// Review 2 (numeric strings): a PIN-like numeric string with the pattern
// its schema gives it: the numbers' rounds make it "123", "10000" and
// "-2345", all refused by the pattern and left out, so the rounds (b)
// added for numeric strings never run; a threshold after atoi shows.
func TestReview2PlanNumericStringPattern(t *testing.T) {
	shown := planShowsSchema(t, `{type: string, pattern: "^[0-9]{4}$"}`,
		`{{ if lt (atoi .imports.s) 5000 }}low{{ else }}high{{ end }}`, "1234")
	if strings.Contains(shown["app"], "low") {
		t.Errorf("atoi(pin) < 5000 of a sensitive PIN shows: %s", shown["app"])
	}
}

// Review 2 (documents): a JSON document whose leaves all keep their
// values in a round (a number in a boolean round: numbers keep theirs)
// re-marshals to the secret's own text when written compactly; document
// then gives up and the string is rotated as text, keys and all:
// {"n":5} becomes {"s":0}. A template reading $d.n finds nothing (or
// fails, and the round is left out), so the round compares something
// else than "only this boolean moved".
func TestReview2DocumentKeepsKeysInEveryRound(t *testing.T) {
	secrets := map[string]any{"data/d": `{"n":5}`, "data/a": true, "data/b": false}
	r := NewRounds(secrets)
	for i := range r.Count() {
		out, _ := r.Standins(i).At("data/d", `{"n":5}`).(string)
		v, ok := decode([]byte(out))
		m, isMap := v.(map[string]any)
		if _, hasN := m["n"]; !ok || !isMap || !hasN {
			t.Errorf("round %d: the document's stand-in %q lost its structure", i, out)
		}
	}
}

// Review 2 (documents + left-out rounds): with the document above, the
// boolean rounds hand the template {"s":0}; a template that checks its
// input ("d needs n") fails there, the rounds are left out (failsBeyond),
// and a && b of two secret booleans (a true) shows, the case the boolean
// rounds exist for.
func TestReview2BrokenDocumentDropsBooleanRounds(t *testing.T) {
	bp := &templateBlueprint{execs: []template.Execution{{Name: "go", Type: template.TypeGoTemplate, Template: `deployItems:
  - name: both
    type: mock
    config: {chk: {{ $d := fromJson .imports.d }}{{ if not (hasKey $d "n") }}{{ fail "d needs n" }}{{ end }}x, both: {{ and .imports.a .imports.b }}}
`}}}
	sens := map[string]any{"d": `{"n":5}`, "a": true, "b": false}
	imp := installation.Imports{Data: sens}
	rd, err := bp.Render(context.Background(), installation.Input{Imports: imp})
	if err != nil {
		t.Fatal(err)
	}
	tree := NewTree()
	for _, v := range sens {
		tree.AddValue(v)
	}
	tree.Shadow(context.Background(), ShadowInput{Blueprint: bp, Imports: imp, Sensitive: sens,
		Known: func(string) bool { return true }}, rd.Items)
	if shown := string(tree.Item("both", rd.Items["both"]).Config); strings.Contains(shown, "false") {
		t.Errorf("a && b of two secret booleans (a true) shows: %s", shown)
	}
}
