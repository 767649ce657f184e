package masking

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/template"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

// planShows renders tmpl with the sensitive import s (and a plain p), has
// a plan Tree shadow it, and returns each item's config as shown.
func planShows(t *testing.T, tmpl string, secret any) map[string]string {
	t.Helper()
	bp := &templateBlueprint{execs: []template.Execution{{Name: "go", Type: template.TypeGoTemplate, Template: tmpl}}}
	imp := installation.Imports{Data: map[string]any{"s": secret, "p": "visible"}}
	rd, err := bp.Render(context.Background(), installation.Input{Imports: imp})
	if err != nil {
		t.Fatal(err)
	}
	tree := NewTree()
	tree.AddValue(secret)
	tree.Shadow(context.Background(), ShadowInput{Blueprint: bp, Imports: imp, Sensitive: map[string]any{"s": secret},
		Known: func(string) bool { return true }}, rd.Items)
	out := map[string]string{}
	for key, spec := range rd.Items {
		it := tree.Item(key, spec)
		out[key] = string(it.Config)
	}
	return out
}

// Review (rounds): a secret string holding a JSON document (credentials,
// a settings blob) is walked by Standins.document, but NewRounds does not
// look inside strings: its booleans and numbers get round 0 only, so
// a && b of two of them (one true) and a number's threshold show, the
// very cases the later rounds were added for.
func TestReviewRoundsDocumentSecretsGetRounds(t *testing.T) {
	if n := NewRounds(map[string]any{"data/s": `{"a": true, "b": false, "n": 50}`}).Count(); n < 4 {
		t.Errorf("a document with booleans and a number gets %d rounds", n)
	}
	shown := planShows(t, `deployItems:
  - name: both
    type: mock
    config: {both: {{ $d := fromYaml .imports.s }}{{ and $d.a $d.b }}}
  - name: size
    type: mock
    config: {class: {{ $d := fromYaml .imports.s }}{{ if gt (int $d.n) 10 }}large{{ else }}small{{ end }}}
`, `{"a": true, "b": false, "n": 50}`)
	for key, want := range map[string]string{"both": "false", "size": "large"} {
		if strings.Contains(shown[key], want) {
			t.Errorf("%s: a fact decided by the secret document shows: %s", key, shown[key])
		}
	}
}

// Review (rounds): a number written as text ("8443", a port given as a
// string, as env values and annotations want) is rotated digit by digit in
// every round, so it keeps its magnitude: a comparison after atoi with a
// threshold between zero and the secret is never crossed and shows.
func TestReviewRoundsNumericStringThreshold(t *testing.T) {
	shown := planShows(t, `deployItems:
  - name: app
    type: mock
    config: {mode: {{ if lt (atoi .imports.s) 1024 }}privileged{{ else }}unprivileged{{ end }}}
`, "8443")
	if strings.Contains(shown["app"], "unprivileged") {
		t.Errorf("atoi of a secret compared with 1024 shows: %s", shown["app"])
	}
}

// Review (rounds): the guide's claim for numbers, for magnitudes the
// rounds' uint64 arithmetic cannot reach (10^17 and more: round 2 is
// capped below 10^18) and for numbers written with an exponent (a number
// in a target config or a JSON document: json.Number keeps "1.5e3", and
// rounds 1 and 2 count the mantissa's digits, not the magnitude's).
func TestReviewRoundsThresholdsLargeAndExponent(t *testing.T) {
	cases := []struct {
		secret    any
		value     float64
		threshold float64 // between the secret and the next power of ten
	}{
		{float64(3e17), 3e17, 6e17},
		{float64(1.2e20), 1.2e20, 5e20},
		{json.Number("123456789012345678901"), 1.23456789012345678901e20, 5e20},
		{json.Number("1.5e3"), 1500, 3000},
		{json.Number("2e5"), 2e5, 5e5},
	}
	for _, c := range cases {
		r := NewRounds(map[string]any{"data/n": c.secret})
		crossed := false
		var got []string
		for i := range r.Count() {
			var f float64
			switch s := r.Standins(i).At("data/n", c.secret).(type) {
			case float64:
				f = s
			case json.Number:
				f, _ = s.Float64()
			}
			got = append(got, json.Number(strings.TrimSpace(jsonText(f))).String())
			crossed = crossed || (f > c.threshold) != (c.value > c.threshold)
		}
		if !crossed {
			t.Errorf("secret %v, threshold %v (below the next power of ten): every stand-in %v is on the secret's side",
				c.secret, c.threshold, got)
		}
	}
}

func jsonText(f float64) string { b, _ := json.Marshal(f); return string(b) }

// Review (rounds): the guide says that in each later round "one boolean
// flips alone (so a && b masks whichever decides it)". Rounds are capped
// at four, so with four or more secret booleans (or with a number and
// booleans), round i flips booleans i, i+3, ... together: a && b of the
// first and the fourth (one true) comes out the same in every round and
// shows.
func TestReviewRoundsManyBooleansFlipAlone(t *testing.T) {
	secret := map[string]any{"a": true, "b": false, "c": false, "d": false}
	// Sorted paths: data/s/a, data/s/b, data/s/c, data/s/d: a and d share round 1.
	shown := planShows(t, `deployItems:
  - name: both
    type: mock
    config: {both: {{ and .imports.s.a .imports.s.d }}}
`, secret)
	if strings.Contains(shown["both"], "false") {
		t.Errorf("a && d of two secret booleans (one true) shows: %s", shown["both"])
	}
}

// Review (rounds): a boolean's own round is also a number's: round 2
// flips the second boolean and gives the number more digits. A leaf that
// needs both (b true and n above a threshold between the secret and the
// next power of ten) comes out the same in every round, so what it shows
// (here: not both, i.e. with b known true, n <= 700) is not masked. Each
// secret must move alone in some round for its influence to be seen.
func TestReviewRoundsBooleanAndNumberShareARound(t *testing.T) {
	secret := map[string]any{"a": false, "b": true, "n": float64(500)}
	shown := planShows(t, `deployItems:
  - name: gate
    type: mock
    config: {big: {{ and .imports.s.b (gt .imports.s.n 700.0) }}}
`, secret)
	if strings.Contains(shown["gate"], "false") {
		t.Errorf("b && n > 700 (b true, n 500) shows: %s", shown["gate"])
	}
}
