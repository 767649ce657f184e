package template

import (
	"testing"
	"testing/fstest"
)

func fuzzInput(t testing.TB) Input {
	root, list := v2Components(t)
	return Input{
		Imports:             map[string]any{"version": "1.0.0", "list": []any{"a", "b"}, "obj": map[string]any{"k": "v"}},
		ComponentDescriptor: root,
		ComponentList:       list,
		Files: fstest.MapFS{
			"VERSION":    {Data: []byte("0.0.0")},
			"data/a.tpl": {Data: []byte("a: {{ .imports.version }}")},
			"data/self":  {Data: []byte(`{{ include "data/self" . }}`)},
		},
		Resolver: fakeResolver{"config": {data: "x: 1", mediaType: "text/plain"}},
	}
}

// FuzzGoTemplate renders arbitrary GoTemplate text in every execution kind;
// Render must return, never panic.
func FuzzGoTemplate(f *testing.F) {
	f.Add("deployItems:\n- name: a\n  type: mock\n  config: {{ .imports.obj | toJson }}\n")
	f.Add(`{{ include "data/self" . }}`)
	f.Add(`{{ getResource .cd "name" "config" | toYaml }}`)
	f.Add(`state: {{ add 1 .state.x }}`)
	f.Add(`exports: {{ readFile "VERSION" }}`)
	in := fuzzInput(f)
	f.Fuzz(func(t *testing.T, tmpl string) {
		for _, kind := range []Kind{KindDeploy, KindExport, KindImport, KindSubinstallation} {
			_, _ = Render(kind, []Execution{{Name: "fuzz", Type: TypeGoTemplate, Template: tmpl}}, in)
		}
	})
}

// FuzzSpiff renders arbitrary Spiff documents; Render must return, never
// panic.
func FuzzSpiff(f *testing.F) {
	f.Add("deployItems:\n- name: a\n  type: mock\n  config: (( imports.obj ))\n")
	f.Add("state:\n  <<<: (( &state ))\n  x: (( imports.version ))\n")
	f.Add(`exports: (( getResource(cd, "name", "config") ))`)
	f.Add(`x: (( read("VERSION", "text") ))`)
	f.Add("a: (( b ))\nb: (( a ))\n")
	in := fuzzInput(f)
	f.Fuzz(func(t *testing.T, tmpl string) {
		for _, kind := range []Kind{KindDeploy, KindImport} {
			_, _ = Render(kind, []Execution{{Name: "fuzz", Type: TypeSpiff, Template: tmpl}}, in)
		}
		_, _ = DataMapping(map[string]any{"m": tmpl}, in.Imports)
	})
}
