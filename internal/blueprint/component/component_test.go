package component

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const fixtures = "../testdata/constructor"

func loadFixture(t *testing.T) *Set {
	t.Helper()
	s, err := LoadFiles(filepath.Join(fixtures, "component-constructor.yaml"), filepath.Join(fixtures, "leaf-constructor.yaml"))
	if err != nil {
		t.Fatalf("LoadFiles: %v", err)
	}
	return s
}

func tarNames(t *testing.T, data []byte) []string {
	t.Helper()
	var r io.Reader = bytes.NewReader(data)
	if IsGzip(data) {
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	tr := tar.NewReader(r)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	return names
}

func TestReferencesTwoDeep(t *testing.T) {
	s := loadFixture(t)
	root, err := s.Root()
	if err != nil {
		t.Fatal(err)
	}
	if root.ID().String() != "example.com/root:1.0.0" {
		t.Fatalf("root = %s", root.ID())
	}
	var ids []string
	for _, c := range s.Closure(root) {
		ids = append(ids, c.ID().String())
	}
	want := []string{"example.com/root:1.0.0", "example.com/mid:1.1.0", "example.com/leaf:2.0.0"}
	if !slices.Equal(ids, want) {
		t.Fatalf("closure = %v, want %v", ids, want)
	}
	c, r, err := s.Resolve(root, "cd://componentReferences/mid/componentReferences/sub/resources/config-schema")
	if err != nil {
		t.Fatal(err)
	}
	if c.Spec.Name != "example.com/leaf" || r.Name != "config-schema" {
		t.Fatalf("resolved %s %s", c.ID(), r.Name)
	}
}

func TestInputs(t *testing.T) {
	s := loadFixture(t)
	tests := []struct {
		comp, res     string
		mediaType     string
		gz            bool
		names         []string // tar entries; nil for file inputs
		version       string
		contentPrefix string
	}{
		{comp: "example.com/root", res: "blueprint-root", mediaType: "application/vnd.gardener.landscaper.blueprint.v1+tar+gzip", gz: true,
			names: []string{"blueprint.yaml", "sub.yaml"}, version: "1.0.0"},
		{comp: "example.com/mid", res: "blueprint-sub", mediaType: MediaTypeTar, names: []string{"blueprint.yaml"}, version: "1.1.0"},
		// excludeFiles prunes the ci directory and *.bak.
		{comp: "example.com/mid", res: "chart", mediaType: MediaTypeTGZ, gz: true,
			names: []string{"Chart.yaml", "templates/", "templates/cm.yaml", "values.yaml"}, version: "1.1.0"},
		// includeFiles must name the directory for its files to be walked.
		{comp: "example.com/leaf", res: "only-yaml", mediaType: MediaTypeTar,
			names: []string{"Chart.yaml", "templates/", "values.yaml"}, version: "2.0.0"},
		{comp: "example.com/leaf", res: "config-schema", mediaType: "application/vnd.gardener.landscaper.jsonschema.layer.v1.json", version: "2.0.0", contentPrefix: "{"},
		{comp: "example.com/leaf", res: "config-schema-gz", mediaType: MediaTypeGzip, gz: true, version: "2.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.res, func(t *testing.T) {
			blob, err := s.ResourceContent(tt.comp, "", tt.res)
			if err != nil {
				t.Fatal(err)
			}
			if blob.MediaType != tt.mediaType {
				t.Errorf("mediaType = %q, want %q", blob.MediaType, tt.mediaType)
			}
			if IsGzip(blob.Data) != tt.gz {
				t.Errorf("gzip = %v, want %v", IsGzip(blob.Data), tt.gz)
			}
			if tt.names != nil {
				if got := tarNames(t, blob.Data); !slices.Equal(got, tt.names) {
					t.Errorf("entries = %v, want %v", got, tt.names)
				}
			}
			if tt.contentPrefix != "" && !strings.HasPrefix(string(blob.Data), tt.contentPrefix) {
				t.Errorf("content = %q", blob.Data)
			}
			c, _ := s.Component(tt.comp, "")
			r, _ := c.Resource(tt.res)
			if r.Version != tt.version || r.Relation != "local" {
				t.Errorf("version/relation = %q/%q", r.Version, r.Relation)
			}
		})
	}
}

