// Package signing verifies the signatures of OCM component versions: the
// normalised descriptor digest (jsonNormalisation/v1, /v2 and /v3), RSA
// signatures (PKCS#1 v1.5 and PSS) checked with a public key or a
// CA-issued certificate, and the digests that a signed descriptor records
// for its resources and references.
package signing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// Normalisation algorithms.
const (
	JSONNormalisationV1 = "jsonNormalisation/v1"
	JSONNormalisationV2 = "jsonNormalisation/v2"
	JSONNormalisationV3 = "jsonNormalisation/v3"
)

// Normalise returns the normalised form of a stored descriptor (raw, in
// its stored schema) that its digest is computed over. It normalises the
// values ocm.ParseDescriptor parses the descriptor from, so a descriptor
// the provider would read differently from what was signed is refused
// rather than verified.
func Normalise(raw []byte, algorithm string) ([]byte, error) {
	doc, schema, err := ocm.DescriptorValues(raw)
	if err != nil {
		return nil, err
	}
	switch algorithm {
	case JSONNormalisationV1:
		if schema != ocm.SchemaV2 {
			return nil, errors.New("jsonNormalisation/v1 applies to descriptors of schema v2 only")
		}
		// OCM applies its legacy identity defaulting for /v1 as for /v2.
		defaultVersionIntoExtraIdentity(doc)
		return entryNormalise(v1Prepare(doc))
	case JSONNormalisationV2, JSONNormalisationV3:
		internal := internalModel(doc, schema)
		if algorithm == JSONNormalisationV2 {
			defaultVersionIntoExtraIdentity(internal)
		}
		return canonicalJSON(v2Prepare(internal))
	}
	return nil, fmt.Errorf("normalisation algorithm %q is not supported (%s, %s, %s)", algorithm, JSONNormalisationV1, JSONNormalisationV2, JSONNormalisationV3)
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asList(v any) []any         { l, _ := v.([]any); return l }
func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}

// signingLabels keeps the labels with signing: true, and of them only the
// fields that are signed.
func signingLabels(v any) []any {
	var out []any
	for _, l := range asList(v) {
		m := asMap(l)
		if s, ok := m["signing"]; !ok || (s != true && s != "true") {
			continue
		}
		kept := map[string]any{}
		for _, k := range []string{"name", "version", "value", "signing"} {
			if x, ok := m[k]; ok {
				kept[k] = x
			}
		}
		out = append(out, kept)
	}
	return out
}

// filterLabels replaces m's labels by its signing labels, dropping them
// when none are left.
func filterLabels(m map[string]any) {
	if l := signingLabels(m["labels"]); len(l) > 0 {
		m["labels"] = l
	} else {
		delete(m, "labels")
	}
}

// SignsSources says whether a normalisation puts a descriptor's sources
// into the signed form: jsonNormalisation/v1, OCM's legacy one, does not,
// and an unknown one is assumed not to.
func SignsSources(normalisation string) bool {
	return normalisation == JSONNormalisationV2 || normalisation == JSONNormalisationV3
}

func noneAccess(res map[string]any) bool { return NoneAccess(res["access"]) }

// NoneAccess says whether an access (a resource's access value, as
// decoded) is "none", which every normalisation treats as no access: the
// resource's digest is then left out of the signed form, so whoever serves
// the descriptor chooses it.
func NoneAccess(access any) bool {
	acc := asMap(access)
	if acc == nil {
		return true
	}
	t, _ := acc["type"].(string)
	return strings.EqualFold(t, "none")
}

// v1Prepare applies OCM's exclusions for jsonNormalisation/v1 to a v2
// document: repository contexts, sources, accesses, source references,
// unsigned labels and signatures do not count.
func v1Prepare(doc map[string]any) map[string]any {
	out := map[string]any{}
	if meta := doc["meta"]; meta != nil {
		out["meta"] = meta
	}
	comp := map[string]any{}
	for k, v := range asMap(doc["component"]) {
		switch k {
		case "repositoryContexts", "sources":
		case "provider":
			if s, ok := v.(string); ok {
				var p map[string]any
				if json.Unmarshal([]byte(s), &p) == nil {
					filterLabels(p)
					v = p
				}
			}
			comp[k] = v
		default:
			comp[k] = v
		}
	}
	filterLabels(comp)
	for _, k := range []string{"resources", "componentReferences"} {
		if _, ok := comp[k]; ok {
			// The entry form writes an absent extra identity as null.
			comp[k] = prepareElements(comp[k], k == "resources", true)
		}
	}
	out["component"] = comp
	return out
}

