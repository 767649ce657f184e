package component

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// Set holds the components of one or more constructor files, with their
// references resolved and the content of every input resource built once.
type Set struct {
	components []*Component // in file order, then as resolved
	byID       map[ID]*Component
	digest     string
	// constructors tells whether the Set was built from constructor files.
	constructors bool

	// For components from repositories (see Resolve): the operation's
	// context, how to reach the repositories, references the overwrites
	// redirected, and how to check what verified versions promise.
	ctx      context.Context
	resolver *ocm.Resolver
	redirect map[ID]ID
	verifier Verifier

	// The digests verified components sign, by normalisation and digest:
	// what deployers may fetch from elsewhere under verification.
	signedOnce    sync.Once
	signedDigests map[string]string
}

// ID names a component version.
type ID struct {
	Name    string
	Version string
}

func (id ID) String() string { return id.Name + ":" + id.Version }

// Component is one component of a Set.
type Component struct {
	Spec ComponentSpec
	// File is the constructor file the component was read from.
	File string

	resources []*Resource
	sources   []*Resource

	// cv is the repository's version of a component not from a
	// constructor file; verified says its content is vouched for by a
	// checked signature.
	cv       *ocm.ComponentVersion
	verified bool
	// sourcesSigned says a checked signature's normalisation covers the
	// sources (jsonNormalisation/v1 leaves them out).
	sourcesSigned bool
	// verifying says the Set verifies signatures: a component that is
	// not verified then shows templates no OCI access and no content.
	verifying bool

	genericOnce sync.Once
	generic     map[string]any
}

// ID returns the component's name and version.
func (c *Component) ID() ID { return ID{Name: c.Spec.Name, Version: c.Spec.Version} }

// Resource is a resource (or source) of a component with its defaults
// applied and, for input resources, its content.
type Resource struct {
	Name          string
	Version       string
	Type          string
	Relation      string
	ExtraIdentity map[string]string
	Labels        []Label
	// Access is the remote access of an access resource; nil for inputs.
	Access map[string]any
	// Blob is the content of an input resource; nil for access resources.
	Blob *Blob

	// fetch reads the content of a resource of a repository's component,
	// once.
	fetch func() (*Blob, error)
}

// Blob is the content of an input resource.
type Blob struct {
	MediaType string
	Data      []byte
	// Digest is the hex SHA-256 of Data.
	Digest string
}

// Resources returns the component's resources in declaration order.
func (c *Component) Resources() []*Resource { return c.resources }

// Resource returns the resource with the given name.
func (c *Component) Resource(name string) (*Resource, error) {
	for _, r := range c.resources {
		if r.Name == name {
			return r, nil
		}
	}
	names := make([]string, 0, len(c.resources))
	for _, r := range c.resources {
		names = append(names, r.Name)
	}
	return nil, fmt.Errorf("component %s has no resource %q (resources: %s)", c.ID(), name, strings.Join(names, ", "))
}

// LoadFiles reads the given constructor files. Input paths are relative to
// the directory of the constructor file that names them. Every component
// reference must name a component of one of the files.
func LoadFiles(paths ...string) (*Set, error) {
	srcs, err := readConstructors(paths)
	if err != nil {
		return nil, err
	}
	return Load(srcs...)
}

func readConstructors(paths []string) ([]Source, error) {
	srcs := make([]Source, 0, len(paths))
	for _, p := range paths {
		data, err := readFileLimited(p, MaxFileSize)
		if err != nil {
			return nil, fmt.Errorf("constructor %s: %w", p, err)
		}
		srcs = append(srcs, Source{Name: p, Data: data, BaseDir: filepath.Dir(p)})
	}
	return srcs, nil
}

// Source is the content of one constructor file; BaseDir is the directory
// its input paths are relative to.
type Source struct {
	Name    string
	Data    []byte
	BaseDir string
}

// Load parses constructor files given as content.
func Load(srcs ...Source) (*Set, error) { return load(srcs, false) }

// load parses constructor files; with external, a component reference may
// name a component of none of them (a repository will serve it).
func load(srcs []Source, external bool) (*Set, error) {
	if len(srcs) == 0 {
		return nil, errors.New("no component constructor given")
	}
	s := &Set{byID: map[ID]*Component{}}
	var total int64
	for _, src := range srcs {
		specs, err := parseConstructor(src.Data)
		if err != nil {
			return nil, fmt.Errorf("constructor %s: %w", src.Name, err)
		}
		for i := range specs {
			spec := specs[i]
			if spec.Name == "" || spec.Version == "" {
				return nil, fmt.Errorf("constructor %s: components[%d]: name and version are required", src.Name, i)
			}
			c := &Component{Spec: spec, File: src.Name}
			if prev, ok := s.byID[c.ID()]; ok {
				return nil, fmt.Errorf("component %s is defined twice: in %s and in %s", c.ID(), prev.File, src.Name)
			}
			if err := c.build(src.BaseDir, &total); err != nil {
				return nil, err
			}
			s.byID[c.ID()] = c
			s.components = append(s.components, c)
		}
	}
	for _, c := range s.components {
		seen := map[string]bool{}
		for _, ref := range c.Spec.ComponentReferences {
			if seen[ref.Name] {
				return nil, fmt.Errorf("component %s (%s): duplicate component reference %q", c.ID(), c.File, ref.Name)
			}
			seen[ref.Name] = true
			if _, ok := s.byID[ID{ref.ComponentName, ref.Version}]; !ok && !external {
				return nil, fmt.Errorf("component %s (%s): component reference %q names %s:%s, which is in none of the constructor files (known: %s)",
					c.ID(), c.File, ref.Name, ref.ComponentName, ref.Version, s.knownIDs())
			}
		}
	}
	d, err := s.computeDigest()
	if err != nil {
		return nil, err
	}
	s.digest = d
	return s, nil
}

