package component

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing"
)

// Verifier checks what a signed component version promises: its
// signature, the digests of the versions it references, and the content of
// every blob read from it. internal/ocm/signing implements it.
type Verifier interface {
	// VerifyComponent checks the one signature of the configured name of
	// the root component version and returns its normalisation: what the
	// signature covers depends on it, so it is taken from the signature
	// that verified and from no other entry.
	VerifyComponent(cv *ocm.ComponentVersion) (normalisation string, err error)
	// CheckReference checks that a referenced version is the one a verified
	// version's reference recorded.
	CheckReference(ref ocm.Reference, referenced *ocm.ComponentVersion) error
	// CheckBlob checks a blob against the digest its verified version
	// records for the resource.
	CheckBlob(res ocm.Resource, blob *ocm.Blob) error
}

// VerificationError is a signature or digest that does not hold: content
// that must not be used.
type VerificationError struct{ Err error }

func (e *VerificationError) Error() string { return e.Err.Error() }
func (e *VerificationError) Unwrap() error { return e.Err }

// ResolveOptions say where the components of an installation come from.
type ResolveOptions struct {
	// Constructors are component-constructor files; their components win
	// over the repository's.
	Constructors []string
	// Root is the component of the installation.
	Root ID
	// RepositoryContext is where Root and its references are looked up
	// when they are not in Constructors; nil uses the Resolver's default.
	RepositoryContext map[string]any
	// Resolver reaches repositories; nil allows constructors only.
	Resolver *ocm.Resolver
	// Verifier, when set, verifies Root's signature before anything else
	// and checks everything read from verified versions.
	Verifier Verifier
}

// Resolve builds the Set of an installation: the constructor files' components, the
// root component, and every component referenced from them, transitively,
// fetched in parallel, each version once.
func Resolve(ctx context.Context, o ResolveOptions) (*Set, error) {
	var s *Set
	if len(o.Constructors) > 0 {
		srcs, err := readConstructors(o.Constructors)
		if err != nil {
			return nil, err
		}
		if s, err = load(srcs, o.Resolver != nil); err != nil {
			return nil, err
		}
		s.constructors = true
	} else {
		s = &Set{byID: map[ID]*Component{}}
	}
	if o.Resolver == nil {
		return s, nil
	}
	s.resolver = o.Resolver
	s.verifier = o.Verifier
	s.ctx = ctx
	s.redirect = map[ID]ID{}
	rootRef := ocm.Ref{ComponentName: o.Root.Name, Version: o.Root.Version, RepositoryContext: o.RepositoryContext}
	if rootRef.RepositoryContext == nil {
		rootRef.RepositoryContext = o.Resolver.Context().RepositoryContext
	}
	r := &walk{s: s, ctx: ctx, base: rootRef.RepositoryContext, verifier: o.Verifier}
	if err := r.root(rootRef); err != nil {
		return nil, err
	}
	if o.Verifier != nil {
		for _, c := range s.components {
			c.verifying = true
		}
	}
	d, err := s.computeDigest()
	if err != nil {
		return nil, err
	}
	s.digest = d
	return s, nil
}

// walk resolves the references of a Set level by level, each level in
// parallel.
type walk struct {
	s        *Set
	ctx      context.Context
	base     map[string]any
	verifier Verifier
	mu       sync.Mutex
}

func (w *walk) root(ref ocm.Ref) error {
	id := ID{ref.ComponentName, ref.Version}
	eff := w.s.resolver.Effective(ref)
	effID := ID{eff.ComponentName, eff.Version}
	if effID != id {
		w.s.redirect[id] = effID
	}
	var level []*Component
	if c, ok := w.s.byID[effID]; ok {
		if w.verifier != nil {
			return fmt.Errorf("component %s comes from a constructor file, which carries no signature to verify", effID)
		}
		level = append(level, c)
	} else {
		cv, err := w.s.resolver.Resolve(w.ctx, ref)
		if err != nil {
			return w.s.unknownVersion(w.ctx, ref, err)
		}
		normalisation := ""
		if w.verifier != nil {
			if normalisation, err = w.verifier.VerifyComponent(cv); err != nil {
				return &VerificationError{Err: fmt.Errorf("component %s: %w", cv.Descriptor.ID(), err)}
			}
		}
		c := w.s.addVersion(cv, w.verifier != nil)
		c.sourcesSigned = w.verifier != nil && signing.SignsSources(normalisation)
		level = append(level, c)
	}
	// Constructor components may reference repository ones too.
	level = append(level, w.s.components...)
	seen := map[*Component]bool{}
	for len(level) > 0 {
		next, err := w.expand(level, seen)
		if err != nil {
			return err
		}
		level = next
	}
	return nil
}

