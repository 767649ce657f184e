package render

import (
	"strings"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

func TestItemSpecResolvesTargetsAndDefaults(t *testing.T) {
	main := &deployer.Target{Name: "main", Type: "k8s"}
	listed := &deployer.Target{Name: "fleet[1]", Type: "k8s"}
	keyed := &deployer.Target{Name: "regions[eu]", Type: "k8s"}
	imp := installation.Imports{
		Targets:     map[string]*deployer.Target{"main": main},
		TargetLists: map[string][]*deployer.Target{"fleet": {{Name: "fleet[0]"}, listed}},
		TargetMaps:  map[string]map[string]*deployer.Target{"regions": {"eu": keyed}},
	}
	cases := []struct {
		name   string
		item   map[string]any
		target *deployer.Target
		err    string
	}{
		{"import", map[string]any{"name": "a", "type": "mock", "target": map[string]any{"import": "main"}}, main, ""},
		{"index", map[string]any{"name": "a", "type": "mock", "target": map[string]any{"import": "fleet", "index": 1}}, listed, ""},
		{"key", map[string]any{"name": "a", "type": "mock", "target": map[string]any{"import": "regions", "key": "eu"}}, keyed, ""},
		{"deprecated name", map[string]any{"name": "a", "type": "mock", "target": map[string]any{"name": "main"}}, main, ""},
		{"missing", map[string]any{"name": "a", "type": "mock", "target": map[string]any{"import": "nope"}}, nil, "not among the imports"},
		{"index out of range", map[string]any{"name": "a", "type": "mock", "target": map[string]any{"import": "fleet", "index": 5}}, nil, "not among the imports"},
		{"no name", map[string]any{"type": "mock"}, nil, "no name"},
		{"bad timeout", map[string]any{"name": "a", "type": "mock", "timeout": "soon"}, nil, "timeout"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, spec, err := itemSpec(tc.item, imp)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || spec.Target != tc.target {
				t.Fatalf("target %v err %v", spec.Target, err)
			}
		})
	}
	_, spec, err := itemSpec(map[string]any{"name": "a", "type": "mock"}, imp)
	if err != nil || !spec.UpdateOnChangeOnly || spec.Timeout != 10*time.Minute || string(spec.Config) != "{}" {
		t.Fatalf("defaults: %+v %v", spec, err)
	}
	_, spec, _ = itemSpec(map[string]any{"name": "a", "type": "mock", "updateOnChangeOnly": false, "timeout": "90s"}, imp)
	if spec.UpdateOnChangeOnly || spec.Timeout != 90*time.Second {
		t.Fatalf("explicit values: %+v", spec)
	}
}

func TestDecodeTemplateIsStrict(t *testing.T) {
	if _, err := decodeTemplate(map[string]any{"name": "s", "blueprint": map[string]any{"ref": "cd://resources/x"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeTemplate(map[string]any{"name": "s", "blueprnt": map[string]any{}}); err == nil || !strings.Contains(err.Error(), "blueprnt") {
		t.Fatalf("unknown field: %v", err)
	}
	if _, err := decodeTemplate(map[string]any{"blueprint": map[string]any{}}); err == nil {
		t.Fatal("a template without a name was accepted")
	}
}

func TestDeclarationsListImportsAndExportsInOrder(t *testing.T) {
	bp, err := Load(t.Context(), Source{Filesystem: map[string]string{"blueprint.yaml": `
apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
- name: env
  schema: {type: string}
- name: cluster
  targetType: kubernetes-cluster
  required: false
exports:
- name: url
  schema: {type: string}
`}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	imports, exports := Declarations(bp)
	want := []Declaration{{Name: "env", Type: "data", Required: true}, {Name: "cluster", Type: "target"}}
	if len(imports) != 2 || imports[0] != want[0] || imports[1] != want[1] {
		t.Fatalf("imports %+v", imports)
	}
	if len(exports) != 1 || exports[0] != (Declaration{Name: "url", Type: "data"}) {
		t.Fatalf("exports %+v", exports)
	}
	if i, e := Declarations(nil); i != nil || e != nil {
		t.Fatal("a blueprint Load did not return declares nothing")
	}
}
