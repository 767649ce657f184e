package kube

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Duration is Landscaper's duration: a Go duration string such as "5m".
type Duration struct {
	time.Duration
}

// UnmarshalJSON accepts a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration must be a string such as \"5m\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q", s)
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// DecodeObject decodes one manifest (JSON) into an object. Numbers become
// int64 or float64 as the API machinery expects. The object must name its
// apiVersion, kind and metadata.name.
func DecodeObject(raw json.RawMessage) (*unstructured.Unstructured, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, errors.New("manifest must be defined")
	}
	// The decoders' messages quote the manifest, which may hold secret
	// data, so the checks are made here and their messages name fields only.
	var head struct {
		APIVersion any `json:"apiVersion"`
		Kind       any `json:"kind"`
		Items      any `json:"items"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, errors.New("manifest is not a Kubernetes object")
	}
	if head.Items != nil {
		return nil, errors.New("manifest is a list; lists are expanded by ExpandManifests")
	}
	apiVersion, ok := head.APIVersion.(string)
	if !ok || apiVersion == "" {
		return nil, errors.New("manifest has no apiVersion")
	}
	if _, err := schema.ParseGroupVersion(apiVersion); err != nil {
		return nil, fmt.Errorf("manifest has an invalid apiVersion %q", apiVersion)
	}
	if kind, ok := head.Kind.(string); !ok || kind == "" {
		return nil, errors.New("manifest has no kind")
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, errors.New("manifest is not a Kubernetes object: its metadata is malformed")
	}
	if u.GetName() == "" {
		if u.GetGenerateName() != "" {
			return nil, fmt.Errorf("%s %q: metadata.generateName is not supported, objects must have a metadata.name", u.GetKind(), u.GetGenerateName())
		}
		return nil, fmt.Errorf("%s manifest has no metadata.name", u.GetKind())
	}
	return u, nil
}

// ExpandManifests replaces every manifest holding a v1 List (any object
// with an items array) by one manifest per item, each with the list's
// policy and hooks, as Landscaper does.
func ExpandManifests(ms []Manifest) ([]Manifest, error) {
	out := make([]Manifest, 0, len(ms))
	for i, m := range ms {
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(m.Manifest, &list); err != nil {
			return nil, fmt.Errorf("manifests[%d]: manifest is not an object", i)
		}
		if list.Items == nil {
			out = append(out, m)
			continue
		}
		for _, item := range list.Items {
			e := m
			e.Manifest = item
			out = append(out, e)
		}
	}
	return out, nil
}

// DecodeYAMLManifests splits a multi-document YAML stream (such as a
// rendered helm chart) into manifests as JSON, skipping empty documents and
// documents that are only comments.
func DecodeYAMLManifests(text []byte) ([]json.RawMessage, error) {
	r := utilyaml.NewYAMLReader(bufioReader(text))
	var out []json.RawMessage
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d is not YAML: %w", i, err)
		}
		js = bytes.TrimSpace(js)
		if len(js) == 0 || bytes.Equal(js, []byte("null")) {
			continue
		}
		out = append(out, js)
	}
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
