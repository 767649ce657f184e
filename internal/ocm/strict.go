package ocm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// A descriptor is read once, strictly, into generic values; the parser
// decodes its structs from those values and the signature check
// normalises them. Go's JSON decoder matches struct fields by case- and
// Unicode-folding ("reſources" fills Resources), while a normaliser reads
// exact keys, so any key the two could read differently is refused here:
// a duplicate key, a key that equals a schema key only by folding, and an
// unknown key in a part that is signed.

// shape is what the schema says about a value: the keys an object may
// hold (a nil shape for a key means any content), whether other keys are
// refused, and whether the value is a list of such objects.
type shape struct {
	fields map[string]*shape
	// strict refuses keys outside fields; otherwise they are kept and
	// ignored, as OCM ignores them.
	strict bool
	list   bool
}

func obj(strict bool, fields map[string]*shape) *shape {
	return &shape{fields: fields, strict: strict}
}

func listOf(s *shape) *shape { c := *s; c.list = true; return &c }

var (
	digestShape = obj(true, map[string]*shape{"hashAlgorithm": nil, "normalisationAlgorithm": nil, "value": nil})
	// A label's name, version, value and signing flag are signed (when
	// signing is true); access, digest and merge are OCM's unsigned
	// extensions.
	labelsShape   = listOf(obj(true, map[string]*shape{"name": nil, "value": nil, "version": nil, "signing": nil, "access": nil, "digest": nil, "merge": nil}))
	providerShape = obj(true, map[string]*shape{"name": nil, "labels": labelsShape})
	// Elements: OCM's and the legacy component-spec's keys. access,
	// srcRefs (srcRef in component-spec) and referenceHints are not signed
	// and stay open.
	resourceShape = obj(true, map[string]*shape{"name": nil, "version": nil, "type": nil, "relation": nil, "extraIdentity": nil,
		"labels": labelsShape, "srcRefs": nil, "srcRef": nil, "referenceHints": nil, "access": nil, "digest": digestShape})
	sourceShape = obj(true, map[string]*shape{"name": nil, "version": nil, "type": nil, "extraIdentity": nil,
		"labels": labelsShape, "referenceHints": nil, "access": nil})
	referenceShape = obj(true, map[string]*shape{"name": nil, "componentName": nil, "version": nil, "extraIdentity": nil,
		"labels": labelsShape, "digest": digestShape})
	// Signatures are not signed; only folded keys are refused there.
	signaturesShape = listOf(obj(false, map[string]*shape{"name": nil, "digest": obj(false, digestShape.fields),
		"signature": obj(false, map[string]*shape{"algorithm": nil, "value": nil, "mediaType": nil, "issuer": nil}),
		"timestamp": obj(false, map[string]*shape{"value": nil, "time": nil})}))

	// The top level of a descriptor is not signed as a whole; keys other
	// than these are ignored by OCM and here (folded ones are refused).
	v2Shape = obj(false, map[string]*shape{
		"meta": obj(true, map[string]*shape{"schemaVersion": nil}),
		"component": obj(true, map[string]*shape{"name": nil, "version": nil, "provider": providerShape, "labels": labelsShape,
			"creationTime": nil, "repositoryContexts": nil, "sources": listOf(sourceShape),
			"componentReferences": listOf(referenceShape), "resources": listOf(resourceShape)}),
		"signatures":    signaturesShape,
		"nestedDigests": nil,
	})
	v3Shape = obj(false, map[string]*shape{
		"apiVersion": nil, "kind": nil,
		"metadata": obj(true, map[string]*shape{"name": nil, "version": nil, "provider": providerShape, "labels": labelsShape,
			"creationTime": nil}),
		"repositoryContexts": nil,
		"spec": obj(true, map[string]*shape{"resources": listOf(resourceShape), "sources": listOf(sourceShape),
			"references": listOf(referenceShape)}),
		"signatures":    signaturesShape,
		"nestedDigests": nil,
	})
)

// readValues reads a descriptor (YAML or JSON) into generic JSON values
// (numbers as json.Number) and its JSON text, refusing duplicate keys.
func readValues(data []byte) (map[string]any, []byte, error) {
	js, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	v, err := readValue(dec, "")
	if err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, errors.New("data after the descriptor")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, errors.New("the descriptor is not an object")
	}
	return m, js, nil
}

// readValue reads one value token by token, so that a key given twice is
// seen (decoding into a map keeps the last one silently).
func readValue(dec *json.Decoder, path string) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				if _, dup := m[k]; dup {
					return nil, fmt.Errorf("key %q is given twice%s", k, at(path))
				}
				if m[k], err = readValue(dec, join(path, k)); err != nil {
					return nil, err
				}
			}
			_, err := dec.Token()
			return m, err
		case '[':
			l := []any{}
			for i := 0; dec.More(); i++ {
				e, err := readValue(dec, path+"["+strconv.Itoa(i)+"]")
				if err != nil {
					return nil, err
				}
				l = append(l, e)
			}
			_, err := dec.Token()
			return l, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func at(path string) string {
	if path == "" {
		return " at the top level"
	}
	return " in " + path
}

// checkShape walks v along s and returns the first key the schema does
// not allow, naming it and its path. Values of another type than the
// schema's are left to the struct decoder, which refuses them.
func checkShape(v any, s *shape, path string) error {
	if s == nil || v == nil {
		return nil
	}
	if s.list {
		l, ok := v.([]any)
		if !ok {
			return nil
		}
		e := *s
		e.list = false
		for i, x := range l {
			if err := checkShape(x, &e, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sub, known := s.fields[k]
		if known {
			if err := checkShape(m[k], sub, join(path, k)); err != nil {
				return err
			}
			continue
		}
		if f := foldedField(s, k); f != "" {
			return fmt.Errorf("key %q%s differs from the schema's %q only by case or Unicode folding", k, at(path), f)
		}
		if s.strict {
			return fmt.Errorf("key %q%s is not in the descriptor schema (known: %s)", k, at(path), strings.Join(fieldNames(s), ", "))
		}
	}
	return nil
}

// foldedField returns the schema key that k equals under the folding Go's
// JSON decoder applies, or "".
func foldedField(s *shape, k string) string {
	for f := range s.fields {
		if strings.EqualFold(f, k) {
			return f
		}
	}
	return ""
}

func fieldNames(s *shape) []string {
	out := make([]string, 0, len(s.fields))
	for f := range s.fields {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}
