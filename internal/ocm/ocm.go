// Package ocm reads component versions from OCM repositories: OCI
// registries (OCM's and the legacy Gardener layout), common transport
// formats and component archives. It knows the descriptor schemas (v2 and
// v3), Landscaper's repository contexts and component overwrites, and a
// digest-addressed disk cache. Repository implementations live in
// subpackages (ociregistry, ctf); signature checks in signing.
//
// Nothing here knows Terraform or blueprints: callers ask for a component
// version and for the content of its resources.
package ocm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Repository types, as Landscaper's repositoryContext names them. OCM
// writes OCIRegistry; component-spec v2 descriptors carry ociRegistry.
const (
	TypeOCIRegistry       = "OCIRegistry"
	TypeOCIRegistryLegacy = "ociRegistry"
	// TypeCTF and TypeComponentArchive are local repositories: a common
	// transport format (directory or archive) and a component archive.
	TypeCTF              = "CommonTransportFormat"
	TypeComponentArchive = "ComponentArchive"
)

// Component name mappings of an OCI registry repository.
const (
	MappingURLPath      = "urlPath"
	MappingSHA256Digest = "sha256-digest"
)

// RepositorySpec is Landscaper's repositoryContext: a typed object whose
// keys are kept verbatim (Raw) so templates and descriptors see what the
// user wrote.
type RepositorySpec struct {
	Type                 string
	BaseURL              string
	SubPath              string
	ComponentNameMapping string
	// FilePath is the path of a CTF or component archive (types TypeCTF and
	// TypeComponentArchive).
	FilePath string
	Raw      map[string]any
}

// ParseRepositorySpec reads a repositoryContext. Unknown types are an
// error naming the type and the supported ones.
func ParseRepositorySpec(raw map[string]any) (RepositorySpec, error) {
	s := RepositorySpec{Raw: raw}
	str := func(k string) (string, error) {
		v, ok := raw[k]
		if !ok || v == nil {
			return "", nil
		}
		sv, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("repositoryContext.%s must be a string", k)
		}
		return sv, nil
	}
	var err error
	if s.Type, err = str("type"); err != nil {
		return s, err
	}
	switch s.Type {
	case TypeOCIRegistry, TypeOCIRegistryLegacy:
		if s.BaseURL, err = str("baseUrl"); err != nil {
			return s, err
		}
		if s.BaseURL == "" {
			return s, errors.New("repositoryContext.baseUrl is required for type " + s.Type)
		}
		if s.SubPath, err = str("subPath"); err != nil {
			return s, err
		}
		if s.ComponentNameMapping, err = str("componentNameMapping"); err != nil {
			return s, err
		}
		switch s.ComponentNameMapping {
		case "":
			s.ComponentNameMapping = MappingURLPath
		case MappingURLPath, MappingSHA256Digest:
		default:
			return s, fmt.Errorf("repositoryContext.componentNameMapping %q is not supported (urlPath, sha256-digest)", s.ComponentNameMapping)
		}
	case TypeCTF, TypeComponentArchive:
		if s.FilePath, err = str("filePath"); err != nil {
			return s, err
		}
		if s.FilePath == "" {
			return s, errors.New("repositoryContext.filePath is required for type " + s.Type)
		}
	case "":
		return s, errors.New("repositoryContext.type is required (OCIRegistry)")
	default:
		return s, fmt.Errorf("repositoryContext type %q is not supported (supported: OCIRegistry, ociRegistry)", s.Type)
	}
	return s, nil
}

// Key identifies the repository for caches and messages; it holds no
// credential.
func (s RepositorySpec) Key() string {
	switch s.Type {
	case TypeCTF, TypeComponentArchive:
		return s.Type + ":" + s.FilePath
	}
	k := strings.TrimSuffix(s.BaseURL, "/")
	if s.SubPath != "" {
		k += "/" + strings.Trim(s.SubPath, "/")
	}
	if s.ComponentNameMapping == MappingSHA256Digest {
		k += "#" + MappingSHA256Digest
	}
	return k
}

