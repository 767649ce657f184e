package helm

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/component"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing/signtest"
)

type signedDescriptorRepo struct{ raw string }

func (r signedDescriptorRepo) Spec() ocm.RepositorySpec {
	return ocm.RepositorySpec{Type: ocm.TypeOCIRegistry, BaseURL: "registry.test/ocm"}
}

func (r signedDescriptorRepo) ComponentVersion(_ context.Context, name, version string) (*ocm.ComponentVersion, error) {
	d, err := ocm.ParseDescriptor([]byte(r.raw))
	if err != nil {
		return nil, err
	}
	return &ocm.ComponentVersion{Descriptor: d, Raw: []byte(r.raw), Digest: ocm.Digest([]byte(r.raw)), Repository: r.Spec()}, nil
}

type verifiedSet struct{ s *component.Set }

func (r verifiedSet) Resource(context.Context, deployer.ResourceRef) ([]byte, string, error) {
	return nil, "", nil
}
func (r verifiedSet) Verifying() bool                        { return r.s.Verifying() }
func (r verifiedSet) SignedArtifact(d string) (string, bool) { return r.s.SignedArtifact(d) }
func (r verifiedSet) SignedBlob(d string) (string, bool)     { return r.s.SignedBlob(d) }

// End to end, against a real signature and the helm deployer's check:
// the signer signed a chart resource (ociArtifactDigest of the good chart)
// and a documentation resource with access "none". The registry, without
// breaking the signature, (1) respells the chart's access type so the
// template view keeps its unpinned imageReference, pointing it at its own
// chart, and (2) gives the "none" resource the manifest digest of that
// chart, which the signed form leaves out. The usual
// chart.ref: {{ (getResource .cd "name" "chart").access.imageReference }}
// then installs the attacker's chart.
func TestVerifiedChartRefIgnoresUnsignedAccessAndNoneDigest(t *testing.T) {
	reg := helmtest.NewRegistry(t)
	good := reg.Push(t, helmtest.Archive(t, helmtest.Demo, "0.2.0"))
	evil := reg.Push(t, helmtest.Archive(t, helmtest.Demo, "6.6.6"))
	d := New(Options{})
	gp, err := d.pullChart(t.Context(), good)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := d.pullChart(t.Context(), evil)
	if err != nil {
		t.Fatal(err)
	}
	plain := `meta:
  schemaVersion: v2
component:
  name: example.com/app
  version: '1'
  provider: acme
  repositoryContexts: []
  sources: []
  componentReferences: []
  resources:
  - name: chart
    version: '1'
    type: helmChart
    relation: external
    access: {type: ociArtifact, imageReference: '` + good + `'}
    digest: {hashAlgorithm: SHA-256, normalisationAlgorithm: ociArtifactDigest/v1, value: ` + strings.TrimPrefix(gp.ManifestDigest, "sha256:") + `}
  - name: docs
    version: '1'
    type: plainText
    relation: external
    access: {type: none}
`
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := signtest.Sign([]byte(plain), signtest.Options{Name: "acme", Key: key, Normalisation: signing.JSONNormalisationV3})
	if err != nil {
		t.Fatal(err)
	}
	tampered := strings.Replace(string(signed), "type: ociArtifact", "type: ociartifact", 1)
	tampered = strings.Replace(tampered, good, evil, 1)
	tampered = strings.Replace(tampered, "type: none", "type: none\n    digest: {hashAlgorithm: SHA-256, normalisationAlgorithm: ociArtifactDigest/v1, value: "+
		strings.TrimPrefix(ep.ManifestDigest, "sha256:")+"}", 1)
	v, err := signing.NewVerifier("acme", signtest.PublicKeyPEM(key), "")
	if err != nil {
		t.Fatal(err)
	}
	r := ocm.NewResolver(ocm.Context{
		RepositoryContext: map[string]any{"type": "OCIRegistry", "baseUrl": "registry.test/ocm"},
		Open:              func(ocm.RepositorySpec) (ocm.Repository, error) { return signedDescriptorRepo{raw: tampered}, nil },
	})
	s, err := component.Resolve(t.Context(), component.ResolveOptions{Root: component.ID{Name: "example.com/app", Version: "1"}, Resolver: r, Verifier: v})
	if err != nil {
		t.Skipf("verification refused the tampered descriptor: %v", err)
	}
	root, _ := s.Component("example.com/app", "1")
	res, _ := root.Descriptor()["component"].(map[string]any)["resources"].([]any)[0].(map[string]any)
	chartRef, _ := res["access"].(map[string]any)["imageReference"].(string)
	c, err := d.loadChart(t.Context(), &Chart{Ref: chartRef}, verifiedSet{s})
	if err == nil {
		t.Errorf("a verifying installation loaded chart %s %s from %s: no one signed it", c.Metadata.Name, c.Metadata.Version, chartRef)
	}
}
