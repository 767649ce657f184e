package atrest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/atrest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

// renderSealed renders bp with the named data imports write-only.
func renderSealed(t *testing.T, bp installation.Blueprint, data map[string]any, sealed ...string) (*installation.Rendered, error) {
	t.Helper()
	imp := atrest.Sealed(installation.Imports{Data: data}, sealed, "1")
	return atrest.New("1", nil).Blueprint(bp).Render(context.Background(), installation.Input{Imports: imp})
}

// Review 3 (a + names): a later round that fails (here the schema's
// minimum refuses the tenth, 0, and the other sign, -6) withholds every
// config of the node, but the names are checked only against the rounds
// that rendered (0: 6 and 2: 10), which are on the secret's side of
// "more than one". namesUntold runs only when round 0 fails. So an item
// that exists only because replicas > 1 is kept by name in the state: the
// fact that c03d299 hides in the configs shows in the names.
func TestReview3FailedLaterRoundLeavesGatedNameKept(t *testing.T) {
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: replicas, schema: {type: integer, minimum: 1}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
      {{- if gt (int .imports.replicas) 1 }}
        - name: ha-proxy
          type: landscaper.gardener.cloud/mock
          config: {}
      {{- end }}
        - name: app
          type: landscaper.gardener.cloud/mock
          config: {}
`)
	r, err := renderSealed(t, bp, map[string]any{"replicas": float64(5)}, "replicas")
	if err == nil {
		if _, ok := r.Items["ha-proxy"]; ok {
			t.Errorf("an item there only because a write-only count is > 1 is kept by name (items %v)", keys(r.Items))
		}
	}
	var refused *atrest.Refused
	if !errors.As(err, &refused) {
		t.Errorf("want a refusal; got %v", err)
	}
}

// Review 3 (b, mirror): sameNames refuses an item the shadow lacks, but
// not an item the real rendering lacks and every shadow has. An item that
// exists unless env == "prod" is missing from the state exactly when the
// write-only value is "prod": the state's list of items tells the value
// as the refused TestReview2ItemGatedOnEqualityIsKept would have.
func TestReview3ItemAbsentBecauseOfSecretIsNotRefused(t *testing.T) {
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: env, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
      {{- if ne .imports.env "prod" }}
        - name: debug-console
          type: landscaper.gardener.cloud/mock
          config: {}
      {{- end }}
        - name: app
          type: landscaper.gardener.cloud/mock
          config: {}
`)
	r, err := renderSealed(t, bp, map[string]any{"env": "prod"}, "env")
	if err == nil {
		t.Errorf("items %v are kept: the missing debug-console tells that the write-only env is \"prod\"", keys(r.Items))
	}
}

// Review 3 (names, sub-installations): the same for a sub-installation
// that exists unless a write-only flag is set (the shadows, which flip
// it, all have it).
func TestReview3SubAbsentBecauseOfSecretIsNotRefused(t *testing.T) {
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: managed, schema: {type: boolean}}
subinstallationExecutions:
  - name: subs
    type: GoTemplate
    template: |
      subinstallations:
      {{- if not .imports.managed }}
        - apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: InstallationTemplate
          name: self-hosted-db
          blueprint: {filesystem: {blueprint.yaml: "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n"}}
      {{- end }}
`)
	r, err := renderSealed(t, bp, map[string]any{"managed": true}, "managed")
	if err == nil {
		t.Errorf("subs %d kept: the missing self-hosted-db tells that the write-only flag is true", len(r.Subs))
	}
}

// Review 3 (names, sub-installations): sameNames compares a templated
// sub-installation by name only. Its importDataMappings, rendered from a
// write-only value, hand the value to the sub as a plain import: the sub
// is not sealed (flow.go importsOf drops the mark of a mapped value when
// nothing sealed is imported by dataRef), so its item config is kept in
// clear, and its imports hash is an unkeyed digest of the secret.
func TestReview3TemplatedSubMappingCarriesSecretInClear(t *testing.T) {
	child := `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: pw, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: db
          type: landscaper.gardener.cloud/mock
          config:
            export: {pw: {{` + "`{{`" + `}} .imports.pw | quote }}}
`
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: password, schema: {type: string}}
subinstallationExecutions:
  - name: subs
    type: GoTemplate
    template: |
      subinstallations:
        - apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: InstallationTemplate
          name: db
          blueprint: {filesystem: {blueprint.yaml: `+quote(child)+`}}
          importDataMappings:
            pw: {{ .imports.password | quote }}
`)
	keep := func(pw string) *installation.Status {
		imp := atrest.Sealed(installation.Imports{Data: map[string]any{"password": pw}}, []string{"password"}, "1")
		seal := atrest.New("1", nil)
		r := &installation.Runner{Engine: engine.New(registry(), 0), Name: "app"}
		ran := r.Apply(context.Background(), seal.Blueprint(bp), imp, nil)
		if !ran.Succeeded() {
			t.Fatalf("apply: %+v", ran.LastError)
		}
		return seal.Status(ran, registry(), func(raw json.RawMessage) json.RawMessage { return raw })
	}
	const pw = "s3cr3t-pw-0042"
	kept := keep(pw)
	if s := stored(t, kept); strings.Contains(s, pw) {
		i := strings.Index(s, pw)
		t.Errorf("the kept status holds the write-only password %d times, first: ...%s...", strings.Count(s, pw), s[max(0, i-80):i+len(pw)+10])
	}
	// The sub's hashes count the mapped value by its stand-in: another
	// password of the same version leaves them as they were, so they
	// are no digest of it.
	other := keep("another-pw-9999")
	if a, b := kept.Subs["db"], other.Subs["db"]; a == nil || b == nil || a.ImportsHash != b.ImportsHash || a.InputHash != b.InputHash {
		t.Errorf("the sub's kept hashes depend on the write-only password: %+v vs %+v", a, b)
	}
}

// Review 3 fix (F1): a sub-installation whose template a write-only value
// decided beyond its importDataMappings (here its inline blueprint holds
// the value) has nothing that could be sealed: it is refused.
func TestSubTemplateFromSecretIsRefused(t *testing.T) {
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: password, schema: {type: string}}
subinstallationExecutions:
  - name: subs
    type: GoTemplate
    template: |
      subinstallations:
        - apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: InstallationTemplate
          name: db
          blueprint: {filesystem: {blueprint.yaml: "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n# {{ .imports.password }}\n"}}
`)
	_, err := renderSealed(t, bp, map[string]any{"password": "s3cr3t"}, "password")
	var refused *atrest.Refused
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "beyond its importDataMappings") || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("render: %v, want refused without naming the value", err)
	}
}

// Review 3 (item fields besides name, type and target): a deploy item's
// timeout (and dependsOn, updateOnChangeOnly) is rendered by the template
// and kept in the state's spec, but neither sameNames nor item() compares
// it: a timeout picked by a write-only value tells which branch it took.
func TestReview3TimeoutFromSecretIsKept(t *testing.T) {
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: dbSize, schema: {type: integer}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: db
          type: landscaper.gardener.cloud/mock
          timeout: {{ if gt (int .imports.dbSize) 100 }}30m{{ else }}5m{{ end }}
          config: {}
`)
	r, err := renderSealed(t, bp, map[string]any{"dbSize": float64(500)}, "dbSize")
	if err != nil {
		return
	}
	if d := r.Items["db"].Timeout; d == 30*time.Minute {
		b, _ := json.Marshal(r.Items["db"])
		t.Errorf("the spec kept in state carries a timeout decided by a write-only value (dbSize > 100): %s", b)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