func (s *Set) knownIDs() string {
	ids := make([]string, 0, len(s.components))
	for _, c := range s.components {
		ids = append(ids, c.ID().String())
	}
	return strings.Join(ids, ", ")
}

func parseConstructor(data []byte) ([]ComponentSpec, error) {
	var head map[string]json.RawMessage
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, err
	}
	if _, ok := head["components"]; ok {
		var c Constructor
		if err := yaml.UnmarshalStrict(data, &c); err != nil {
			return nil, err
		}
		return c.Components, nil
	}
	var spec ComponentSpec
	if err := yaml.UnmarshalStrict(data, &spec); err != nil {
		return nil, err
	}
	return []ComponentSpec{spec}, nil
}

func (c *Component) build(baseDir string, total *int64) error {
	seen := map[string]bool{}
	for i, rs := range c.Spec.Resources {
		where := fmt.Sprintf("component %s (%s): resource %q", c.ID(), c.File, rs.Name)
		if rs.Name == "" {
			return fmt.Errorf("component %s (%s): resources[%d]: name is required", c.ID(), c.File, i)
		}
		key := identityKey(rs.Name, rs.ExtraIdentity)
		if seen[key] {
			return fmt.Errorf("%s: defined twice", where)
		}
		seen[key] = true
		r, err := c.newResource(where, baseDir, rs.Name, rs.Version, rs.Type, rs.Relation, rs.ExtraIdentity, rs.Labels, rs.Input, rs.Access, total)
		if err != nil {
			return err
		}
		c.resources = append(c.resources, r)
	}
	for i, ss := range c.Spec.Sources {
		where := fmt.Sprintf("component %s (%s): source %q", c.ID(), c.File, ss.Name)
		if ss.Name == "" {
			return fmt.Errorf("component %s (%s): sources[%d]: name is required", c.ID(), c.File, i)
		}
		r, err := c.newResource(where, baseDir, ss.Name, ss.Version, ss.Type, "", ss.ExtraIdentity, ss.Labels, ss.Input, ss.Access, total)
		if err != nil {
			return err
		}
		c.sources = append(c.sources, r)
	}
	return nil
}

func identityKey(name string, extra map[string]string) string {
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(name)
	for _, k := range keys {
		b.WriteString("\x00" + k + "=" + extra[k])
	}
	return b.String()
}

func (c *Component) newResource(where, baseDir, name, version, typ, relation string, extra map[string]string,
	labels []Label, input *InputSpec, access map[string]any, total *int64) (*Resource, error) {
	if typ == "" {
		return nil, fmt.Errorf("%s: type is required", where)
	}
	switch {
	case input != nil && access != nil:
		return nil, fmt.Errorf("%s: input and access are mutually exclusive", where)
	case input == nil && access == nil:
		return nil, fmt.Errorf("%s: either input or access is required", where)
	}
	// OCM's defaults: content brought in by an input is the component's own
	// (local, versioned with the component); referenced content is external.
	if relation == "" {
		if input != nil {
			relation = "local"
		} else {
			relation = "external"
		}
	}
	if version == "" && relation == "local" {
		version = c.Spec.Version
	}
	r := &Resource{Name: name, Version: version, Type: typ, Relation: relation, ExtraIdentity: extra, Labels: labels, Access: access}
	if input != nil {
		blob, err := buildInput(baseDir, input)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		*total += int64(len(blob.Data))
		if *total > MaxSetSize {
			return nil, fmt.Errorf("%s: the resources of all constructors exceed %d bytes", where, MaxSetSize)
		}
		r.Blob = blob
	}
	return r, nil
}

func newBlob(mediaType string, data []byte) *Blob {
	sum := sha256.Sum256(data)
	return &Blob{MediaType: mediaType, Data: data, Digest: hex.EncodeToString(sum[:])}
}

// readFileLimited reads a regular file, refusing one larger than limit
// before reading it, and reading at most limit+1 bytes should it grow.
func readFileLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, larger than the limit of %d", path, fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than the limit of %d bytes", path, limit)
	}
	return data, nil
}

// All returns all components in the order of the constructor files.
func (s *Set) All() []*Component { return s.components }

