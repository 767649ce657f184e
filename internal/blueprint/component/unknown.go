package component

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// UnknownVersionError is a component version that neither the constructor
// files nor the repository hold. It lists the versions of that component
// they do hold, so that a typo in a version shows as one, rather than
// sending the user to configure a repository.
type UnknownVersionError struct {
	// ID is the version looked for, overwrites applied.
	ID ID
	// Constructors tells whether constructor files were given;
	// ConstructorVersions are the versions of ID.Name they hold.
	Constructors        bool
	ConstructorVersions []string
	// Repository names the repository looked in, "" for none.
	// RepositoryVersions are the versions of ID.Name it holds, when it
	// could list them (Listed).
	Repository         string
	RepositoryVersions []string
	Listed             bool
	// Err is the lookup's error.
	Err error
}

func (e *UnknownVersionError) Unwrap() error { return e.Err }

// maxListed bounds the versions a message lists: a registry may hold
// hundreds, and the highest are the likeliest meant.
const maxListed = 10

func (e *UnknownVersionError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "component %s version %s was not found", e.ID.Name, e.ID.Version)
	if e.Constructors {
		fmt.Fprintf(&b, "; the constructor files offer %s", offered(e.ConstructorVersions))
	}
	switch {
	case e.Repository == "" && !e.Constructors:
		b.WriteString("; there is nowhere to look it up: give constructor files (component.constructors) or a repository " +
			"(component.repository_context, component.repository or the provider's repository_context)")
	case e.Repository == "":
		b.WriteString("; no repository is configured to look it up in (component.repository_context, component.repository " +
			"or the provider's repository_context)")
	case e.Listed:
		fmt.Fprintf(&b, "; repository %s offers %s", e.Repository, offered(e.RepositoryVersions))
	default:
		fmt.Fprintf(&b, "; %v", e.Err)
	}
	return b.String()
}

// offered lists versions, highest first (semantic versions by precedence,
// the rest after them by name).
func offered(versions []string) string {
	if len(versions) == 0 {
		return "no version of it"
	}
	vs := slices.Clone(versions)
	slices.SortFunc(vs, func(a, b string) int {
		va, ea := semver.NewVersion(a)
		vb, eb := semver.NewVersion(b)
		switch {
		case ea == nil && eb == nil:
			if c := vb.Compare(va); c != 0 {
				return c
			}
		case ea == nil:
			return -1
		case eb == nil:
			return 1
		}
		return strings.Compare(a, b)
	})
	vs = slices.Compact(vs)
	more := ""
	if len(vs) > maxListed {
		more = fmt.Sprintf(" and %d more", len(vs)-maxListed)
		vs = vs[:maxListed]
	}
	noun := "versions "
	if len(vs) == 1 && more == "" {
		noun = "version "
	}
	return noun + strings.Join(vs, ", ") + more
}

// unknownVersion turns a failed lookup of ref into an UnknownVersionError
// when the version is simply not there (or there is nowhere to look);
// other errors (an unreachable registry, a refused credential) are
// returned as they are.
func (s *Set) unknownVersion(ctx context.Context, ref ocm.Ref, err error) error {
	if !errors.Is(err, ocm.ErrNotFound) && !errors.Is(err, ocm.ErrNoRepository) {
		return err
	}
	eff := s.resolver.Effective(ref)
	e := &UnknownVersionError{ID: ID{eff.ComponentName, eff.Version}, Constructors: s.constructors, Err: err}
	for _, c := range s.components {
		if c.cv == nil && c.Spec.Name == eff.ComponentName {
			e.ConstructorVersions = append(e.ConstructorVersions, c.Spec.Version)
		}
	}
	if errors.Is(err, ocm.ErrNoRepository) {
		return e
	}
	repo, versions, lerr := s.resolver.Versions(ctx, ref)
	e.Repository = repo
	if lerr == nil && repo != "" {
		e.RepositoryVersions, e.Listed = versions, versions != nil
	}
	return e
}
