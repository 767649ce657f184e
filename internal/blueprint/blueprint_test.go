package blueprint

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/component"
)

func TestLoadDocsBlueprints(t *testing.T) {
	tests := []struct {
		dir              string
		imports, exports int
		subinst          []string
		executions       int
	}{
		{dir: "testdata/blueprints/guided-root", imports: 2, exports: 1, subinst: []string{"subinst1", "subinst2"}, executions: 1},
		{dir: "testdata/blueprints/full", imports: 8, exports: 2, executions: 4},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			b, err := LoadDir(tt.dir)
			if err != nil {
				t.Fatal(err)
			}
			d := b.Definition
			if len(d.Imports) != tt.imports || len(d.Exports) != tt.exports {
				t.Fatalf("imports/exports = %d/%d", len(d.Imports), len(d.Exports))
			}
			if len(b.Subinstallations) != len(tt.subinst) {
				t.Fatalf("subinstallations = %d", len(b.Subinstallations))
			}
			for i, name := range tt.subinst {
				if b.Subinstallations[i].Name != name {
					t.Errorf("subinstallation %d = %q, want %q", i, b.Subinstallations[i].Name, name)
				}
			}
			n := 0
			for _, list := range [][]TemplateExecutor{d.ImportExecutions, d.DeployExecutions, d.ExportExecutions, d.SubinstallationExecutions} {
				for _, e := range list {
					n++
					if _, err := b.TemplateSource(e); err != nil {
						t.Errorf("TemplateSource(%s): %v", e.Name, err)
					}
				}
			}
			if n != tt.executions {
				t.Errorf("executions = %d, want %d", n, tt.executions)
			}
			if !strings.HasPrefix(b.Digest(), "sha256:") {
				t.Errorf("digest = %q", b.Digest())
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	b, err := LoadDir("testdata/blueprints/full")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]ImportDefinition{}
	for _, imp := range b.Definition.Imports {
		byName[imp.Name] = imp
	}
	if c := byName["cluster"]; c.Type != ImportTypeTarget || c.TargetType != "landscaper.gardener.cloud/kubernetes-cluster" || !c.IsRequired() {
		t.Errorf("cluster = %+v", c)
	}
	if r := byName["replicas"]; r.Type != ImportTypeData {
		t.Errorf("replicas type = %q", r.Type)
	}
	if ns := byName["namespace"]; ns.IsRequired() {
		t.Error("namespace should be optional")
	}
	if e := b.Definition.Exports[1]; e.Type != ExportTypeTarget || e.TargetType != "landscaper.gardener.cloud/kubernetes-cluster" {
		t.Errorf("export = %+v", e)
	}
}

func TestTemplateSource(t *testing.T) {
	b, err := LoadDir("testdata/blueprints/full")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		exec TemplateExecutor
		want string
	}{
		{b.Definition.DeployExecutions[0], "deployItems:\n  - name: main\n"},
		{b.Definition.DeployExecutions[1], "deployItems: []\n"},
		{b.Definition.DeployExecutions[2], `{"deployItems":[{"name":"spiffed"`},
		{b.Definition.ExportExecutions[0], "exports:\n  url:"},
	}
	for _, tt := range tests {
		got, err := b.TemplateSource(tt.exec)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(got), tt.want) {
			t.Errorf("%s: got %q, want prefix %q", tt.exec.Name, got, tt.want)
		}
	}
}

const minimal = "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n"

func TestLoadFilesErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{"no blueprint.yaml", map[string]string{"x.yaml": ""}, []string{"no blueprint.yaml"}},
		{"unknown top-level field", map[string]string{"blueprint.yaml": minimal + "importz: []\n"}, []string{"blueprint.yaml", `unknown field "importz"`}},
		{"unknown import field", map[string]string{"blueprint.yaml": minimal + "imports:\n- name: a\n  schema: {type: string}\n  requird: false\n"}, []string{`unknown field "requird"`}},
		{"unknown execution field", map[string]string{"blueprint.yaml": minimal + "deployExecutions:\n- name: a\n  type: GoTemplate\n  templat: x\n"}, []string{`unknown field "templat"`}},
		{"duplicate key", map[string]string{"blueprint.yaml": minimal + "imports: []\nimports: []\n"}, []string{"imports"}},
		{"wrong kind", map[string]string{"blueprint.yaml": "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Installation\n"}, []string{`kind is "Installation"`}},
		{"escaping execution file", map[string]string{"blueprint.yaml": minimal + "deployExecutions:\n- name: a\n  type: GoTemplate\n  file: ../../etc/passwd\n"}, []string{"deployExecutions[0] (a)", "leaves the blueprint directory"}},
		{"escaping subinstallation file", map[string]string{"blueprint.yaml": minimal + "subinstallations:\n- file: /../x.yaml\n"}, []string{"subinstallations[0].file", "leaves the blueprint directory"}},
		{"missing execution file", map[string]string{"blueprint.yaml": minimal + "deployExecutions:\n- name: a\n  type: GoTemplate\n  file: deploy.yaml\n"}, []string{`no file "deploy.yaml"`}},
		{"unknown field in subinstallation file", map[string]string{"blueprint.yaml": minimal + "subinstallations:\n- file: s.yaml\n", "s.yaml": "name: s\nblueprint: {ref: x}\nimportz: {}\n"}, []string{"s.yaml", `unknown field "importz"`}},
		{"unknown field in inline subinstallation", map[string]string{"blueprint.yaml": minimal + "subinstallations:\n- name: s\n  blueprint: {ref: x}\n  exprts: {}\n"}, []string{`unknown field "exprts"`}},
		{"go template not a string", map[string]string{"blueprint.yaml": minimal + "deployExecutions:\n- name: a\n  type: GoTemplate\n  template: {a: b}\n"}, []string{"must be a string"}},
		{"duplicate import", map[string]string{"blueprint.yaml": minimal + "imports:\n- {name: a, schema: {}}\n- {name: b, required: false, schema: {}, imports: [{name: a, schema: {}}]}\n"}, []string{`duplicate import name "a"`}},
		{"schema and targetType", map[string]string{"blueprint.yaml": minimal + "imports:\n- {name: a, schema: {}, targetType: x}\n"}, []string{"a"}},
		{"conditional on required", map[string]string{"blueprint.yaml": minimal + "imports:\n- {name: a, schema: {}, imports: [{name: b, schema: {}}]}\n"}, []string{"optional imports"}},
		{"bad template type", map[string]string{"blueprint.yaml": minimal + "deployExecutions:\n- {name: a, type: Jinja, template: x}\n"}, []string{`type "Jinja" is not supported`}},
		{"subinstallation without blueprint", map[string]string{"blueprint.yaml": minimal + "subinstallations:\n- name: s\n"}, []string{"exactly one of ref and filesystem"}},
		{"escaping file name", map[string]string{"blueprint.yaml": minimal, "../x": "y"}, []string{"leaves the blueprint directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string][]byte{}
			for k, v := range tt.files {
				files[k] = []byte(v)
			}
			_, err := LoadFiles("test", files)
			if err == nil {
				t.Fatal("expected an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadDirSymlinkOut(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "blueprint.yaml"), []byte(minimal), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "link")); err != nil {
		t.Skip("symlinks not supported:", err)
	}
	_, err := LoadDir(dir)
	if err == nil || !strings.Contains(err.Error(), "link") {
		t.Fatalf("err = %v", err)
	}

	// A symlink that stays inside is fine.
	if err := os.Remove(filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("blueprint.yaml", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	b, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := b.ReadFile("/link"); string(data) != minimal {
		t.Errorf("link content = %q", data)
	}
}

func TestOversizedFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "blueprint.yaml"), []byte(minimal), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "huge.bin"))
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: refused by size without being read.
	if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	_, err = LoadDir(dir)
	if err == nil || !strings.Contains(err.Error(), "huge.bin") || !strings.Contains(err.Error(), "larger than the limit") {
		t.Fatalf("err = %v", err)
	}

	_, err = LoadFiles("mem", map[string][]byte{"blueprint.yaml": []byte(minimal), "big": make([]byte, MaxFileSize+1)})
	if err == nil || !strings.Contains(err.Error(), "big") {
		t.Fatalf("err = %v", err)
	}
}

