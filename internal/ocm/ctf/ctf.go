// Package ctf reads OCM repositories kept in files: a common transport
// format (CTF: artifact-index.json and blobs/, as `ocm add componentversions
// --create --file` and `ocm transfer` write it), as a directory or a tar
// archive (gzipped or not), and a component archive (component-descriptor.yaml
// and blobs/, as `ocm download component` or the Gardener component-cli
// write it).
package ctf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ociregistry"
)

// Limits on what an archive may make this process read.
const (
	MaxArchiveSize = 1 << 30
	MaxEntries     = 100000
	MaxBlobSize    = 256 << 20
)

// Open opens the file repository at p: a CTF directory or archive, or a
// component archive directory or archive.
func Open(p string) (ocm.Repository, error) {
	spec := ocm.RepositorySpec{Type: ocm.TypeCTF, FilePath: p, Raw: map[string]any{"type": ocm.TypeCTF, "filePath": p}}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("repository %s: %w", p, err)
	}
	var files fileSet
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("repository %s: %w", p, notRegular(p, fi))
	}
	if fi.IsDir() {
		root, err := os.OpenRoot(p)
		if err != nil {
			return nil, fmt.Errorf("repository %s: %w", p, err)
		}
		files = dirFiles{root: root}
	} else {
		m, err := readArchive(p)
		if err != nil {
			return nil, fmt.Errorf("repository %s: %w", p, err)
		}
		files = m
	}
	switch {
	case files.exists("artifact-index.json"):
		return openCTF(spec, files)
	case files.exists("component-descriptor.yaml"):
		spec.Type, spec.Raw["type"] = ocm.TypeComponentArchive, ocm.TypeComponentArchive
		return openArchive(spec, files)
	}
	return nil, fmt.Errorf("repository %s is neither a CTF (no artifact-index.json) nor a component archive (no component-descriptor.yaml)", p)
}

// fileSet is the files of a repository: a directory or an archive, read on
// demand.
type fileSet interface {
	exists(name string) bool
	read(name string, limit int64) ([]byte, error)
}

type dirFiles struct{ root *os.Root }

func (d dirFiles) exists(name string) bool {
	_, err := d.root.Stat(name)
	return err == nil
}

// read goes through os.Root, so a name or a symbolic link cannot leave the
// repository directory. Only regular files are read: opening a FIFO would
// wait for a writer, and a device may never end, so the type is checked
// before opening, and the open does not block should the file be swapped
// in between.
func (d dirFiles) read(name string, limit int64) ([]byte, error) {
	fi, err := d.root.Stat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(name, fi)
	}
	f, err := d.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(name, fi)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, larger than the limit of %d", name, fi.Size(), limit)
	}
	return ocm.ReadLimited(f, limit, name)
}

func notRegular(name string, fi fs.FileInfo) error {
	return fmt.Errorf("%s is not a regular file (%s), which a repository must not hold", name, fi.Mode().Type())
}

// index is a CTF's artifact-index.json.
type index struct {
	SchemaVersion int `json:"schemaVersion"`
	Artifacts     []struct {
		Repository string `json:"repository"`
		Tag        string `json:"tag"`
		Digest     string `json:"digest"`
	} `json:"artifacts"`
}

type ctfRepo struct {
	spec  ocm.RepositorySpec
	files fileSet
	index index
}

func openCTF(spec ocm.RepositorySpec, files fileSet) (*ctfRepo, error) {
	data, err := files.read("artifact-index.json", ocm.MaxDescriptorSize)
	if err != nil {
		return nil, fmt.Errorf("CTF %s: %w", spec.FilePath, err)
	}
	r := &ctfRepo{spec: spec, files: files}
	if err := json.Unmarshal(data, &r.index); err != nil {
		return nil, fmt.Errorf("CTF %s: artifact-index.json: %w", spec.FilePath, err)
	}
	if r.index.SchemaVersion != 1 {
		return nil, fmt.Errorf("CTF %s: artifact-index.json has schemaVersion %d (1 is supported)", spec.FilePath, r.index.SchemaVersion)
	}
	return r, nil
}

