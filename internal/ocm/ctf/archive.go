package ctf

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// componentArchive is a component archive: one component version, its
// descriptor and its local blobs by file name.
type componentArchive struct {
	spec  ocm.RepositorySpec
	files fileSet
	cv    *ocm.ComponentVersion
}

func openArchive(spec ocm.RepositorySpec, files fileSet) (*componentArchive, error) {
	raw, err := files.read("component-descriptor.yaml", ocm.MaxDescriptorSize)
	if err != nil {
		return nil, fmt.Errorf("component archive %s: %w", spec.FilePath, err)
	}
	d, err := ocm.ParseDescriptor(raw)
	if err != nil {
		return nil, fmt.Errorf("component archive %s: %w", spec.FilePath, err)
	}
	a := &componentArchive{spec: spec, files: files}
	a.cv = &ocm.ComponentVersion{Descriptor: d, Raw: raw, Digest: ocm.Digest(raw), Repository: spec, Blobs: a}
	return a, nil
}

func (a *componentArchive) Spec() ocm.RepositorySpec { return a.spec }

// Versions lists the archive's one version when it is component's.
func (a *componentArchive) Versions(_ context.Context, component string) ([]string, error) {
	if id := a.cv.Descriptor.ID(); id.Name == component {
		return []string{id.Version}, nil
	}
	return nil, nil
}

func (a *componentArchive) ComponentVersion(_ context.Context, name, version string) (*ocm.ComponentVersion, error) {
	if id := a.cv.Descriptor.ID(); id.Name != name || id.Version != version {
		return nil, fmt.Errorf("component archive %s holds %s, not %s:%s: %w", a.spec.FilePath, id, name, version, ocm.ErrNotFound)
	}
	return a.cv, nil
}

func (a *componentArchive) Blob(_ context.Context, access map[string]any) (*ocm.Blob, error) {
	file, mediaType, ok, err := ocm.LocalBlobRef(access)
	if !ok {
		return nil, ocm.ErrUnsupportedAccess
	}
	if err != nil {
		return nil, err
	}
	var digest string
	// A digest names the blob file sha256.<hex>; OCM writes that, the
	// component-cli sha256:<hex> (which is also tried).
	if strings.HasPrefix(file, "sha256:") {
		digest = file
		if !a.files.exists(path.Join("blobs", file)) {
			file = strings.Replace(file, ":", ".", 1)
		}
	}
	if file == "" || strings.Contains(file, "/") || strings.Contains(file, "\\") || file == "." || file == ".." {
		return nil, fmt.Errorf("component archive %s: blob name %q is not a file name in blobs/", a.spec.FilePath, file)
	}
	data, err := a.files.read(path.Join("blobs", file), MaxBlobSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("component archive %s has no blob %s: %w", a.spec.FilePath, file, ocm.ErrNotFound)
		}
		return nil, fmt.Errorf("component archive %s: %w", a.spec.FilePath, err)
	}
	d := ocm.Digest(data)
	if digest != "" && d != digest {
		return nil, fmt.Errorf("component archive %s: blob %s does not match its digest", a.spec.FilePath, file)
	}
	return &ocm.Blob{MediaType: mediaType, Data: data, Digest: d}, nil
}
