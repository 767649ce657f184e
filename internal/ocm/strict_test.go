package ocm

import (
	"strings"
	"testing"
)

const strictV2 = `meta:
  schemaVersion: v2
component:
  name: github.com/acme/app
  version: 1.0.0
  provider: acme
  repositoryContexts: [{type: OCIRegistry, baseUrl: ghcr.io/acme/ocm, anyKey: kept}]
  sources: [{name: src, version: 1.0.0, type: git, access: {type: gitHub, repoUrl: x}}]
  componentReferences: [{name: dep, componentName: github.com/acme/dep, version: 1.0.0}]
  labels: [{name: team, value: a, signing: true}]
  resources:
  - name: blueprint
    version: 1.0.0
    type: blueprint
    relation: local
    access: {type: localBlob, localReference: "sha256:aa", someFutureKey: 1}
    digest: {hashAlgorithm: SHA-256, normalisationAlgorithm: genericBlobDigest/v1, value: aa}
signatures:
- name: acme
  digest: {hashAlgorithm: SHA-256, normalisationAlgorithm: jsonNormalisation/v3, value: aa}
  signature: {algorithm: RSASSA-PSS, value: aa, mediaType: application/vnd.ocm.signature.rsa}
`

const strictV3 = `apiVersion: ocm.software/v3alpha1
kind: ComponentVersion
metadata:
  name: github.com/acme/app
  version: 1.0.0
  provider: {name: acme, labels: [{name: l, value: 1}]}
repositoryContexts: []
spec:
  references: [{name: dep, componentName: github.com/acme/dep, version: 1.0.0}]
  resources:
  - name: blueprint
    version: 1.0.0
    type: blueprint
    relation: local
    access: {type: localBlob, localReference: "sha256:aa"}
`

// The keys that Go's JSON decoder would have folded onto the schema's, or
// that a normaliser reading exact keys would have read differently, are
// errors naming the key and where it is.
func TestStrictKeys(t *testing.T) {
	if _, err := ParseDescriptor([]byte(strictV2)); err != nil {
		t.Fatalf("v2: %v", err)
	}
	if _, err := ParseDescriptor([]byte(strictV3)); err != nil {
		t.Fatalf("v3: %v", err)
	}
	cases := []struct {
		name, base, old, new, want string
	}{
		{"long s in resources", strictV2, "  resources:\n", "  reſources: []\n  resources:\n",
			`key "reſources" in component differs from the schema's "resources" only by case or Unicode folding`},
		{"long s in references", strictV2, "  componentReferences:", "  componentReferenceſ: []\n  componentReferences:",
			`key "componentReferenceſ" in component differs from the schema's "componentReferences"`},
		{"long s in spec", strictV3, "spec:\n", "ſpec: {}\nspec:\n",
			`key "ſpec" at the top level differs from the schema's "spec"`},
		{"Kelvin sign in kind", strictV3, "kind:", "\u212Aind: x\nkind:", "key \"\u212Aind\" at the top level differs from the schema's \"kind\""},
		{"case", strictV2, "    relation: local\n", "    relation: local\n    Relation: external\n",
			`key "Relation" in component.resources[0] differs from the schema's "relation"`},
		{"folded signing flag", strictV2, "signing: true}", "signing: true, ſigning: false}",
			`key "ſigning" in component.labels[0] differs`},
		{"folded digest field", strictV2, "digest: {hashAlgorithm", "digest: {Value: bb, hashAlgorithm",
			`key "Value" in component.resources[0].digest differs from the schema's "value"`},
		{"folded provider labels", strictV3, "labels: [{name: l", "labelſ: [], labels: [{name: l",
			`key "labelſ" in metadata.provider differs`},
		{"unknown key in a resource", strictV2, "    relation: local\n", "    relation: local\n    image: evil\n",
			`key "image" in component.resources[0] is not in the descriptor schema`},
		{"unknown key in the component", strictV2, "  version: 1.0.0\n  provider", "  version: 1.0.0\n  extra: x\n  provider",
			`key "extra" in component is not in the descriptor schema`},
		{"unknown key in spec", strictV3, "spec:\n", "spec:\n  componentReferences: []\n",
			`key "componentReferences" in spec is not in the descriptor schema`},
		{"duplicate key", strictV2, "  provider: acme\n", "  provider: acme\n  provider: evil\n", `"provider" already set`},
		{"folded meta", strictV2, "meta:\n  schemaVersion: v2\n", "Meta:\n  schemaVersion: v2\n", `key "Meta" at the top level differs from the schema's "meta"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := strings.Replace(c.base, c.old, c.new, 1)
			if raw == c.base {
				t.Fatal("the case changes nothing")
			}
			_, err := ParseDescriptor([]byte(raw))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if _, _, err := DescriptorValues([]byte(raw)); err == nil {
				t.Fatal("DescriptorValues accepts it")
			}
		})
	}
	// Duplicate keys in JSON text, and keys that only JSON escapes make
	// equal, are seen as well.
	for _, raw := range []string{
		`{"meta":{"schemaVersion":"v2"},"component":{"name":"a","name":"b","version":"1"}}`,
		`{"meta":{"schemaVersion":"v2"},"component":{"name":"a","n\u0061me":"b","version":"1"}}`,
	} {
		if _, err := ParseDescriptor([]byte(raw)); err == nil || !strings.Contains(err.Error(), `"name"`) {
			t.Fatalf("%s: %v", raw, err)
		}
	}
}

// Unsigned parts stay open where OCM lets them carry more: accesses,
// repository contexts, label extensions, unknown top-level keys.
func TestStrictKeepsOpenParts(t *testing.T) {
	raw := strings.Replace(strictV2, "signing: true}", "signing: true, merge: {algorithm: default}, access: {type: x}}", 1)
	raw = strings.Replace(raw, "meta:\n", "nestedDigests: []\nx-tool-info: {a: 1}\nmeta:\n", 1)
	raw = strings.Replace(raw, "    relation: local\n", "    relation: local\n    srcRefs: [{identitySelector: {name: src}}]\n    referenceHints: [{reference: x}]\n", 1)
	d, err := ParseDescriptor([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if d.Component.Resources[0].Access["someFutureKey"] == nil || d.Component.RepositoryContexts[0]["anyKey"] != "kept" {
		t.Fatalf("open parts lost: %+v", d.Component)
	}
}
