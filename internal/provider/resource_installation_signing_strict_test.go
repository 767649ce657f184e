package provider

import (
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ctf/ctftest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing/signtest"
)

// evilBlueprint is a blueprint with the example's imports whose one exec
// item creates marker: what an attacker would like a verified installation
// to run.
func evilBlueprint(t *testing.T, marker string) acctest.PublishedBlob {
	t.Helper()
	dir := t.TempDir()
	bp := filepath.Join(dir, "blueprint")
	if err := os.MkdirAll(bp, 0o755); err != nil {
		t.Fatal(err)
	}
	acctest.WriteFile(t, filepath.Join(bp, "blueprint.yaml"), fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: environment, type: data, schema: {type: string}}
  - {name: replicas, type: data, schema: {type: integer}}
  - {name: scripts, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: evil
          type: exec
          config:
            command: ["sh", "-c", "touch %s"]
`, marker))
	constructor := filepath.Join(dir, "component-constructor.yaml")
	acctest.WriteFile(t, constructor, fmt.Sprintf(`components:
  - name: github.com/acme/app
    version: v1.0.0
    provider: {name: acme}
    resources:
      - name: blueprint
        type: landscaper.gardener.cloud/blueprint
        input: {type: dir, path: %q, compress: true, mediaType: application/vnd.gardener.landscaper.blueprint.v1+tar+gzip}
`, bp))
	return acctest.Publish(t, false, constructor)[0].Blobs[0]
}

// decodeYAML reads a descriptor into generic values.
func decodeYAML(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func encodeJSON(t *testing.T, doc map[string]any) []byte {
	t.Helper()
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// redirected returns resources (a descriptor's list) with the blueprint's
// access and digest pointing at blob.
func redirected(t *testing.T, resources any, blob acctest.PublishedBlob) []any {
	t.Helper()
	data, err := json.Marshal(resources)
	if err != nil {
		t.Fatal(err)
	}
	var out []any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	for _, r := range out {
		m, _ := r.(map[string]any)
		if m["name"] != "blueprint" {
			continue
		}
		m["access"] = map[string]any{"type": "localBlob", "localReference": blob.Digest, "mediaType": blob.MediaType}
		m["digest"] = map[string]any{"hashAlgorithm": "SHA-256", "normalisationAlgorithm": signing.GenericBlobDigestV1, "value": signtest.Digest(blob.Data)}
	}
	return out
}

// signedV3Example is signedExample with the root stored in schema v3.
func signedV3Example(t *testing.T, key *rsa.PrivateKey, normalisation string) []acctest.PublishedVersion {
	t.Helper()
	versions := digestedExample(t)
	for i := range versions {
		if versions[i].Name != "github.com/acme/app" {
			continue
		}
		comp, _ := decodeYAML(t, versions[i].Descriptor)["component"].(map[string]any)
		provider := comp["provider"]
		if s, ok := provider.(string); ok {
			provider = map[string]any{"name": s}
		}
		v3 := map[string]any{"apiVersion": "ocm.software/v3alpha1", "kind": "ComponentVersion",
			"metadata":           map[string]any{"name": comp["name"], "version": comp["version"], "provider": provider},
			"repositoryContexts": comp["repositoryContexts"],
			"spec":               map[string]any{"resources": comp["resources"], "references": comp["componentReferences"]},
		}
		signed, err := signtest.Sign(encodeJSON(t, v3), signtest.Options{Name: "acme", Key: key, Normalisation: normalisation})
		if err != nil {
			t.Fatal(err)
		}
		versions[i].Descriptor = signed
	}
	return versions
}

// A signed descriptor with a second resource list under a key Go's JSON
// decoder folds onto "resources" (v2) or a second spec under one folded
// onto "spec" (v3) verified before, and the provider ran the added
// blueprint. Now it is a plan-time error naming the key, and the added
// blueprint's item never runs.
func TestAccInstallation_signatureFoldedKeys(t *testing.T) {
	key := rsaKey(t)
	cases := map[string]struct {
		versions func(marker string) []acctest.PublishedVersion
		want     string
	}{
		"v2 reſources": {versions: func(marker string) []acctest.PublishedVersion {
			evil := evilBlueprint(t, marker)
			v := signedExample(t, key, "", signing.JSONNormalisationV2)
			doc := decodeYAML(t, v[0].Descriptor)
			comp, _ := doc["component"].(map[string]any)
			comp["reſources"] = redirected(t, comp["resources"], evil)
			v[0].Descriptor, v[0].Blobs = encodeJSON(t, doc), append(v[0].Blobs, evil)
			return v
		}, want: `key "reſources" in component differs from the schema's "resources" only by case or Unicode folding`},
		"v3 ſpec": {versions: func(marker string) []acctest.PublishedVersion {
			evil := evilBlueprint(t, marker)
			v := signedV3Example(t, key, signing.JSONNormalisationV3)
			doc := decodeYAML(t, v[0].Descriptor)
			spec, _ := doc["spec"].(map[string]any)
			doc["ſpec"] = map[string]any{"resources": redirected(t, spec["resources"], evil), "references": spec["references"]}
			v[0].Descriptor, v[0].Blobs = encodeJSON(t, doc), append(v[0].Blobs, evil)
			return v
		}, want: `key "ſpec" at the top level differs from the schema's "spec" only by case or Unicode folding`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "evil-ran")
			reg := ocitest.Start(t, ocitest.Options{CA: registryCA})
			pushAll(t, reg, ocitest.OCM, tc.versions(marker))
			cfg := exampleInstallation(fmt.Sprintf(`repository_context = { type = "OCIRegistry", baseUrl = "%s/ocm" }
  verification_signatures = { acme = { public_key = %q } }`, reg.Host, signtest.PublicKeyPEM(key)), `}
  verification = { signature_name = "acme" `)
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{{
					// An apply: the error comes from its plan.
					Config:      withCache(t, cfg),
					ExpectError: regexp.MustCompile(strings.ReplaceAll(regexp.QuoteMeta(tc.want), " ", `\s+`)),
				}},
			})
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the added blueprint's item ran")
			}
		})
	}
	// The same descriptors, untampered, verify and install.
	for name, versions := range map[string][]acctest.PublishedVersion{
		"v2": signedExample(t, key, "", signing.JSONNormalisationV2),
		"v3": signedV3Example(t, key, signing.JSONNormalisationV3),
	} {
		t.Run("untampered "+name, func(t *testing.T) {
			reg := ocitest.Start(t, ocitest.Options{CA: registryCA})
			pushAll(t, reg, ocitest.OCM, versions)
			cfg := exampleInstallation(fmt.Sprintf(`repository_context = { type = "OCIRegistry", baseUrl = "%s/ocm" }
  verification_signatures = { acme = { public_key = %q } }`, reg.Host, signtest.PublicKeyPEM(key)), `}
  verification = { signature_name = "acme" `)
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps:                    []resource.TestStep{{Config: withCache(t, cfg), ConfigStateChecks: exampleExports}},
			})
		})
	}
}

