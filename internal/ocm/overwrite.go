package ocm

import (
	"encoding/json"
	"reflect"
)

// Ref names a component version in a repository: Landscaper's
// ComponentDescriptorReference.
type Ref struct {
	ComponentName     string
	Version           string
	RepositoryContext map[string]any
}

func (r Ref) String() string { return r.ComponentName + ":" + r.Version }

// OverwriteRef is one side of an overwrite; empty fields are unset.
type OverwriteRef struct {
	ComponentName     string         `json:"componentName,omitempty"`
	Version           string         `json:"version,omitempty"`
	RepositoryContext map[string]any `json:"repositoryContext,omitempty"`
}

// Overwrite is one entry of Landscaper's ComponentVersionOverwrites: a
// component reference matching Source gets Substitution's fields.
type Overwrite struct {
	Source       OverwriteRef
	Substitution OverwriteRef
}

// Overwrites applies a list of overwrites with Landscaper's rules: entries
// are evaluated in order; every matching entry contributes the fields it
// substitutes, unless one of them was already substituted by an earlier
// entry, in which case it contributes nothing (whole or not at all); a field
// is never substituted twice. It reports whether ref changed.
func Overwrites(list []Overwrite, ref *Ref) bool {
	var merged OverwriteRef
	matched := false
	for _, o := range list {
		if !o.Source.matches(ref) {
			continue
		}
		matched = true
		s := o.Substitution
		if (s.ComponentName != "" && merged.ComponentName != "") ||
			(s.Version != "" && merged.Version != "") ||
			(s.RepositoryContext != nil && merged.RepositoryContext != nil) {
			continue
		}
		if s.ComponentName != "" {
			merged.ComponentName = s.ComponentName
		}
		if s.Version != "" {
			merged.Version = s.Version
		}
		if s.RepositoryContext != nil {
			merged.RepositoryContext = s.RepositoryContext
		}
		if merged.ComponentName != "" && merged.Version != "" && merged.RepositoryContext != nil {
			break
		}
	}
	if !matched {
		return false
	}
	before := *ref
	if merged.ComponentName != "" {
		ref.ComponentName = merged.ComponentName
	}
	if merged.Version != "" {
		ref.Version = merged.Version
	}
	if merged.RepositoryContext != nil {
		ref.RepositoryContext = merged.RepositoryContext
	}
	return before.ComponentName != ref.ComponentName || before.Version != ref.Version ||
		!sameContext(before.RepositoryContext, ref.RepositoryContext)
}

func (m OverwriteRef) matches(ref *Ref) bool {
	if m.ComponentName != "" && m.ComponentName != ref.ComponentName {
		return false
	}
	if m.Version != "" && m.Version != ref.Version {
		return false
	}
	if m.RepositoryContext != nil && !sameContext(m.RepositoryContext, ref.RepositoryContext) {
		return false
	}
	return true
}

// sameContext compares repository contexts as JSON values, as Landscaper
// compares its unstructured typed objects, with the two spellings of the
// OCI registry type taken as one.
func sameContext(a, b map[string]any) bool {
	return reflect.DeepEqual(canonicalContext(a), canonicalContext(b))
}

func canonicalContext(m map[string]any) any {
	if m == nil {
		return nil
	}
	data, err := json.Marshal(m)
	if err != nil {
		return m
	}
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	if out["type"] == TypeOCIRegistryLegacy {
		out["type"] = TypeOCIRegistry
	}
	return out
}
