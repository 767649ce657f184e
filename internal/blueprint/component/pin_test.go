package component

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

const signedChart = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// Under verification, templates see OCI accesses pinned to their signed
// digests (or none), unsigned labels marked, and no content of components
// no signature vouches for.
func TestVerifiedView(t *testing.T) {
	f, r := newFake()
	f.descs["root:1"] = descYAML("root", "1", nil, `  - name: chart
    version: '1'
    type: helmChart
    relation: external
    labels: [{name: signed, value: a, signing: true}, {name: plain, value: b}]
    access: {type: ociArtifact, imageReference: 'registry.test:5000/charts/app:1.0'}
    digest: {hashAlgorithm: SHA-256, normalisationAlgorithm: ociArtifactDigest/v1, value: `+signedChart+`}
  - name: moved
    version: '1'
    type: ociImage
    relation: external
    access: {type: ociArtifact, imageReference: 'registry.test/other@sha256:ffff'}
    digest: {hashAlgorithm: SHA-256, normalisationAlgorithm: ociArtifactDigest/v1, value: `+signedChart+`}
  - name: excluded
    version: '1'
    type: ociImage
    relation: external
    access: {type: ociArtifact, imageReference: 'evil.test/x:latest'}
    digest: {hashAlgorithm: NO-DIGEST, normalisationAlgorithm: EXCLUDE-FROM-SIGNATURE, value: NO-DIGEST}
  - name: bp
    version: '1'
    type: blueprint
    relation: local
    access: {type: localBlob, localReference: 'sha256:bp'}`)
	f.descs["lib:1"] = descYAML("lib", "1", nil, "  - {name: bp, version: '1', type: blueprint, relation: local, access: {type: localBlob, localReference: 'sha256:bp'}}")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data.txt"), []byte("local"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "component-constructor.yaml")
	if err := os.WriteFile(p, []byte(`components:
- name: extra
  version: "1"
  provider: {name: acme}
  labels: [{name: team, value: x, signing: true}]
  resources:
  - {name: data, type: plainText, input: {type: file, path: data.txt}}
  - {name: image, type: ociImage, access: {type: ociArtifact, imageReference: "docker.io/library/nginx:1.25"}}
  componentReferences:
  - {name: lib, componentName: lib, version: "1"}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Resolve(context.Background(), ResolveOptions{Constructors: []string{p}, Root: ID{"root", "1"}, Resolver: r, Verifier: &recordingVerifier{}})
	if err != nil {
		t.Fatal(err)
	}
	root, _ := s.Component("root", "1")
	cd := root.Descriptor()
	ref := func(i int) any { return at(cd, "component", "resources", i, "access", "imageReference") }
	if got := ref(0); got != "registry.test:5000/charts/app@sha256:"+signedChart {
		t.Errorf("chart: %v", got)
	}
	if got := ref(1); got != "registry.test/other@sha256:"+signedChart {
		t.Errorf("moved: %v", got)
	}
	if got := ref(2); got != nil {
		t.Errorf("excluded: an unsigned reference is shown: %v", got)
	}
	if l := at(cd, "component", "resources", 0, "labels", 0, UnsignedLabelKey); l != nil {
		t.Errorf("signed label marked: %v", l)
	}
	if l := at(cd, "component", "resources", 0, "labels", 1, UnsignedLabelKey); l != true {
		t.Errorf("unsigned label not marked: %v", l)
	}
	// The parsed resource keeps the stored access: only the view is pinned.
	if chart, _ := root.Resource("chart"); chart.Access["imageReference"] != "registry.test:5000/charts/app:1.0" {
		t.Errorf("stored access changed: %v", chart.Access)
	}
	if _, err := s.ResourceContent("root", "1", "bp"); err != nil {
		t.Fatalf("verified content: %v", err)
	}

	// Constructor components, and what only they reach, are not verified.
	var ve *VerificationError
	for _, c := range [][3]string{{"extra", "1", "data"}, {"lib", "1", "bp"}} {
		_, err := s.ResourceContent(c[0], c[1], c[2])
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), "component "+c[0]+":"+c[1]) || !strings.Contains(err.Error(), "no checked signature vouches") {
			t.Errorf("%s: %v", c[0], err)
		}
	}
	extra, _ := s.Component("extra", "1")
	ecd := extra.Descriptor()
	if l := at(ecd, "component", "labels", 0, UnsignedLabelKey); l != true {
		t.Errorf("a label of an unverified component is not marked: %v", l)
	}
	if img := at(ecd, "component", "resources", 1, "access", "imageReference"); img != nil {
		t.Errorf("an unverified OCI access is shown: %v", img)
	}

	// Without verification nothing changes.
	s, err = Resolve(context.Background(), ResolveOptions{Constructors: []string{p}, Root: ID{"root", "1"}, Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	root, _ = s.Component("root", "1")
	if got := at(root.Descriptor(), "component", "resources", 2, "access", "imageReference"); got != "evil.test/x:latest" {
		t.Errorf("unverified view changed: %v", got)
	}
	if _, err := s.ResourceContent("extra", "1", "data"); err != nil {
		t.Errorf("constructor content without verification: %v", err)
	}
}

// A verified OCI resource is fetched by its signed digest, never by the
// tag the unsigned access names; one with no signed artifact digest is
// not fetched at all.
func TestVerifiedFetchIsPinned(t *testing.T) {
	f, _ := newFake()
	f.descs["root:1"] = descYAML("root", "1", nil, `  - name: chart
    version: '1'
    type: helmChart
    relation: external
    access: {type: ociArtifact, imageReference: 'registry.test/charts/app:1.0'}
    digest: {hashAlgorithm: SHA-256, normalisationAlgorithm: ociArtifactDigest/v1, value: `+signedChart+`}
  - name: nodigest
    version: '1'
    type: helmChart
    relation: external
    access: {type: ociArtifact, imageReference: 'registry.test/charts/app:1.0'}`)
	g := &globalFake{}
	r := ocm.NewResolver(ocm.Context{
		RepositoryContext: map[string]any{"type": "OCIRegistry", "baseUrl": "registry.test/ocm"},
		Open:              func(ocm.RepositorySpec) (ocm.Repository, error) { return f, nil },
		Global:            g,
	})
	s, err := Resolve(context.Background(), ResolveOptions{Root: ID{"root", "1"}, Resolver: r, Verifier: &recordingVerifier{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ResourceContent("root", "1", "chart"); err != nil {
		t.Fatal(err)
	}
	if len(g.refs) != 1 || g.refs[0] != "registry.test/charts/app@sha256:"+signedChart || !g.verified[0] {
		t.Fatalf("fetched %v (verified fetch %v)", g.refs, g.verified)
	}
	if _, err := s.ResourceContent("root", "1", "nodigest"); err == nil || !strings.Contains(err.Error(), "cannot be pinned") {
		t.Fatalf("nodigest: %v", err)
	}
	if len(g.refs) != 1 {
		t.Fatalf("an unpinnable access was fetched: %v", g.refs)
	}
}

// globalFake records the global accesses it is asked for.
type globalFake struct {
	refs     []string
	verified []bool
}

func (g *globalFake) Blob(ctx context.Context, access map[string]any) (*ocm.Blob, error) {
	ref, _ := access["imageReference"].(string)
	g.refs = append(g.refs, ref)
	g.verified = append(g.verified, ocm.VerifiedFetch(ctx))
	return &ocm.Blob{Data: []byte("chart"), ArtifactDigest: "sha256:" + signedChart}, nil
}

// at walks a generic document by map keys and list indexes; nil where
// the path leads nowhere.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}
