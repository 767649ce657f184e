package ocm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Schema versions of component descriptors.
const (
	SchemaV2 = "v2"
	// SchemaV3 is the apiVersion of OCM's v3 descriptor.
	SchemaV3      = "ocm.software/v3alpha1"
	schemaV3Alpha = "ocm.gardener.cloud/v3alpha1"
)

// MaxDescriptorSize bounds a descriptor read from a repository.
const MaxDescriptorSize = 4 << 20

// Descriptor is a component descriptor in the v2 model: the form
// Landscaper's templates see. A v3 descriptor is converted on parsing;
// Schema says which one was stored.
type Descriptor struct {
	Meta       Meta        `json:"meta"`
	Component  Component   `json:"component"`
	Signatures []Signature `json:"signatures,omitempty"`
	// Schema is the schema the descriptor was stored in (SchemaV2 or
	// SchemaV3).
	Schema string `json:"-"`
}

// Meta is the descriptor's meta block.
type Meta struct {
	SchemaVersion string `json:"schemaVersion"`
}

// Component is the component block of a v2 descriptor.
type Component struct {
	Name                string           `json:"name"`
	Version             string           `json:"version"`
	Provider            Provider         `json:"provider"`
	Labels              []Label          `json:"labels,omitempty"`
	CreationTime        string           `json:"creationTime,omitempty"`
	RepositoryContexts  []map[string]any `json:"repositoryContexts"`
	Sources             []Resource       `json:"sources"`
	ComponentReferences []Reference      `json:"componentReferences"`
	Resources           []Resource       `json:"resources"`
}

// Provider is a component's provider: a plain name in v2, an object with
// labels in v3.
type Provider struct {
	Name   string
	Labels []Label
}

// MarshalJSON writes the v2 form: the name as a string.
func (p Provider) MarshalJSON() ([]byte, error) { return json.Marshal(p.Name) }

// UnmarshalJSON accepts the string and the object form.
func (p *Provider) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*p = Provider{Name: s}
		return nil
	}
	var o struct {
		Name   string  `json:"name"`
		Labels []Label `json:"labels,omitempty"`
	}
	if err := json.Unmarshal(data, &o); err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	*p = Provider{Name: o.Name, Labels: o.Labels}
	return nil
}

// Label is an OCM label.
type Label struct {
	Name    string          `json:"name"`
	Value   json.RawMessage `json:"value"`
	Version string          `json:"version,omitempty"`
	Signing bool            `json:"signing,omitempty"`
}

// Resource is a resource or source of a component. Relation and SrcRefs
// are empty for sources.
type Resource struct {
	Name          string            `json:"name"`
	Version       string            `json:"version"`
	Type          string            `json:"type"`
	Relation      string            `json:"relation,omitempty"`
	ExtraIdentity map[string]string `json:"extraIdentity,omitempty"`
	Labels        []Label           `json:"labels,omitempty"`
	SrcRefs       json.RawMessage   `json:"srcRefs,omitempty"`
	Access        map[string]any    `json:"access"`
	Digest        *DigestSpec       `json:"digest,omitempty"`
}

// Reference is a reference to another component version.
type Reference struct {
	Name          string            `json:"name"`
	ComponentName string            `json:"componentName"`
	Version       string            `json:"version"`
	ExtraIdentity map[string]string `json:"extraIdentity,omitempty"`
	Labels        []Label           `json:"labels,omitempty"`
	Digest        *DigestSpec       `json:"digest,omitempty"`
}

// DigestSpec is a digest as descriptors record it.
type DigestSpec struct {
	HashAlgorithm          string `json:"hashAlgorithm"`
	NormalisationAlgorithm string `json:"normalisationAlgorithm"`
	Value                  string `json:"value"`
}

// Signature is one signature of a component version.
type Signature struct {
	Name      string        `json:"name"`
	Digest    DigestSpec    `json:"digest"`
	Signature SignatureSpec `json:"signature"`
	Timestamp *Timestamp    `json:"timestamp,omitempty"`
}

