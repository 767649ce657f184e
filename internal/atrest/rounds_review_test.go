package atrest_test

import (
	"context"
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

// Review (rounds): a write-only port with the schema every port has
// (minimum 1, maximum 65535). Round 3 gives it the other sign and round 1
// may give it 0, which the schema refuses: the shadow fails, so nothing is
// compared and every item of the node is withheld, even one no secret
// reached. Before the rounds the stand-ins were positive and of the same
// size: they passed the schema.
func TestReviewRoundsSchemaBoundsKeepComparison(t *testing.T) {
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: port, schema: {type: integer, minimum: 1, maximum: 65535}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      deployItems:
        - name: svc
          type: landscaper.gardener.cloud/mock
          config:
            export: {port: {{ .imports.port }}}
        - name: plain
          type: landscaper.gardener.cloud/mock
          config:
            export: {fixed: yes}
`)
	imp := installation.Imports{Data: map[string]any{"port": float64(443)}}
	imp = atrest.Sealed(imp, []string{"port"}, "1")
	_, kept := apply(t, bp, imp, nil)
	if kept.Execution.Items["plain"].Spec.Withheld {
		t.Errorf("an item no sealed value reached is withheld: the shadow of a port failed its schema")
	}
}

// Review (rounds): the same schema with a template state (state is kept
// in private state): the failed shadow makes sameState refuse the whole
// tree, with a message that blames the template state for holding a
// secret it does not hold.
func TestReviewRoundsSchemaBoundsWithTemplateState(t *testing.T) {
	bp := loadReview(t, `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: port, schema: {type: integer, minimum: 1, maximum: 65535}}
deployExecutions:
  - name: x
    type: GoTemplate
    template: |
      state:
        created: fixed
      deployItems:
        - name: svc
          type: landscaper.gardener.cloud/mock
          config:
            export: {port: {{ .imports.port }}}
`)
	imp := installation.Imports{Data: map[string]any{"port": float64(443)}}
	imp = atrest.Sealed(imp, []string{"port"}, "1")
	seal := atrest.New("1", nil)
	r := &installation.Runner{Engine: engine.New(registry(), 0), Name: "app"}
	ran := r.Apply(context.Background(), seal.Blueprint(bp), imp, nil)
	if !ran.Succeeded() {
		t.Fatalf("apply refused: %v", ran.LastError)
	}
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

// Review (rounds): an item that a template renders when a write-only
// number is positive (a count, a port: "if gt .n 0") exists in rounds 0-2
// and not in round 3 (the other sign): sameNames refuses the tree, so a
// write-only count can no longer gate an item. Before the rounds every
// stand-in was positive.
func TestReviewRoundsPositiveGate(t *testing.T) {
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
	if !ran.Succeeded() {
		t.Fatalf("apply refused: %v", ran.LastError)
	}
}
