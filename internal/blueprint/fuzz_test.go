package blueprint

import (
	"encoding/json"
	"testing"
)

// FuzzLoadBlueprint feeds arbitrary blueprint.yaml content and archives to
// the loaders; whatever the input, loading returns a blueprint or an error
// and never panics, and a loaded blueprint's executions and schemas can be
// inspected without panicking either.
func FuzzLoadBlueprint(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(minimal + "imports:\n- {name: a, schema: {$ref: 'local://t'}}\nlocalTypes:\n  t: {type: string}\n"))
	f.Add([]byte(minimal + "subinstallations:\n- file: /s.yaml\n- name: x\n  blueprint: {filesystem: {blueprint.yaml: ''}}\n"))
	f.Add([]byte(minimal + "deployExecutions:\n- {name: a, type: Spiff, template: '(( 1 ))'}\n- {name: b, type: GoTemplate, file: ../x}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		files := map[string][]byte{
			"blueprint.yaml": data,
			"s.yaml":         []byte("name: s\nblueprint: {ref: cd://resources/x}\n"),
			"t.yaml":         []byte("deployItems: []\n"),
		}
		for _, load := range []func() (*Blueprint, error){
			func() (*Blueprint, error) { return LoadFiles("fuzz", files) },
			func() (*Blueprint, error) { return LoadArchive("fuzz", data) },
			func() (*Blueprint, error) { return LoadInline("fuzz", json.RawMessage(data)) },
		} {
			b, err := load()
			if err != nil {
				continue
			}
			d := b.Definition
			for _, list := range [][]TemplateExecutor{d.ImportExecutions, d.DeployExecutions, d.ExportExecutions, d.SubinstallationExecutions} {
				for _, e := range list {
					_, _ = b.TemplateSource(e)
				}
			}
			sc := b.NewSchemaContext(nil, nil)
			for _, imp := range d.Imports {
				if len(imp.Schema) > 0 {
					_, _ = sc.Compile(imp.Schema)
				}
			}
		}
	})
}

// FuzzValidateImports checks arbitrary imports against arbitrary
// blueprints; it must never panic.
func FuzzValidateImports(f *testing.F) {
	full := minimal + `imports:
- {name: d, schema: {type: object, properties: {x: {type: integer}}}}
- {name: t, targetType: kubernetes-cluster}
- {name: l, type: targetList, targetType: x/y}
- {name: m, type: targetMap, targetType: x/y, required: false}
- {name: o, required: false, default: {value: 1}, schema: {type: integer}, imports: [{name: c, schema: {type: string}}]}
`
	f.Add([]byte(full), []byte(`{"data":{"d":{"x":1}},"targets":{"t":{"type":"landscaper.gardener.cloud/kubernetes-cluster"}},"targetLists":{"l":[{"type":"x/y"}]}}`))
	f.Add([]byte(full), []byte(`{"data":{"c":"x","z":null},"targetMaps":{"m":{"k":{"type":"q"}}}}`))
	f.Add([]byte(minimal), []byte(`{}`))
	f.Fuzz(func(t *testing.T, bp []byte, imports []byte) {
		b, err := LoadFiles("fuzz", map[string][]byte{"blueprint.yaml": bp})
		if err != nil {
			return
		}
		var in struct {
			Data        map[string]any               `json:"data"`
			Targets     map[string]Target            `json:"targets"`
			TargetLists map[string][]Target          `json:"targetLists"`
			TargetMaps  map[string]map[string]Target `json:"targetMaps"`
		}
		if err := json.Unmarshal(imports, &in); err != nil {
			return
		}
		_, problems := b.ValidateImports(nil, Imports(in))
		for _, p := range problems {
			if p.Import == "" && p.Reason != ReasonUndeclared {
				t.Errorf("problem without import name: %+v", p)
			}
		}
	})
}