func (s RepositorySpec) String() string { return s.Key() }

// Registry is the host (host[:port]) of an OCI registry repository's
// baseUrl, and whether the baseUrl asks for plain HTTP; "" for local
// repositories.
func (s RepositorySpec) Registry() (host string, plainHTTP bool) {
	if s.Type != TypeOCIRegistry && s.Type != TypeOCIRegistryLegacy {
		return "", false
	}
	u, plainHTTP := strings.CutPrefix(s.BaseURL, "http://")
	u = strings.TrimPrefix(u, "https://")
	host, _, _ = strings.Cut(u, "/")
	return host, plainHTTP
}

// Equal reports whether two specs name the same repository.
func (s RepositorySpec) Equal(o RepositorySpec) bool {
	norm := func(t string) string {
		if t == TypeOCIRegistryLegacy {
			return TypeOCIRegistry
		}
		return t
	}
	return norm(s.Type) == norm(o.Type) && s.Key() == o.Key()
}

// Repository serves the component versions of one OCM repository.
type Repository interface {
	// ComponentVersion looks up one component version. A version that is
	// not there is an error wrapping ErrNotFound and naming the repository
	// and what was looked up.
	ComponentVersion(ctx context.Context, name, version string) (*ComponentVersion, error)
	// Spec is the repository's context.
	Spec() RepositorySpec
}

// VersionLister is a Repository that can list the versions of a
// component it holds, so that a version it lacks can be answered with
// the ones it has.
type VersionLister interface {
	// Versions lists the versions of component, in no particular order;
	// none is not an error.
	Versions(ctx context.Context, component string) ([]string, error)
}

// ComponentVersion is one component version as a repository stores it.
type ComponentVersion struct {
	Descriptor *Descriptor
	// Raw is the descriptor as stored (YAML or JSON); signatures are
	// computed over its normalised form.
	Raw []byte
	// Digest identifies what the repository stores for this version (the
	// manifest digest in a registry, the descriptor digest in a file
	// repository): a re-pushed version with new content has a new Digest.
	Digest string
	// Repository is where the version was found.
	Repository RepositorySpec
	// Blobs serves the content of the version's local blobs and of
	// accesses relative to its repository.
	Blobs BlobSource
	// Warning is set when the version was served from the cache because
	// the repository could not be reached.
	Warning string
}

// ErrNotFound marks a component version or blob that a repository does not
// hold (as opposed to one it could not be asked for).
var ErrNotFound = errors.New("not found")

// ErrUnsupportedAccess marks an access type no repository of this
// package can read.
var ErrUnsupportedAccess = errors.New("unsupported access type")

// Blob is the content of a resource.
type Blob struct {
	MediaType string
	Data      []byte
	// Digest is "sha256:<hex>" of Data.
	Digest string
	// ArtifactDigest is the manifest digest of an OCI artifact the blob
	// was taken from: what ociArtifactDigest/v1 signs. Empty otherwise.
	ArtifactDigest string
}

// Cache stores content by digest, and remembers which digest a name (a
// tag of a component version) last resolved to, so a settled plan
// downloads nothing and a plan without the repository can still run. A
// nil Cache caches nothing. Implementations are safe for concurrent use.
type Cache interface {
	// Get returns the content stored under digest ("sha256:<hex>").
	Get(digest string) ([]byte, bool)
	// Put stores data under its digest; a digest that does not match data
	// is not stored.
	Put(digest string, data []byte)
	// Tag returns the digest key last resolved to.
	Tag(key string) (string, bool)
	// SetTag records that key resolved to digest.
	SetTag(key, digest string)
}

// BlobSource fetches the content behind an access specification of a
// resource of one component version. Implementations read the access types
// they store (localBlob and its legacy forms, relativeOciReference) and hand
// global ones (ociArtifact, ociRegistry, helm) to a shared Accessor.
type BlobSource interface {
	Blob(ctx context.Context, access map[string]any) (*Blob, error)
}