// Bounds of a walk over references.
const (
	// maxFetches is how many component versions are fetched at once.
	maxFetches = 8
	// MaxComponents is the most component versions a Set holds.
	MaxComponents = 1000
)

type pending struct {
	from *Component
	ref  ReferenceSpec
}

// expand fetches the references of one level that are not in the Set yet,
// in parallel, and returns the components it added.
func (w *walk) expand(level []*Component, seen map[*Component]bool) ([]*Component, error) {
	var todo []pending
	for _, c := range level {
		if seen[c] {
			continue
		}
		seen[c] = true
		for _, ref := range c.Spec.ComponentReferences {
			todo = append(todo, pending{from: c, ref: ref})
		}
	}
	type result struct {
		p   pending
		ref ocm.Ref
		cv  *ocm.ComponentVersion
		id  ID
		err error
	}
	results := make([]result, len(todo))
	var wg sync.WaitGroup
	// A descriptor may list any number of references (and a registry
	// answer any number of descriptors): fetch a few at a time, each
	// version once, and no more versions than a Set holds.
	sem := make(chan struct{}, maxFetches)
	fetching := map[ID]bool{}
	for i, p := range todo {
		id := ID{p.ref.ComponentName, p.ref.Version}
		ref := ocm.Ref{ComponentName: id.Name, Version: id.Version, RepositoryContext: w.base}
		eff := w.s.resolver.Effective(ref)
		results[i] = result{p: p, ref: ref, id: ID{eff.ComponentName, eff.Version}}
		if effID := results[i].id; effID != id {
			w.mu.Lock()
			w.s.redirect[id] = effID
			w.mu.Unlock()
		}
		if _, ok := w.s.byID[results[i].id]; ok || fetching[results[i].id] {
			continue
		}
		fetching[results[i].id] = true
		if len(w.s.byID)+len(fetching) > MaxComponents {
			wg.Wait()
			return nil, fmt.Errorf("component %s (%s): its references make more than %d component versions, the most one installation may use",
				p.from.ID(), p.from.origin(), MaxComponents)
		}
		wg.Add(1)
		go func(r *result) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r.cv, r.err = w.s.resolver.Resolve(w.ctx, ref)
		}(&results[i])
	}
	wg.Wait()
	var next []*Component
	for _, r := range results {
		if r.err != nil {
			return nil, fmt.Errorf("component %s (%s): reference %q: %w", r.p.from.ID(), r.p.from.origin(), r.p.ref.Name,
				w.s.unknownVersion(w.ctx, r.ref, r.err))
		}
		c, ok := w.s.byID[r.id]
		if !ok {
			c = w.s.addVersion(r.cv, false)
			next = append(next, c)
		}
		if w.verifier != nil && r.p.from.verified {
			if c.cv == nil {
				return nil, fmt.Errorf("component %s: reference %q resolves to %s from a constructor file, which a signature cannot vouch for",
					r.p.from.ID(), r.p.ref.Name, r.id)
			}
			ref := r.p.ref.toOCM()
			if err := w.verifier.CheckReference(ref, c.cv); err != nil {
				return nil, &VerificationError{Err: fmt.Errorf("component %s: reference %q: %w", r.p.from.ID(), r.p.ref.Name, err)}
			}
			c.verified = true
			// Any one checked digest whose normalisation covers the
			// sources vouches for them.
			c.sourcesSigned = c.sourcesSigned || ref.Digest != nil && signing.SignsSources(ref.Digest.NormalisationAlgorithm)
		}
	}
	return next, nil
}

func (r ReferenceSpec) toOCM() ocm.Reference {
	out := ocm.Reference{Name: r.Name, ComponentName: r.ComponentName, Version: r.Version, ExtraIdentity: r.ExtraIdentity}
	if len(r.Digest) > 0 {
		var d ocm.DigestSpec
		if json.Unmarshal(r.Digest, &d) == nil {
			out.Digest = &d
		}
	}
	return out
}

