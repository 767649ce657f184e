package component

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing/signtest"
)

// Review of issue 18 (attacker controls the registry): the access is not
// signed, and verifiedView pins only the access types it knows by their
// exact spelling. A registry that respells the type (ocm.CheckAccessType
// itself accepts any case) or names any other type keeps an unpinned
// imageReference that the usual template
// `{{ (getResource .cd "name" "img").access.imageReference }}` renders.
func TestReview18UnpinnedAccessTypeVariants(t *testing.T) {
	for _, typ := range []string{"ociartifact", "OciArtifact", "ociArtifact ", "s3", "helm"} {
		t.Run(typ, func(t *testing.T) {
			f, r := newFake()
			f.descs["root:1"] = descYAML("root", "1", nil, `  - name: img
    version: '1'
    type: ociImage
    relation: external
    access: {type: '`+typ+`', imageReference: 'evil.test/unsigned:latest'}
    digest: {hashAlgorithm: SHA-256, normalisationAlgorithm: ociArtifactDigest/v1, value: `+signedChart+`}
  - name: wrapped
    version: '1'
    type: ociImage
    relation: external
    access: {type: localBlob, localReference: 'sha256:bp', globalAccess: {type: '`+typ+`', imageReference: 'evil.test/unsigned:latest'}}
    digest: {hashAlgorithm: SHA-256, normalisationAlgorithm: ociArtifactDigest/v1, value: `+signedChart+`}`)
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
// chart.ref (TestReview18UnpinnedAccessTypeVariants) an unsigned chart is
// installed by a verifying installation.
func TestReview18NoneAccessDigestCountsAsSigned(t *testing.T) {
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

// pinReference keeps whatever precedes the tag or digest, so an unsigned
// imageReference with a line break survives pinning as text that, rendered
// the usual way (`image: {{ ... }}`) into a manifest, names an unpinned
// image: the "@sha256:<signed>" lands on another line.
func TestReview18PinnedReferenceIsNotAReference(t *testing.T) {
	f, r := newFake()
	f.descs["root:1"] = descYAML("root", "1", nil, `  - name: img
    version: '1'
    type: ociImage
    relation: external
    access: {type: ociArtifact, imageReference: "evil.test/unsigned:latest\n      x: a/b"}
    digest: {hashAlgorithm: SHA-256, normalisationAlgorithm: ociArtifactDigest/v1, value: `+signedChart+`}`)
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
// signed form, but the template view marks a source label with signing:
// true as signed: a registry adds a source whose "signed" label it chose.
func TestReview18V1SourceLabelsShownAsSigned(t *testing.T) {
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

// pinnedAccess pins the exact key "imageReference", but the registry
// client reads the access with encoding/json (ocm.DecodeAccess), which
// matches keys case-insensitively and lets the last one win: an added
// "imagereference" (sorted after "imageReference") is what is pulled, from
// an attacker-chosen host (http:// makes the shared client allow plain
// HTTP to it), before the digest check refuses it.
func TestReview18PinnedAccessOverriddenByFoldedKey(t *testing.T) {
	res := ocm.Resource{Name: "chart", Type: "helmChart",
		Access: map[string]any{"type": "ociArtifact", "imageReference": "registry.test/charts/app:1.0", "imagereference": "http://evil.test/charts/app:1.0"},
		Digest: &ocm.DigestSpec{HashAlgorithm: "SHA-256", NormalisationAlgorithm: "ociArtifactDigest/v1", Value: signedChart}}
	access, err := pinnedAccess(res)
	if err != nil {
		return // refused: nothing is fetched
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
