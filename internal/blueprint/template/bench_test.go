package template

import (
	"os"
	"testing"
)

func BenchmarkRenderGoTemplate(b *testing.B) {
	root, list := v2Components(b)
	ex := execs(b, goDeploy("{{ include \"data/config\" . }}\nres: {{ (getResource .cd \"name\" \"mycustomimage\").name }}"))
	in := Input{Imports: map[string]any{"version": "1"}, ComponentDescriptor: root, ComponentList: list, Files: os.DirFS("testdata/blueprint")}
	for b.Loop() {
		if _, err := Render(KindDeploy, ex, in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderSpiff(b *testing.B) {
	root, list := v2Components(b)
	ex := execs(b, spiffDeploy("image: (( \"img:\" imports.version ))\nres: (( getResource(cd, \"name\", \"mycustomimage\").name ))"))
	in := Input{Imports: map[string]any{"version": "1"}, ComponentDescriptor: root, ComponentList: list, Files: os.DirFS("testdata/blueprint")}
	for b.Loop() {
		if _, err := Render(KindDeploy, ex, in); err != nil {
			b.Fatal(err)
		}
	}
}