// origin says where a component came from, for messages.
func (c *Component) origin() string {
	if c.cv != nil {
		return "repository " + c.cv.Repository.String()
	}
	return c.File
}

// addVersion adds a component version from a repository to the Set.
func (s *Set) addVersion(cv *ocm.ComponentVersion, verified bool) *Component {
	d := cv.Descriptor.Component
	c := &Component{cv: cv, verified: verified, File: "repository " + cv.Repository.String()}
	c.Spec = ComponentSpec{Name: d.Name, Version: d.Version, Provider: Provider{Name: d.Provider.Name},
		CreationTime: d.CreationTime}
	for _, ref := range d.ComponentReferences {
		rs := ReferenceSpec{Name: ref.Name, ComponentName: ref.ComponentName, Version: ref.Version, ExtraIdentity: ref.ExtraIdentity}
		if ref.Digest != nil {
			rs.Digest, _ = json.Marshal(ref.Digest)
		}
		c.Spec.ComponentReferences = append(c.Spec.ComponentReferences, rs)
	}
	for i := range d.Resources {
		c.resources = append(c.resources, s.repositoryResource(c, d.Resources[i], d.Version))
	}
	for i := range d.Sources {
		c.sources = append(c.sources, s.repositoryResource(c, d.Sources[i], d.Version))
	}
	s.byID[c.ID()] = c
	s.components = append(s.components, c)
	return c
}

func (s *Set) repositoryResource(c *Component, res ocm.Resource, _ string) *Resource {
	r := &Resource{Name: res.Name, Version: res.Version, Type: res.Type, Relation: res.Relation,
		ExtraIdentity: res.ExtraIdentity, Access: res.Access}
	for _, l := range res.Labels {
		r.Labels = append(r.Labels, Label{Name: l.Name, Value: l.Value, Version: l.Version, Signing: l.Signing})
	}
	r.fetch = sync.OnceValues(func() (*Blob, error) {
		ctx, access := s.ctx, res.Access
		if c.verified {
			// Fetched where the signature says, or not at all: the digest
			// check after the fetch cannot undo a connection made.
			var err error
			if access, err = pinnedAccess(res); err != nil {
				return nil, &VerificationError{Err: fmt.Errorf("resource %q of component %s: %w", res.Name, c.ID(), err)}
			}
			ctx = ocm.WithVerifiedFetch(ctx)
		}
		b, err := s.resolver.Blob(ctx, c.cv, access)
		if err != nil {
			if errors.Is(err, ocm.ErrUnsupportedAccess) {
				return nil, fmt.Errorf("resource %q of component %s: %w", res.Name, c.ID(), err)
			}
			return nil, fmt.Errorf("resource %q of component %s (%s): %w", res.Name, c.ID(), c.origin(), err)
		}
		if c.verified {
			if s.verifier == nil {
				return nil, errors.New("internal error: a verified component without a verifier")
			}
			if err := s.verifier.CheckBlob(res, b); err != nil {
				return nil, &VerificationError{Err: fmt.Errorf("resource %q of component %s: %w", res.Name, c.ID(), err)}
			}
		}
		if int64(len(b.Data)) > MaxBlobSize {
			return nil, fmt.Errorf("resource %q of component %s is %d bytes, larger than the limit of %d", res.Name, c.ID(), len(b.Data), MaxBlobSize)
		}
		// Computed here from the bytes: a reader's word is no digest.
		digest := strings.TrimPrefix(ocm.Digest(b.Data), "sha256:")
		return &Blob{MediaType: b.MediaType, Data: b.Data, Digest: digest}, nil
	})
	return r
}

// Warnings are what resolving the Set had to say without failing: versions
// served from the cache while their repository was unreachable.
func (s *Set) Warnings() []string {
	var out []string
	for _, c := range s.components {
		if c.cv != nil && c.cv.Warning != "" {
			out = append(out, c.cv.Warning)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// RepositoryContext is the repository the component was read from; nil
// for a component of a constructor file.
func (c *Component) RepositoryContext() map[string]any {
	if c.cv == nil {
		return nil
	}
	return c.cv.Repository.Raw
}
