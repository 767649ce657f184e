package component

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// slowRepo is a fakeRepo whose lookups take a while, counting how many
// run at once and in all.
type slowRepo struct {
	*fakeRepo
	inFlight, most, calls atomic.Int64
}

func (s *slowRepo) ComponentVersion(ctx context.Context, name, version string) (*ocm.ComponentVersion, error) {
	s.calls.Add(1)
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
	}
	time.Sleep(5 * time.Millisecond)
	return s.fakeRepo.ComponentVersion(ctx, name, version)
}

// wideRoot is a root descriptor referencing n components (each twice).
func wideRoot(n int) *slowRepo {
	f, _ := newFake()
	var refs [][2]string
	for i := range n {
		refs = append(refs, [2]string{fmt.Sprintf("c%d", i), "1"}, [2]string{fmt.Sprintf("c%d", i), "1"})
		f.descs[fmt.Sprintf("c%d:1", i)] = descYAML(fmt.Sprintf("c%d", i), "1", nil, "")
	}
	f.descs["root:1"] = descYAML("root", "1", refs, "")
	return &slowRepo{fakeRepo: f}
}

func resolveFrom(s *slowRepo) error {
	r := ocm.NewResolver(ocm.Context{
		RepositoryContext: map[string]any{"type": "OCIRegistry", "baseUrl": "registry.test/ocm"},
		Open:              func(ocm.RepositorySpec) (ocm.Repository, error) { return s, nil },
	})
	_, err := Resolve(context.Background(), ResolveOptions{Root: ID{"root", "1"}, Resolver: r})
	return err
}

// A descriptor's references are fetched a few at a time and each once: a
// repository decides how many there are.
func TestReferencesAreFetchedBounded(t *testing.T) {
	s := wideRoot(200)
	if err := resolveFrom(s); err != nil {
		t.Fatal(err)
	}
	if m := s.most.Load(); m > maxFetches {
		t.Errorf("%d component versions were fetched at once, want at most %d", m, maxFetches)
	}
	if c := s.calls.Load(); c != 201 {
		t.Errorf("%d fetches for 201 component versions (each referenced twice)", c)
	}
}

func TestTooManyComponentVersionsAreRefused(t *testing.T) {
	err := resolveFrom(wideRoot(MaxComponents + 1))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d component versions", MaxComponents)) {
		t.Fatalf("err = %v, want the bound named", err)
	}
}
