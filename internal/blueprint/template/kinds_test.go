package template

import (
	"reflect"
	"strings"
	"testing"
)

func TestDeployExecutionsMerge(t *testing.T) {
	list := `
- name: go
  type: GoTemplate
  template: |
    deployitems:
    - name: a
      type: landscaper.gardener.cloud/helm
      target:
        import: cluster
      config: {x: 1}
      dependsOn: [b]
      timeout: 5m
      updateOnChangeOnly: true
      labels: {l: v}
      onDelete:
        skipUninstallIfClusterRemoved: true
- name: spiff
  type: Spiff
  template:
    deployItems:
    - name: b
      type: landscaper.gardener.cloud/mock
      target:
        import: clusters
        index: 1
      config: (( imports.cfg ))
    - name: c
      type: landscaper.gardener.cloud/mock
      target:
        name: (( imports.targetName ))
- name: empty
  type: GoTemplate
  template: "foo: bar"
`
	out, err := Render(KindDeploy, execs(t, list), Input{Imports: map[string]any{"cfg": map[string]any{"k": "v"}, "targetName": "t1"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"name": "a", "type": "landscaper.gardener.cloud/helm", "target": map[string]any{"import": "cluster"}, "config": map[string]any{"x": float64(1)},
			"dependsOn": []string{"b"}, "timeout": "5m", "updateOnChangeOnly": true, "labels": map[string]string{"l": "v"},
			"onDelete": map[string]any{"skipUninstallIfClusterRemoved": true}},
		{"name": "b", "type": "landscaper.gardener.cloud/mock", "target": map[string]any{"import": "clusters", "index": 1}, "config": map[string]any{"k": "v"}},
		{"name": "c", "type": "landscaper.gardener.cloud/mock", "target": map[string]any{"name": "t1"}, "config": nil},
	}
	if !reflect.DeepEqual(out.DeployItems, want) {
		t.Fatalf("items =\n%#v\nwant\n%#v", out.DeployItems, want)
	}
}

func TestExportExecutions(t *testing.T) {
	list := `
- name: first
  type: GoTemplate
  template: |
    exports:
      fromItem: {{ .values.deployitems.main.port }}
      same: {{ .deployitems.main.port }}
      do: {{ .dataobjects.key1 }}
      target: {{ .targets.t1.spec.type }}
      nested: {a: 1, b: 1}
      imp: {{ .imports.version }}
- name: second
  type: Spiff
  template:
    exports:
      nested:
        b: 2
      spiffItem: (( values.deployitems.main.port + 1 ))
`
	out, err := Render(KindExport, execs(t, list), Input{
		Imports: map[string]any{"version": "1.0"},
		Exports: map[string]any{
			"deployitems": map[string]any{"main": map[string]any{"port": 8080}},
			"dataobjects": map[string]any{"key1": "v1"},
			"targets":     map[string]any{"t1": TargetObject("t1", "ns", "landscaper.gardener.cloud/kubernetes-cluster", nil)},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"fromItem": float64(8080), "same": float64(8080), "do": "v1", "target": "landscaper.gardener.cloud/kubernetes-cluster",
		"nested": map[string]any{"a": float64(1), "b": float64(2)}, "imp": float64(1), "spiffItem": float64(8081),
	}
	if !reflect.DeepEqual(out.Exports, want) {
		t.Fatalf("exports = %#v", out.Exports)
	}
}

func TestImportExecutions(t *testing.T) {
	list := `
- name: derive
  type: GoTemplate
  template: |
    bindings:
      derived: {{ .imports.a }}-x
- name: check
  type: Spiff
  template:
    bindings:
      again: (( imports.derived "-y" ))
    errors: (( imports.a == "bad" ? ["a must not be bad"] :[] ))
- name: never
  type: GoTemplate
  template: |
    errors: ["should not run when check failed"]
`
	out, err := Render(KindImport, execs(t, list), Input{Imports: map[string]any{"a": "ok"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.Bindings, map[string]any{"derived": "ok-x", "again": "ok-x-y"}) {
		t.Fatalf("bindings = %#v", out.Bindings)
	}
	if !reflect.DeepEqual(out.Errors, []string{"should not run when check failed"}) {
		t.Fatalf("errors = %#v", out.Errors)
	}
	out, err = Render(KindImport, execs(t, list), Input{Imports: map[string]any{"a": "bad"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.Errors, []string{"a must not be bad"}) {
		t.Fatalf("errors = %#v", out.Errors)
	}
	if len(out.State) != 0 {
		t.Fatalf("import executions must not write state: %v", out.State)
	}
}

func TestSubinstallationExecutions(t *testing.T) {
	list := `
- name: go
  type: GoTemplate
  template: |
    subinstallations:
    - apiVersion: landscaper.gardener.cloud/v1alpha1
      kind: InstallationTemplate
      name: my-subinstallation
      blueprint:
        ref: cd://resources/{{ .imports.blueprintName }}
      imports:
        data:
        - name: a
          dataRef: b
      importDataMappings:
        x: (( a.y ))
- name: spiff
  type: Spiff
  template: |
    subinstallations:
    - apiVersion: landscaper.gardener.cloud/v1alpha1
      kind: InstallationTemplate
      name: second
      blueprint:
        ref: cd://resources/other
`
	out, err := Render(KindSubinstallation, execs(t, list), Input{Imports: map[string]any{"blueprintName": "some-blueprint-name"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Subinstallations) != 2 {
		t.Fatalf("got %d subinstallations", len(out.Subinstallations))
	}
	first := out.Subinstallations[0]
	if bp, _ := first["blueprint"].(map[string]any); first["name"] != "my-subinstallation" || bp["ref"] != "cd://resources/some-blueprint-name" {
		t.Fatalf("first = %#v", first)
	}
	// Spiff expressions of data mappings stay untouched in a GoTemplate.
	if m, _ := first["importDataMappings"].(map[string]any); m["x"] != "(( a.y ))" {
		t.Fatalf("mappings = %#v", m)
	}
	if out.Subinstallations[1]["name"] != "second" {
		t.Fatalf("second = %#v", out.Subinstallations[1])
	}
}

func TestGoTemplateStateRoundTrip(t *testing.T) {
	list := execs(t, `
- name: counter
  type: GoTemplate
  template: |
    state:
      count: {{ if .state.count }}{{ add .state.count 1 }}{{ else }}1{{ end }}
    deployItems:
    - name: a
      type: mock
      config:
        count: {{ if .state.count }}{{ add .state.count 1 }}{{ else }}1{{ end }}
`)
	state := map[string][]byte{}
	for i := 1; i <= 3; i++ {
		out, err := Render(KindDeploy, list, Input{State: state})
		if err != nil {
			t.Fatal(err)
		}
		if got := firstConfig(t, out)["count"]; got != float64(i) {
			t.Fatalf("run %d: count = %v", i, got)
		}
		for k, v := range out.State {
			state[k] = v
		}
	}
	if string(state["deploycounter"]) != `{"count":3}` {
		t.Fatalf("state = %q", state["deploycounter"])
	}
	// Export executions keep their own state.
	out, err := Render(KindExport, execs(t, "- name: counter\n  type: GoTemplate\n  template: |\n    exports:\n      c: {{ len .state }}\n"), Input{State: state})
	if err != nil {
		t.Fatal(err)
	}
	if out.Exports["c"] != float64(0) {
		t.Fatalf("export saw deploy state: %v", out.Exports)
	}
}

func TestSpiffStateRoundTrip(t *testing.T) {
	list := execs(t, `
- name: gen
  type: Spiff
  template:
    state:
      <<<: (( &state ))
      id: (( imports.seed ))
    deployItems:
    - name: a
      type: mock
      config:
        id: (( state.id ))
`)
	state := map[string][]byte{}
	for i, seed := range []string{"first", "second", "third"} {
		out, err := Render(KindDeploy, list, Input{State: state, Imports: map[string]any{"seed": seed}})
		if err != nil {
			t.Fatal(err)
		}
		cfg := firstConfig(t, out)
		if cfg["id"] != "first" {
			t.Fatalf("run %d: config = %v", i, cfg)
		}
		for k, v := range out.State {
			state[k] = v
		}
	}
	if !strings.Contains(string(state["deploygen"]), "id: first") {
		t.Fatalf("state = %q", state["deploygen"])
	}
}

func TestRenderRejectsUnknownKind(t *testing.T) {
	if _, err := Render("other", nil, Input{}); err == nil {
		t.Fatal("expected error")
	}
}

func TestInputIsNotModified(t *testing.T) {
	imports := map[string]any{"a": "1"}
	_, err := Render(KindImport, execs(t, "- name: i\n  type: GoTemplate\n  template: |\n    bindings:\n      b: 2\n"), Input{Imports: imports})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) != 1 {
		t.Fatalf("imports modified: %v", imports)
	}
}

func TestDataMapping(t *testing.T) {
	values := map[string]any{
		"config":  map[string]any{"replicas": 3, "name": "x"},
		"cluster": TargetObject("c", "ns", "landscaper.gardener.cloud/kubernetes-cluster", map[string]any{"kubeconfig": "k"}),
	}
	got, err := DataMapping(map[string]any{
		"replicas":   "(( config.replicas * 2 ))",
		"obj":        map[string]any{"n": "(( config.name ))", "fixed": true},
		"targetType": "(( cluster.spec.type ))",
		"list":       []any{"(( config.name ))", 1},
	}, values)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"replicas":   float64(6),
		"obj":        map[string]any{"n": "x", "fixed": true},
		"targetType": "landscaper.gardener.cloud/kubernetes-cluster",
		"list":       []any{"x", float64(1)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v", got)
	}

	exp, err := DataMapping(map[string]any{"url": `(( exports.host ":" port ))`}, ExportMappingValues(map[string]any{"host": "h", "port": "80"}))
	if err != nil {
		t.Fatal(err)
	}
	if exp["url"] != "h:80" {
		t.Fatalf("url = %#v", exp["url"])
	}

	for _, bad := range []map[string]any{
		{"x": "(( missing.value ))"},
		{"y": `(( read("/etc/hostname") ))`},
		{"z": `(( exec("id") ))`},
	} {
		if _, err := DataMapping(bad, values); err == nil {
			t.Errorf("%v: expected error", bad)
		} else {
			for k := range bad {
				if !strings.Contains(err.Error(), "data mapping "+k) {
					t.Errorf("error %q does not name mapping %s", err, k)
				}
			}
		}
	}
}
