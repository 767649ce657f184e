package ctf_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ctf"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ctf/ctftest"
)

func blobOf(t *testing.T, cv *ocm.ComponentVersion, resource string) *ocm.Blob {
	t.Helper()
	r, err := cv.Descriptor.Resource(resource, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cv.Blobs.Blob(context.Background(), r.Access)
	if err != nil {
		t.Fatalf("resource %s: %v", resource, err)
	}
	return b
}

// The component archives of real tools read as they were written.
func TestRealComponentArchives(t *testing.T) {
	ctx := context.Background()
	repo, err := ctf.Open("testdata/guided-tour-helm-chart")
	if err != nil {
		t.Fatal(err)
	}
	cv, err := repo.ComponentVersion(ctx, "github.com/gardener/landscaper-examples/guided-tour/helm-chart", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	bp := blobOf(t, cv, "blueprint")
	r, _ := cv.Descriptor.Resource("blueprint", nil)
	if "sha256:"+r.Digest.Value != bp.Digest || bp.MediaType != "application/vnd.gardener.landscaper.blueprint.v1+tar+gzip" || len(bp.Data) != 584 {
		t.Fatalf("blueprint blob %s %s %d, descriptor digest %s", bp.Digest, bp.MediaType, len(bp.Data), r.Digest.Value)
	}
	chart, _ := cv.Descriptor.Resource("echo-server-chart", nil)
	if _, err := cv.Blobs.Blob(ctx, chart.Access); !errors.Is(err, ocm.ErrUnsupportedAccess) {
		t.Fatalf("ociArtifact in an archive: %v (a registry client serves it)", err)
	}
	if _, err := repo.ComponentVersion(ctx, "github.com/gardener/landscaper-examples/guided-tour/helm-chart", "2.0.0"); !errors.Is(err, ocm.ErrNotFound) {
		t.Fatalf("other version: %v", err)
	}

	for dir, comp := range map[string]string{"testdata/component-cli-ca-blob": "example.com/component:v0.0.0:myconfig", "testdata/ocmlib-local": "example.com/root:1.0.0:test"} {
		parts := strings.Split(comp, ":")
		repo, err := ctf.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		cv, err := repo.ComponentVersion(ctx, parts[0], parts[1])
		if err != nil {
			t.Fatal(err)
		}
		if b := blobOf(t, cv, parts[2]); len(b.Data) == 0 || b.MediaType != "text/plain" {
			t.Fatalf("%s: %+v", dir, b)
		}
	}
}

const desc = `meta:
  schemaVersion: v2
component:
  name: %s
  version: %s
  provider: acme
  repositoryContexts: []
  sources: []
  componentReferences: []
  resources:
  - name: data
    version: v1
    type: plainText
    relation: local
    access: {type: localBlob, localReference: %q, mediaType: text/plain}
`

func TestCTFLayouts(t *testing.T) {
	ctx := context.Background()
	b1, b2 := []byte("one"), []byte("two")
	v := func(name, version string, data []byte) ctftest.Version {
		return ctftest.Version{Name: name, Version: version, Descriptor: []byte(fmt.Sprintf(desc, name, version, ocm.Digest(data))),
			Blobs: []ctftest.Blob{{MediaType: "text/plain", Data: data}}}
	}
	files := ctftest.Files(t, v("example.com/a", "1.0.0", b1), v("example.com/a", "2.0.0+build.7", b2), v("example.com/b", "1.0.0", b1))
	dir := t.TempDir()
	paths := map[string]string{
		"dir": ctftest.WriteDir(t, filepath.Join(dir, "ctf"), files),
		"tar": ctftest.WriteArchive(t, filepath.Join(dir, "ctf.tar"), files),
		"tgz": ctftest.WriteArchive(t, filepath.Join(dir, "ctf.tgz"), files),
	}
	for kind, p := range paths {
		t.Run(kind, func(t *testing.T) {
			repo, err := ctf.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			cv, err := repo.ComponentVersion(ctx, "example.com/a", "2.0.0+build.7")
			if err != nil {
				t.Fatal(err)
			}
			if b := blobOf(t, cv, "data"); string(b.Data) != "two" || b.MediaType != "text/plain" {
				t.Fatalf("blob %q", b.Data)
			}
			_, err = repo.ComponentVersion(ctx, "example.com/a", "3.0.0")
			if !errors.Is(err, ocm.ErrNotFound) || !strings.Contains(err.Error(), "example.com/b:1.0.0") {
				t.Fatalf("missing: %v", err)
			}
			l, ok := repo.(ocm.VersionLister)
			if !ok {
				t.Fatal("a CTF lists no versions")
			}
			vs, err := l.Versions(ctx, "example.com/a")
			if slices.Sort(vs); err != nil || !slices.Equal(vs, []string{"1.0.0", "2.0.0+build.7"}) {
				t.Fatalf("versions %v, %v", vs, err)
			}
		})
	}
	// A component archive, as a directory and as a tgz.
	ca := ctftest.ComponentArchiveFiles(t, v("example.com/a", "1.0.0", b1))
	for _, p := range []string{ctftest.WriteDir(t, filepath.Join(dir, "ca"), ca), ctftest.WriteArchive(t, filepath.Join(dir, "ca.tgz"), ca)} {
		repo, err := ctf.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		cv, err := repo.ComponentVersion(ctx, "example.com/a", "1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		if b := blobOf(t, cv, "data"); string(b.Data) != "one" {
			t.Fatalf("%s: %q", p, b.Data)
		}
		l, ok := repo.(ocm.VersionLister)
		if !ok {
			t.Fatal("a component archive lists no versions")
		}
		if vs, err := l.Versions(ctx, "example.com/a"); err != nil || !slices.Equal(vs, []string{"1.0.0"}) {
			t.Fatalf("versions %v, %v", vs, err)
		}
		if vs, err := l.Versions(ctx, "example.com/b"); err != nil || len(vs) != 0 {
			t.Fatalf("versions of another component %v, %v", vs, err)
		}
	}
}

func TestBadRepositories(t *testing.T) {
	dir := t.TempDir()
	good := ctftest.Files(t, ctftest.Version{Name: "a", Version: "v1", Descriptor: []byte(fmt.Sprintf(desc, "a", "v1", ocm.Digest([]byte("x")))),
		Blobs: []ctftest.Blob{{MediaType: "text/plain", Data: []byte("x")}}})
	cases := map[string]struct {
		files map[string][]byte
		want  string
	}{
		"climbing entry":  {files: map[string][]byte{"../evil": []byte("x"), "artifact-index.json": good["artifact-index.json"]}, want: "outside the archive"},
		"absolute entry":  {files: map[string][]byte{"/etc/evil": []byte("x")}, want: "outside the archive"},
		"neither":         {files: map[string][]byte{"README": []byte("x")}, want: "neither a CTF"},
		"malformed index": {files: map[string][]byte{"artifact-index.json": []byte("{")}, want: "artifact-index.json"},
		"bad schema":      {files: map[string][]byte{"artifact-index.json": []byte(`{"schemaVersion":7}`)}, want: "schemaVersion 7"},
		"malformed descriptor": {files: map[string][]byte{"component-descriptor.yaml": []byte("meta: {schemaVersion: v9}")},
			want: `schema version "v9" is not supported`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := ctftest.WriteArchive(t, filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".tar"), tc.files)
			_, err := ctf.Open(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// A blob that does not match its digest.
	tampered := map[string][]byte{}
	for k, v := range good {
		tampered[k] = v
	}
	for k := range tampered {
		if strings.HasPrefix(k, "blobs/") && string(tampered[k]) == "x" {
			tampered[k] = []byte("y")
		}
	}
	repo, err := ctf.Open(ctftest.WriteDir(t, filepath.Join(dir, "tampered"), tampered))
	if err != nil {
		t.Fatal(err)
	}
	cv, err := repo.ComponentVersion(context.Background(), "a", "v1")
	if err != nil {
		t.Fatal(err)
	}
	r, _ := cv.Descriptor.Resource("data", nil)
	if _, err := cv.Blobs.Blob(context.Background(), r.Access); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("tampered blob: %v", err)
	}
	// A symbolic link out of a CTF directory is not followed.
	outside := filepath.Join(dir, "secret")
	_ = os.WriteFile(outside, []byte("secret"), 0o600)
	link := filepath.Join(dir, "linked")
	ctftest.WriteDir(t, link, good)
	for k := range good {
		if strings.HasPrefix(k, "blobs/") && string(good[k]) == "x" {
			p := filepath.Join(link, filepath.FromSlash(k))
			_ = os.Remove(p)
			if err := os.Symlink(outside, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	repo, _ = ctf.Open(link)
	cv, _ = repo.ComponentVersion(context.Background(), "a", "v1")
	if _, err := cv.Blobs.Blob(context.Background(), r.Access); err == nil {
		t.Fatal("a symbolic link out of the repository was followed")
	}
}

// CTFs written by OCM read as they were written: every version, and every
// local blob, whose content matches the digest its descriptor records.
func TestRealCTFs(t *testing.T) {
	ctx := context.Background()
	for dir, ids := range map[string][]string{
		"testdata/landscaper-ctf-local-blobs": {"github.com/root:1.0.0", "github.com/leaf:1.0.0"},
		"testdata/ocm-ctf-v0.18.0":            {"github.com/mandelsoft/test1:1.0.0"},
	} {
		repo, err := ctf.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		blobs := 0
		for _, id := range ids {
			name, version, _ := strings.Cut(id, ":")
			cv, err := repo.ComponentVersion(ctx, name, version)
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			for _, r := range append(cv.Descriptor.Component.Resources, cv.Descriptor.Component.Sources...) {
				if ocm.AccessType(r.Access) != ocm.AccessLocalBlob {
					continue
				}
				b, err := cv.Blobs.Blob(ctx, r.Access)
				if err != nil {
					t.Fatalf("%s resource %s: %v", id, r.Name, err)
				}
				blobs++
				if r.Digest != nil && r.Digest.NormalisationAlgorithm == "genericBlobDigest/v1" && "sha256:"+r.Digest.Value != ocm.Digest(b.Data) {
					t.Fatalf("%s resource %s: content does not match its recorded digest", id, r.Name)
				}
			}
		}
		if blobs == 0 {
			t.Fatalf("%s: no local blob read", dir)
		}
	}
}

// Archives are read on demand: an entry too large to keep from the
// indexing pass is read at its offset (tar) or by decompressing up to it
// (tgz), and an archive that changes while in use is refused.
func TestArchiveEntriesOnDemand(t *testing.T) {
	ctx := context.Background()
	big := make([]byte, 200<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	v := ctftest.Version{Name: "example.com/a", Version: "1.0.0", Descriptor: []byte(fmt.Sprintf(desc, "example.com/a", "1.0.0", ocm.Digest(big))),
		Blobs: []ctftest.Blob{{MediaType: "text/plain", Data: big}}}
	dir := t.TempDir()
	for _, kind := range []string{"tar", "tgz"} {
		t.Run(kind, func(t *testing.T) {
			p := ctftest.WriteArchive(t, filepath.Join(dir, "ctf."+kind), ctftest.Files(t, v))
			repo, err := ctf.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			cv, err := repo.ComponentVersion(ctx, "example.com/a", "1.0.0")
			if err != nil {
				t.Fatal(err)
			}
			if b := blobOf(t, cv, "data"); string(b.Data) != string(big) {
				t.Fatalf("blob of %d bytes read as %d", len(big), len(b.Data))
			}
			other := v
			other.Descriptor = []byte(strings.Replace(string(v.Descriptor), "relation: local", "relation: external", 1))
			ctftest.WriteArchive(t, p, ctftest.Files(t, other, ctftest.Version{Name: "example.com/b", Version: "1.0.0", Descriptor: other.Descriptor}))
			r, _ := cv.Descriptor.Resource("data", nil)
			if _, err := cv.Blobs.Blob(ctx, r.Access); err == nil || !strings.Contains(err.Error(), "changed while in use") {
				t.Fatalf("changed archive: %v", err)
			}
		})
	}
}
