package masking

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/template"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

func TestStandinsKeepShapeAndDiffer(t *testing.T) {
	st := NewRounds(nil).Standins(0)
	in := map[string]any{
		"pw":    "p4ss-w0rd-sec-61",
		"n":     json.Number("41"),
		"f":     json.Number("1.5"),
		"on":    true,
		"kube":  "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user: {token: abc123}\n",
		"json":  `{"token":"xyz"}`,
		"empty": "",
	}
	out, ok := st.Of(in).(map[string]any)
	if !ok {
		t.Fatalf("%T", st.Of(in))
	}
	// Letters and digits move within their class, so a schema's pattern
	// or length still accepts the stand-in; every one of them differs.
	if out["pw"] != "q5tt-x1se-tfd-72" || out["n"] != json.Number("52") || out["f"] != json.Number("2.6") || out["on"] != false {
		t.Errorf("stand-ins: %v", out)
	}
	// A document keeps its keys, so a template parsing it finds them.
	if kube, _ := out["kube"].(string); !strings.Contains(kube, "token: bcd234") || !strings.Contains(kube, "apiVersion:") {
		t.Errorf("kubeconfig stand-in: %q", kube)
	}
	if out["json"] != `{"token":"yzg"}` { // g-z rotate among themselves, a-f too (hex stays hex)
		t.Errorf("JSON stand-in: %v", out["json"])
	}
	// Deterministic: plan and apply must render the same masks.
	again, _ := NewRounds(nil).Standins(0).Of(in).(map[string]any)
	if again["pw"] != out["pw"] || again["kube"] != out["kube"] {
		t.Error("stand-ins differ between runs")
	}
}

