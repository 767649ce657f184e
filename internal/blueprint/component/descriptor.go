package component

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
)

// SchemaVersion is the component descriptor serialization templates see.
// Landscaper hands templates the v2 form unless a blueprint asks otherwise,
// and OCM writes v2 by default.
const SchemaVersion = "v2"

// Descriptor returns the component as Landscaper's templates see it in
// `.cd`: the OCM v2 serialization as generic JSON values. Every call builds
// fresh maps, so a template that mutates them cannot affect another.
//
// Input resources get the localBlob access and digest OCM gives them when it
// stores them with the component. repositoryContexts is empty: there is no
// repository, the components come straight from constructor files.
func (c *Component) Descriptor() map[string]any {
	if c.cv != nil {
		// Decoded once; every caller gets its own deep copy, cheaper than
		// decoding again for each node of a tree.
		c.genericOnce.Do(func() {
			c.generic = c.cv.Descriptor.Generic()
			if c.verifying {
				verifiedView(c.generic, c.cv.Descriptor, c.verified, c.sourcesSigned)
			}
		})
		m, _ := generic(c.generic).(map[string]any)
		return m
	}
	resources := make([]any, 0, len(c.resources))
	for _, r := range c.resources {
		m := r.entry()
		m["relation"] = r.Relation
		resources = append(resources, m)
	}
	sources := make([]any, 0, len(c.sources))
	for _, r := range c.sources {
		sources = append(sources, r.entry())
	}
	refs := make([]any, 0, len(c.Spec.ComponentReferences))
	for _, ref := range c.Spec.ComponentReferences {
		m := map[string]any{
			"name":          ref.Name,
			"componentName": ref.ComponentName,
			"version":       ref.Version,
		}
		if len(ref.ExtraIdentity) > 0 {
			m["extraIdentity"] = stringMap(ref.ExtraIdentity)
		}
		if len(ref.Labels) > 0 {
			m["labels"] = labels(ref.Labels)
		}
		refs = append(refs, m)
	}
	repoCtx := make([]any, 0, len(c.Spec.RepositoryContexts))
	for _, rc := range c.Spec.RepositoryContexts {
		repoCtx = append(repoCtx, generic(rc))
	}
	comp := map[string]any{
		"name":                c.Spec.Name,
		"version":             c.Spec.Version,
		"provider":            c.Spec.Provider.Name,
		"repositoryContexts":  repoCtx,
		"resources":           resources,
		"sources":             sources,
		"componentReferences": refs,
	}
	if len(c.Spec.Labels) > 0 {
		comp["labels"] = labels(c.Spec.Labels)
	}
	if c.Spec.CreationTime != "" {
		comp["creationTime"] = c.Spec.CreationTime
	}
	doc := map[string]any{
		"meta":      map[string]any{"schemaVersion": SchemaVersion},
		"component": comp,
	}
	if c.verifying {
		verifiedView(doc, nil, false, false)
	}
	return doc
}

func (r *Resource) entry() map[string]any {
	m := map[string]any{
		"name":    r.Name,
		"version": r.Version,
		"type":    r.Type,
	}
	if len(r.ExtraIdentity) > 0 {
		m["extraIdentity"] = stringMap(r.ExtraIdentity)
	}
	if len(r.Labels) > 0 {
		m["labels"] = labels(r.Labels)
	}
	if r.Blob != nil {
		m["access"] = map[string]any{
			"type":           "localBlob",
			"localReference": "sha256." + r.Blob.Digest,
			"mediaType":      r.Blob.MediaType,
		}
		m["digest"] = map[string]any{
			"hashAlgorithm":          "SHA-256",
			"normalisationAlgorithm": "genericBlobDigest/v1",
			"value":                  r.Blob.Digest,
		}
	} else {
		m["access"] = generic(r.Access)
	}
	return m
}

// Components returns what Landscaper's templates see in `.components`: a
// component descriptor list holding c and every component it references
// transitively, each once.
func (s *Set) Components(c *Component) map[string]any {
	closure := s.Closure(c)
	list := make([]any, 0, len(closure))
	for _, cc := range closure {
		list = append(list, cc.Descriptor())
	}
	return map[string]any{
		"meta":       map[string]any{"schemaVersion": SchemaVersion},
		"components": list,
	}
}

func labels(ls []Label) []any {
	out := make([]any, 0, len(ls))
	for _, l := range ls {
		m := map[string]any{"name": l.Name, "value": rawValue(l.Value)}
		if l.Version != "" {
			m["version"] = l.Version
		}
		if l.Signing {
			m["signing"] = true
		}
		out = append(out, m)
	}
	return out
}

func stringMap(in map[string]string) map[string]any {
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

func rawValue(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil
	}
	return v
}

// generic deep-copies a decoded value so callers never share maps.
func generic(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = generic(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = generic(e)
		}
		return out
	default:
		return v
	}
}

// URI is a parsed Landscaper component URI such as
// cd://componentReferences/<ref>/resources/<name>.
type URI struct {
	Raw      string
	Path     []URIStep
	Fragment string
}

// URIStep is one keyword/value pair of a URI path.
type URIStep struct {
	Keyword string // componentReferences or resources
	Value   string
}

// maxURILength is Landscaper's limit.
const maxURILength = 2083

// ParseURI parses a cd:// URI with Landscaper's rules: keyword/value pairs,
// componentReferences any number of times, resources at most once and last.
func ParseURI(raw string) (*URI, error) {
	if len(raw) > maxURILength {
		return nil, fmt.Errorf("uri %q is longer than %d characters", raw, maxURILength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("uri %q: %w", raw, err)
	}
	if u.Scheme != "cd" {
		return nil, fmt.Errorf("uri %q: scheme must be cd", raw)
	}
	p := strings.Trim(path.Join(u.Host, u.Path), "/")
	if p == "" {
		return nil, fmt.Errorf("uri %q: a path is required", raw)
	}
	parts := strings.Split(p, "/")
	if len(parts)%2 != 0 {
		return nil, fmt.Errorf("uri %q: expected keyword/value pairs", raw)
	}
	out := &URI{Raw: raw, Fragment: u.Fragment}
	for i := 0; i < len(parts); i += 2 {
		st := URIStep{Keyword: parts[i], Value: parts[i+1]}
		switch st.Keyword {
		case "componentReferences":
		case "resources":
			if i+2 != len(parts) {
				return nil, fmt.Errorf("uri %q: resources must be the last element", raw)
			}
		default:
			return nil, fmt.Errorf("uri %q: unknown keyword %q (componentReferences, resources)", raw, st.Keyword)
		}
		out.Path = append(out.Path, st)
	}
	return out, nil
}

// Resolve follows a cd:// URI from component c. It returns the component
// reached and, if the URI ends in a resource, that resource.
func (s *Set) Resolve(c *Component, raw string) (*Component, *Resource, error) {
	if c == nil {
		return nil, nil, errors.New("no component to resolve " + raw + " from")
	}
	u, err := ParseURI(raw)
	if err != nil {
		return nil, nil, err
	}
	cur := c
	for _, st := range u.Path {
		switch st.Keyword {
		case "componentReferences":
			next, err := s.Reference(cur, st.Value)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", raw, err)
			}
			cur = next
		case "resources":
			r, err := cur.Resource(st.Value)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", raw, err)
			}
			return cur, r, nil
		}
	}
	return cur, nil, nil
}
