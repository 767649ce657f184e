package signing_test

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing"
)

// attackV2 and attackV3 are signed descriptors with a second resource list
// under a key that Go's JSON decoder folds onto the real one: the
// normaliser reads "resources", the parser took the later key. They are
// the fuzz seeds' attack cases.
const attackV2 = `{"meta":{"schemaVersion":"v2"},"component":{"name":"github.com/acme/app","version":"1.0.0","provider":"acme",
"repositoryContexts":[],"sources":[],"componentReferences":[],
"resources":[{"name":"blueprint","version":"1.0.0","type":"blueprint","relation":"local","access":{"type":"localBlob","localReference":"sha256:aa"},
"digest":{"hashAlgorithm":"SHA-256","normalisationAlgorithm":"genericBlobDigest/v1","value":"aa"}}],
"reſources":[{"name":"blueprint","version":"1.0.0","type":"blueprint","relation":"local","access":{"type":"localBlob","localReference":"sha256:bb"},
"digest":{"hashAlgorithm":"SHA-256","normalisationAlgorithm":"genericBlobDigest/v1","value":"bb"}}]}}`

const attackV3 = `{"apiVersion":"ocm.software/v3alpha1","kind":"ComponentVersion",
"metadata":{"name":"github.com/acme/app","version":"1.0.0","provider":{"name":"acme"}},
"spec":{"resources":[{"name":"blueprint","version":"1.0.0","type":"blueprint","relation":"local","access":{"type":"localBlob","localReference":"sha256:aa"}}]},
"ſpec":{"resources":[{"name":"blueprint","version":"1.0.0","type":"blueprint","relation":"local","access":{"type":"localBlob","localReference":"sha256:bb"}}]}}`

// seeds are descriptors and their attack variants: folded keys (ſ for s,
// the Kelvin sign for k, case), duplicate keys, unknown keys in signed
// and unsigned parts, v2 and v3.
func seeds(t testing.TB) []string {
	guided, err := os.ReadFile("testdata/guided-tour-signed-by-component-spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ocmSigned, err := os.ReadFile("testdata/ocm-signed-v3-sigstore.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var vectors struct{ Cases []struct{ Descriptor string } }
	data, err := os.ReadFile("testdata/ocm-normalisation-vectors.json")
	if err == nil {
		err = json.Unmarshal(data, &vectors)
	}
	if err != nil {
		t.Fatal(err)
	}
	base := string(descriptor())
	out := []string{
		signing.CD1, signing.LegacyCD, string(guided), string(ocmSigned), base, attackV2, attackV3,
		strings.Replace(attackV2, `"reſources"`, `"Resources"`, 1),
		strings.Replace(attackV2, `"reſources"`, `"resources"`, 1),
		strings.Replace(attackV2, `"reſources"`, `"componentReferenceſ"`, 1),
		strings.Replace(attackV2, `"reſources"`, `"x-resources"`, 1),
		strings.Replace(attackV3, `"kind"`, "\"\u212Aind\"", 1),
		strings.Replace(attackV3, `"ſpec"`, `"Spec"`, 1),
		strings.Replace(attackV3, `"ſpec"`, `"extra"`, 1),
		strings.Replace(base, "relation: local", "relation: local\n    reſources: x", 1),
		strings.Replace(base, "labels: [{name: team, value: a}]", "labels: [{name: team, value: a, ſigning: true}]", 1),
		strings.Replace(base, "labels: [{name: team, value: a}]", "labels: [{name: team, value: a, merge: {algorithm: default}}]", 1),
		strings.Replace(base, "access: {type: localBlob,", "access: {type: localBlob, anyKey: 1,", 1),
		strings.Replace(base, "provider: acme", "provider: acme\n  provider: evil", 1),
		strings.Replace(base, "digest: {hashAlgorithm: SHA-256,", "digest: {haſhAlgorithm: x, hashAlgorithm: SHA-256,", 1),
	}
	for _, c := range vectors.Cases {
		out = append(out, c.Descriptor)
	}
	return out
}

// FuzzNormaliserAndParserAgree is the differential test between what is
// signed and what is used: for any input ocm.ParseDescriptor accepts, the
// descriptor it returns holds exactly what the stored text holds under the
// schema's exact keys (the keys the normaliser reads); and the normaliser
// refuses what the parser refuses.
func FuzzNormaliserAndParserAgree(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		_, _, verr := ocm.DescriptorValues(raw)
		for _, algo := range []string{signing.JSONNormalisationV1, signing.JSONNormalisationV2, signing.JSONNormalisationV3} {
			if _, err := signing.Normalise(raw, algo); verr != nil && err == nil {
				t.Fatalf("%s normalises a descriptor the parser refuses (%v)", algo, verr)
			}
		}
		d, err := ocm.ParseDescriptor(raw)
		if err != nil {
			return
		}
		js, err := yaml.YAMLToJSON(raw)
		if err != nil {
			t.Fatalf("parsed, but not YAML: %v", err)
		}
		var stored map[string]any
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.UseNumber()
		if err := dec.Decode(&stored); err != nil {
			t.Fatalf("parsed, but not a JSON object: %v", err)
		}
		want, got := project(stored), project(d.Generic())
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("the parser read another descriptor than the stored one:\nstored %#v\nparsed %#v", want, got)
		}
	})
}