// A FIFO in a CTF directory (as its index or as a blob) is refused at
// once with an error naming it; before, the plan waited for a writer.
func TestAccInstallation_ctfFIFO(t *testing.T) {
	versions := exampleComponent(t, false)
	files := ctftest.Files(t, ctfVersions(versions)...)
	blueprint := "blobs/" + strings.Replace(versions[0].Blobs[0].Digest, ":", ".", 1)
	if _, ok := files[blueprint]; !ok || versions[0].Name != "github.com/acme/app" {
		t.Fatalf("the root's blueprint is not %s", blueprint)
	}
	for name, p := range map[string]string{"index": "artifact-index.json", "blob": blueprint} {
		t.Run(name, func(t *testing.T) {
			dir := ctftest.WriteDir(t, filepath.Join(t.TempDir(), "ctf"), files)
			f := filepath.Join(dir, filepath.FromSlash(p))
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(f, 0o600); err != nil {
				t.Fatal(err)
			}
			resource.ParallelTest(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				Steps: []resource.TestStep{{
					Config:      withCache(t, exampleInstallation("", fmt.Sprintf("repository = %q", dir))),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(`(?s)` + regexp.QuoteMeta(filepath.Base(p)) + `\s+is\s+not\s+a\s+regular\s+file`),
				}},
			})
		})
	}
}
