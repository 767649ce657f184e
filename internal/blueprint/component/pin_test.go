package component

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing/signtest"
)

const signedChart = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// signedDigest is the OCI artifact digest signedChart as a resource's
// digest.
const signedDigest = "{hashAlgorithm: SHA-256, normalisationAlgorithm: ociArtifactDigest/v1, value: " + signedChart + "}"

// externalResource is an external resource of version 1 in a
// descriptor's resource list, with the digest if it is not empty; no
// trailing newline.
func externalResource(name, typ, access, digest string) string {
	s := fmt.Sprintf("  - name: %s\n    version: '1'\n    type: %s\n    relation: external\n    access: %s", name, typ, access)
	if digest != "" {
		s += "\n    digest: " + digest
	}
	return s
}

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
`+
		externalResource("moved", "ociImage", "{type: ociArtifact, imageReference: 'registry.test/other@sha256:ffff'}", signedDigest)+"\n"+
		externalResource("excluded", "ociImage", "{type: ociArtifact, imageReference: 'evil.test/x:latest'}", "{hashAlgorithm: NO-DIGEST, normalisationAlgorithm: EXCLUDE-FROM-SIGNATURE, value: NO-DIGEST}")+`
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
	f.descs["root:1"] = descYAML("root", "1", nil, externalResource("chart", "helmChart", "{type: ociArtifact, imageReference: 'registry.test/charts/app:1.0'}", signedDigest)+"\n"+
		externalResource("nodigest", "helmChart", "{type: ociArtifact, imageReference: 'registry.test/charts/app:1.0'}", ""))
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

// The access is not signed, so whoever controls the registry may respell
// its type or name another one: a verified template must still see no
// reference that is not pinned, so the view builds accesses from what it
// knows (exact OCI type names, localBlob's keys) and shows any other
// access by its type alone.
func TestVerifiedViewPinsOnlyExactOCITypes(t *testing.T) {
	for _, typ := range []string{"ociartifact", "OciArtifact", "ociArtifact ", "s3", "helm"} {
		t.Run(typ, func(t *testing.T) {
			f, r := newFake()
			f.descs["root:1"] = descYAML("root", "1", nil, externalResource("img", "ociImage", "{type: '"+typ+"', imageReference: 'evil.test/unsigned:latest'}", signedDigest)+"\n"+
				externalResource("wrapped", "ociImage", "{type: localBlob, localReference: 'sha256:bp', globalAccess: {type: '"+typ+"', imageReference: 'evil.test/unsigned:latest'}}", signedDigest))
			s, err := Resolve(context.Background(), ResolveOptions{Root: ID{"root", "1"}, Resolver: r, Verifier: &recordingVerifier{}})
			if err != nil {
				t.Fatal(err)
			}
			root, _ := s.Component("root", "1")
			cd := root.Descriptor()
			if got := at(cd, "component", "resources", 0, "access", "imageReference"); got != nil {
				t.Errorf("access type %q: a verified template sees the unpinned imageReference %v", typ, got)
			}
			if got := at(cd, "component", "resources", 1, "access", "globalAccess", "imageReference"); got != nil {
				t.Errorf("globalAccess type %q: a verified template sees the unpinned imageReference %v", typ, got)
			}
		})
	}
}

// The signed form leaves out the digest of a resource whose access is
// "none" (as OCM does), so a registry can give such a resource any digest
// without breaking the signature. Set.SignedArtifact / SignedBlob (what the
// helm deployer checks chart.ref, helmChartRepo and archive.remote.url
// against) still count that digest as signed: together with an unpinned
// chart.ref (TestVerifiedViewPinsOnlyExactOCITypes) an unsigned chart is
// installed by a verifying installation.
func TestNoneAccessDigestIsNotSigned(t *testing.T) {
	const evil = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for _, norm := range []string{signing.JSONNormalisationV1, signing.JSONNormalisationV2, signing.JSONNormalisationV3} {
		t.Run(norm, func(t *testing.T) {
			plain := descYAML("root", "1", nil, `  - name: docs
    version: '1'
    type: plainText
    relation: external
    access: {type: none}`)
			signed, err := signtest.Sign([]byte(plain), signtest.Options{Name: "acme", Key: key, Normalisation: norm})
			if err != nil {
				t.Fatal(err)
			}
			// The registry adds a digest of its choosing.
			tampered := strings.Replace(string(signed), "type: none", "type: none\n      imageReference: evil.test/charts/app:1.0", 1)
			tampered = strings.Replace(tampered, "relation: external", "relation: external\n    digest: {hashAlgorithm: SHA-256, normalisationAlgorithm: ociArtifactDigest/v1, value: "+evil+"}", 1)
			if tampered == string(signed) {
				t.Fatal("tamper failed")
			}
			v, err := signing.NewVerifier("acme", signtest.PublicKeyPEM(key), "")
			if err != nil {
				t.Fatal(err)
			}
			f, r := newFake()
			f.descs["root:1"] = tampered
			s, err := Resolve(context.Background(), ResolveOptions{Root: ID{"root", "1"}, Resolver: r, Verifier: v})
			if err != nil {
				t.Skipf("refused: %v", err)
			}
			if what, ok := s.SignedArtifact("sha256:" + evil); ok {
				t.Errorf("an unsigned digest counts as signed (%s): a chart.ref to that artifact is accepted", what)
			}
			root, _ := s.Component("root", "1")
			if got := at(root.Descriptor(), "component", "resources", 0, "access", "imageReference"); got != nil {
				t.Errorf("a none access shows an unpinned imageReference %v", got)
			}
		})
	}
}

