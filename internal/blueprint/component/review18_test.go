package component

import (
	"context"
	"testing"
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
