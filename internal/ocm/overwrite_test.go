package ocm

import "testing"

func TestOverwrites(t *testing.T) {
	tour := map[string]any{"type": "ociRegistry", "baseUrl": "europe-docker.pkg.dev/tutorials/components"}
	own := map[string]any{"type": "OCIRegistry", "baseUrl": "example.org/my-own-registry/components"}
	// The two entries of Landscaper's ComponentOverwrites guide.
	guide := []Overwrite{
		{Source: OverwriteRef{ComponentName: "github.com/gardener/landscaper/echo-server", RepositoryContext: tour},
			Substitution: OverwriteRef{ComponentName: "my-own-echo-server", RepositoryContext: own}},
		{Source: OverwriteRef{ComponentName: "github.com/gardener/landscaper/echo-server"},
			Substitution: OverwriteRef{ComponentName: "another-echo-server", Version: "v1.2.3"}},
	}
	cases := []struct {
		name    string
		list    []Overwrite
		in      Ref
		want    Ref
		changed bool
	}{
		{
			name: "first entry wins the name; the second cannot give its version alone (whole or not at all)",
			list: guide,
			in:   Ref{ComponentName: "github.com/gardener/landscaper/echo-server", Version: "v0.2.0", RepositoryContext: tour},
			want: Ref{ComponentName: "my-own-echo-server", Version: "v0.2.0", RepositoryContext: own}, changed: true,
		},
		{
			name: "other repository: only the second entry matches",
			list: guide,
			in:   Ref{ComponentName: "github.com/gardener/landscaper/echo-server", Version: "v0.2.0", RepositoryContext: own},
			want: Ref{ComponentName: "another-echo-server", Version: "v1.2.3", RepositoryContext: own}, changed: true,
		},
		{
			name: "the legacy type spelling matches the OCM one",
			list: []Overwrite{{Source: OverwriteRef{RepositoryContext: map[string]any{"type": "OCIRegistry", "baseUrl": "europe-docker.pkg.dev/tutorials/components"}},
				Substitution: OverwriteRef{Version: "v9"}}},
			in:   Ref{ComponentName: "x", Version: "v1", RepositoryContext: tour},
			want: Ref{ComponentName: "x", Version: "v9", RepositoryContext: tour}, changed: true,
		},
		{
			name: "no match",
			list: guide,
			in:   Ref{ComponentName: "other", Version: "v1", RepositoryContext: tour},
			want: Ref{ComponentName: "other", Version: "v1", RepositoryContext: tour},
		},
		{
			name: "version match only",
			list: []Overwrite{{Source: OverwriteRef{Version: "v1"}, Substitution: OverwriteRef{Version: "v2"}},
				{Source: OverwriteRef{ComponentName: "a"}, Substitution: OverwriteRef{Version: "v3"}}},
			in:   Ref{ComponentName: "a", Version: "v1"},
			want: Ref{ComponentName: "a", Version: "v2"}, changed: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in
			changed := Overwrites(tc.list, &got)
			if changed != tc.changed || got.ComponentName != tc.want.ComponentName || got.Version != tc.want.Version ||
				!sameContext(got.RepositoryContext, tc.want.RepositoryContext) {
				t.Fatalf("got %+v (changed %v), want %+v (changed %v)", got, changed, tc.want, tc.changed)
			}
		})
	}
}
