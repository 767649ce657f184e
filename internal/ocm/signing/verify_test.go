package signing_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing/signtest"
)

var blueprint = []byte("blueprint content")

func descriptor() []byte {
	return []byte(`meta:
  schemaVersion: v2
component:
  name: github.com/acme/app
  version: 1.0.0
  provider: acme
  repositoryContexts: [{type: OCIRegistry, baseUrl: ghcr.io/acme/ocm}]
  sources: []
  componentReferences: []
  labels: [{name: team, value: a}]
  resources:
  - name: blueprint
    version: 1.0.0
    type: blueprint
    relation: local
    access: {type: localBlob, localReference: "sha256:` + signtest.Digest(blueprint) + `"}
    digest: {hashAlgorithm: SHA-256, normalisationAlgorithm: genericBlobDigest/v1, value: ` + signtest.Digest(blueprint) + `}
`)
}

func key(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func version(t *testing.T, raw []byte) *ocm.ComponentVersion {
	t.Helper()
	d, err := ocm.ParseDescriptor(raw)
	if err != nil {
		t.Fatal(err)
	}
	return &ocm.ComponentVersion{Descriptor: d, Raw: raw}
}

func sign(t *testing.T, raw []byte, o signtest.Options) []byte {
	t.Helper()
	out, err := signtest.Sign(raw, o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestVerifyPublicKey(t *testing.T) {
	k, other := key(t), key(t)
	pkcs1 := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(&k.PublicKey)}))
	for _, algo := range []string{signing.AlgorithmRSAPKCS1v15, signing.AlgorithmRSAPSS} {
		for _, norm := range []string{signing.JSONNormalisationV1, signing.JSONNormalisationV2, signing.JSONNormalisationV3} {
			signed := sign(t, descriptor(), signtest.Options{Name: "acme", Key: k, Algorithm: algo, Normalisation: norm})
			for _, pub := range []string{signtest.PublicKeyPEM(k), pkcs1} {
				v, err := signing.NewVerifier("acme", pub, "")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := v.VerifyComponent(version(t, signed)); err != nil {
					t.Fatalf("%s %s: %v", algo, norm, err)
				}
			}
			// Wrong key.
			v, _ := signing.NewVerifier("acme", signtest.PublicKeyPEM(other), "")
			if _, err := v.VerifyComponent(version(t, signed)); err == nil || !strings.Contains(err.Error(), "not valid for the key") {
				t.Fatalf("%s %s wrong key: %v", algo, norm, err)
			}
			// A signed field changed after signing.
			tampered := []byte(strings.Replace(string(signed), "relation: local", "relation: external", 1))
			v, _ = signing.NewVerifier("acme", signtest.PublicKeyPEM(k), "")
			if _, err := v.VerifyComponent(version(t, tampered)); err == nil || !strings.Contains(err.Error(), "modified after signing") {
				t.Fatalf("%s %s tampered: %v", algo, norm, err)
			}
			// Fields that are not signed may change (a transfer rewrites
			// repository contexts and accesses).
			moved := []byte(strings.Replace(string(signed), "ghcr.io/acme/ocm", "registry.internal/mirror", 1))
			if _, err := v.VerifyComponent(version(t, moved)); err != nil {
				t.Fatalf("%s %s moved: %v", algo, norm, err)
			}
		}
	}
	v, _ := signing.NewVerifier("acme", signtest.PublicKeyPEM(k), "")
	if _, err := v.VerifyComponent(version(t, descriptor())); err == nil || !strings.Contains(err.Error(), "not signed") {
		t.Fatalf("unsigned: %v", err)
	}
	signed := sign(t, descriptor(), signtest.Options{Name: "other", Key: k})
	if _, err := v.VerifyComponent(version(t, signed)); err == nil || !strings.Contains(err.Error(), "it has other") {
		t.Fatalf("other name: %v", err)
	}
	bad := []byte(strings.Replace(string(sign(t, descriptor(), signtest.Options{Name: "acme", Key: k})), "RSASSA-PKCS1-V1_5", "ECDSA", 1))
	if _, err := v.VerifyComponent(version(t, bad)); err == nil || !strings.Contains(err.Error(), `"ECDSA" is not supported`) {
		t.Fatalf("algorithm: %v", err)
	}
}

