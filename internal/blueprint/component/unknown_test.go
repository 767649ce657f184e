package component

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// listingRepo is a fakeRepo that lists the versions it holds.
type listingRepo struct{ *fakeRepo }

func (l listingRepo) Versions(_ context.Context, component string) ([]string, error) {
	var vs []string
	for id := range l.descs {
		if name, v, _ := strings.Cut(id, ":"); name == component {
			vs = append(vs, v)
		}
	}
	return vs, nil
}

func writeConstructor(t *testing.T, versions ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("components:\n")
	for _, v := range versions {
		b.WriteString("- {name: github.com/acme/app, version: " + v + ", provider: {name: acme}}\n")
	}
	p := filepath.Join(t.TempDir(), "component-constructor.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A version typo is answered with the versions there are, from the
// constructor files and from the repository, instead of a pointer to
// configure a repository.
func TestUnknownVersionListsTheVersionsThereAre(t *testing.T) {
	ctor := writeConstructor(t, "v1.0.0", "v0.9.0")

	// No repository: the constructor files' versions, and that there is
	// nowhere else to look.
	noRepo := ocm.NewResolver(ocm.Context{Open: func(ocm.RepositorySpec) (ocm.Repository, error) { return nil, errors.New("unused") }})
	_, err := Resolve(context.Background(), ResolveOptions{Constructors: []string{ctor}, Root: ID{"github.com/acme/app", "v1.0.1"}, Resolver: noRepo})
	var ue *UnknownVersionError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v", err)
	}
	want := "component github.com/acme/app version v1.0.1 was not found; the constructor files offer versions v1.0.0, v0.9.0; " +
		"no repository is configured to look it up in"
	if !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("err = %v\nwant %s...", err, want)
	}

	// A repository that lists its versions: both lists, highest first by
	// semantic version (v1.10.0 above v1.9.0).
	f, _ := newFake()
	for _, v := range []string{"v1.9.0", "v1.10.0", "v1.0.0"} {
		f.descs["github.com/acme/app:"+v] = descYAML("github.com/acme/app", v, nil, "")
	}
	r := ocm.NewResolver(ocm.Context{
		RepositoryContext: map[string]any{"type": "OCIRegistry", "baseUrl": "registry.test/ocm"},
		Open:              func(ocm.RepositorySpec) (ocm.Repository, error) { return listingRepo{f}, nil },
	})
	_, err = Resolve(context.Background(), ResolveOptions{Constructors: []string{ctor}, Root: ID{"github.com/acme/app", "v1.0.1"}, Resolver: r})
	want = "component github.com/acme/app version v1.0.1 was not found; the constructor files offer versions v1.0.0, v0.9.0; " +
		"repository registry.test/ocm offers versions v1.10.0, v1.9.0, v1.0.0"
	if !errors.As(err, &ue) || err.Error() != want || !errors.Is(err, ocm.ErrNotFound) {
		t.Fatalf("err = %v\nwant %s", err, want)
	}

	// A repository that cannot list: its own answer stands. A reference
	// of another component keeps naming who references it.
	_, plain := newFake()
	_, err = Resolve(context.Background(), ResolveOptions{Root: ID{"github.com/acme/app", "v2"}, Resolver: plain})
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "github.com/acme/app:v2 in registry.test/ocm: not found") ||
		strings.Contains(err.Error(), "constructor") {
		t.Fatalf("err = %v", err)
	}
	f.descs["root:1"] = descYAML("root", "1", [][2]string{{"github.com/acme/app", "v3"}}, "")
	_, err = Resolve(context.Background(), ResolveOptions{Root: ID{"root", "1"}, Resolver: r})
	if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), `component root:1 (repository registry.test/ocm): reference "github.com/acme/app": `+
		"component github.com/acme/app version v3 was not found; repository registry.test/ocm offers versions v1.10.0") {
		t.Fatalf("err = %v", err)
	}
}

func TestOfferedBoundsTheList(t *testing.T) {
	var vs []string
	for i := range 15 {
		vs = append(vs, "1.0."+string(rune('a'+i)))
	}
	got := offered(append(vs, "2.0.0", "1.5.0"))
	if !strings.HasPrefix(got, "versions 2.0.0, 1.5.0, 1.0.a") || !strings.HasSuffix(got, " and 7 more") {
		t.Fatalf("offered = %s", got)
	}
	if got := offered([]string{"v1"}); got != "version v1" {
		t.Fatalf("offered = %s", got)
	}
	if got := offered(nil); got != "no version of it" {
		t.Fatalf("offered = %s", got)
	}
}

func TestUnknownVersionWithNowhereToLook(t *testing.T) {
	noRepo := ocm.NewResolver(ocm.Context{})
	_, err := Resolve(context.Background(), ResolveOptions{Root: ID{"github.com/acme/app", "v1"}, Resolver: noRepo})
	if err == nil || !strings.HasSuffix(err.Error(), "was not found; there is nowhere to look it up: give constructor files (component.constructors) "+
		"or a repository (component.repository_context, component.repository or the provider's repository_context)") {
		t.Fatalf("err = %v", err)
	}
}