// Pinning replaces only the tag or digest, so an unsigned imageReference
// with a line break would survive as text that, rendered the usual way
// (`image: {{ ... }}`) into a manifest, names an unpinned image, the
// "@sha256:<signed>" on another line. A pinned reference is one OCI
// digest reference or is not shown.
func TestPinnedReferenceIsOneDigestReference(t *testing.T) {
	f, r := newFake()
	f.descs["root:1"] = descYAML("root", "1", nil, externalResource("img", "ociImage", `{type: ociArtifact, imageReference: "evil.test/unsigned:latest\n      x: a/b"}`, signedDigest))
	s, err := Resolve(context.Background(), ResolveOptions{Root: ID{"root", "1"}, Resolver: r, Verifier: &recordingVerifier{}})
	if err != nil {
		t.Fatal(err)
	}
	root, _ := s.Component("root", "1")
	v := at(root.Descriptor(), "component", "resources", 0, "access", "imageReference")
	if v == nil {
		return // not a reference: dropped, the template renders nothing to pull
	}
	ref, _ := v.(string)
	manifest := "spec:\n  containers:\n    - name: app\n      image: " + ref + "\n"
	var m struct {
		Spec struct {
			Containers []struct {
				Image string `json:"image"`
			} `json:"containers"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(manifest), &m); err != nil {
		t.Fatalf("%v\n%s", err, manifest)
	}
	if img := m.Spec.Containers[0].Image; !strings.HasSuffix(img, "@sha256:"+signedChart) {
		t.Errorf("the pinned reference %q renders an unpinned image %q", ref, img)
	}
}

// jsonNormalisation/v1 (OCM's legacy one) leaves sources out of the
// signed form, so a registry may add a source with a "signing: true"
// label of its choosing: the view marks it unsigned.
func TestV1SourceLabelsAreUnsigned(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	plain := descYAML("root", "1", nil, "")
	signed, err := signtest.Sign([]byte(plain), signtest.Options{Name: "acme", Key: key, Normalisation: signing.JSONNormalisationV1})
	if err != nil {
		t.Fatal(err)
	}
	tampered := strings.Replace(string(signed), "\n  sources: []",
		"\n  sources: [{name: src, version: '1', type: git, labels: [{name: approved, value: evil, signing: true}], access: {type: none}}]", 1)
	if tampered == string(signed) {
		t.Fatal("tamper failed")
	}
	v, err := signing.NewVerifier("acme", signtest.PublicKeyPEM(key), "")
	if err != nil {
		t.Fatal(err)
	}
	f, r := newFake()
	f.descs["root:1"] = tampered
	s, err := Resolve(context.Background(), ResolveOptions{Root: ID{"root", "1"}, Resolver: r, Verifier: v})
	if err != nil {
		t.Skipf("refused: %v", err)
	}
	root, _ := s.Component("root", "1")
	if at(root.Descriptor(), "component", "sources", 0, "labels", 0, UnsignedLabelKey) == nil {
		t.Errorf("an added source's label under jsonNormalisation/v1 is shown as signed")
	}
}

// pinnedAccess pins the exact key "imageReference", but encoding/json
// (ocm.DecodeAccess) matches keys case-insensitively and lets the last
// one win: an added "imagereference" would be what is pulled, from a host
// the registry chose, before the digest check refuses it. Such an access
// is refused; whatever is fetched is the pinned reference.
func TestPinnedAccessRefusesFoldedKeys(t *testing.T) {
	res := ocm.Resource{Name: "chart", Type: "helmChart",
		Access: map[string]any{"type": "ociArtifact", "imageReference": "registry.test/charts/app:1.0", "imagereference": "http://evil.test/charts/app:1.0"},
		Digest: &ocm.DigestSpec{HashAlgorithm: "SHA-256", NormalisationAlgorithm: "ociArtifactDigest/v1", Value: signedChart}}
	access, err := pinnedAccess(res)
	if err == nil || !strings.Contains(err.Error(), "differ only in case") {
		t.Errorf("folded keys: %v, %v", access, err)
	}
	if err != nil {
		return
	}
	var a struct {
		ImageReference string `json:"imageReference"`
	}
	if err := ocm.DecodeAccess(access, &a); err != nil {
		t.Fatal(err)
	}
	if a.ImageReference != "registry.test/charts/app@sha256:"+signedChart {
		t.Errorf("the registry client pulls %q, not the pinned reference", a.ImageReference)
	}
}

func TestPinReference(t *testing.T) {
	for ref, want := range map[string]string{
		"registry.test:5000/charts/app:1.0":         "registry.test:5000/charts/app@sha256:" + signedChart,
		"oci://registry.test/charts/app:1.0":        "oci://registry.test/charts/app@sha256:" + signedChart,
		"http://registry.test/charts/app:1.0":       "registry.test/charts/app@sha256:" + signedChart,
		"registry.test/app@sha256:ffff":             "registry.test/app@sha256:" + signedChart,
		"nginx:1.25":                                "nginx@sha256:" + signedChart,
		"registry.test/app:1.0\n  x: a/b":           "",
		"evil.test/unsigned:latest\n      x: a/b:1": "",
		"registry.test/App:1.0":                     "",
		"registry.test/app name:1.0":                "",
		"":                                          "",
	} {
		got, ok := pinReference(ref, signedChart)
		if got != want || ok != (want != "") {
			t.Errorf("pinReference(%q) = %q, %v; want %q", ref, got, ok, want)
		}
	}
}
