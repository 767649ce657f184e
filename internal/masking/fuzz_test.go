package masking

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/template"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

// FuzzMaskingHidesSecrets renders random templates, written from a
// grammar of sprig and Spiff functions an honest blueprint uses (no
// comparison against guessed values: see the security guide's threat
// model), over a random secret: a string (ASCII, non-ASCII, punctuation),
// a number or a boolean. The secret, its encodings (base64, hex, upper and
// lower case, hashes, a number's prefix) and the branch a boolean decided
// must not appear in what the masking shows: item keys, types and
// configs, and the message of a template that fails.
func FuzzMaskingHidesSecrets(f *testing.F) {
	f.Add(int64(1), "p4ss-w0rd-sec-61", uint8(0))
	f.Add(int64(2), "äöüßéñø", uint8(0))
	f.Add(int64(3), "!#%&*+?", uint8(0))
	f.Add(int64(4), "", uint8(1))
	f.Add(int64(5), "", uint8(2))
	f.Add(int64(6), "日本語のパスワード", uint8(0))
	f.Fuzz(func(t *testing.T, seed int64, text string, kind uint8) {
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(kind)))
		var secret any
		switch kind % 3 {
		case 0:
			if !usableSecret(text) {
				t.Skip()
			}
			secret = text
		case 1:
			secret = float64(100 + rng.IntN(1_000_000_000))
		default:
			secret = rng.IntN(2) == 1
		}
		g := &grammar{rng: rng, secret: secret}
		bp := g.blueprint()
		imp := installation.Imports{Data: map[string]any{"s": secret, "p": "plain-value"}}
		specs := map[string]engine.ItemSpec{}
		rendered, err := bp.Render(context.Background(), installation.Input{Imports: imp})
		if err == nil {
			for n, spec := range rendered.Items {
				specs[n] = spec
			}
		}
		tree := NewTree()
		tree.AddValue(secret)
		tree.Shadow(context.Background(), ShadowInput{Blueprint: bp, Imports: imp, Sensitive: map[string]any{"s": secret},
			Known: func(string) bool { return true }}, specs)
		var shown strings.Builder
		for key, spec := range specs {
			it := tree.Item(key, spec)
			fmt.Fprintf(&shown, "%s %s %s\n", it.Key, it.Type, it.Config)
		}
		if err != nil {
			if msg, ok := tree.Error("", err.Error()); ok {
				shown.WriteString(msg)
			}
		}
		out := shown.String()
		for _, c := range g.canaries() {
			if strings.Contains(out, c) && !strings.Contains(background, c) {
				t.Fatalf("secret %#v: the masked output shows %q\ntemplate:\n%s\nshown:\n%s", secret, c, g.source(), out)
			}
		}
	})
}

// usableSecret keeps the fuzzer's strings that a secret could be, and
// that are long enough to be told from the rest of a rendering.
func usableSecret(s string) bool {
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) < 6 || utf8.RuneCountInString(s) > 40 {
		return false
	}
	letters := 0
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) || r == utf8.RuneError {
			return false
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			letters++
		}
	}
	// Its encodings must not be words of the rendering's own text.
	return letters >= 4 || letters == 0
}

// grammar writes random deploy executions over .imports.s (the secret)
// and .imports.p (plain).
type grammar struct {
	rng    *rand.Rand
	secret any
	execs  []template.Execution
	// branches are the texts a branch on a boolean secret rendered.
	branches []string
}

func (g *grammar) pick(n int) int { return g.rng.IntN(n) }

// stringExpr is a pipeline over the secret string.
func (g *grammar) stringExpr() string {
	fns := []string{"b64enc", "upper", "lower", "title", "sha256sum", "sha1sum", "quote", "squote", "trim",
		`printf "x-%s-y"`, `cat "pre"`, "toJson", `trimPrefix "p"`, `replace "a" "b"`, `repeat 2`, `trunc 12`, `indent 2`, `nospace`,
		`substr 1 9`, `regexFind "[^0-9]+"`, "urlquery", `printf "%X"`, `nindent 4`, `splitList "-" | join ","`, `trimSuffix "x"`, "squote"}
	e := ".imports.s"
	for range 1 + g.pick(3) {
		e += " | " + fns[g.pick(len(fns))]
	}
	return e
}

// numberExpr is a pipeline over the secret number.
func (g *grammar) numberExpr() string {
	ops := []string{"(add %s 7)", "(mul %s 3)", "(div %s 10)", "(div %s 1000)", "(mod %s 97)", "(sub %s 5)", "(add1 %s)", "(max %s 3)"}
	e := "(int64 .imports.s)"
	for range 1 + g.pick(2) {
		e = fmt.Sprintf(ops[g.pick(len(ops))], e)
	}
	return e
}

// leaf renders one config value from the secret.
func (g *grammar) leaf() string {
	switch s := g.secret.(type) {
	case string:
		return "{{ " + g.stringExpr() + " | toJson }}"
	case float64:
		if g.pick(2) == 0 {
			return "{{ " + g.numberExpr() + " }}"
		}
		return `"n-{{ ` + g.numberExpr() + ` }}"`
	default:
		yes, no := fmt.Sprintf("yes-%d-branch", g.pick(1e6)), fmt.Sprintf("no-%d-branch", g.pick(1e6))
		if s == true {
			g.branches = append(g.branches, yes)
		} else {
			g.branches = append(g.branches, no)
		}
		return fmt.Sprintf(`{{ if .imports.s }}%s{{ else }}%s{{ end }}`, yes, no)
	}
}