// Issue 25: a secret of non-ASCII letters or of punctuation only got a
// stand-in equal to itself, and so was never masked. Every character
// that moves differs from the secret's, whatever its class.
func TestRotatedAlwaysDiffers(t *testing.T) {
	for _, x := range []string{"äöüßéñø", "!#%&*+?", "日本語の秘密", "ÿÿÿ", "€€", "   ", "\t", "Ωmega-42", "--", `"'\`} {
		for k := 1; k < maxRounds+1; k++ {
			r := Rotated(x, k)
			if r == x {
				t.Errorf("Rotated(%q, %d) = the secret", x, k)
			}
			if utf8.RuneCountInString(r) != utf8.RuneCountInString(x) {
				t.Errorf("Rotated(%q, %d) = %q: another length", x, k, r)
			}
			// Letters and digits move; where there are none, everything
			// but spaces does.
			alnum := strings.IndexFunc(x, func(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }) >= 0
			xs, rs := []rune(x), []rune(r)
			for i := range xs {
				moves := unicode.IsLetter(xs[i]) || unicode.IsDigit(xs[i]) || !alnum && !unicode.IsSpace(xs[i])
				if moves && xs[i] == rs[i] {
					t.Errorf("Rotated(%q, %d) = %q keeps %q", x, k, r, xs[i])
				}
			}
		}
	}
}

// Issue 25: a number's stand-in was n+1, so `div 10` of it showed the
// secret's prefix. Every digit moves, so every prefix and suffix differs.
func TestNumberStandinChangesEveryDigit(t *testing.T) {
	st := NewRounds(nil).Standins(0)
	for _, n := range []float64{987654321, 41, 9, 0, 1999, -73, 12.5} {
		s, _ := st.Of(n).(float64)
		a, b := []byte(formatNumber(n)), []byte(formatNumber(s))
		if len(a) != len(b) {
			t.Errorf("%v -> %v: another magnitude", n, s)
			continue
		}
		for i := range a {
			if a[i] >= '0' && a[i] <= '9' && a[i] == b[i] {
				t.Errorf("%v -> %v keeps digit %d", n, s, i)
			}
		}
	}
}

func formatNumber(f float64) string { b, _ := json.Marshal(f); return string(b) }

// A tree whose secrets hold booleans or numbers is rendered more than
// once: each of the first booleans flips alone in a round of its own, so
// a && b over two secrets shows masked whichever of them decides it.
func TestRoundsFlipBooleansAlone(t *testing.T) {
	r := NewRounds(map[string]any{"data/a": true, "data/b": false, "data/s": "x"})
	if r.Count() != 3 {
		t.Fatalf("rounds = %d, want 3 (round 0 and one per boolean)", r.Count())
	}
	flips := map[[2]bool]bool{}
	for i := range r.Count() {
		st := r.Standins(i)
		a, _ := st.At("data/a", true).(bool)
		b, _ := st.At("data/b", false).(bool)
		flips[[2]bool{a != true, b != false}] = true
	}
	if !flips[[2]bool{true, true}] || !flips[[2]bool{true, false}] || !flips[[2]bool{false, true}] {
		t.Errorf("flips per round: %v", flips)
	}
	if NewRounds(map[string]any{"data/s": "x", "data/t": "y"}).Count() != 1 {
		t.Error("strings alone need more than one round")
	}
	if NewRounds(map[string]any{"data/n": json.Number("7")}).Count() != 4 {
		t.Error("a number needs rounds below, above and past zero")
	}
}

// A comparison of a secret number with a threshold between zero and the
// secret, or between the secret and the next power of ten, comes out
// otherwise for one of the stand-ins, so whatever it decided is masked.
func TestNumberThresholdsAreCrossed(t *testing.T) {
	for _, n := range []float64{7, 50, 99, 1234, -5, -480, 3.5, 0} {
		r := NewRounds(map[string]any{"data/n": n})
		var standins []float64
		for i := range r.Count() {
			s, ok := r.Standins(i).At("data/n", n).(float64)
			if !ok {
				t.Fatalf("round %d: the stand-in of %v is no number", i, n)
			}
			standins = append(standins, s)
		}
		next := math.Pow(10, math.Floor(math.Log10(math.Abs(n)))+1)
		if n == 0 {
			next = 1
		}
		lo, hi := min(0, n), max(0, n)
		thresholds := []float64{lo, hi, (lo + hi) / 2, n + 0.5, n - 0.5}
		if n >= 0 {
			thresholds = append(thresholds, next-0.5)
		} else {
			thresholds = append(thresholds, -next+0.5)
		}
		for _, th := range thresholds {
			if th < lo-0.5 || th > hi+next {
				continue
			}
			crossed := false
			for _, s := range standins {
				crossed = crossed || (s > th) != (n > th) || (s < th) != (n < th)
			}
			if !crossed {
				t.Errorf("secret %v, threshold %v: every stand-in %v is on the secret's side", n, th, standins)
			}
		}
	}
}

func TestCompare(t *testing.T) {
	lit := func(s string) string { return strings.ReplaceAll(s, "s3cr3t", Mask) }
	shadowLit := func(s string) string { return strings.ReplaceAll(s, "t4ds4u", Mask) }
	actual := map[string]any{
		"same":    "visible",
		"b64":     "czNjcjN0",
		"partial": "admin:s3cr3t",
		"port":    json.Number("8443"),
		"list":    []any{"a", "b"},
		"keys":    map[string]any{"s3cr3t": "keyed", "plain": "x"},
		"flag":    true,
		"count":   map[string]any{"a": 1.0},
	}
	shadow := map[string]any{
		"same":    "visible",
		"b64":     "dDRkczR1",
		"partial": "admin:t4ds4u",
		"port":    json.Number("8444"),
		"list":    []any{"a"},
		"keys":    map[string]any{"t4ds4u": "keyed", "plain": "x"},
		"flag":    false,
		"count":   map[string]any{"a": 1.0, "b": 2.0},
	}
	c := Compare(actual, []any{shadow}, lit, []Literal{shadowLit})
	got, _ := json.Marshal(c.Masked)
	// A list of another length and a map of another size are masked
	// whole: their size was derived too.
	want := `{"b64":"***","count":"***","flag":"***","keys":{"***":"***","plain":"x"},"list":"***","partial":"admin:***","port":"***","same":"visible"}`
	if string(got) != want {
		t.Errorf("masked\n got %s\nwant %s", got, want)
	}
	for _, d := range []string{"czNjcjN0", "admin:s3cr3t", "8443", "s3cr3t"} {
		found := false
		for _, x := range c.Derived {
			found = found || x == d
		}
		if !found {
			t.Errorf("derived %v lacks %q", c.Derived, d)
		}
	}
	if same := Compare(map[string]any{"a": "b"}, []any{map[string]any{"a": "b"}}, lit, []Literal{shadowLit}); same.Changed || len(same.Derived) > 0 {
		t.Errorf("nothing differs, yet %+v", same)
	}
	// A leaf equal to one shadow but not to another is masked.
	two := Compare(map[string]any{"x": "1"}, []any{map[string]any{"x": "1"}, map[string]any{"x": "2"}}, lit, []Literal{shadowLit, shadowLit})
	if b, _ := json.Marshal(two.Masked); string(b) != `{"x":"***"}` {
		t.Errorf("two shadows: %s", b)
	}
}

func TestSecretData(t *testing.T) {
	v, _ := Decode([]byte(`{"manifests":[{"manifest":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},
		"data":{"k":"dmFsdWU="},"stringData":{"p":"plain-text"}}},{"apiVersion":"v1","kind":"ConfigMap","data":{"c":"shown"}}]}`))
	out, found, changed := SecretData(v)
	got, _ := json.Marshal(out)
	want := `{"manifests":[{"manifest":{"apiVersion":"v1","data":{"k":"***"},"kind":"Secret","metadata":{"name":"s"},` +
		`"stringData":{"p":"***"}}},{"apiVersion":"v1","data":{"c":"shown"},"kind":"ConfigMap"}]}`
	if !changed || string(got) != want {
		t.Errorf("got %s", got)
	}
	if len(found) != 2 {
		t.Errorf("found %v", found)
	}
}

// A tree whose targets are all provider references holds no credential,
// so it is not rendered a second time; a target with a config is a secret.
func TestHoldsSecretsCountsTargetConfigsNotReferences(t *testing.T) {
	ref := &deployer.Target{Name: "cluster", Type: "landscaper.gardener.cloud/kubernetes-cluster", Ref: "prod-eu", Location: "https://prod"}
	inline := &deployer.Target{Name: "cluster", Type: "landscaper.gardener.cloud/kubernetes-cluster", Config: json.RawMessage(`{"kubeconfig":"x"}`)}
	cases := []struct {
		name  string
		imp   installation.Imports
		specs map[string]engine.ItemSpec
		want  bool
	}{
		{"references only", installation.Imports{
			Targets:     map[string]*deployer.Target{"cluster": ref},
			TargetLists: map[string][]*deployer.Target{"list": {ref}},
			TargetMaps:  map[string]map[string]*deployer.Target{"fleet": {"eu": ref}},
		}, map[string]engine.ItemSpec{"app": {Target: ref}}, false},
		{"inline target", installation.Imports{Targets: map[string]*deployer.Target{"cluster": inline}}, nil, true},
		{"inline list element", installation.Imports{TargetLists: map[string][]*deployer.Target{"list": {ref, inline}}}, nil, true},
		{"inline map element", installation.Imports{TargetMaps: map[string]map[string]*deployer.Target{"fleet": {"eu": inline}}}, nil, true},
		{"item with an inline target", installation.Imports{}, map[string]engine.ItemSpec{"app": {Target: inline}}, true},
	}
	for _, tc := range cases {
		if got := HoldsSecrets(tc.imp, nil, nil, tc.specs); got != tc.want {
			t.Errorf("%s: HoldsSecrets = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// An export read from a Secret is the secret part of an item's export; an
// export read from a ConfigMap beside it is not.
func TestSecretReads(t *testing.T) {
	cfg := `{"exports":{"exports":[
	  {"key":"token","jsonPath":".secrets[0]","fromResource":{"kind":"ServiceAccount"},"fromObjectRef":{"kind":"Secret","jsonPath":".data.token"}},
	  {"key":"greeting","jsonPath":".data.greeting","fromResource":{"kind":"ConfigMap"}},
	  {"key":"password","jsonPath":".data.pw","fromResource":{"kind":"Secret"}}]}}`
	keys, all, reads := SecretReads(engine.ItemSpec{Config: json.RawMessage(cfg)})
	if !reads || all || strings.Join(keys, ",") != "password,token" {
		t.Errorf("keys %v, all %v, reads %v", keys, all, reads)
	}
	if _, all, _ := SecretReads(engine.ItemSpec{Config: json.RawMessage(`{"x":{"fromResource":{"kind":"Secret"}}}`)}); !all {
		t.Error("a Secret read without a key must make the whole export secret")
	}
}

// An error message is masked where it differs from what the shadow said
// of the same node, and wherever it is quoted; an error that a shadow
// does not have depends on a secret, and shows nothing.
func TestTreeError(t *testing.T) {
	tr := NewTree()
	tr.shadows = []*installation.Shadow{{Failed: map[string]string{"sub": `parsing time "q5tt-x1se" as "2006": cannot parse`}}}
	tr.standins = []*Secrets{{}}
	got, ok := tr.Error("sub", `parsing time "p4ss-w0rd" as "2006": cannot parse`)
	if !ok || got != `parsing time "***" as "2006": cannot parse` {
		t.Errorf("Error = %q, %v", got, ok)
	}
	if q := tr.Text(`template: go:1:3: parsing time "p4ss-w0rd" as "2006"`); strings.Contains(q, "p4ss") {
		t.Errorf("a message quoting the error shows it: %q", q)
	}
	// A one-digit secret is masked where the message quotes it.
	tr.shadows[0].Failed["n"] = "value 6 exceeds maximum 3"
	if got, _ := tr.Error("n", "value 5 exceeds maximum 3"); got != "value *** exceeds maximum 3" {
		t.Errorf("Error = %q", got)
	}
	if _, ok := tr.Error("elsewhere", "boom"); ok {
		t.Error("an error the shadow did not have must not show")
	}
}

// A credential inside a secret document, such as a kubeconfig's token, is
// a secret of its own; the document's kinds and names are not.
func TestSecretsInEmbeddedDocuments(t *testing.T) {
	var sec Secrets
	sec.AddJSON([]byte(`{"kubeconfig": "apiVersion: v1\nkind: Config\ncurrent-context: dev\nusers:\n- name: admin\n  user:\n    token: tok-1234abcd\n    client-key-data: a2V5ZGF0YQ==\n"}`))
	got := sec.Text("token tok-1234abcd key a2V5ZGF0YQ== kind Config context dev user admin")
	if want := "token *** key *** kind Config context dev user admin"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// An apply takes how its plan showed the items where what it renders
// aligns with it: the same masks, and the texts under them as derived
// texts for the log. What does not align (a template that renders
// something else now) is not taken.
func TestAlignTakesThePlansMasking(t *testing.T) {
	bp := &templateBlueprint{execs: []template.Execution{{Name: "go", Type: template.TypeGoTemplate, Template: `deployItems:
  - name: app
    type: mock
    config:
      basic: {{ printf "admin:%s" .imports.s | b64enc | printf "Basic %s" }}
      url: postgres://app:{{ .imports.s }}@db
      keyed: { {{ .imports.s | upper | quote }}: x, plain: y }
      plain: {{ .imports.p }}
  - name: login-{{ .imports.s | sha256sum | trunc 6 }}
    type: mock
    config: {cmd: "echo {{ .imports.s | upper }}"}
