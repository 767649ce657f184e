package component

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// fakeRepo serves descriptors from memory and counts lookups.
type fakeRepo struct {
	spec  ocm.RepositorySpec
	mu    sync.Mutex
	descs map[string]string // name:version -> v2 YAML
	blobs map[string][]byte // localReference -> data
	calls map[string]int
}

func (f *fakeRepo) Spec() ocm.RepositorySpec { return f.spec }

func (f *fakeRepo) ComponentVersion(_ context.Context, name, version string) (*ocm.ComponentVersion, error) {
	f.mu.Lock()
	f.calls[name+":"+version]++
	f.mu.Unlock()
	raw, ok := f.descs[name+":"+version]
	if !ok {
		return nil, fmt.Errorf("%s:%s in %s: %w", name, version, f.spec, ocm.ErrNotFound)
	}
	d, err := ocm.ParseDescriptor([]byte(raw))
	if err != nil {
		return nil, err
	}
	return &ocm.ComponentVersion{Descriptor: d, Raw: []byte(raw), Digest: ocm.Digest([]byte(raw)), Repository: f.spec, Blobs: f}, nil
}

func (f *fakeRepo) Blob(_ context.Context, access map[string]any) (*ocm.Blob, error) {
	if ocm.AccessType(access) != ocm.AccessLocalBlob {
		return nil, ocm.ErrUnsupportedAccess
	}
	ref, _ := access["localReference"].(string)
	data, ok := f.blobs[ref]
	if !ok {
		return nil, ocm.ErrNotFound
	}
	return &ocm.Blob{MediaType: "application/octet-stream", Data: data, Digest: ocm.Digest(data)}, nil
}

func descYAML(name, version string, refs [][2]string, resources string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "meta:\n  schemaVersion: v2\ncomponent:\n  name: %s\n  version: '%s'\n  provider: acme\n  repositoryContexts: []\n  sources: []\n", name, version)
	b.WriteString("  componentReferences: [")
	for i, r := range refs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "{name: %s, componentName: %s, version: '%s'}", r[0], r[0], r[1])
	}
	b.WriteString("]\n")
	if resources == "" {
		b.WriteString("  resources: []\n")
	} else {
		b.WriteString("  resources:\n" + resources + "\n")
	}
	return b.String()
}

func newFake() (*fakeRepo, *ocm.Resolver) {
	f := &fakeRepo{
		spec:  ocm.RepositorySpec{Type: ocm.TypeOCIRegistry, BaseURL: "registry.test/ocm"},
		descs: map[string]string{},
		blobs: map[string][]byte{"sha256:bp": []byte("blueprint content")},
		calls: map[string]int{},
	}
	r := ocm.NewResolver(ocm.Context{
		RepositoryContext: map[string]any{"type": "OCIRegistry", "baseUrl": "registry.test/ocm"},
		Open:              func(ocm.RepositorySpec) (ocm.Repository, error) { return f, nil },
	})
	return f, r
}

