package ocm

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Context is what resolving component versions needs: Landscaper's
// Context (default repository, overwrites) and how to reach repositories.
type Context struct {
	// RepositoryContext is the repository used when a reference names none.
	RepositoryContext map[string]any
	// Overwrites are applied to every reference, the root's included.
	Overwrites []Overwrite
	// Open opens the repository a spec names; it is called once per
	// repository per Resolver.
	Open func(spec RepositorySpec) (Repository, error)
	// Global serves the access types that are not relative to a
	// repository (ociArtifact, helm); nil refuses them.
	Global BlobSource
}

// Resolver resolves component versions for one operation: each version
// is fetched at most once however often, and from however many goroutines,
// it is asked for. Use one Resolver per operation, so that a re-pushed
// version is seen by the next one.
type Resolver struct {
	c        Context
	mu       sync.Mutex
	repos    map[string]*repoEntry
	versions map[string]*versionEntry
}

type repoEntry struct {
	once sync.Once
	repo Repository
	err  error
}

type versionEntry struct {
	once sync.Once
	cv   *ComponentVersion
	err  error
}

// NewResolver returns a Resolver for one operation.
func NewResolver(c Context) *Resolver {
	return &Resolver{c: c, repos: map[string]*repoEntry{}, versions: map[string]*versionEntry{}}
}

// Context returns the context the Resolver was made with.
func (r *Resolver) Context() Context { return r.c }

// Effective applies the overwrites and the default repository to ref: the
// reference that is then looked up.
func (r *Resolver) Effective(ref Ref) Ref {
	if ref.RepositoryContext == nil {
		ref.RepositoryContext = r.c.RepositoryContext
	}
	Overwrites(r.c.Overwrites, &ref)
	return ref
}

// Resolve looks up a component version, applying the overwrites and the
// default repository first.
func (r *Resolver) Resolve(ctx context.Context, ref Ref) (*ComponentVersion, error) {
	eff := r.Effective(ref)
	if eff.RepositoryContext == nil {
		return nil, fmt.Errorf("component %s: %w: set component.repository_context, component.repository "+
			"or the provider's repository_context, or add it to the constructor files", eff, ErrNoRepository)
	}
	spec, err := ParseRepositorySpec(eff.RepositoryContext)
	if err != nil {
		return nil, fmt.Errorf("component %s: %w", eff, err)
	}
	key := spec.Key() + "\x00" + eff.ComponentName + "\x00" + eff.Version
	r.mu.Lock()
	e, ok := r.versions[key]
	if !ok {
		e = &versionEntry{}
		r.versions[key] = e
	}
	r.mu.Unlock()
	e.once.Do(func() {
		repo, err := r.repository(spec)
		if err != nil {
			e.err = err
			return
		}
		e.cv, e.err = repo.ComponentVersion(ctx, eff.ComponentName, eff.Version)
		if e.err == nil && (e.cv.Descriptor.Component.Name != eff.ComponentName || e.cv.Descriptor.Component.Version != eff.Version) {
			e.err = fmt.Errorf("repository %s holds %s under %s", spec, e.cv.Descriptor.ID(), eff)
		}
	})
	return e.cv, e.err
}

// ErrNoRepository marks a lookup that had no repository to look in.
var ErrNoRepository = errors.New("no repository to look it up in")

// Versions lists the versions of ref's component that the repository ref
// resolves to (overwrites and default applied, the version ignored)
// holds, for messages that suggest one. It names the repository; the list
// is nil when there is none or it cannot list (VersionLister).
func (r *Resolver) Versions(ctx context.Context, ref Ref) (repo string, versions []string, err error) {
	eff := r.Effective(ref)
	if eff.RepositoryContext == nil {
		return "", nil, nil
	}
	spec, err := ParseRepositorySpec(eff.RepositoryContext)
	if err != nil {
		return "", nil, err
	}
	rp, err := r.repository(spec)
	if err != nil {
		return spec.String(), nil, err
	}
	l, ok := rp.(VersionLister)
	if !ok {
		return spec.String(), nil, nil
	}
	versions, err = l.Versions(ctx, eff.ComponentName)
	return spec.String(), versions, err
}

func (r *Resolver) repository(spec RepositorySpec) (Repository, error) {
	if r.c.Open == nil {
		return nil, errors.New("no repositories are configured")
	}
	r.mu.Lock()
	e, ok := r.repos[spec.Key()]
	if !ok {
		e = &repoEntry{}
		r.repos[spec.Key()] = e
	}
	r.mu.Unlock()
	e.once.Do(func() { e.repo, e.err = r.c.Open(spec) })
	return e.repo, e.err
}

// Blob returns the content behind an access of a resource of cv: from
// cv's repository, or from Global for access types that are not relative
// to a repository.
func (r *Resolver) Blob(ctx context.Context, cv *ComponentVersion, access map[string]any) (*Blob, error) {
	if err := CheckAccessType(access); err != nil {
		return nil, err
	}
	if cv != nil && cv.Blobs != nil {
		b, err := cv.Blobs.Blob(ctx, access)
		if err == nil || !errors.Is(err, ErrUnsupportedAccess) {
			return b, err
		}
	}
	if r.c.Global == nil {
		return nil, fmt.Errorf("%w %q: no registry client is configured", ErrUnsupportedAccess, AccessType(access))
	}
	return r.c.Global.Blob(ctx, access)
}