// SignatureSpec is the signature value and how it was made.
type SignatureSpec struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"value"`
	MediaType string `json:"mediaType"`
	Issuer    string `json:"issuer,omitempty"`
}

// Timestamp is an RFC 3161 timestamp of a signature.
type Timestamp struct {
	Value string `json:"value,omitempty"`
	Time  string `json:"time,omitempty"`
}

// ID names a component version.
type ID struct {
	Name    string
	Version string
}

func (id ID) String() string { return id.Name + ":" + id.Version }

// ID returns the descriptor's component name and version.
func (d *Descriptor) ID() ID { return ID{d.Component.Name, d.Component.Version} }

// ParseDescriptor reads a descriptor in schema v2 or v3, YAML or JSON.
// Keys are read exactly: a duplicate key, a key that equals a schema key
// only by case or Unicode folding, and an unknown key in a signed part are
// errors naming the key and its path.
func ParseDescriptor(data []byte) (*Descriptor, error) {
	d, _, err := readDescriptor(data)
	if err != nil {
		return nil, err
	}
	if err := d.validate(); err != nil {
		return nil, fmt.Errorf("component descriptor %s: %w", d.ID(), err)
	}
	return d, nil
}

// DescriptorValues reads a descriptor as ParseDescriptor does and returns
// the generic JSON values (in its stored schema) that ParseDescriptor
// decodes its result from, and that schema (SchemaV2 or SchemaV3):
// what signatures are computed over is what the provider uses. It
// refuses what ParseDescriptor refuses, except the checks of required
// fields.
func DescriptorValues(data []byte) (map[string]any, string, error) {
	d, values, err := readDescriptor(data)
	if err != nil {
		return nil, "", err
	}
	return values, d.Schema, nil
}

func readDescriptor(data []byte) (*Descriptor, map[string]any, error) {
	if len(data) > MaxDescriptorSize {
		return nil, nil, fmt.Errorf("component descriptor is %d bytes, larger than the limit of %d", len(data), MaxDescriptorSize)
	}
	values, js, err := readValues(data)
	if err != nil {
		return nil, nil, fmt.Errorf("component descriptor: %w", err)
	}
	schemaVersion, _ := asObject(values["meta"])["schemaVersion"].(string)
	apiVersion, _ := values["apiVersion"].(string)
	var d *Descriptor
	switch {
	case schemaVersion == SchemaV2:
		if err := checkShape(values, v2Shape, ""); err != nil {
			return nil, nil, fmt.Errorf("component descriptor (v2): %w", err)
		}
		d = &Descriptor{}
		if err := json.Unmarshal(js, d); err != nil {
			return nil, nil, fmt.Errorf("component descriptor (v2): %w", err)
		}
		d.Schema = SchemaV2
	case apiVersion == SchemaV3 || apiVersion == schemaV3Alpha:
		if err := checkShape(values, v3Shape, ""); err != nil {
			return nil, nil, fmt.Errorf("component descriptor (v3): %w", err)
		}
		d, err = parseV3(js)
		if err != nil {
			return nil, nil, fmt.Errorf("component descriptor (v3): %w", err)
		}
	case schemaVersion != "":
		return nil, nil, fmt.Errorf("component descriptor: schema version %q is not supported (v2, %s)", schemaVersion, SchemaV3)
	case apiVersion != "":
		return nil, nil, fmt.Errorf("component descriptor: apiVersion %q is not supported (meta.schemaVersion v2, or apiVersion %s)", apiVersion, SchemaV3)
	default:
		// A folded "meta" or "apiVersion" is named rather than missed.
		for _, s := range []*shape{v2Shape, v3Shape} {
			if err := checkShape(values, s, ""); err != nil {
				return nil, nil, fmt.Errorf("component descriptor: %w", err)
			}
		}
		return nil, nil, errors.New("component descriptor: neither meta.schemaVersion nor apiVersion is set")
	}
	return d, values, nil
}

func asObject(v any) map[string]any { m, _ := v.(map[string]any); return m }

type v3Descriptor struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name         string   `json:"name"`
		Version      string   `json:"version"`
		Provider     Provider `json:"provider"`
		Labels       []Label  `json:"labels,omitempty"`
		CreationTime string   `json:"creationTime,omitempty"`
	} `json:"metadata"`
	RepositoryContexts []map[string]any `json:"repositoryContexts"`
	Spec               struct {
		Resources  []Resource  `json:"resources"`
		Sources    []Resource  `json:"sources"`
		References []Reference `json:"references"`
	} `json:"spec"`
	Signatures []Signature `json:"signatures,omitempty"`
}

func parseV3(js []byte) (*Descriptor, error) {
	var v v3Descriptor
	if err := json.Unmarshal(js, &v); err != nil {
		return nil, err
	}
	if v.Kind != "" && v.Kind != "ComponentVersion" {
		return nil, fmt.Errorf("kind %q is not ComponentVersion", v.Kind)
	}
	return &Descriptor{
		Meta: Meta{SchemaVersion: SchemaV2},
		Component: Component{
			Name:                v.Metadata.Name,
			Version:             v.Metadata.Version,
			Provider:            v.Metadata.Provider,
			Labels:              v.Metadata.Labels,
			CreationTime:        v.Metadata.CreationTime,
			RepositoryContexts:  v.RepositoryContexts,
			Sources:             v.Spec.Sources,
			ComponentReferences: v.Spec.References,
			Resources:           v.Spec.Resources,
		},
		Signatures: v.Signatures,
		Schema:     SchemaV3,
	}, nil
}

func (d *Descriptor) validate() error {
	c := &d.Component
	if c.Name == "" || c.Version == "" {
		return errors.New("name and version are required")
	}
	for i, r := range c.Resources {
		if r.Name == "" || r.Type == "" {
			return fmt.Errorf("resources[%d]: name and type are required", i)
		}
		if r.Access == nil {
			return fmt.Errorf("resource %q: access is required", r.Name)
		}
	}
	for i, r := range c.ComponentReferences {
		if r.Name == "" || r.ComponentName == "" || r.Version == "" {
			return fmt.Errorf("componentReferences[%d]: name, componentName and version are required", i)
		}
	}
	return nil
}

// Resource returns the resource with the given name (and, when given,
// extra identity).
func (d *Descriptor) Resource(name string, extra map[string]string) (*Resource, error) {
	for i := range d.Component.Resources {
		r := &d.Component.Resources[i]
		if r.Name == name && (extra == nil || identityEqual(r.ExtraIdentity, extra)) {
			return r, nil
		}
	}
	return nil, fmt.Errorf("component %s has no resource %q: %w", d.ID(), name, ErrNotFound)
}

func identityEqual(a, b map[string]string) bool {
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

// Generic returns the descriptor as generic JSON values in the v2 form,
// as Landscaper's templates see it. Every call builds fresh values.
func (d *Descriptor) Generic() map[string]any {
	c := *d
	comp := c.Component
	comp.RepositoryContexts = nonNil(comp.RepositoryContexts)
	comp.Sources = nonNil(comp.Sources)
	comp.Resources = nonNil(comp.Resources)
	comp.ComponentReferences = nonNil(comp.ComponentReferences)
	c.Component = comp
	data, err := json.Marshal(&c)
	if err != nil {
		return nil
	}
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&out) != nil {
		return nil
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
