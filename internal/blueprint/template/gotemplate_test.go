package template

import (
	"encoding/base64"
	"os"
	"reflect"
	"strings"
	"testing"
)

func firstConfig(t *testing.T, out Output) map[string]any {
	t.Helper()
	if len(out.DeployItems) == 0 {
		t.Fatalf("no deploy items")
	}
	cfg, ok := out.DeployItems[0]["config"].(map[string]any)
	if !ok {
		t.Fatalf("config is %T", out.DeployItems[0]["config"])
	}
	return cfg
}

func goDeploy(body string) string {
	return "- name: one\n  type: GoTemplate\n  template: |\n    deployItems:\n    - name: init\n      type: mock\n      config:\n" + indentLines(body, "        ")
}

func indentLines(s, pad string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pad + l
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestGoTemplateFunctions(t *testing.T) {
	rootV2, listV2 := v2Components(t)
	rootV3, listV3 := v3Components(t)
	files := os.DirFS("testdata/blueprint")
	resolver := fakeResolver{
		"myconfig": {data: "key: value", mediaType: "application/x-yaml"},
		"binary":   {data: "\x00\x01", mediaType: "application/octet-stream"},
	}
	keyOf := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

	tests := []struct {
		name string
		body string
		cd   map[string]any
		list []map[string]any
		want map[string]any
	}{
		{name: "imports", body: `image: my-custom-image:{{ .imports.version }}`, want: map[string]any{"image": "my-custom-image:0.0.0"}},
		{name: "readFile", body: `v: {{ readFile "VERSION" | toString }}`, want: map[string]any{"v": "0.0.0"}},
		{name: "readFile leading slash", body: `v: {{ readFile "/VERSION" | toString }}`, want: map[string]any{"v": "0.0.0"}},
		{name: "readDir", body: "{{- range readDir \"dir\" }}\n{{ .Name | replace \".\" \"_\" }}: {{ .Size }}\n{{- end }}", want: map[string]any{"a_txt": float64(1), "b_txt": float64(2)}},
		{name: "include", body: `{{ include "data/config" . }}`, want: map[string]any{"image": "my-custom-image:0.0.0"}},
		{name: "toYaml", body: "nested:{{ toYaml .imports.nested | nindent 6 }}", want: map[string]any{"nested": map[string]any{"a": "b", "list": []any{float64(1), float64(2)}}}},
		{name: "fromYaml", body: `{{ $v := fromYaml "x: 3" }}x: {{ $v.x }}`, want: map[string]any{"x": float64(3)}},
		{name: "sprig", body: `v: {{ "abc" | upper | quote }}`, want: map[string]any{"v": "ABC"}},
		{name: "state empty", body: `s: {{ len .state }}`, want: map[string]any{"s": float64(0)}},
		{name: "parseOCIRef", body: "{{- $i := parseOCIRef .imports.ref1 }}\nimage0: \"{{ index $i 0 }}:{{ index $i 1 }}\"\nimage1: \"{{ ociRefRepo .imports.ref1 }}:{{ ociRefVersion .imports.ref1 }}\"\nimage2: \"{{ ociRefRepo .imports.ref2 }}@{{ ociRefVersion .imports.ref2 }}\"",
			want: map[string]any{"image0": "example.com/registry/image:1.0.0", "image1": "example.com/registry/image:1.0.0", "image2": "example.com/registry/image@sha256:66d2e4c81b8d0bb4e2b7f3f1bb36a22c0d00e4a3c4b6eb36c7d6b2d0b5c1c9bb"}},
		{name: "getResource v2", cd: rootV2, list: listV2, body: `image: {{ (getResource .cd "name" "mycustomimage").access.imageReference }}`, want: map[string]any{"image": "quay.io/example/myimage:1.0.0"}},
		{name: "getResource by extra identity", cd: rootV2, list: listV2, body: `image: {{ (getResource .cd "class" "image").name }}`, want: map[string]any{"image": "mycustomimage"}},
		{name: "getResource without cd argument", cd: rootV2, list: listV2, body: `image: {{ (getResource "name" "yourcustomimage").access.imageReference }}`, want: map[string]any{"image": "quay.io/example/yourimage:1.0.0"}},
		{name: "getResources", cd: rootV2, list: listV2, body: `count: {{ len (getResources .cd "name" "mycustomimage" "class" "image") }}{{ len (getResources .cd "name" "config") }}`, want: map[string]any{"count": float64(11)}},
		{name: "getComponent v2", cd: rootV2, list: listV2, body: "{{ $c := getComponent .cd \"name\" \"leaf-reference\" }}\n{{ $r := getResource $c \"name\" \"ubuntu\" }}\nimage: {{ $r.access.imageReference }}", want: map[string]any{"image": "ubuntu:22.04"}},
		{name: "getComponent v3", cd: rootV3, list: listV3, body: "{{ $c := getComponent .cd \"name\" \"leaf-reference\" }}\nimage: {{ (getResource $c \"name\" \"ubuntu\").access.imageReference }}\nroot: {{ (getResource .cd \"name\" \"mycustomimage\").version }}", want: map[string]any{"image": "ubuntu:22.04", "root": "1.0.0"}},
		{name: "components v2 list", cd: rootV2, list: listV2, body: "names: {{ range .components.components }}{{ .component.name }},{{ end }}", want: map[string]any{"names": "example.com/root,example.com/leaf,"}},
		{name: "components v3 list", cd: rootV3, list: listV3, body: "names: {{ range .components }}{{ .metadata.name }},{{ end }}", want: map[string]any{"names": "example.com/root,example.com/leaf,"}},
		{name: "getRepositoryContext", cd: rootV2, list: listV2, body: `url: {{ (getRepositoryContext .cd).baseUrl }}`, want: map[string]any{"url": "registry.example.com"}},
		{name: "getResourceKey cd uri", cd: rootV2, list: listV2, body: `key: {{ getResourceKey "cd://componentReferences/leaf-reference/resources/myconfig" }}`,
			want: map[string]any{"key": keyOf("component:\n  name: example.com/leaf\n  version: 2.0.0\nresource:\n  name: myconfig\n")}},
		{name: "getResourceKey relative", cd: rootV2, list: listV2, body: "key: {{ getResourceKey `{\"resource\": {\"name\": \"config\"}}` }}",
			want: map[string]any{"key": keyOf("component:\n  name: example.com/root\n  version: 1.0.0\nresource:\n  name: config\n")}},
		{name: "getResourceContent text", cd: rootV2, list: listV2, body: "content:\n{{ getResourceContent `\nresource:\n  name: myconfig\nreferencePath:\n- name: leaf-reference\n` | indent 2 }}", want: map[string]any{"content": map[string]any{"key": "value"}}},
		{name: "getResourceContent binary", cd: rootV2, list: listV2, body: `content: {{ getResourceContent "cd://componentReferences/leaf-reference/resources/binary" }}`, want: map[string]any{"content": "AAE="}},
		{name: "blueprint binding", body: `ref: {{ .blueprint.ref.resourceName }}/{{ .blueprintDef.ref.resourceName }}`, want: map[string]any{"ref": "bp/bp"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{
				Imports: map[string]any{
					"version": "0.0.0",
					"nested":  map[string]any{"a": "b", "list": []any{1, 2}},
					"ref1":    "example.com/registry/image:1.0.0",
					"ref2":    "example.com/registry/image@sha256:66d2e4c81b8d0bb4e2b7f3f1bb36a22c0d00e4a3c4b6eb36c7d6b2d0b5c1c9bb",
				},
				ComponentDescriptor: tc.cd,
				ComponentList:       tc.list,
				BlueprintDef:        map[string]any{"ref": map[string]any{"resourceName": "bp"}},
				Files:               files,
				Resolver:            resolver,
			}
			out, err := Render(KindDeploy, execs(t, goDeploy(tc.body)), in)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			if got := firstConfig(t, out); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("config = %#v, want %#v", got, tc.want)
			}
		})
	}
}