func TestAccessResourceHasNoContent(t *testing.T) {
	s := loadFixture(t)
	_, err := s.ResourceContent("example.com/root", "1.0.0", "echo-server-image")
	if err == nil || !strings.Contains(err.Error(), `access type "ociArtifact"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestDescriptorShape(t *testing.T) {
	s := loadFixture(t)
	root, _ := s.Root()
	got, err := json.Marshal(root.Descriptor())
	if err != nil {
		t.Fatal(err)
	}
	var cd struct {
		Meta      struct{ SchemaVersion string } `json:"meta"`
		Component struct {
			Name               string `json:"name"`
			Version            string `json:"version"`
			Provider           string `json:"provider"`
			RepositoryContexts []any  `json:"repositoryContexts"`
			Labels             []struct {
				Name  string `json:"name"`
				Value any    `json:"value"`
			} `json:"labels"`
			Resources []struct {
				Name, Version, Type, Relation string
				Access                        map[string]any `json:"access"`
				Digest                        map[string]any `json:"digest"`
			} `json:"resources"`
			ComponentReferences []struct {
				Name          string `json:"name"`
				ComponentName string `json:"componentName"`
				Version       string `json:"version"`
			} `json:"componentReferences"`
			Sources []any `json:"sources"`
		} `json:"component"`
	}
	dec := json.NewDecoder(bytes.NewReader(got))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cd); err != nil {
		t.Fatalf("%v in %s", err, got)
	}
	c := cd.Component
	if cd.Meta.SchemaVersion != "v2" || c.Name != "example.com/root" || c.Provider != "internal" || c.RepositoryContexts == nil || c.Sources == nil {
		t.Fatalf("unexpected descriptor %s", got)
	}
	if len(c.Labels) != 1 || c.Labels[0].Value != "platform" {
		t.Errorf("labels = %+v", c.Labels)
	}
	bp := c.Resources[0]
	localRef, _ := bp.Access["localReference"].(string)
	if bp.Access["type"] != "localBlob" || !strings.HasPrefix(localRef, "sha256.") ||
		bp.Digest["normalisationAlgorithm"] != "genericBlobDigest/v1" || bp.Relation != "local" {
		t.Errorf("blueprint resource = %+v", bp)
	}
	img := c.Resources[1]
	if img.Access["imageReference"] != "hashicorp/http-echo:0.2.3" || img.Relation != "external" || img.Digest != nil {
		t.Errorf("image resource = %+v", img)
	}
	if len(c.ComponentReferences) != 1 || c.ComponentReferences[0].ComponentName != "example.com/mid" {
		t.Errorf("refs = %+v", c.ComponentReferences)
	}

	list := s.Components(root)
	comps, ok := list["components"].([]any)
	if !ok || len(comps) != 3 {
		t.Fatalf("components = %v", list)
	}
	// Each call builds fresh maps.
	name := func(cd map[string]any) map[string]any {
		m, _ := cd["component"].(map[string]any)
		return m
	}
	name(root.Descriptor())["name"] = "mutated"
	if name(root.Descriptor())["name"] != "example.com/root" {
		t.Error("descriptor maps are shared")
	}
}

func TestDigestStableAndSensitive(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("c.yaml", "name: a.org/x\nversion: 1.0.0\nprovider: {name: me}\nresources:\n- name: d\n  type: blob\n  input: {type: dir, path: d, compress: true}\n")
	write("d/f.txt", "one")
	load := func() string {
		s, err := LoadFiles(filepath.Join(dir, "c.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return s.Digest()
	}
	d1, d2 := load(), load()
	if d1 != d2 {
		t.Fatalf("digest not stable: %s %s", d1, d2)
	}
	write("d/f.txt", "two")
	if load() == d1 {
		t.Fatal("digest did not change with input content")
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"missing reference", map[string]string{"c.yaml": "name: a\nversion: 1\nprovider: p\ncomponentReferences:\n- {name: r, componentName: b, version: '1'}\n"}, `component reference "r" names b:1`},
		{"missing input file", map[string]string{"c.yaml": "name: a\nversion: 1\nprovider: p\nresources:\n- {name: r, type: t, input: {type: file, path: nope.txt}}\n"}, `resource "r": input file nope.txt`},
		{"missing input dir", map[string]string{"c.yaml": "name: a\nversion: 1\nprovider: p\nresources:\n- {name: r, type: t, input: {type: dir, path: nope}}\n"}, `resource "r": input dir nope`},
		{"unknown field", map[string]string{"c.yaml": "components:\n- name: a\n  version: 1\n  provider: p\n  resourcez: []\n"}, `unknown field "resourcez"`},
		{"unsupported input", map[string]string{"c.yaml": "name: a\nversion: 1\nprovider: p\nresources:\n- {name: r, type: t, input: {type: helm, path: x}}\n"}, `input type "helm" is not supported`},
		{"both input and access", map[string]string{"c.yaml": "name: a\nversion: 1\nprovider: p\nresources:\n- {name: r, type: t, input: {type: file, path: c.yaml}, access: {type: x}}\n"}, "mutually exclusive"},
		{"duplicate component", map[string]string{"c.yaml": "components:\n- {name: a, version: '1', provider: p}\n- {name: a, version: '1', provider: p}\n"}, "defined twice"},
		{"bad pattern", map[string]string{"c.yaml": "name: a\nversion: 1\nprovider: p\nresources:\n- {name: r, type: t, input: {type: dir, path: d, excludeFiles: ['[']}}\n", "d/x": "x"}, "malformed exclude pattern"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, c := range tt.files {
				p := filepath.Join(dir, n)
				_ = os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := LoadFiles(filepath.Join(dir, "c.yaml"))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), "c.yaml") {
				t.Errorf("error does not name the constructor: %v", err)
			}
		})
	}
}

func TestOversizedInputFileIsNotRead(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse 100 MB file: refused by its size, never read.
	if err := f.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	c := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(c, []byte("name: a\nversion: 1\nprovider: p\nresources:\n- {name: r, type: t, input: {type: file, path: big.bin}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadFiles(c)
	if err == nil || !strings.Contains(err.Error(), "big.bin") || !strings.Contains(err.Error(), "larger than the limit") {
		t.Fatalf("err = %v", err)
	}
}

func TestParseURI(t *testing.T) {
	tests := []struct {
		uri  string
		ok   bool
		path int
	}{
		{"cd://resources/x", true, 1},
		{"cd://componentReferences/a/componentReferences/b/resources/x", true, 3},
		{"cd://componentReferences/a", true, 1},
		{"cd://resources/x/componentReferences/a", false, 0},
		{"cd://resources", false, 0},
		{"cd://foo/bar", false, 0},
		{"local://x", false, 0},
	}
	for _, tt := range tests {
		u, err := ParseURI(tt.uri)
		if (err == nil) != tt.ok {
			t.Errorf("%s: err = %v", tt.uri, err)
			continue
		}
		if tt.ok && len(u.Path) != tt.path {
			t.Errorf("%s: path = %v", tt.uri, u.Path)
		}
	}
}

func IsGzip(data []byte) bool { return len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b }