// prepareElements applies the exclusions of resources and sources
// (accessed: their access, source references and, for a none access, the
// digest do not count) or of references, keeping signed labels only.
func prepareElements(list any, accessed, nullIdentity bool) []any {
	out := []any{}
	for _, e := range asList(list) {
		m := cloneMap(asMap(e))
		if accessed {
			if noneAccess(m) {
				delete(m, "digest")
			}
			delete(m, "access")
			delete(m, "srcRefs")
		}
		filterLabels(m)
		if _, ok := m["extraIdentity"]; !ok && nullIdentity {
			m["extraIdentity"] = nil
		}
		out = append(out, m)
	}
	return out
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// internalModel converts a stored descriptor, v2 or v3, into OCM's
// schema-independent model (as JSON values), which jsonNormalisation/v2
// and /v3 normalise.
func internalModel(doc map[string]any, schema string) map[string]any {
	comp := map[string]any{}
	switch schema {
	case ocm.SchemaV2:
		src := asMap(doc["component"])
		for _, k := range []string{"name", "version", "labels", "creationTime", "repositoryContexts", "sources", "componentReferences", "resources"} {
			if v, ok := src[k]; ok {
				comp[k] = v
			}
		}
		switch p := src["provider"].(type) {
		case string:
			var obj map[string]any
			if json.Unmarshal([]byte(p), &obj) == nil {
				comp["provider"] = obj
			} else {
				comp["provider"] = map[string]any{"name": p}
			}
		case map[string]any:
			comp["provider"] = p
		}
	default:
		meta := asMap(doc["metadata"])
		for _, k := range []string{"name", "version", "labels", "creationTime", "provider"} {
			if v, ok := meta[k]; ok {
				comp[k] = v
			}
		}
		if v, ok := doc["repositoryContexts"]; ok {
			comp["repositoryContexts"] = v
		}
		spec := asMap(doc["spec"])
		for from, to := range map[string]string{"resources": "resources", "sources": "sources", "references": "componentReferences"} {
			if v, ok := spec[from]; ok {
				comp[to] = v
			}
		}
	}
	// The internal model always has these lists.
	for _, k := range []string{"sources", "componentReferences", "resources"} {
		if comp[k] == nil {
			comp[k] = []any{}
		}
	}
	// Empty extra identities are omitted in the internal model.
	for _, k := range []string{"sources", "componentReferences", "resources"} {
		for _, e := range asList(comp[k]) {
			if m := asMap(e); m != nil && isEmpty(m["extraIdentity"]) {
				delete(m, "extraIdentity")
			}
		}
	}
	return map[string]any{"component": comp}
}

// defaultVersionIntoExtraIdentity is OCM's legacy defaulting for
// jsonNormalisation/v1 and /v2: resources that share name and extra identity get
// their version added to the extra identity.
func defaultVersionIntoExtraIdentity(doc map[string]any) {
	res := asList(asMap(doc["component"])["resources"])
	for i := range res {
		mi := asMap(res[i])
		for j := range res {
			mj := asMap(res[j])
			if i == j || mi["name"] != mj["name"] || !sameIdentity(asMap(mi["extraIdentity"]), asMap(mj["extraIdentity"])) {
				continue
			}
			eid := cloneMap(asMap(mi["extraIdentity"]))
			eid["version"] = mi["version"]
			mi["extraIdentity"] = eid
			break
		}
	}
}

func sameIdentity(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// v2Prepare applies OCM's exclusions for jsonNormalisation/v2 and /v3.
func v2Prepare(doc map[string]any) map[string]any {
	comp := cloneMap(asMap(doc["component"]))
	delete(comp, "repositoryContexts")
	if p := asMap(comp["provider"]); p != nil {
		p = cloneMap(p)
		filterLabels(p)
		comp["provider"] = p
	}
	filterLabels(comp)
	comp["resources"] = prepareElements(comp["resources"], true, false)
	comp["sources"] = prepareElements(comp["sources"], true, false)
	comp["componentReferences"] = prepareElements(comp["componentReferences"], false, false)
	return map[string]any{"component": comp}
}

// entryNormalise writes OCM's "entry" form: every map becomes a list of
// single-key maps sorted by key; lists keep their order.
func entryNormalise(v any) ([]byte, error) { return marshalSorted(v, true) }

// canonicalJSON writes JSON with sorted keys and no insignificant
// whitespace (RFC 8785 for the values descriptors hold).
func canonicalJSON(v any) ([]byte, error) { return marshalSorted(v, false) }

// marshalSorted writes v with map keys sorted, as JSON objects or, for
// entries, as lists of single-key objects.
func marshalSorted(v any, entries bool) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeSorted(&buf, v, entries); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeSorted(buf *bytes.Buffer, v any, entries bool) error {
	open, closing := byte('{'), byte('}')
	if entries {
		open, closing = '[', ']'
	}
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		buf.WriteByte(open)
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			if entries {
				buf.WriteByte('{')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			if err := writeSorted(buf, t[k], entries); err != nil {
				return err
			}
			if entries {
				buf.WriteByte('}')
			}
		}
		buf.WriteByte(closing)
	case []any:
		buf.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeSorted(buf, e, entries); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	default:
		return writeScalar(buf, v)
	}
	return nil
}

func writeString(buf *bytes.Buffer, s string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	buf.Write(bytes.TrimSuffix(b.Bytes(), []byte{'\n'}))
}

func writeScalar(buf *bytes.Buffer, v any) error {
	switch t := v.(type) {
	case string:
		writeString(buf, t)
	case json.Number, bool, nil, float64, int64, int:
		data, err := json.Marshal(t)
		if err != nil {
			return err
		}
		buf.Write(data)
	default:
		return fmt.Errorf("cannot normalise a value of type %T", v)
	}
	return nil
}