func TestGoTemplateErrors(t *testing.T) {
	rootV2, listV2 := v2Components(t)
	files := os.DirFS("testdata/blueprint")
	tests := []struct {
		name  string
		execs string
		kind  Kind
		want  []string
	}{
		{name: "env removed", execs: goDeploy(`v: {{ env "HOME" }}`), want: []string{`deploy execution "one"`, "inline template", `function "env" not defined`}},
		{name: "expandenv removed", execs: goDeploy(`v: {{ expandenv "$HOME" }}`), want: []string{`function "expandenv" not defined`}},
		{name: "missing key gives no value", execs: goDeploy(`image: {{ .imports.nonexisting }}`), want: []string{"<no value>", "line 5:"}},
		{name: "missing parent is an error", execs: goDeploy(`image: {{ .nonexisting.value }}`), want: []string{"nil pointer evaluating interface {}.value", "line 5:"}},
		{name: "selector matches identity only", execs: goDeploy(`v: {{ getResources .cd "relation" "external" }}`), want: []string{"getResources: no resource matches"}},
		{name: "parse error with line", execs: goDeploy("a: 1\nb: {{ if }}x{{ end }}"), want: []string{"template: one:6", "missing value for if", "line 6:"}},
		{name: "file with line", execs: "- name: broken\n  type: GoTemplate\n  file: broken.yaml\n", want: []string{`deploy execution "broken" (file "broken.yaml")`, "broken.yaml:5", `function "nosuchfunc" not defined`}},
		{name: "missing file", execs: "- name: f\n  type: GoTemplate\n  file: nope.yaml\n", want: []string{`file "nope.yaml"`, "nope.yaml"}},
		{name: "include recursion", execs: goDeploy(`{{ include "data/loop.tpl" . }}`), want: []string{"nested reference name: data/loop.tpl"}},
		{name: "unknown type", execs: "- name: x\n  type: Jinja\n  template: a\n", want: []string{`unknown template type "Jinja"`}},
		{name: "non-string go template", execs: "- name: x\n  type: GoTemplate\n  template:\n    a: b\n", want: []string{"must be a string"}},
		{name: "no template", execs: "- name: x\n  type: GoTemplate\n", want: []string{"no template found"}},
		{name: "resource not found", execs: goDeploy(`v: {{ getResource .cd "name" "nope" }}`), want: []string{"getResource: no resource matches"}},
		{name: "odd selector", execs: goDeploy(`v: {{ getResource .cd "name" }}`), want: []string{"getResource: odd number of key value pairs"}},
		{name: "component not in list", execs: goDeploy(`v: {{ getComponent .cd "name" "other" }}`), want: []string{"getComponent: no component reference matches"}},
		{name: "bad oci ref", execs: goDeploy(`v: {{ ociRefRepo "nocolon" }}`), want: []string{"invalid reference"}},
		{name: "kubeconfig without cluster", execs: goDeploy(`v: {{ getShootAdminKubeconfig "s" "garden-p" 3600 .imports }}`), want: []string{"getShootAdminKubeconfig is not available", "cluster access"}},
		{name: "kubeconfig bad args", execs: goDeploy(`v: {{ getServiceAccountKubeconfig "s" }}`), want: []string{"expects 4 arguments"}},
		{name: "oidc without cluster", execs: goDeploy(`v: {{ getOidcKubeconfig "https://i" "c" .imports }}`), want: []string{"getOidcKubeconfig is not available"}},
		{name: "resource content without resolver", execs: goDeploy(`v: {{ getResourceContent "cd://resources/config" }}`), want: []string{"no access to resource content"}},
		{name: "bad deploy item shape", execs: "- name: x\n  type: GoTemplate\n  template: |\n    deployItems:\n    - name: a\n      labels: [1]\n", want: []string{"error while decoding templated execution"}},
		{name: "bad timeout", execs: "- name: x\n  type: GoTemplate\n  template: |\n    deployItems:\n    - name: a\n      timeout: soon\n", want: []string{`invalid timeout "soon"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kind := tc.kind
			if kind == "" {
				kind = KindDeploy
			}
			_, err := Render(kind, execs(t, tc.execs), Input{
				Imports:             map[string]any{"version": "1"},
				ComponentDescriptor: rootV2, ComponentList: listV2, Files: files,
			})
			if err == nil {
				t.Fatal("expected an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestGoTemplateNoValueAllowedInImports(t *testing.T) {
	out, err := Render(KindImport, execs(t, "- name: i\n  type: GoTemplate\n  template: |\n    bindings:\n      x: {{ .imports.missing }}\n"), Input{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Bindings["x"]; got != "<no value>" {
		t.Fatalf("x = %#v", got)
	}
}

func TestGoTemplateFromFile(t *testing.T) {
	out, err := Render(KindDeploy, execs(t, "- name: f\n  type: GoTemplate\n  file: deploy-execution.yaml\n"), Input{
		Imports: map[string]any{"version": "0.0.0"},
		Files:   os.DirFS("testdata/blueprint"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "init", "type": "landscaper.gardener.cloud/mock", "target": map[string]any{"import": "cluster"}, "config": map[string]any{"image": "my-custom-image:0.0.0"}}
	if !reflect.DeepEqual(out.DeployItems[0], want) {
		t.Fatalf("item = %#v", out.DeployItems[0])
	}
}

func TestKubeconfigFunctionsWithCluster(t *testing.T) {
	c := &fakeCluster{}
	tmpl := goDeploy("a: {{ getShootAdminKubeconfig \"s\" \"garden-p\" 3600 .imports.t }}\nb: {{ (getServiceAccountKubeconfigWithExpirationTimestamp \"sa\" \"ns\" 60 .imports.t).expirationTimestampReadable }}")
	out, err := Render(KindDeploy, execs(t, tmpl), Input{
		Imports: map[string]any{"t": TargetObject("garden", "", "landscaper.gardener.cloud/kubernetes-cluster", map[string]any{"kubeconfig": "x"})},
		Cluster: c,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": "c2hvb3Q=", "b": "2023-09-22T07:54:42Z"}
	if got := firstConfig(t, out); !reflect.DeepEqual(got, want) {
		t.Fatalf("config = %#v", got)
	}
	if !reflect.DeepEqual(c.calls, []string{"shoot:s/garden-p", "sa:sa/ns"}) {
		t.Fatalf("calls = %v", c.calls)
	}
	// A panicking function must come back as an error.
	_, err = Render(KindDeploy, execs(t, goDeploy(`a: {{ getOidcKubeconfig "i" "c" .imports.t }}`)), Input{Imports: map[string]any{"t": map[string]any{}}, Cluster: c})
	if err == nil || !strings.Contains(err.Error(), "oidc boom") {
		t.Fatalf("err = %v", err)
	}
}

func TestParseOCIRef(t *testing.T) {
	tests := []struct {
		ref       string
		repo, ver string
		err       bool
	}{
		{ref: "host:5000/myrepo/myimage:1.0.0", repo: "host:5000/myrepo/myimage", ver: "1.0.0"},
		{ref: "host:5000/myrepo/myimage@sha256:66d2e4c81b8d0bb4e2b7f3f1bb36a22c0d00e4a3c4b6eb36c7d6b2d0b5c1c9bb", repo: "host:5000/myrepo/myimage", ver: "sha256:66d2e4c81b8d0bb4e2b7f3f1bb36a22c0d00e4a3c4b6eb36c7d6b2d0b5c1c9bb"},
		{ref: "ubuntu:22.04", repo: "ubuntu", ver: "22.04"},
		{ref: "gardener/landscaper:v1", repo: "gardener/landscaper", ver: "v1"},
		{ref: "docker.io/library/nginx:1", repo: "nginx", ver: "1"},
		{ref: "oci://eu.gcr.io/x/y:2", repo: "eu.gcr.io/x/y", ver: "2"},
		{ref: "host:5000/repo", repo: "host:5000/repo", ver: "latest"},
		{ref: "nginx", err: true},
		{ref: "UPPER:1", err: true},
	}
	for _, tc := range tests {
		got, err := parseOCIRef(tc.ref)
		if tc.err {
			if err == nil {
				t.Errorf("%s: expected error, got %v", tc.ref, got)
			}
			continue
		}
		if err != nil || got[0] != tc.repo || got[1] != tc.ver {
			t.Errorf("%s: got %v, %v; want %s %s", tc.ref, got, err, tc.repo, tc.ver)
		}
	}
}