// AccessType returns the type of an access specification, without a
// version suffix (localBlob/v1 is localBlob).
func AccessType(access map[string]any) string {
	t, _ := access["type"].(string)
	if i := strings.IndexByte(t, '/'); i >= 0 {
		t = t[:i]
	}
	return t
}

// Access types. Legacy names are the component-spec v2 ones.
const (
	AccessLocalBlob            = "localBlob"
	AccessLocalOCIBlob         = "localOciBlob"
	AccessLocalFilesystemBlob  = "localFilesystemBlob"
	AccessOCIArtifact          = "ociArtifact"
	AccessOCIRegistry          = "ociRegistry"
	AccessOCIImage             = "OCIImage"
	AccessHelm                 = "helm"
	AccessRelativeOCIReference = "relativeOciReference"
)

// SupportedAccessTypes are the access types this package can read,
// spelled as OCM spells them: OCM's type names are case-sensitive, and a
// signature does not cover the access, so a spelling the readers and the
// verified view might disagree on is no type at all.
var SupportedAccessTypes = []string{AccessLocalBlob, AccessLocalOCIBlob, AccessLocalFilesystemBlob,
	AccessOCIArtifact, AccessOCIRegistry, AccessOCIImage, AccessHelm, AccessRelativeOCIReference}

// CheckAccessType returns an error wrapping ErrUnsupportedAccess for an
// access type none of SupportedAccessTypes.
func CheckAccessType(access map[string]any) error {
	if slices.Contains(SupportedAccessTypes, AccessType(access)) {
		return CheckAccessKeys(access)
	}
	return fmt.Errorf("%w %q (supported: %s)", ErrUnsupportedAccess, AccessType(access), strings.Join(SupportedAccessTypes, ", "))
}

// CheckAccessKeys refuses an access with two keys that differ only in
// case (or Unicode folding): encoding/json matches keys that way and the
// last one wins, so a second spelling would override the key the
// verified view shows and pins.
func CheckAccessKeys(access map[string]any) error {
	keys := make([]string, 0, len(access))
	for k := range access {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			if strings.EqualFold(a, b) {
				return fmt.Errorf("access has both %q and %q: keys that differ only in case are ambiguous", a, b)
			}
		}
	}
	return nil
}

// DecodeAccess decodes an access specification into v, ignoring unknown
// keys, and refusing keys that differ only in case (CheckAccessKeys).
func DecodeAccess(access map[string]any, v any) error {
	if err := CheckAccessKeys(access); err != nil {
		return err
	}
	data, err := json.Marshal(access)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// LocalBlobRef reads the local blob an access names: localBlob's
// localReference, localOciBlob's digest, localFilesystemBlob's file name
// (component-cli's filename or OCM's fileName). ok is false for any other
// access type.
func LocalBlobRef(access map[string]any) (ref, mediaType string, ok bool, err error) {
	var a struct {
		LocalReference string `json:"localReference"`
		Digest         string `json:"digest"`
		Filename       string `json:"filename"`
		FileName       string `json:"fileName"`
		MediaType      string `json:"mediaType"`
	}
	t := AccessType(access)
	switch t {
	case AccessLocalBlob, AccessLocalOCIBlob, AccessLocalFilesystemBlob:
	default:
		return "", "", false, nil
	}
	if err := DecodeAccess(access, &a); err != nil {
		return "", "", true, fmt.Errorf("%s access: %w", t, err)
	}
	switch t {
	case AccessLocalBlob:
		ref = a.LocalReference
	case AccessLocalOCIBlob:
		ref = a.Digest
	default:
		ref = a.Filename
		if ref == "" {
			ref = a.FileName
		}
	}
	if ref == "" {
		return "", "", true, fmt.Errorf("%s access names no blob", t)
	}
	return ref, a.MediaType, true, nil
}

// ReadLimited reads at most limit bytes of r; more is an error naming
// what, and is never read.
func ReadLimited(r io.Reader, limit int64, what string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than the limit of %d bytes", what, limit)
	}
	return data, nil
}