`}}}
	const secret = "s3cr3t-pw"
	imp := installation.Imports{Data: map[string]any{"s": secret, "p": "visible"}}
	rd, err := bp.Render(context.Background(), installation.Input{Imports: imp})
	if err != nil {
		t.Fatal(err)
	}
	plan := NewTree()
	plan.AddValue(secret)
	plan.Shadow(context.Background(), ShadowInput{Blueprint: bp, Imports: imp, Sensitive: map[string]any{"s": secret}}, rd.Items)
	shown := map[string]Item{}
	for key, spec := range rd.Items {
		it := plan.Item(key, spec)
		shown[it.Key] = it
	}
	if _, ok := shown["***"]; !ok || len(shown) != 2 {
		t.Fatalf("shown keys: %v", slices.Collect(maps.Keys(shown)))
	}
	label := func(engine.ItemSpec) string { return "" }
	apply := NewTree()
	if !apply.Align(shown, rd.Items, label) {
		t.Fatal("the apply's items do not align with the plan's")
	}
	for key, spec := range rd.Items {
		if got, want := apply.Item(key, spec), plan.Item(key, spec); got.Key != want.Key || string(got.Config) != string(want.Config) || !got.Influenced {
			t.Errorf("%s: aligned %+v, planned %+v", key, got, want)
		}
	}
	text := apply.Text("Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+secret)) + " ECHO S3CR3T-PW")
	if strings.Contains(text, "S3CR3T") || strings.Contains(text, "YWRta") {
		t.Errorf("the log would show %q", text)
	}
	// A plain value rendered otherwise now does not align.
	changed := maps.Clone(rd.Items)
	app := changed["app"]
	app.Config = json.RawMessage(strings.Replace(string(app.Config), "visible", "other", 1))
	changed["app"] = app
	if NewTree().Align(shown, changed, label) {
		t.Error("an item rendered otherwise than planned aligned")
	}
}

// A leaf that uses a secret twice (a URL escaping it, then a part of it)
// records each use as derived, not only the span from the first to the
// last: an exec item's trace quotes one use, never the span.
func TestCompareRecordsEveryUseInALeaf(t *testing.T) {
	pw := "Tr0ub4dor&3x"
	st := Rounds{n: 1}
	standin, ok := st.Standins(0).Of(pw).(string)
	if !ok {
		t.Fatal("the stand-in of a string is no string")
	}
	script := func(p string) string {
		return "set -x\ntrue \"postgres://app:" + strings.ReplaceAll(p, "&", "%26") + "@db/app\"\necho \"first part: " + p[:9] + "\" >&2\n"
	}
	none := func(s string) string { return s }
	c := Compare(script(pw), []any{script(standin)}, none, []Literal{none})
	if c.Masked != Mask {
		t.Fatalf("masked %v", c.Masked)
	}
	for _, d := range []string{"Tr0ub4dor%263x", "Tr0ub4dor"} {
		if !slices.Contains(c.Derived, d) {
			t.Errorf("derived %q lacks %q", c.Derived, d)
		}
	}
}

// A secret with a quote, a backslash or one of & < > is quoted in JSON
// escaped (an exec item's imports file, a client's request body): the
// escaped forms are masked as the secret is.
func TestSecretsMaskJSONEscapedForms(t *testing.T) {
	for _, pw := range []string{"Tr0ub4dor&3x", `pa"ss\w0rd`, "<sesame>", "tab\tbed", "日本語のpw"} {
		var s Secrets
		s.Add(pw)
		escaped, _ := json.Marshal(map[string]any{"password": pw})
		if got := s.Text(string(escaped)); got != `{"password":"***"}` {
			t.Errorf("%q: %s shows as %s", pw, escaped, got)
		}
		var plain strings.Builder
		enc := json.NewEncoder(&plain)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(pw)
		if got := s.Text(plain.String()); got != "\"***\"\n" {
			t.Errorf("%q: %s shows as %s", pw, plain.String(), got)
		}
	}
}