func (r *ctfRepo) Spec() ocm.RepositorySpec { return r.spec }

// blobName is where a CTF keeps the blob of a digest.
func blobName(digest string) (string, error) {
	algo, hexDigest, ok := strings.Cut(digest, ":")
	if !ok || algo != "sha256" || len(hexDigest) != 64 || strings.ContainsAny(hexDigest, "/.\\") {
		return "", fmt.Errorf("%q is not a sha256 digest", digest)
	}
	return "blobs/sha256." + hexDigest, nil
}

func (r *ctfRepo) blob(digest string, limit int64) ([]byte, error) {
	name, err := blobName(digest)
	if err != nil {
		return nil, err
	}
	data, err := r.files.read(name, limit)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("CTF %s has no blob %s: %w", r.spec.FilePath, digest, ocm.ErrNotFound)
		}
		return nil, fmt.Errorf("CTF %s: %w", r.spec.FilePath, err)
	}
	if ocm.Digest(data) != digest {
		return nil, fmt.Errorf("CTF %s: blob %s does not match its digest", r.spec.FilePath, digest)
	}
	return data, nil
}

// Versions lists the versions of component the CTF's index holds.
func (r *ctfRepo) Versions(_ context.Context, component string) ([]string, error) {
	var versions []string
	for _, a := range r.index.Artifacts {
		if a.Repository == "component-descriptors/"+component && a.Tag != "" {
			versions = append(versions, strings.ReplaceAll(a.Tag, ".build-", "+"))
		}
	}
	return versions, nil
}

func (r *ctfRepo) ComponentVersion(_ context.Context, name, version string) (*ocm.ComponentVersion, error) {
	repo := "component-descriptors/" + name
	tag := strings.ReplaceAll(version, "+", ".build-")
	var digest string
	var held []string
	for _, a := range r.index.Artifacts {
		if c, ok := strings.CutPrefix(a.Repository, "component-descriptors/"); ok {
			held = append(held, c+":"+a.Tag)
		}
		if a.Repository == repo && (a.Tag == tag || a.Tag == version) {
			digest = a.Digest
		}
	}
	if digest == "" {
		slices.Sort(held)
		return nil, fmt.Errorf("CTF %s has no component version %s:%s (it holds %s): %w", r.spec.FilePath, name, version,
			strings.Join(held, ", "), ocm.ErrNotFound)
	}
	what := fmt.Sprintf("CTF %s: component version %s:%s", r.spec.FilePath, name, version)
	manifest, err := r.blob(digest, ocm.MaxDescriptorSize)
	if err != nil {
		return nil, err
	}
	m, err := v1.ParseManifest(bytes.NewReader(manifest))
	if err != nil {
		return nil, fmt.Errorf("%s: the manifest is malformed: %w", what, err)
	}
	raw, err := ociregistry.DescriptorFromManifest(m, func(d string) ([]byte, error) { return r.blob(d, 2*ocm.MaxDescriptorSize) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	d, err := ocm.ParseDescriptor(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &ocm.ComponentVersion{Descriptor: d, Raw: raw, Digest: digest, Repository: r.spec,
		Blobs: &ctfBlobs{r: r, manifest: m}}, nil
}

type ctfBlobs struct {
	r        *ctfRepo
	manifest *v1.Manifest
}

func (b *ctfBlobs) Blob(_ context.Context, access map[string]any) (*ocm.Blob, error) {
	digest, mediaType, ok, err := ocm.LocalBlobRef(access)
	if !ok || ocm.AccessType(access) == ocm.AccessLocalFilesystemBlob {
		return nil, ocm.ErrUnsupportedAccess
	}
	if err != nil {
		return nil, err
	}
	data, err := b.r.blob(digest, MaxBlobSize)
	if err != nil {
		return nil, err
	}
	if mediaType == "" {
		for _, l := range b.manifest.Layers {
			if l.Digest.String() == digest {
				mediaType = string(l.MediaType)
			}
		}
	}
	return &ocm.Blob{MediaType: mediaType, Data: data, Digest: digest}, nil
}