func (g *grammar) blueprint() installation.Blueprint {
	var b strings.Builder
	b.WriteString("deployItems:\n")
	for i := range 1 + g.pick(3) {
		name := fmt.Sprintf("item-%d", i)
		if g.pick(3) == 0 {
			name = fmt.Sprintf("item-{{ .imports.s | toString | sha256sum | trunc 8 }}-%d", i)
		}
		fmt.Fprintf(&b, "  - name: %s\n    type: mock\n    config:\n      plain: {{ .imports.p }}\n", name)
		for j := range 1 + g.pick(4) {
			key := fmt.Sprintf("k%d", j)
			if g.pick(4) == 0 {
				key = "{{ .imports.s | toString | b64enc | quote }}"
			}
			fmt.Fprintf(&b, "      %s: %s\n", key, g.leaf())
		}
		if g.pick(3) == 0 {
			fmt.Fprintf(&b, "      list: [{{ range $i, $e := until (len (toString .imports.s)) }}{{ if $i }}, {{ end }}{{ $e }}{{ end }}]\n")
		}
	}
	if g.pick(8) == 0 {
		b.WriteString(`{{ fail (printf "refusing %s" (.imports.s | toString | b64enc)) }}` + "\n")
	}
	g.execs = append(g.execs, template.Execution{Name: "go", Type: template.TypeGoTemplate, Template: b.String()})
	if _, ok := g.secret.(string); ok && g.pick(2) == 0 {
		exprs := []string{"base64(imports.s)", "upper(imports.s)", "lower(imports.s)", `format("x-%s", imports.s)`, `imports.s "-suffix"`}
		g.execs = append(g.execs, template.Execution{Name: "spiff", Type: template.TypeSpiff, Template: map[string]any{
			"deployItems": []any{map[string]any{"name": "spiffed", "type": "mock",
				"config": map[string]any{"v": "(( " + exprs[g.pick(len(exprs))] + " ))", "plain": "(( imports.p ))"}}},
		}})
	}
	return &templateBlueprint{execs: g.execs}
}

func (g *grammar) source() string {
	var b strings.Builder
	for _, e := range g.execs {
		fmt.Fprintf(&b, "%s: %v\n", e.Name, e.Template)
	}
	return b.String()
}

// background is what the grammar renders whatever the secret: a canary
// that is part of it tells nothing.
const background = `item-0 item-1 item-2 k0 k1 k2 k3 plain-value plain list mock spiffed refusing x-pre-y n- *** 0, 1, 2, 3, 4, 5, 6, 7, 8, 9`

// canaries are what must not show: the secret and its encodings, as they
// are and as JSON writes them, where long enough to be told from the
// rest.
func (g *grammar) canaries() []string {
	var out []string
	for _, c := range g.encodings() {
		j, _ := json.Marshal(c)
		for _, x := range []string{c, string(j[1 : len(j)-1])} {
			if utf8.RuneCountInString(x) >= 5 {
				out = append(out, x)
			}
		}
	}
	return out
}

func (g *grammar) encodings() []string {
	switch s := g.secret.(type) {
	case string:
		b := []byte(s)
		sum := sha256.Sum256(b)
		sum1 := sha1.Sum(b)
		return []string{s, base64.StdEncoding.EncodeToString(b), hex.EncodeToString(b), strings.ToUpper(s), strings.ToLower(s),
			hex.EncodeToString(sum[:]), hex.EncodeToString(sum1[:]), strconv.Quote(s)[1 : len(strconv.Quote(s))-1]}
	case float64:
		n := int64(s)
		return []string{strconv.FormatInt(n, 10), strconv.FormatInt(n/10, 10), strconv.FormatInt(n*3, 10), strconv.FormatInt(n+7, 10),
			strconv.FormatInt(n, 16)}
	}
	return g.branches
}

// templateBlueprint renders deploy executions with Landscaper's template
// engine; it has no sub-installations and no exports.
type templateBlueprint struct{ execs []template.Execution }

func (b *templateBlueprint) Digest() string { return "fuzz" }

func (b *templateBlueprint) Render(_ context.Context, in installation.Input) (*installation.Rendered, error) {
	out, err := template.Render(template.KindDeploy, b.execs, template.Input{Imports: in.Imports.Data})
	if err != nil {
		return nil, err
	}
	r := &installation.Rendered{Items: map[string]engine.ItemSpec{}}
	for _, m := range out.DeployItems {
		name, _ := m["name"].(string)
		typ, _ := m["type"].(string)
		cfg, err := json.Marshal(m["config"])
		if err != nil {
			return nil, err
		}
		r.Items[name] = engine.ItemSpec{Type: typ, Config: cfg}
	}
	return r, nil
}

func (b *templateBlueprint) Exports(context.Context, installation.Input, installation.ExportValues) (installation.Exports, error) {
	return installation.Exports{}, nil
}