func TestResolveTransitiveOnce(t *testing.T) {
	f, r := newFake()
	// A diamond: root -> a, b; a -> c; b -> c.
	f.descs["root:1"] = descYAML("root", "1", [][2]string{{"a", "1"}, {"b", "1"}},
		"  - {name: bp, version: '1', type: blueprint, relation: local, access: {type: localBlob, localReference: 'sha256:bp'}}")
	f.descs["a:1"] = descYAML("a", "1", [][2]string{{"c", "1"}}, "")
	f.descs["b:1"] = descYAML("b", "1", [][2]string{{"c", "1"}}, "")
	f.descs["c:1"] = descYAML("c", "1", nil, "")
	s, err := Resolve(context.Background(), ResolveOptions{Root: ID{"root", "1"}, Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	for id, n := range f.calls {
		if n != 1 {
			t.Errorf("%s looked up %d times", id, n)
		}
	}
	if len(f.calls) != 4 {
		t.Fatalf("lookups %v", f.calls)
	}
	root, err := s.Component("root", "1")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(s.Closure(root)); got != 4 {
		t.Fatalf("closure %d", got)
	}
	c, res, err := s.Resolve(root, "cd://componentReferences/a/componentReferences/c")
	if err != nil || c.ID().String() != "c:1" || res != nil {
		t.Fatalf("Resolve = %v %v %v", c, res, err)
	}
	blob, err := s.ResourceContent("root", "1", "bp")
	if err != nil || string(blob.Data) != "blueprint content" {
		t.Fatalf("content = %v, %v", blob, err)
	}
	if comp, _ := root.Descriptor()["component"].(map[string]any); comp["name"] != "root" {
		t.Fatalf("descriptor %v", comp)
	}
	// The digest is what the repository stores: a re-push changes it.
	d1 := s.Digest()
	f.descs["c:1"] = descYAML("c", "1", nil, "  - {name: x, version: '1', type: plain, access: {type: localBlob, localReference: 'sha256:bp'}}")
	r2 := ocm.NewResolver(ocm.Context{RepositoryContext: r.Context().RepositoryContext,
		Open: func(ocm.RepositorySpec) (ocm.Repository, error) { return f, nil }})
	s2, err := Resolve(context.Background(), ResolveOptions{Root: ID{"root", "1"}, Resolver: r2})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Digest() == d1 {
		t.Fatal("a re-pushed referenced version did not change the digest")
	}
}

func TestResolveErrors(t *testing.T) {
	f, r := newFake()
	f.descs["root:1"] = descYAML("root", "1", [][2]string{{"missing", "9"}}, "")
	_, err := Resolve(context.Background(), ResolveOptions{Root: ID{"root", "1"}, Resolver: r})
	if !errors.Is(err, ocm.ErrNotFound) || !strings.Contains(err.Error(), `reference "missing"`) {
		t.Fatalf("err = %v", err)
	}
	_, err = Resolve(context.Background(), ResolveOptions{Root: ID{"nope", "1"}, Resolver: r})
	if !errors.Is(err, ocm.ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
	f.descs["s3:1"] = descYAML("s3", "1", nil, "  - {name: x, version: '1', type: plain, access: {type: s3, bucket: b}}")
	s, err := Resolve(context.Background(), ResolveOptions{Root: ID{"s3", "1"}, Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.ResourceContent("s3", "1", "x")
	if !errors.Is(err, ocm.ErrUnsupportedAccess) || !strings.Contains(err.Error(), `"s3"`) || !strings.Contains(err.Error(), `resource "x"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestConstructorsWinAndReferenceRepository(t *testing.T) {
	f, r := newFake()
	dir := t.TempDir()
	p := filepath.Join(dir, "component-constructor.yaml")
	if err := os.WriteFile(p, []byte(`components:
- name: root
  version: "1"
  provider: {name: acme}
  componentReferences:
  - {name: lib, componentName: lib, version: "2"}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	f.descs["root:1"] = descYAML("root", "1", nil, "") // shadowed by the constructor
	f.descs["lib:2"] = descYAML("lib", "2", nil, "")
	s, err := Resolve(context.Background(), ResolveOptions{Constructors: []string{p}, Root: ID{"root", "1"}, Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	if f.calls["root:1"] != 0 || f.calls["lib:2"] != 1 {
		t.Fatalf("calls %v", f.calls)
	}
	root, _ := s.Component("root", "1")
	if lib, err := s.Reference(root, "lib"); err != nil || lib.cv == nil {
		t.Fatalf("lib = %v, %v", lib, err)
	}
}

func TestResolveOverwrites(t *testing.T) {
	f, _ := newFake()
	f.descs["root:1"] = descYAML("root", "1", [][2]string{{"lib", "1"}}, "")
	f.descs["lib:2"] = descYAML("lib", "2", nil, "")
	r := ocm.NewResolver(ocm.Context{
		RepositoryContext: map[string]any{"type": "OCIRegistry", "baseUrl": "registry.test/ocm"},
		Overwrites:        []ocm.Overwrite{{Source: ocm.OverwriteRef{ComponentName: "lib"}, Substitution: ocm.OverwriteRef{Version: "2"}}},
		Open:              func(ocm.RepositorySpec) (ocm.Repository, error) { return f, nil },
	})
	s, err := Resolve(context.Background(), ResolveOptions{Root: ID{"root", "1"}, Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	root, _ := s.Component("root", "1")
	lib, err := s.Reference(root, "lib")
	if err != nil || lib.ID().String() != "lib:2" {
		t.Fatalf("lib = %v, %v", lib, err)
	}
	if f.calls["lib:1"] != 0 {
		t.Fatal("the overwritten version was looked up")
	}
}

// recordingVerifier fails what it is told to.
type recordingVerifier struct {
	failComponent, failReference, failBlob bool
	refs                                   []string
}

func (v *recordingVerifier) VerifyComponent(*ocm.ComponentVersion) (string, error) {
	if v.failComponent {
		return "", errors.New("signature does not match")
	}
	return "jsonNormalisation/v3", nil
}

func (v *recordingVerifier) CheckReference(ref ocm.Reference, _ *ocm.ComponentVersion) error {
	v.refs = append(v.refs, ref.Name)
	if v.failReference {
		return errors.New("reference digest does not match")
	}
	return nil
}

func (v *recordingVerifier) CheckBlob(ocm.Resource, *ocm.Blob) error {
	if v.failBlob {
		return errors.New("blob digest does not match")
	}
	return nil
}

func TestResolveVerifies(t *testing.T) {
	f, r := newFake()
	f.descs["root:1"] = descYAML("root", "1", [][2]string{{"a", "1"}},
		"  - {name: bp, version: '1', type: blueprint, relation: local, access: {type: localBlob, localReference: 'sha256:bp'}}")
	f.descs["a:1"] = descYAML("a", "1", nil, "")
	v := &recordingVerifier{}
	s, err := Resolve(context.Background(), ResolveOptions{Root: ID{"root", "1"}, Resolver: r, Verifier: v})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.refs) != 1 || v.refs[0] != "a" {
		t.Fatalf("references checked: %v", v.refs)
	}
	v.failBlob = true
	if _, err := s.ResourceContent("root", "1", "bp"); err == nil || !strings.Contains(err.Error(), "blob digest") {
		t.Fatalf("tampered blob served: %v", err)
	}
	for _, bad := range []*recordingVerifier{{failComponent: true}, {failReference: true}} {
		_, r := newFake()
		r2 := ocm.NewResolver(ocm.Context{RepositoryContext: r.Context().RepositoryContext,
			Open: func(ocm.RepositorySpec) (ocm.Repository, error) { return f, nil }})
		if _, err := Resolve(context.Background(), ResolveOptions{Root: ID{"root", "1"}, Resolver: r2, Verifier: bad}); err == nil {
			t.Fatalf("%+v: no error", bad)
		}
	}
}