func TestVerifyCACertificate(t *testing.T) {
	caKey, signerKey, rogueKey := key(t), key(t), key(t)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "acme CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	caCert, _ := x509.ParseCertificate(caDER)
	leaf := func(parent *x509.Certificate, parentKey *rsa.PrivateKey) []byte {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "acme signer"},
			KeyUsage: x509.KeyUsageDigitalSignature, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &signerKey.PublicKey, parentKey)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
	v, err := signing.NewVerifier("acme", "", caPEM)
	if err != nil {
		t.Fatal(err)
	}
	signed := sign(t, descriptor(), signtest.Options{Name: "acme", Key: signerKey, Chain: [][]byte{leaf(caCert, caKey)}, Issuer: "CN=acme signer"})
	if _, err := v.VerifyComponent(version(t, signed)); err != nil {
		t.Fatal(err)
	}
	// A self-issued certificate is not the CA's.
	selfTmpl := &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "acme signer"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	selfDER, _ := x509.CreateCertificate(rand.Reader, selfTmpl, selfTmpl, &signerKey.PublicKey, rogueKey)
	signed = sign(t, descriptor(), signtest.Options{Name: "acme", Key: signerKey, Chain: [][]byte{selfDER}})
	if _, err := v.VerifyComponent(version(t, signed)); err == nil || !strings.Contains(err.Error(), "not issued by ca_certificate") {
		t.Fatalf("self-issued: %v", err)
	}
	// No certificate in the signature.
	signed = sign(t, descriptor(), signtest.Options{Name: "acme", Key: signerKey})
	if _, err := v.VerifyComponent(version(t, signed)); err == nil || !strings.Contains(err.Error(), "carries no certificate") {
		t.Fatalf("no certificate: %v", err)
	}
}

func TestCheckBlobAndReference(t *testing.T) {
	v, _ := signing.NewVerifier("acme", signtest.PublicKeyPEM(key(t)), "")
	cv := version(t, descriptor())
	res := cv.Descriptor.Component.Resources[0]
	if err := v.CheckBlob(res, &ocm.Blob{Data: blueprint}); err != nil {
		t.Fatal(err)
	}
	if err := v.CheckBlob(res, &ocm.Blob{Data: []byte("tampered")}); err == nil || !strings.Contains(err.Error(), "was modified") {
		t.Fatalf("tampered blob: %v", err)
	}
	art := ocm.Resource{Name: "chart", Digest: &ocm.DigestSpec{HashAlgorithm: "SHA-256", NormalisationAlgorithm: signing.OCIArtifactDigestV1, Value: "abcd"}}
	if err := v.CheckBlob(art, &ocm.Blob{Data: []byte("x"), ArtifactDigest: "sha256:abcd"}); err != nil {
		t.Fatal(err)
	}
	if err := v.CheckBlob(art, &ocm.Blob{Data: []byte("x"), ArtifactDigest: "sha256:ffff"}); err == nil {
		t.Fatal("wrong artifact digest accepted")
	}
	if err := v.CheckBlob(ocm.Resource{Name: "x"}, &ocm.Blob{}); err == nil || !strings.Contains(err.Error(), "no digest") {
		t.Fatalf("no digest: %v", err)
	}

	d, _ := signtest.ReferenceDigest(descriptor(), signing.JSONNormalisationV1)
	ref := ocm.Reference{Name: "app", Digest: &ocm.DigestSpec{HashAlgorithm: "SHA-256", NormalisationAlgorithm: signing.JSONNormalisationV1, Value: fmt.Sprint(d["value"])}}
	if err := v.CheckReference(ref, cv); err != nil {
		t.Fatal(err)
	}
	changed := version(t, []byte(strings.Replace(string(descriptor()), "type: blueprint", "type: landscaper.gardener.cloud/blueprint", 1)))
	if err := v.CheckReference(ref, changed); err == nil || !strings.Contains(err.Error(), "changed after") {
		t.Fatalf("changed reference: %v", err)
	}
}