// Component returns the component with the given name and version; an empty
// version matches the only version of that name.
func (s *Set) Component(name, version string) (*Component, error) {
	if to, ok := s.redirect[ID{name, version}]; ok {
		name, version = to.Name, to.Version
	}
	if version != "" {
		if c, ok := s.byID[ID{name, version}]; ok {
			return c, nil
		}
		if s.resolver != nil {
			return nil, fmt.Errorf("component %s:%s was not resolved (known: %s)", name, version, s.knownIDs())
		}
		var versions []string
		for _, c := range s.components {
			if c.Spec.Name == name {
				versions = append(versions, c.Spec.Version)
			}
		}
		return nil, fmt.Errorf("component %s:%s is in none of the constructor files, which offer %s of it (known: %s)",
			name, version, offered(versions), s.knownIDs())
	}
	var found []*Component
	for _, c := range s.components {
		if c.Spec.Name == name {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, fmt.Errorf("component %s is in none of the constructor files (known: %s)", name, s.knownIDs())
	default:
		return nil, fmt.Errorf("component %s has several versions; name one", name)
	}
}

// Root returns the one component no other component references. It is an
// error if there is no such component or more than one.
func (s *Set) Root() (*Component, error) {
	referenced := map[ID]bool{}
	for _, c := range s.components {
		for _, ref := range c.Spec.ComponentReferences {
			referenced[ID{ref.ComponentName, ref.Version}] = true
		}
	}
	var roots []string
	var root *Component
	for _, c := range s.components {
		if !referenced[c.ID()] {
			roots = append(roots, c.ID().String())
			root = c
		}
	}
	if len(roots) != 1 {
		return nil, fmt.Errorf("cannot tell the root component: %d components are referenced by no other (%s); name the component", len(roots), strings.Join(roots, ", "))
	}
	return root, nil
}

// Reference returns the component a reference of c (by reference name)
// points to.
func (s *Set) Reference(c *Component, refName string) (*Component, error) {
	for _, ref := range c.Spec.ComponentReferences {
		if ref.Name == refName {
			return s.Component(ref.ComponentName, ref.Version)
		}
	}
	names := make([]string, 0, len(c.Spec.ComponentReferences))
	for _, ref := range c.Spec.ComponentReferences {
		names = append(names, ref.Name)
	}
	return nil, fmt.Errorf("component %s has no component reference %q (references: %s)", c.ID(), refName, strings.Join(names, ", "))
}

// Closure returns c and every component it references, directly or not,
// each once: c first, then depth first in reference order.
func (s *Set) Closure(c *Component) []*Component {
	var out []*Component
	seen := map[ID]bool{}
	var walk func(c *Component)
	walk = func(c *Component) {
		if seen[c.ID()] {
			return
		}
		seen[c.ID()] = true
		out = append(out, c)
		for _, ref := range c.Spec.ComponentReferences {
			id := ID{ref.ComponentName, ref.Version}
			if to, ok := s.redirect[id]; ok {
				id = to
			}
			if next, ok := s.byID[id]; ok {
				walk(next)
			}
		}
	}
	walk(c)
	return out
}

// ResourceContent returns the content of an input resource of the named
// component.
func (s *Set) ResourceContent(componentName, componentVersion, resourceName string) (*Blob, error) {
	c, err := s.Component(componentName, componentVersion)
	if err != nil {
		return nil, err
	}
	r, err := c.Resource(resourceName)
	if err != nil {
		return nil, err
	}
	return r.Content(c)
}

// Content returns the blob of an input resource. An access resource has no
// local content; that is an error naming the access type.
func (r *Resource) Content(c *Component) (*Blob, error) {
	if c.verifying && !c.verified {
		return nil, c.unverifiedError(fmt.Sprintf("resource %q", r.Name))
	}
	if r.Blob != nil {
		return r.Blob, nil
	}
	if r.fetch != nil {
		return r.fetch()
	}
	t, _ := r.Access["type"].(string)
	return nil, fmt.Errorf("resource %q of component %s has access type %q; only input resources (dir, file) have local content", r.Name, c.ID(), t)
}

// Digest is a content digest of the whole set: the serialized descriptors,
// which carry the digest of every input blob. It changes when a constructor
// or any input content changes.
func (s *Set) Digest() string { return s.digest }

func (s *Set) computeDigest() (string, error) {
	comps := slices.Clone(s.components)
	slices.SortFunc(comps, func(a, b *Component) int { return strings.Compare(a.ID().String(), b.ID().String()) })
	h := sha256.New()
	for _, c := range comps {
		if c.cv != nil {
			// What the repository stores for the version: a re-push with
			// new content changes it, an unchanged version does not.
			_, _ = h.Write([]byte(c.ID().String() + "@" + c.cv.Repository.Key() + "@" + c.cv.Digest))
			_, _ = h.Write([]byte{0})
			continue
		}
		data, err := json.Marshal(c.Descriptor())
		if err != nil {
			return "", fmt.Errorf("component %s: %w", c.ID(), err)
		}
		_, _ = h.Write(data)
		_, _ = h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
