// Package component reads OCM component constructor files (the
// component-constructor.yaml that `ocm add componentversions` takes), resolves
// their component references, builds the content of their input resources
// (dir and file inputs) and serializes the components the way Landscaper's
// templates see them (`.cd` and `.components`, OCM schema v2).
package component

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Limits on what a constructor may make this process read. A file above
// MaxFileSize or a resource blob above MaxBlobSize is an error naming it; a
// large file is never read whole.
const (
	MaxFileSize = 16 << 20
	MaxBlobSize = 64 << 20
	// MaxSetSize bounds the sum of all resource blobs of one Set.
	MaxSetSize = 256 << 20
)

// Constructor is the list form of a component constructor file.
type Constructor struct {
	Components []ComponentSpec `json:"components"`
}

// ComponentSpec is one component of a constructor file.
type ComponentSpec struct {
	Name                string          `json:"name"`
	Version             string          `json:"version"`
	Provider            Provider        `json:"provider"`
	Labels              []Label         `json:"labels,omitempty"`
	CreationTime        string          `json:"creationTime,omitempty"`
	RepositoryContexts  []any           `json:"repositoryContexts,omitempty"`
	Resources           []ResourceSpec  `json:"resources,omitempty"`
	Sources             []SourceSpec    `json:"sources,omitempty"`
	ComponentReferences []ReferenceSpec `json:"componentReferences,omitempty"`
}

// Provider is the provider of a component. OCM v3 writes it as an object
// {name, labels}; the v2 form is a plain string, and both are accepted.
type Provider struct {
	Name   string  `json:"name"`
	Labels []Label `json:"labels,omitempty"`
}

// UnmarshalJSON accepts the string form as well as the object form.
func (p *Provider) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*p = Provider{Name: s}
		return nil
	}
	type plain Provider
	var v plain
	if err := strictJSON(data, &v); err != nil {
		return fmt.Errorf("provider: %w", err)
	}
	*p = Provider(v)
	return nil
}

// Label is an OCM label.
type Label struct {
	Name    string          `json:"name"`
	Value   json.RawMessage `json:"value"`
	Version string          `json:"version,omitempty"`
	Signing bool            `json:"signing,omitempty"`
	Merge   json.RawMessage `json:"merge,omitempty"`
}

// ResourceSpec is a resource of a component: either an input (content taken
// from the local filesystem) or an access (content stays remote).
type ResourceSpec struct {
	Name          string            `json:"name"`
	Version       string            `json:"version,omitempty"`
	Type          string            `json:"type"`
	Relation      string            `json:"relation,omitempty"`
	ExtraIdentity map[string]string `json:"extraIdentity,omitempty"`
	Labels        []Label           `json:"labels,omitempty"`
	SrcRefs       json.RawMessage   `json:"srcRefs,omitempty"`
	Digest        json.RawMessage   `json:"digest,omitempty"`
	Input         *InputSpec        `json:"input,omitempty"`
	Access        map[string]any    `json:"access,omitempty"`
}

// SourceSpec is a source of a component; it has the same shape as a
// resource except for relation and srcRefs.
type SourceSpec struct {
	Name          string            `json:"name"`
	Version       string            `json:"version,omitempty"`
	Type          string            `json:"type"`
	ExtraIdentity map[string]string `json:"extraIdentity,omitempty"`
	Labels        []Label           `json:"labels,omitempty"`
	Input         *InputSpec        `json:"input,omitempty"`
	Access        map[string]any    `json:"access,omitempty"`
}

// ReferenceSpec is a reference to another component.
type ReferenceSpec struct {
	Name          string            `json:"name"`
	ComponentName string            `json:"componentName"`
	Version       string            `json:"version"`
	ExtraIdentity map[string]string `json:"extraIdentity,omitempty"`
	Labels        []Label           `json:"labels,omitempty"`
	Digest        json.RawMessage   `json:"digest,omitempty"`
}

// Input types understood here; OCM knows more (helm, binary, ociImage, ...),
// and those are rejected with a clear error rather than misread.
const (
	InputTypeDir  = "dir"
	InputTypeFile = "file"
)

// InputSpec is the input of a resource, with OCM's field names.
type InputSpec struct {
	Type           string   `json:"type"`
	Path           string   `json:"path"`
	MediaType      string   `json:"mediaType,omitempty"`
	Compress       *bool    `json:"compress,omitempty"`
	PreserveDir    *bool    `json:"preserveDir,omitempty"`
	IncludeFiles   []string `json:"includeFiles,omitempty"`
	ExcludeFiles   []string `json:"excludeFiles,omitempty"`
	FollowSymlinks *bool    `json:"followSymlinks,omitempty"`
}

// UnmarshalJSON decodes strictly, but only for the input types supported
// here, so an unsupported type is reported as such rather than as an unknown
// field of it.
func (in *InputSpec) UnmarshalJSON(data []byte) error {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("input: %w", err)
	}
	switch head.Type {
	case InputTypeDir, InputTypeFile:
	case "":
		return errors.New("input: type is required (dir or file)")
	default:
		return fmt.Errorf("input type %q is not supported (supported: dir, file)", head.Type)
	}
	type plain InputSpec
	var v plain
	if err := strictJSON(data, &v); err != nil {
		return fmt.Errorf("input: %w", err)
	}
	if v.Type == InputTypeFile && (v.PreserveDir != nil || len(v.IncludeFiles) > 0 || len(v.ExcludeFiles) > 0 || v.FollowSymlinks != nil) {
		return errors.New("input: preserveDir, includeFiles, excludeFiles and followSymlinks apply to type dir only")
	}
	*in = InputSpec(v)
	return nil
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