func makeTar(t *testing.T, gz bool, entries ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w = &buf
	var zw *gzip.Writer
	var tw *tar.Writer
	if gz {
		zw = gzip.NewWriter(w)
		tw = tar.NewWriter(zw)
	} else {
		tw = tar.NewWriter(w)
	}
	for _, h := range entries {
		content := []byte(h.Uname)
		h.Uname = ""
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(content))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(content); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestLoadArchive(t *testing.T) {
	// makeTar consumes the header, so every archive gets a fresh one.
	bp := func() *tar.Header {
		return &tar.Header{Name: "./blueprint.yaml", Typeflag: tar.TypeReg, Mode: 0o644, Uname: minimal + "deployExecutions:\n- {name: a, type: GoTemplate, file: /alias.yaml}\n"}
	}
	tests := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{"tar", makeTar(t, false, bp(), &tar.Header{Name: "t/d.yaml", Typeflag: tar.TypeReg, Uname: "x"}, &tar.Header{Name: "alias.yaml", Typeflag: tar.TypeSymlink, Linkname: "t/d.yaml"}), ""},
		{"tgz", makeTar(t, true, bp(), &tar.Header{Name: "t/", Typeflag: tar.TypeDir}, &tar.Header{Name: "t/d.yaml", Typeflag: tar.TypeReg, Uname: "x"}, &tar.Header{Name: "alias.yaml", Typeflag: tar.TypeLink, Linkname: "t/d.yaml"}), ""},
		{"escaping entry", makeTar(t, false, bp(), &tar.Header{Name: "../evil", Typeflag: tar.TypeReg, Uname: "x"}), "leaves the blueprint directory"},
		{"escaping symlink", makeTar(t, false, bp(), &tar.Header{Name: "alias.yaml", Typeflag: tar.TypeSymlink, Linkname: "../../etc/passwd"}), "leaves the blueprint directory"},
		{"not a tar", []byte("blueprint: yes"), "not a tar archive"},
		{"oversized entry", makeTar(t, false, &tar.Header{Name: "big", Typeflag: tar.TypeReg, Uname: strings.Repeat("x", MaxFileSize+1)}), "larger than the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := LoadArchive("archive", tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			src, err := b.TemplateSource(b.Definition.DeployExecutions[0])
			if err != nil || string(src) != "x" {
				t.Fatalf("source = %q, %v", src, err)
			}
		})
	}
}

func TestLoadInline(t *testing.T) {
	fsys := json.RawMessage(`{"blueprint.yaml": "kind: Blueprint\ndeployExecutions:\n- {name: a, type: GoTemplate, file: t/x.yaml}\n", "t": {"x.yaml": "deployItems: []"}}`)
	b, err := LoadInline("inline", fsys)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(b.Files(), ","); got != "blueprint.yaml,t/x.yaml" {
		t.Errorf("files = %s", got)
	}
	if _, err := LoadInline("inline", json.RawMessage(`{"blueprint.yaml": 5}`)); err == nil {
		t.Error("expected an error for a number as file content")
	}
}

func TestDigest(t *testing.T) {
	base := map[string][]byte{"blueprint.yaml": []byte(minimal), "a.txt": []byte("a")}
	b1, _ := LoadFiles("m", base)
	b2, _ := LoadFiles("m", map[string][]byte{"/blueprint.yaml": []byte(minimal), "./a.txt": []byte("a")})
	b3, _ := LoadFiles("m", map[string][]byte{"blueprint.yaml": []byte(minimal), "a.txt": []byte("b")})
	if b1.Digest() != b2.Digest() {
		t.Error("same content, different digest")
	}
	if b1.Digest() == b3.Digest() {
		t.Error("changed file, same digest")
	}
}

func TestLoadResource(t *testing.T) {
	set, err := component.LoadFiles("testdata/constructor/component-constructor.yaml", "testdata/constructor/leaf-constructor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	root, err := set.Root()
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadResource(set, root, "blueprint-root")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Subinstallations) != 1 {
		t.Fatalf("subinstallations = %d", len(b.Subinstallations))
	}
	sub, err := LoadResource(set, root, b.Subinstallations[0].Blueprint.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if sub.Definition.Imports[0].Name != "cluster" {
		t.Errorf("sub imports = %+v", sub.Definition.Imports)
	}
	if _, err := LoadResource(set, root, "echo-server-image"); err == nil || !strings.Contains(err.Error(), "ociArtifact") {
		t.Errorf("err = %v", err)
	}
	if _, err := LoadResource(set, root, "cd://componentReferences/nope/resources/x"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("err = %v", err)
	}
}

func TestCacheLoadsOnce(t *testing.T) {
	set, root := loadSet(t)
	c := NewCache()
	a, err := c.Resource(set, root, "blueprint-root")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Resource(set, root, "cd://resources/blueprint-root")
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Error("the same resource was loaded twice")
	}
	d1, err := c.Dir("testdata/blueprints/full")
	if err != nil {
		t.Fatal(err)
	}
	d2, _ := c.Dir("./testdata/blueprints/full/")
	if d1 != d2 {
		t.Error("the same directory was loaded twice")
	}
	if _, err := c.Dir("testdata/nope"); err == nil {
		t.Error("expected an error for a missing directory")
	}
}