// A descriptor signed by the legacy component-spec's own signing code
// (see testdata/README.md) verifies, with either signature; changed, it
// does not.
func TestVerifyRealSignatures(t *testing.T) {
	raw, err := os.ReadFile("testdata/guided-tour-signed-by-component-spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile("testdata/legacy-signer.pub")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"legacy-pem", "legacy-hex"} {
		v, err := signing.NewVerifier(name, string(pub), "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.VerifyComponent(version(t, raw)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		changed := []byte(strings.Replace(string(raw), `"version":"v0.2.3"`, `"version":"v0.2.4"`, 1))
		if _, err := v.VerifyComponent(version(t, changed)); err == nil || !strings.Contains(err.Error(), "modified after signing") {
			t.Fatalf("%s changed: %v", name, err)
		}
	}
}

// A descriptor signed by OCM itself with jsonNormalisation/v3 (see
// testdata/README.md): its signature is a sigstore one, which the
// provider does not check, but the digest OCM signed is the digest the
// provider computes; changed, it is not.
func TestOCMDigestVector(t *testing.T) {
	raw, err := os.ReadFile("testdata/ocm-signed-v3-sigstore.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cv := version(t, raw)
	if len(cv.Descriptor.Signatures) != 2 {
		t.Fatalf("signatures: %+v", cv.Descriptor.Signatures)
	}
	for _, sig := range cv.Descriptor.Signatures {
		got, err := signing.DescriptorDigest(raw, sig.Digest.NormalisationAlgorithm, sig.Digest.HashAlgorithm)
		if err != nil || got != sig.Digest.Value {
			t.Fatalf("%s: digest %s, %v; OCM signed %s", sig.Name, got, err, sig.Digest.Value)
		}
	}
	changed := []byte(strings.Replace(string(raw), "version: 6.8.0", "version: 6.8.1", 1))
	got, err := signing.DescriptorDigest(changed, signing.JSONNormalisationV3, "SHA-256")
	if err != nil || got == cv.Descriptor.Signatures[0].Digest.Value {
		t.Fatalf("changed: %s, %v", got, err)
	}
}

// addKey returns raw (YAML) as JSON with key set to value in the object
// at path.
func addKey(t *testing.T, raw []byte, path []string, key string, value any) []byte {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	m := doc
	for _, p := range path {
		next, ok := m[p].(map[string]any)
		if !ok {
			t.Fatalf("%s is not an object", p)
		}
		m = next
	}
	m[key] = value
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A signed descriptor with a second resource list (or spec, or reference
// list) under a key Go's JSON decoder folds onto the real one is refused,
// naming the key: before, the signature verified over the real list while
// the provider used the added one.
func TestFoldedKeysAreRefused(t *testing.T) {
	k := key(t)
	v, _ := signing.NewVerifier("acme", signtest.PublicKeyPEM(k), "")
	evil := []any{map[string]any{"name": "blueprint", "version": "1.0.0", "type": "blueprint", "relation": "local",
		"access": map[string]any{"type": "localBlob", "localReference": "sha256:" + signtest.Digest([]byte("evil"))},
		"digest": map[string]any{"hashAlgorithm": "SHA-256", "normalisationAlgorithm": signing.GenericBlobDigestV1, "value": signtest.Digest([]byte("evil"))}}}
	v3 := []byte(`apiVersion: ocm.software/v3alpha1
kind: ComponentVersion
metadata: {name: github.com/acme/app, version: 1.0.0, provider: {name: acme}}
repositoryContexts: []
spec:
  resources:
  - name: blueprint
    version: 1.0.0
    type: blueprint
    relation: local
    access: {type: localBlob, localReference: "sha256:` + signtest.Digest(blueprint) + `"}
    digest: {hashAlgorithm: SHA-256, normalisationAlgorithm: genericBlobDigest/v1, value: ` + signtest.Digest(blueprint) + `}
`)
	for _, norm := range []string{signing.JSONNormalisationV2, signing.JSONNormalisationV3} {
		signed := sign(t, descriptor(), signtest.Options{Name: "acme", Key: k, Normalisation: norm})
		signedV3 := sign(t, v3, signtest.Options{Name: "acme", Key: k, Normalisation: norm})
		cases := map[string][]byte{
			"reſources":           addKey(t, signed, []string{"component"}, "reſources", evil),
			"componentReferenceſ": addKey(t, signed, []string{"component"}, "componentReferenceſ", []any{map[string]any{"name": "x", "componentName": "evil", "version": "1"}}),
			"ſpec":                addKey(t, signedV3, nil, "ſpec", map[string]any{"resources": evil}),
		}
		for k, raw := range cases {
			_, perr := ocm.ParseDescriptor(raw)
			_, nerr := signing.Normalise(raw, norm)
			for _, err := range []error{perr, nerr} {
				if err == nil || !strings.Contains(err.Error(), `"`+k+`"`) {
					t.Fatalf("%s %s: %v", norm, k, err)
				}
			}
			// A version whose parsed descriptor is not what its bytes
			// parse to is not verified either.
			swapped := version(t, signed)
			swapped.Descriptor.Component.Resources[0].Digest.Value = "ffff"
			if _, err := v.VerifyComponent(swapped); err == nil || !strings.Contains(err.Error(), "is not the one its repository stores") {
				t.Fatalf("%s swapped: %v", norm, err)
			}
		}
	}
}

// CheckReference reads the referenced descriptor as the provider does: a
// folded key in it is an error naming the key, not a digest computed
// over other content than the provider uses.
func TestCheckReferenceIsStrict(t *testing.T) {
	v, _ := signing.NewVerifier("acme", signtest.PublicKeyPEM(key(t)), "")
	d, _ := signtest.ReferenceDigest(descriptor(), signing.JSONNormalisationV3)
	ref := ocm.Reference{Name: "app", Digest: &ocm.DigestSpec{HashAlgorithm: "SHA-256", NormalisationAlgorithm: signing.JSONNormalisationV3, Value: fmt.Sprint(d["value"])}}
	referenced := version(t, descriptor())
	if err := v.CheckReference(ref, referenced); err != nil {
		t.Fatal(err)
	}
	referenced.Raw = addKey(t, descriptor(), []string{"component"}, "reſources", []any{})
	if err := v.CheckReference(ref, referenced); err == nil || !strings.Contains(err.Error(), `key "reſources" in component differs`) {
		t.Fatalf("folded key in a referenced descriptor: %v", err)
	}
}

// A CA verifier with a subject accepts that signer only; key usages that
// exclude signing are refused whether or not a subject is required.
func TestVerifyCASubjectAndKeyUsage(t *testing.T) {
	ca, err := signtest.NewCA("acme CA")
	if err != nil {
		t.Fatal(err)
	}
	signer := key(t)
	signedBy := func(subject pkix.Name, usage x509.KeyUsage, ext ...x509.ExtKeyUsage) []byte {
		der, err := ca.Issue(signer, subject, usage, ext...)
		if err != nil {
			t.Fatal(err)
		}
		return sign(t, descriptor(), signtest.Options{Name: "acme", Key: signer, Chain: [][]byte{der}})
	}
	release := pkix.Name{CommonName: "release signer", Organization: []string{"Acme"}, Country: []string{"DE"}}
	intern := pkix.Name{CommonName: "intern", Organization: []string{"Acme"}, Country: []string{"DE"}}
	verifier := func(subject string) *signing.Verifier {
		v, err := signing.NewVerifier("acme", "", ca.PEM())
		if err != nil {
			t.Fatal(err)
		}
		if subject != "" {
			if err := v.RequireSubject(subject); err != nil {
				t.Fatal(err)
			}
		}
		return v
	}
	cases := []struct {
		name, subject string
		signed        []byte
		want          string
	}{
		{"any signer without subject", "", signedBy(intern, x509.KeyUsageDigitalSignature), ""},
		{"common name", "release signer", signedBy(release, x509.KeyUsageDigitalSignature), ""},
		{"DN in another order and spelling", "c=DE, commonName=release signer,O=Acme", signedBy(release, x509.KeyUsageDigitalSignature, x509.ExtKeyUsageCodeSigning), ""},
		{"other signer of the same CA", "release signer", signedBy(intern, x509.KeyUsageDigitalSignature), `subject "CN=intern,O=Acme,C=DE", not the subject "release signer"`},
		{"DN missing an attribute", "CN=release signer,O=Acme", signedBy(release, x509.KeyUsageDigitalSignature), "not the subject"},
		{"CN smuggled into another attribute", "CN=release signer,O=Acme,C=DE", signedBy(pkix.Name{CommonName: "x", Organization: []string{"Acme"}, Country: []string{"DE"}, OrganizationalUnit: []string{"CN=release signer"}}, x509.KeyUsageDigitalSignature), "not the subject"},
		{"key encipherment only", "", signedBy(release, x509.KeyUsageKeyEncipherment), "does not allow digital signatures"},
		{"TLS server certificate", "", signedBy(release, x509.KeyUsageDigitalSignature, x509.ExtKeyUsageServerAuth), "not for code signing"},
		{"no key usage extension", "", signedBy(release, 0), ""},
	}
	for _, tc := range cases {
		_, err := verifier(tc.subject).VerifyComponent(version(t, tc.signed))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
	pub, _ := signing.NewVerifier("acme", signtest.PublicKeyPEM(signer), "")
	if err := pub.RequireSubject("release signer"); err == nil || !strings.Contains(err.Error(), "ca_certificate only") {
		t.Fatalf("subject with public_key: %v", err)
	}
	if err := verifier("").RequireSubject("CN"); err != nil {
		t.Fatalf("a bare common name: %v", err)
	}
	if err := verifier("").RequireSubject("=x,CN=y"); err == nil {
		t.Fatal("a malformed DN was accepted")
	}
}

// prependSignature is signtest.PrependCopy for tests.
func prependSignature(t *testing.T, raw []byte, normalisation string) []byte {
	t.Helper()
	out, err := signtest.PrependCopy(raw, normalisation)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// One signature per name: a descriptor carrying the configured name twice
// is refused, naming it, whichever of the two is valid; so what is
// signed is decided by the one signature that verified, never by a
// registry's extra entry (a fake jsonNormalisation/v2 before a real /v1
// made v1 sources look signed to templates).
func TestOneSignaturePerName(t *testing.T) {
	k := key(t)
	v, _ := signing.NewVerifier("acme", signtest.PublicKeyPEM(k), "")
	signed := sign(t, descriptor(), signtest.Options{Name: "acme", Key: k, Normalisation: signing.JSONNormalisationV1})
	twice := map[string][]byte{
		"a fake entry first":  prependSignature(t, signed, signing.JSONNormalisationV2),
		"signed twice":        sign(t, signed, signtest.Options{Name: "acme", Key: k, Normalisation: signing.JSONNormalisationV2}),
		"another name beside": sign(t, signed, signtest.Options{Name: "other", Key: k}),
	}
	for name, raw := range twice {
		_, err := v.VerifyComponent(version(t, raw))
		if name == "another name beside" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), `signature "acme"`) || !strings.Contains(err.Error(), "2 signatures of that name") {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The normalisation is the verified signature's.
	for _, norm := range []string{signing.JSONNormalisationV1, signing.JSONNormalisationV2} {
		raw := sign(t, sign(t, descriptor(), signtest.Options{Name: "other", Key: k, Normalisation: signing.JSONNormalisationV3}),
			signtest.Options{Name: "acme", Key: k, Normalisation: norm})
		if got, err := v.VerifyComponent(version(t, raw)); err != nil || got != norm {
			t.Errorf("%s: verified with %q, %v", norm, got, err)
		}
	}
}

// A registry's extra entry whose name only looks like the configured one
// (another case, a space, a full-width or zero-width character) is
// another name: it neither makes the descriptor carry the name twice nor
// lends its normalisation to what counts as signed. One whose key is
// spelt "Name" beside a "name" (JSON decoding folds case) is refused.
func TestLookalikeSignatureNames(t *testing.T) {
	k := key(t)
	v, _ := signing.NewVerifier("acme", signtest.PublicKeyPEM(k), "")
	signed := sign(t, descriptor(), signtest.Options{Name: "acme", Key: k, Normalisation: signing.JSONNormalisationV1})
	rename := func(name string, keys map[string]any) []byte {
		var doc map[string]any
		if err := yaml.Unmarshal(prependSignature(t, signed, signing.JSONNormalisationV2), &doc); err != nil {
			t.Fatal(err)
		}
		first, _ := doc["signatures"].([]any)[0].(map[string]any)
		first["name"] = name
		for k, val := range keys {
			first[k] = val
		}
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, name := range []string{"Acme", "acme ", " acme", "ａｃｍｅ", "acme\u200b", "acm\u0065\u0301"} {
		got, err := v.VerifyComponent(version(t, rename(name, nil)))
		if err != nil || got != signing.JSONNormalisationV1 {
			t.Errorf("an extra entry named %q: verified with %q, %v", name, got, err)
		}
	}
	if _, err := ocm.ParseDescriptor(rename("other", map[string]any{"Name": "acme"})); err == nil || !strings.Contains(err.Error(), `"Name"`) {
		t.Errorf("an extra entry with name and Name: %v", err)
	}
}