// view is what the provider uses of a descriptor, read with exact keys,
// with absent, null and empty values alike.
type view struct {
	Name, Version, Provider, CreationTime string
	Labels                                []labelView
	RepositoryContexts                    string
	Resources, Sources, References        []elemView
	Signatures                            []sigView
}

type labelView struct {
	Name, Version, Value string
	Signing              bool
}

type elemView struct {
	Name, Version, Type, Relation, ComponentName string
	ExtraIdentity                                map[string]string
	Labels                                       []labelView
	Access, SrcRefs                              string
	Digest                                       *[3]string
}

type sigView struct {
	Name                                string
	Digest                              [3]string
	Algorithm, Value, MediaType, Issuer string
}

func project(doc map[string]any) view {
	var v view
	comp, spec := m(doc["component"]), m(doc["component"])
	refs := "componentReferences"
	v.RepositoryContexts = listText(comp["repositoryContexts"])
	if doc["meta"] == nil {
		comp, spec, refs = m(doc["metadata"]), m(doc["spec"]), "references"
		v.RepositoryContexts = listText(doc["repositoryContexts"])
	}
	v.Name, v.Version, v.CreationTime = s(comp["name"]), s(comp["version"]), s(comp["creationTime"])
	switch p := comp["provider"].(type) {
	case string:
		v.Provider = p
		var o map[string]any
		if json.Unmarshal([]byte(p), &o) == nil {
			v.Provider = "json:" + s(o["name"])
		}
	case map[string]any:
		v.Provider = s(p["name"])
	}
	v.Labels = labels(comp["labels"])
	v.Resources, v.Sources, v.References = elems(spec["resources"]), elems(spec["sources"]), elems(spec[refs])
	v.Signatures = []sigView{}
	for _, e := range l(doc["signatures"]) {
		sig, dg := m(m(e)["signature"]), m(m(e)["digest"])
		v.Signatures = append(v.Signatures, sigView{Name: s(m(e)["name"]),
			Digest:    [3]string{s(dg["hashAlgorithm"]), s(dg["normalisationAlgorithm"]), s(dg["value"])},
			Algorithm: s(sig["algorithm"]), Value: s(sig["value"]), MediaType: s(sig["mediaType"]), Issuer: s(sig["issuer"])})
	}
	return v
}

func elems(list any) []elemView {
	out := []elemView{}
	for _, x := range l(list) {
		e := m(x)
		ev := elemView{Name: s(e["name"]), Version: s(e["version"]), Type: s(e["type"]), Relation: s(e["relation"]),
			ComponentName: s(e["componentName"]), Labels: labels(e["labels"]), Access: text(e["access"]), SrcRefs: text(e["srcRefs"]),
			ExtraIdentity: map[string]string{}}
		for k, val := range m(e["extraIdentity"]) {
			ev.ExtraIdentity[k] = s(val)
		}
		if d := m(e["digest"]); d != nil {
			ev.Digest = &[3]string{s(d["hashAlgorithm"]), s(d["normalisationAlgorithm"]), s(d["value"])}
		}
		out = append(out, ev)
	}
	return out
}

func labels(list any) []labelView {
	out := []labelView{}
	for _, x := range l(list) {
		lm := m(x)
		sg, _ := lm["signing"].(bool)
		out = append(out, labelView{Name: s(lm["name"]), Version: s(lm["version"]), Value: text(lm["value"]), Signing: sg})
	}
	return out
}

func m(v any) map[string]any { r, _ := v.(map[string]any); return r }
func l(v any) []any          { r, _ := v.([]any); return r }
func s(v any) string         { r, _ := v.(string); return r }

// text is a value's JSON, with absent and null alike.
func text(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return "!" + err.Error()
	}
	return string(data)
}

// listText is a list's JSON, with absent, null and empty alike.
func listText(v any) string {
	if v == nil {
		v = []any{}
	}
	return text(v)
}
