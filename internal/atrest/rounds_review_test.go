package atrest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/atrest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/render"
)

func loadReview(t *testing.T, yaml string) installation.Blueprint {
	t.Helper()
	bp, err := render.Load(context.Background(), render.Source{Filesystem: map[string]string{"blueprint.yaml": yaml}},
		render.Options{Deployers: registry()})
	if err != nil {
		t.Fatal(err)
	}
	return bp
}

// Review (rounds): a write-only secret given as a JSON document in a
// string (a credentials blob): its booleans and number get round 0 only,
// so a && b (one true) and a threshold on the number are kept in clear in
// private state.
func TestReviewRoundsSealedDocument(t *testing.T) {
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: creds, schema: {type: string}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: both
          type: landscaper.gardener.cloud/mock
          config:
            export: {both: {{ $d := fromYaml .imports.creds }}{{ and $d.a $d.b }}}
        - name: size
          type: landscaper.gardener.cloud/mock
          config:
            export: {class: {{ $d := fromYaml .imports.creds }}{{ if gt (int $d.n) 10 }}large{{ else }}small{{ end }}}
`)
	imp := installation.Imports{Data: map[string]any{"creds": `{"a": true, "b": false, "n": 50}`}}
	imp = atrest.Sealed(imp, []string{"creds"}, "1")
	_, kept := apply(t, bp, imp, nil)
	for _, n := range []string{"both", "size"} {
		if is := kept.Execution.Items[n]; !is.Spec.Withheld || strings.Contains(string(is.Spec.Config), "large") {
			t.Errorf("item %q is kept as it is: %s", n, is.Spec.Config)
		}
	}
}

// An item that a template renders only when a write-only number is
// positive ("if gt .n 0") exists in rounds 0-2 and not in round 3 (the
// other sign): its name in state would tell that the secret is positive,
// as an item there only when env == "prod" would tell the whole value.
// The tree is refused, saying why and what to do instead.
func TestItemGatedByAWriteOnlyValueIsRefused(t *testing.T) {
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: replicas, schema: {type: integer}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
      {{- if gt (int .imports.replicas) 0 }}
        - name: app
          type: landscaper.gardener.cloud/mock
          config:
            export: {replicas: {{ .imports.replicas }}}
      {{- end }}
        - name: plain
          type: landscaper.gardener.cloud/mock
          config:
            export: {fixed: yes}
`)
	imp := installation.Imports{Data: map[string]any{"replicas": float64(3)}}
	imp = atrest.Sealed(imp, []string{"replicas"}, "1")
	r := &installation.Runner{Engine: engine.New(registry(), 0), Name: "app"}
	ran := r.Apply(context.Background(), atrest.New("1", nil).Blueprint(bp), imp, nil)
	if ran.Succeeded() || !strings.Contains(fmt.Sprint(ran.LastError), "exists only because of one") ||
		!strings.Contains(fmt.Sprint(ran.LastError), "plain import") {
		t.Fatalf("apply: %v, want refused saying an item exists because of a write-only secret", ran.LastError)
	}
}

// A write-only secret whose stand-ins the blueprint refuses from the first
// round (an enum of environments) leaves nothing to tell whether item
// names derive from it: a node with items is refused, saying so, instead
// of keeping "db-prod" in state unchecked.
func TestNamesUntoldWhenNoShadowRenders(t *testing.T) {
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: env, schema: {type: string, enum: [prod, dev]}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: db-{{ .imports.env }}
          type: landscaper.gardener.cloud/mock
          config: {}
`)
	imp := atrest.Sealed(installation.Imports{Data: map[string]any{"env": "prod"}}, []string{"env"}, "1")
	_, err := atrest.New("1", nil).Blueprint(bp).Render(context.Background(), installation.Input{Imports: imp})
	if err == nil || !strings.Contains(err.Error(), "refuses the stand-ins") || strings.Contains(err.Error(), "prod") {
		t.Fatalf("render: %v, want refused without naming the value", err)
	}
}
