package masking

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/mock"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/render"
)

func loadReview3(t *testing.T, yaml string) installation.Blueprint {
	t.Helper()
	reg := deployer.NewRegistry()
	reg.Register(mock.New(), "landscaper.gardener.cloud/mock", "mock")
	bp, err := render.Load(context.Background(), render.Source{Filesystem: map[string]string{"blueprint.yaml": yaml}},
		render.Options{Deployers: reg})
	if err != nil {
		t.Fatal(err)
	}
	return bp
}

func applyReview3(t *testing.T, bp installation.Blueprint, imp installation.Imports) *installation.Status {
	t.Helper()
	reg := deployer.NewRegistry()
	reg.Register(mock.New(), "landscaper.gardener.cloud/mock", "mock")
	r := &installation.Runner{Engine: engine.New(reg, 0), Name: "app"}
	st := r.Apply(context.Background(), bp, imp, nil)
	if !st.Succeeded() {
		t.Fatalf("apply: %+v", st.LastError)
	}
	return st
}

// Review 3 (rounds for what flows): NewRounds plans the rounds from the
// root's secrets only (sensitive imports, target configs). Values that
// become secret inside the tree, an item's export read from a Kubernetes
// Secret (SecretReads) or a sibling's sensitive export, get their
// stand-ins at paths ("item/...", "flow/...") the plan never saw: with no
// number among the root's secrets (a tree whose only secret is a
// kubeconfig, or none at all) a number read from a Secret is rotated in
// round 0 only, keeping its magnitude, so a threshold between zero and it
// is never crossed. Here the export "tier" tells that the Secret's
// maxConnections is > 100, and is not made sensitive: it lands in the
// plain `exports` attribute.
func TestReview3NumberReadFromSecretGetsNoRounds(t *testing.T) {
	bp := loadReview3(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
exports:
  - {name: tier, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: db
          type: landscaper.gardener.cloud/mock
          config:
            providerStatus: {exports: [{key: maxConnections, fromResource: {apiVersion: v1, kind: Secret, name: db-settings}}]}
            export: {maxConnections: 500}
exportExecutions:
  - name: x
    type: GoTemplate
    template: |
      exports:
        tier: {{ if gt (int .deployitems.db.maxConnections) 100 }}large{{ else }}small{{ end }}
`)
	imp := installation.Imports{Data: map[string]any{}}
	st := applyReview3(t, bp, imp)
	if st.Exports.Data["tier"] != "large" {
		t.Fatalf("tier: %v", st.Exports.Data["tier"])
	}
	tree := NewTree()
	tree.Shadow(context.Background(), ShadowInput{Blueprint: bp, Imports: imp, Status: st, Exports: true}, st.ItemSpecs())
	if !slices.Contains(st.SensitiveExports, "tier") {
		t.Errorf("an export decided by a number read from a Kubernetes Secret (> 100) is not sensitive: %v; exports %v",
			st.SensitiveExports, st.Exports.Data)
	}
}

// Review 3 (rounds for what flows, booleans): two booleans read from a
// Secret flip together in round 0 and never alone (r.flip has no
// "item/..." path), so `and` of them (one true) is the same in every
// round: the case the booleans' rounds exist for.
func TestReview3BooleansReadFromSecretNeverFlipAlone(t *testing.T) {
	bp := loadReview3(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: retries, schema: {type: integer}}
exports:
  - {name: exposed, schema: {type: boolean}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: db
          type: landscaper.gardener.cloud/mock
          config:
            providerStatus: {exports: [{fromResource: {apiVersion: v1, kind: Secret, name: db-settings}}]}
            export: {public: true, tls: false}
exportExecutions:
  - name: x
    type: GoTemplate
    template: |
      exports:
        exposed: {{ and .deployitems.db.public .deployitems.db.tls }}
`)
	// A sensitive number among the root's secrets: rounds 1-3 exist, and
	// still no round flips one of the Secret's booleans alone.
	imp := installation.Imports{Data: map[string]any{"retries": float64(3)}}
	st := applyReview3(t, bp, imp)
	tree := NewTree()
	tree.AddValue(float64(3))
	tree.Shadow(context.Background(), ShadowInput{Blueprint: bp, Imports: imp, Sensitive: map[string]any{"retries": float64(3)},
		Status: st, Exports: true}, st.ItemSpecs())
	if !slices.Contains(st.SensitiveExports, "exposed") {
		t.Errorf("an export decided by two booleans read from a Secret is not sensitive: %v; exports %v",
			st.SensitiveExports, st.Exports.Data)
	}
}

// Review 3 (collision): the empty string is its own stand-in in every
// round (Rotated("") == ""), so nothing a template decides from a secret
// being empty is ever masked: `if .imports.token` shows that the
// sensitive token is empty (the whole secret), and `default` shows the
// fallback it took.
func TestReview3EmptySecretIsItsOwnStandin(t *testing.T) {
	shown := planShows(t, `deployItems:
  - name: app
    type: mock
    config: {auth: {{ if .imports.s }}bearer{{ else }}anonymous{{ end }}}
`, "")
	if strings.Contains(shown["app"], "anonymous") {
		t.Errorf("the plan shows that a sensitive token is empty: %s", shown["app"])
	}
}

// Review 3 (sub-installation names): a sub-installation named after a
// secret keeps its real name in every item key below it ("db-<tenant>/
// ***"); the guide counts "the names of sub-installations" among partial
// facts, but here the name is the secret itself.
func TestReview3SubNamedAfterSecretShowsInItemKeys(t *testing.T) {
	child := `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: app
          type: landscaper.gardener.cloud/mock
          config: {}
`
	bp := loadReview3(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: tenant, schema: {type: string}}
subinstallationExecutions:
  - name: subs
    type: GoTemplate
    template: |
      subinstallations:
        - apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: InstallationTemplate
          name: db-{{ .imports.tenant }}
          blueprint: {filesystem: {blueprint.yaml: `+jsonQuote(child)+`}}
`)
	imp := installation.Imports{Data: map[string]any{"tenant": "acme-corp"}}
	st := applyReview3(t, bp, imp)
	tree := NewTree()
	tree.AddValue("acme-corp")
	tree.Shadow(context.Background(), ShadowInput{Blueprint: bp, Imports: imp, Sensitive: map[string]any{"tenant": "acme-corp"}}, st.ItemSpecs())
	shown := map[string]Item{}
	for key, spec := range st.ItemSpecs() {
		it := tree.Item(key, spec)
		if strings.Contains(it.Key, "acme") {
			t.Errorf("item shown under key %q", it.Key)
		}
		shown[it.Key] = it
	}
	// A later run that renders nothing (a refresh) finds the items under
	// the keys the state shows them.
	later := NewTree()
	later.AddValue("acme-corp")
	later.Prior(shown, st)
	later.Current(st.ItemSpecs())
	for key, spec := range st.ItemSpecs() {
		if k, want := later.Item(key, spec).Key, tree.Key(key); k != want {
			t.Errorf("without shadows the item %q is shown under %q, the state has %q", key, k, want)
		}
	}
}

func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
