package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// Bad input gives a clear plan-time diagnostic, never a crash, and since
// the plan fails, nothing is applied or written to state.
func TestAccInstallation_badInput(t *testing.T) {
	const head = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n"
	cases := map[string]struct {
		files       map[string]string
		constructor string // component-constructor.yaml; the blueprint is then its resource "bp"
		big         bool   // add a sparse 100 MB file
		want        string
	}{
		"malformed yaml": {files: map[string]string{"blueprint.yaml": head + "imports: [\n"}, want: `(?s)Invalid blueprint source.*blueprint.yaml`},
		"unknown field":  {files: map[string]string{"blueprint.yaml": head + "importz: []\n"}, want: `(?s)Invalid blueprint source.*importz`},
		"template syntax": {files: map[string]string{"blueprint.yaml": head +
			"deployExecutions:\n  - name: x\n    type: GoTemplate\n    template: |\n      deployItems:\n      {{ if }}\n"}, want: `(?s)Blueprint cannot be rendered.*deploy execution "x".*line`},
		"schema not a schema": {files: map[string]string{"blueprint.yaml": head +
			"imports:\n  - name: a\n    type: data\n    required: false\n    schema: {type: 5}\n"}, want: `(?s)schema`},
		"file outside": {files: map[string]string{"blueprint.yaml": head +
			"deployExecutions:\n  - name: x\n    type: GoTemplate\n    file: ../../../../../etc/passwd\n"}, want: `(?s)(outside|escape|climb|above)`},
		"cd ref to nothing": {files: map[string]string{"blueprint.yaml": head +
			"subinstallations:\n  - name: s\n    blueprint:\n      ref: cd://resources/nothing\n"},
			constructor: "components:\n  - name: example.com/bad\n    version: v1\n    provider: {name: t}\n    resources:\n" +
				"      - name: bp\n        type: landscaper.gardener.cloud/blueprint\n        input: {type: dir, path: ./bp}\n", want: `(?s)nothing`},
		"constructor names a missing file": {files: map[string]string{"blueprint.yaml": head},
			constructor: "components:\n  - name: example.com/bad\n    version: v1\n    provider: {name: t}\n    resources:\n" +
				"      - name: bp\n        type: landscaper.gardener.cloud/blueprint\n        input: {type: dir, path: ./bp}\n" +
				"      - name: gone\n        type: file\n        input: {type: file, path: ./no-such-file.txt}\n", want: `(?s)Invalid blueprint source.*no-such-file`},
		"100 MB file": {files: map[string]string{"blueprint.yaml": head}, big: true, want: `(?s)Invalid blueprint source.*(larger|limit)`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			bp := dir
			if tc.constructor != "" {
				bp = filepath.Join(dir, "bp")
			}
			for f, content := range tc.files {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(bp, f)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(bp, f), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.big {
				f, err := os.Create(filepath.Join(bp, "huge.bin"))
				if err != nil {
					t.Fatal(err)
				}
				if err := f.Truncate(100 << 20); err != nil {
					t.Fatal(err)
				}
				_ = f.Close()
			}
			src := fmt.Sprintf("blueprint = { path = %q }", bp)
			if tc.constructor != "" {
				cc := filepath.Join(dir, "component-constructor.yaml")
				if err := os.WriteFile(cc, []byte(tc.constructor), 0o644); err != nil {
					t.Fatal(err)
				}
				src = fmt.Sprintf("blueprint = { ref = \"bp\" }\n  component = { name = \"example.com/bad\", version = \"v1\", constructors = [%q] }", cc)
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      fmt.Sprintf("resource \"landscaper_installation\" \"app\" {\n  name = \"app\"\n  %s\n}\n", src),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(tc.want),
				}},
			})
		})
	}
}
