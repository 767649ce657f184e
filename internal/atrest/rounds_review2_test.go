package atrest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/atrest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

// Review 2 (rounds): a later round the schema refuses is left out
// (atrest.go Render `continue`). A write-only count with the schema a
// count has (minimum 1): round 1 (a tenth: 0) and round 3 (the other
// sign) are refused, round 0 (6) and round 2 (10) are on the secret's
// side of "more than one", so an innocent template's "ha" is kept in
// clear in the state: the fact "replicas > 1" of a write-only value.
// Before 4b7438c the failing round withheld the node whole; since review
// 3 (whose names the same failed round left unchecked) a node with items
// is refused when any round fails.
func TestReview2RefusedRoundHidesThreshold(t *testing.T) {
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: replicas, schema: {type: integer, minimum: 1}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: app
          type: landscaper.gardener.cloud/mock
          config:
            export: {mode: {{ if gt (int .imports.replicas) 1 }}ha{{ else }}single{{ end }}}
`)
	imp := installation.Imports{Data: map[string]any{"replicas": float64(5)}}
	imp = atrest.Sealed(imp, []string{"replicas"}, "1")
	r := &installation.Runner{Engine: engine.New(registry(), 0), Name: "app"}
	seal := atrest.New("1", nil)
	ran := r.Apply(context.Background(), seal.Blueprint(bp), imp, nil)
	if !ran.Succeeded() {
		if !strings.Contains(fmt.Sprint(ran.LastError), "refuses the stand-ins") {
			t.Fatalf("apply failed for another reason: %v", ran.LastError)
		}
		return
	}
	kept := seal.Status(ran, registry(), func(raw json.RawMessage) json.RawMessage { return raw })
	if is := kept.Execution.Items["app"]; !is.Spec.Withheld || strings.Contains(string(is.Spec.Config), "ha") {
		t.Errorf("a threshold on a write-only count is kept in clear: withheld=%v %s", is.Spec.Withheld, is.Spec.Config)
	}
}

// Review 2 (names): when round 0 fails to render (a sealed hex token
// with its schema's pattern: 'f' rotates to 'g'), Render drops every
// shadow and never calls sameNames: an item (or sub-installation) named
// after the write-only secret is kept by that name in the state.
func TestReview2FailedRoundZeroSkipsNameCheck(t *testing.T) {
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: token, schema: {type: string, pattern: "^[0-9a-f]+$"}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: cache-{{ .imports.token | trunc 8 }}
          type: landscaper.gardener.cloud/mock
          config: {}
`)
	imp := installation.Imports{Data: map[string]any{"token": "deadbeefcafe0123"}}
	imp = atrest.Sealed(imp, []string{"token"}, "1")
	r, err := atrest.New("1", nil).Blueprint(bp).Render(context.Background(), installation.Input{Imports: imp})
	if err == nil {
		for name := range r.Items {
			if strings.Contains(name, "deadbeef") {
				t.Errorf("an item named after a write-only secret is accepted: %q", name)
			}
		}
	}
}

// Review 2 (sameNames, d): an item named after a write-only string and
// gated by a write-only boolean. Round 0 flips the boolean, so the shadow
// has no item at all in place of it, hence no "renamed" item: sameNames
// lets the real name through, and "db-acme-prod" is kept in the state.
// Before 4b7438c a missing item refused the tree.
func TestReview2GatedItemNamedAfterSecret(t *testing.T) {
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: enabled, schema: {type: boolean}}
  - {name: tenant, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
      {{- if .imports.enabled }}
        - name: db-{{ .imports.tenant }}
          type: landscaper.gardener.cloud/mock
          config: {}
      {{- end }}
        - name: plain
          type: landscaper.gardener.cloud/mock
          config: {}
`)
	imp := installation.Imports{Data: map[string]any{"enabled": true, "tenant": "acme-prod"}}
	imp = atrest.Sealed(imp, []string{"enabled", "tenant"}, "1")
	r, err := atrest.New("1", nil).Blueprint(bp).Render(context.Background(), installation.Input{Imports: imp})
	if err == nil {
		for name := range r.Items {
			if strings.Contains(name, "acme") {
				t.Errorf("an item named after a write-only secret is accepted: %q", name)
			}
		}
	}
	wantRefusedForName(t, err)
}

// wantRefusedForName asserts the rendering was refused for the reason the
// review is about, not for any other: a test that passed on every error
// would pass on a blueprint that no longer renders at all.
func wantRefusedForName(t *testing.T, err error) {
	t.Helper()
	var refused *atrest.Refused
	if !errors.As(err, &refused) || !strings.Contains(refused.Reason, "exists only because of one") {
		t.Errorf("want the refusal of an item named after, or gated on, a write-only secret; got %v", err)
	}
}

// The same, through an apply: what is kept of the tree holds the name.
func TestReview2GatedItemNamedAfterSecretKept(t *testing.T) {
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: enabled, schema: {type: boolean}}
  - {name: tenant, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
      {{- if .imports.enabled }}
        - name: db-{{ .imports.tenant }}
          type: landscaper.gardener.cloud/mock
          config: {}
      {{- end }}
`)
	imp := installation.Imports{Data: map[string]any{"enabled": true, "tenant": "acme-prod"}}
	imp = atrest.Sealed(imp, []string{"enabled", "tenant"}, "1")
	seal := atrest.New("1", nil)
	r := &installation.Runner{Engine: engine.New(registry(), 0), Name: "app"}
	ran := r.Apply(context.Background(), seal.Blueprint(bp), imp, nil)
	if ran.Succeeded() {
		kept := seal.Status(ran, registry(), func(raw json.RawMessage) json.RawMessage { return raw })
		if s := stored(t, kept); strings.Contains(s, "acme-prod") {
			t.Errorf("the kept status holds a write-only value: %.300s", s[strings.Index(s, "acme-prod")-40:])
		}
	}
	if ran.LastError == nil || !strings.Contains(ran.LastError.Message, "exists only because of one") {
		t.Errorf("want the refusal of an item named after a write-only secret; got %+v", ran.LastError)
	}
}

// Review 2 (sameNames, d, by design?): an item gated on an equality with
// a write-only value exists in the real rendering only; no shadow has an
// extra item, so it is kept by its (the template's) name, and whoever
// reads the state and the blueprint learns env == "prod": the whole
// write-only value, as a digest in a name would tell it ("as good as the
// secret to whoever can guess it"). Before 4b7438c this was refused.
func TestReview2ItemGatedOnEqualityIsKept(t *testing.T) {
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: env, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
      {{- if eq .imports.env "prod" }}
        - name: backup-for-prod
          type: landscaper.gardener.cloud/mock
          config: {}
      {{- end }}
        - name: app
          type: landscaper.gardener.cloud/mock
          config: {}
`)
	imp := atrest.Sealed(installation.Imports{Data: map[string]any{"env": "prod"}}, []string{"env"}, "1")
	r, err := atrest.New("1", nil).Blueprint(bp).Render(context.Background(), installation.Input{Imports: imp})
	if err == nil {
		if _, ok := r.Items["backup-for-prod"]; ok {
			t.Errorf("an item that exists because env == \"prod\" is kept by name: the state tells the write-only value")
		}
	}
	wantRefusedForName(t, err)
}
