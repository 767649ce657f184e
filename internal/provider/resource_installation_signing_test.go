package provider

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing/signtest"
)

// addDigests records, as `ocm sign` does before signing, the digest of
// every local blob and of every referenced version.
func addDigests(t *testing.T, v acctest.PublishedVersion, refs map[string][]byte) []byte {
	t.Helper()
	js, err := yaml.YAMLToJSON(v.Descriptor)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	comp, _ := doc["component"].(map[string]any)
	resources, _ := comp["resources"].([]any)
	for _, r := range resources {
		m, _ := r.(map[string]any)
		acc, _ := m["access"].(map[string]any)
		ref, _ := acc["localReference"].(string)
		for _, b := range v.Blobs {
			if b.Digest == ref {
				m["digest"] = map[string]any{"hashAlgorithm": "SHA-256", "normalisationAlgorithm": signing.GenericBlobDigestV1, "value": signtest.Digest(b.Data)}
			}
		}
	}
	references, _ := comp["componentReferences"].([]any)
	for _, r := range references {
		m, _ := r.(map[string]any)
		name, _ := m["componentName"].(string)
		d, err := signtest.ReferenceDigest(refs[name], signing.JSONNormalisationV1)
		if err != nil {
			t.Fatal(err)
		}
		m["digest"] = d
	}
	out, _ := json.Marshal(doc)
	y, _ := yaml.JSONToYAML(out)
	return y
}

// signedExample publishes examples/installation's components with digests
// and signs the root: what `ocm sign componentversions` leaves in a
// registry.
func signedExample(t *testing.T, key *rsa.PrivateKey, algorithm, normalisation string) []acctest.PublishedVersion {
	t.Helper()
	return signedExampleWith(t, signtest.Options{Name: "acme", Key: key, Algorithm: algorithm, Normalisation: normalisation})
}

// digestedExample is examples/installation's components with digests,
// unsigned: the referenced components' descriptors first, then the
// root's (github.com/acme/app), whose references carry their digests.
func digestedExample(t *testing.T) []acctest.PublishedVersion {
	t.Helper()
	versions := exampleComponent(t, false)
	refs := map[string][]byte{}
	for i := range versions {
		if versions[i].Name != "github.com/acme/app" {
			versions[i].Descriptor = addDigests(t, versions[i], nil)
			refs[versions[i].Name] = versions[i].Descriptor
		}
	}
	for i := range versions {
		if versions[i].Name == "github.com/acme/app" {
			versions[i].Descriptor = addDigests(t, versions[i], refs)
		}
	}
	return versions
}

func rsaKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// With verification, a signed version installs; a tampered descriptor, a
// tampered blob (of the root or of a referenced component), a wrong key,
// a missing signature or a signature name the provider does not know is
// a plan-time error, and nothing runs.
func TestAccInstallation_signatures(t *testing.T) {
	key, other := rsaKey(t), rsaKey(t)
	provider := func(reg *ocitest.Registry, pub string) string {
		return fmt.Sprintf(`repository_context = { type = "OCIRegistry", baseUrl = "%s/ocm" }
  verification_signatures = { acme = { public_key = %q } }`, reg.Host, pub)
	}
	const verify = `}
  verification = { signature_name = "acme" `

	t.Run("valid", func(t *testing.T) {
		for _, algo := range []string{signing.AlgorithmRSAPKCS1v15, signing.AlgorithmRSAPSS} {
			for _, norm := range []string{signing.JSONNormalisationV1, signing.JSONNormalisationV2} {
				reg := ocitest.Start(t, ocitest.Options{CA: registryCA})
				pushAll(t, reg, ocitest.OCM, signedExample(t, key, algo, norm))
				resource.Test(t, resource.TestCase{
					ProtoV6ProviderFactories: protoV6ProviderFactories,
					Steps: []resource.TestStep{{
						Config:            withCache(t, exampleInstallation(provider(reg, signtest.PublicKeyPEM(key)), verify)),
						ConfigStateChecks: exampleExports,
					}},
				})
			}
		}
	})

	tamper := map[string]struct {
		versions func() []acctest.PublishedVersion
		pub      string
		sigName  string
		want     string
	}{
		"wrong key": {versions: func() []acctest.PublishedVersion { return signedExample(t, key, "", "") }, pub: signtest.PublicKeyPEM(other),
			want: `(?s)Invalid blueprint source.*verification = {.*signature "acme" is not valid for the key`},
		"unsigned": {versions: func() []acctest.PublishedVersion { return exampleComponent(t, false) },
			want: `(?s)signature "acme": the component version is not signed`},
		"tampered descriptor": {versions: func() []acctest.PublishedVersion {
			v := signedExample(t, key, "", "")
			v[0].Descriptor = []byte(strings.Replace(string(v[0].Descriptor), "name: monitoring", "name: monitor", 1))
			return v
		}, want: `(?s)modified after signing`},
		"tampered blob": {versions: func() []acctest.PublishedVersion {
			// Another blueprint in the blueprint's place: the access is not
			// signed (a transfer rewrites it), so the descriptor still
			// verifies; the blob's recorded digest does not.
			v := signedExample(t, key, "", "")
			other := exampleComponent(t, false)[1].Blobs[0]
			v[0].Descriptor = []byte(strings.Replace(string(v[0].Descriptor), "localReference: "+v[0].Blobs[0].Digest, "localReference: "+other.Digest, 1))
			v[0].Blobs[0] = other
			return v
		}, want: `(?s)resource "blueprint" does not match the digest its signed descriptor records`},
		"tampered referenced component": {versions: func() []acctest.PublishedVersion {
			v := signedExample(t, key, "", "")
			v[1].Descriptor = []byte(strings.Replace(string(v[1].Descriptor), "relation: local", "relation: external", 1))
			return v
		}, want: `(?s)github.com/acme/monitoring:v2.1.0 does not match the digest recorded by reference "monitoring"`},
		"unknown signature name": {versions: func() []acctest.PublishedVersion { return signedExample(t, key, "", "") }, sigName: "nobody",
			want: `(?s)signature "nobody" is not in the provider's verification_signatures \(acme\)`},
	}
	for name, tc := range tamper {
		t.Run(name, func(t *testing.T) {
			reg := ocitest.Start(t, ocitest.Options{CA: registryCA})
			pushAll(t, reg, ocitest.OCM, tc.versions())
			pub := tc.pub
			if pub == "" {
				pub = signtest.PublicKeyPEM(key)
			}
			v := verify
			if tc.sigName != "" {
				v = strings.Replace(verify, `"acme"`, fmt.Sprintf("%q", tc.sigName), 1)
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      withCache(t, exampleInstallation(provider(reg, pub), v)),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(strings.ReplaceAll(strings.ReplaceAll(tc.want, " ", `\s+`), "{", `\{`)),
				}},
			})
		})
	}
}

// Landscaper's component overwrites: the root's reference to monitoring
// v2.1.0 is redirected to v2.2.0, which only the registry holds.
func TestAccInstallation_componentOverwrites(t *testing.T) {
	reg := ocitest.Start(t, ocitest.Options{CA: registryCA})
	versions := exampleComponent(t, false)
	pushAll(t, reg, ocitest.OCM, versions[:1])
	mon := versions[1]
	mon.Version = "v2.2.0"
	mon.Descriptor = []byte(strings.ReplaceAll(string(mon.Descriptor), "version: v2.1.0", "version: v2.2.0"))
	pushAll(t, reg, ocitest.OCM, []acctest.PublishedVersion{mon})
	cfg := withCache(t, exampleInstallation(fmt.Sprintf(`repository_context = { type = "OCIRegistry", baseUrl = "%s/ocm" }
  component_overwrites = [
    { component = { componentName = "github.com/acme/monitoring", version = "v2.1.0" }, substitution = { version = "v2.2.0" } },
    { component = { componentName = "github.com/acme/monitoring" }, substitution = { version = "v9.9.9" } },
  ]`, reg.Host), ""))
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps:                    []resource.TestStep{{Config: cfg, ConfigStateChecks: exampleExports}},
	})
}
