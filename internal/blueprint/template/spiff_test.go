package template

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func spiffDeploy(config string) string {
	return "- name: one\n  type: Spiff\n  template:\n    deployItems:\n    - name: init\n      type: mock\n      config:\n" + indentLines(config, "        ")
}

func spiffDeployText(config string) string {
	return "- name: one\n  type: Spiff\n  template: |\n    deployItems:\n    - name: init\n      type: mock\n      config:\n" + indentLines(config, "        ")
}

func TestSpiffFunctions(t *testing.T) {
	rootV2, listV2 := v2Components(t)
	resolver := fakeResolver{"myconfig": {data: "key: value", mediaType: "application/x-yaml"}}
	tests := []struct {
		name   string
		config string
		want   map[string]any
	}{
		{name: "imports", config: `image: (( "my-custom-image:" imports.version ))`, want: map[string]any{"image": "my-custom-image:0.0.0"}},
		{name: "read file", config: `v: (( read("VERSION", "text") ))`, want: map[string]any{"v": "0.0.0"}},
		{name: "read file absolute", config: `v: (( read("/dir/b.txt", "text") ))`, want: map[string]any{"v": "bb"}},
		{name: "getResource", config: `image: (( getResource(cd, "name", "mycustomimage").access.imageReference ))`, want: map[string]any{"image": "quay.io/example/myimage:1.0.0"}},
		{name: "getComponent", config: "comp: (( &temporary(getComponent(cd, \"name\", \"leaf-reference\")) ))\nimage: (( getResource(comp, \"name\", \"ubuntu\").access.imageReference ))\nname: (( comp.component.name ))",
			want: map[string]any{"image": "ubuntu:22.04", "name": "example.com/leaf"}},
		{name: "parseOCIRef", config: "tmp: (( parseOCIRef( imports.ref1 ) ))\nimage0: (( tmp[0] \":\" tmp[1] ))\nimage1: (( ociRefRepo( imports.ref1 ) \":\" ociRefVersion( imports.ref1 ) ))",
			want: map[string]any{"tmp": []any{"example.com/image", "1.0.0"}, "image0": "example.com/image:1.0.0", "image1": "example.com/image:1.0.0"}},
		{name: "getResourceKey", config: `key: (( getResourceKey("cd://resources/config") ))`, want: map[string]any{"key": "Y29tcG9uZW50OgogIG5hbWU6IGV4YW1wbGUuY29tL3Jvb3QKICB2ZXJzaW9uOiAxLjAuMApyZXNvdXJjZToKICBuYW1lOiBjb25maWcK"}},
		{name: "getResourceContent structured ref", config: "helper:\n  <<<: (( &temporary ))\n  ref:\n    resource:\n      name: myconfig\n    referencePath:\n    - name: leaf-reference\ncontent: (( getResourceContent(helper.ref) ))",
			want: map[string]any{"content": map[string]any{"key": "value"}}},
		{name: "components", config: `names: (( map[components.components|c|->c.component.name] ))`, want: map[string]any{"names": []any{"example.com/root", "example.com/leaf"}}},
	}
	for _, tc := range tests {
		for _, variant := range []struct {
			name string
			f    func(string) string
		}{{"yaml", spiffDeploy}, {"text", spiffDeployText}} {
			t.Run(tc.name+"/"+variant.name, func(t *testing.T) {
				out, err := Render(KindDeploy, execs(t, variant.f(tc.config)), Input{
					Imports:             map[string]any{"version": "0.0.0", "ref1": "example.com/image:1.0.0"},
					ComponentDescriptor: rootV2, ComponentList: listV2,
					Files:    os.DirFS("testdata/blueprint"),
					Resolver: resolver,
				})
				if err != nil {
					t.Fatalf("render: %v", err)
				}
				if got := firstConfig(t, out); !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("config = %#v, want %#v", got, tc.want)
				}
			})
		}
	}
}

func TestSpiffFromFile(t *testing.T) {
	out, err := Render(KindDeploy, execs(t, "- name: f\n  type: Spiff\n  file: spiff-deploy.yaml\n"), Input{
		Imports: map[string]any{"version": "1.2.3"},
		Files:   os.DirFS("testdata/blueprint"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"image": "my-custom-image:1.2.3", "version": "0.0.0"}
	if got := firstConfig(t, out); !reflect.DeepEqual(got, want) {
		t.Fatalf("config = %#v", got)
	}
}

func TestSpiffErrors(t *testing.T) {
	rootV2, listV2 := v2Components(t)
	tests := []struct {
		name  string
		execs string
		want  []string
	}{
		{name: "unresolved", execs: spiffDeploy(`image: (( "x:" imports.version.nonexisting ))`), want: []string{`deploy execution "one" (inline template)`, "imports.version.nonexisting"}},
		{name: "exec disabled", execs: spiffDeploy(`v: (( exec("echo", "hi") ))`), want: []string{"exec"}},
		{name: "pipe disabled", execs: spiffDeploy(`v: (( pipe("x", "cat") ))`), want: []string{"pipe"}},
		{name: "missing file", execs: "- name: f\n  type: Spiff\n  file: nope.yaml\n", want: []string{`file "nope.yaml"`, "unable to parse template"}},
		{name: "bad yaml text", execs: "- name: b\n  type: Spiff\n  template: |\n    a: [\n", want: []string{`execution "b"`, "unable to parse template"}},
		{name: "resource not found", execs: spiffDeploy(`v: (( getResource(cd, "name", "nope") ))`), want: []string{"getResource: no resource matches"}},
		{name: "kubeconfig without cluster", execs: spiffDeploy(`v: (( getShootAdminKubeconfig("s", "ns", 60, imports) ))`), want: []string{"getShootAdminKubeconfig is not available"}},
		{name: "oci ref type", execs: spiffDeploy(`v: (( ociRefRepo(1) ))`), want: []string{"string expected"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Render(KindDeploy, execs(t, tc.execs), Input{
				Imports:             map[string]any{"version": "1"},
				ComponentDescriptor: rootV2, ComponentList: listV2,
				Files: os.DirFS("testdata/blueprint"),
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
