package ociregistry

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// Media types of component descriptor layers: OCM's, and the legacy
// Gardener ones the component-cli pushed.
const (
	MediaTypeDescriptorYAMLTar = "application/vnd.ocm.software.component-descriptor.v2+yaml+tar"
	MediaTypeDescriptorJSON    = "application/vnd.ocm.software.component-descriptor.v2+json"
	MediaTypeDescriptorYAML    = "application/vnd.ocm.software.component-descriptor.v2+yaml"
	MediaTypeConfig            = "application/vnd.ocm.software.component.config.v1+json"

	LegacyMediaTypeDescriptorYAMLTar = "application/vnd.gardener.cloud.cnudie.component-descriptor.v2+yaml+tar"
	LegacyMediaTypeDescriptorJSON    = "application/vnd.gardener.cloud.cnudie.component-descriptor.v2+json"
	LegacyMediaTypeConfig            = "application/vnd.gardener.cloud.cnudie.component.config.v1+json"
	// LegacyMediaTypeCnudieTar is the oldest component-cli layout: a tar
	// holding component-descriptor.yaml.
	LegacyMediaTypeCnudieTar = "application/sap-cnudie+tar"
)

// descriptorLayerTypes are the layer media types a descriptor is found
// in, and whether the layer is a tar holding component-descriptor.yaml.
var descriptorLayerTypes = map[string]bool{
	MediaTypeDescriptorYAMLTar:       true,
	MediaTypeDescriptorJSON:          false,
	MediaTypeDescriptorYAML:          false,
	LegacyMediaTypeDescriptorYAMLTar: true,
	LegacyMediaTypeDescriptorJSON:    false,
	LegacyMediaTypeCnudieTar:         true,
}

// Repository returns the OCM repository a spec names. Specs come from the
// user's configuration (the provider's or an installation's repository
// context, overwrites), so a baseUrl with http:// configures plain HTTP,
// credentials included, for its host.
func (c *Client) Repository(spec ocm.RepositorySpec) ocm.Repository {
	r := &repository{c: c, spec: spec}
	if strings.HasPrefix(spec.BaseURL, "http://") {
		host, _ := r.base()
		c.tr.configurePlain(host)
	}
	return r
}

type repository struct {
	c    *Client
	spec ocm.RepositorySpec
}

func (r *repository) Spec() ocm.RepositorySpec { return r.spec }

// base returns the registry host and the repository path prefix of the
// spec's baseUrl (without scheme), with subPath.
func (r *repository) base() (host, prefix string) {
	u := r.spec.BaseURL
	u = strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	host, prefix, _ = strings.Cut(strings.TrimSuffix(u, "/"), "/")
	if r.spec.SubPath != "" {
		prefix = path.Join(prefix, strings.Trim(r.spec.SubPath, "/"))
	}
	return host, prefix
}

// repositoryName is where a component's versions are: OCM's mapping of
// component names to OCI repositories.
func (r *repository) repositoryName(component string) string {
	host, prefix := r.base()
	mapped := component
	if r.spec.ComponentNameMapping == ocm.MappingSHA256Digest {
		sum := sha256.Sum256([]byte(component))
		mapped = hex.EncodeToString(sum[:])
	}
	return host + "/" + path.Join(prefix, "component-descriptors", mapped)
}

// tag maps a version to an OCI tag the way OCM does: '+' is not allowed in
// tags and becomes ".build-".
func tag(version string) string { return strings.ReplaceAll(version, "+", ".build-") }

// maxTagPages bounds the pages of a tag list read: the versions serve an
// error message, and a registry decides how many pages it links.
const maxTagPages = 10

// tags are the tags of repo, at most maxTagPages pages of them (each
// bounded by the transport: maxTagListBody).
func (c *Client) tags(ctx context.Context, repo name.Repository) ([]string, error) {
	ctx = withBound(ctx, maxTagListBody, "a page of its tag list")
	l, err := c.puller.Lister(ctx, repo)
	if err != nil {
		return nil, err
	}
	var tags []string
	for pages := 0; pages < maxTagPages && l.HasNext(); pages++ {
		page, err := l.Next(ctx)
		if err != nil {
			return nil, err
		}
		tags = append(tags, page.Tags...)
	}
	return tags, nil
}

// Versions lists the tags of component's OCI repository as versions
// (".build-" back to "+").
func (r *repository) Versions(ctx context.Context, component string) ([]string, error) {
	host, _ := r.base()
	repo, err := name.NewRepository(r.repositoryName(component), r.c.nameOptions(ctx, host)...)
	if err != nil {
		return nil, fmt.Errorf("component %s in %s: %w", component, r.spec, err)
	}
	ctx, cancel := context.WithTimeout(ctx, r.c.o.Timeout)
	defer cancel()
	tags, err := r.c.tags(ctx, repo)
	if err != nil {
		return nil, r.c.classify(host, "the versions of component "+component, err)
	}
	versions := make([]string, len(tags))
	for i, t := range tags {
		versions[i] = strings.ReplaceAll(t, ".build-", "+")
	}
	return versions, nil
}

func (r *repository) ComponentVersion(ctx context.Context, component, version string) (*ocm.ComponentVersion, error) {
	host, _ := r.base()
	refStr := r.repositoryName(component) + ":" + tag(version)
	ref, err := name.ParseReference(refStr, r.c.nameOptions(ctx, host)...)
	if err != nil {
		return nil, fmt.Errorf("component %s:%s in %s: %s is not a valid OCI reference: %w", component, version, r.spec, refStr, err)
	}
	what := fmt.Sprintf("component version %s:%s (looked up %s)", component, version, refStr)
	cacheKey := "manifest\x00" + ref.String()
	manifest, digest, err := r.c.manifest(ctx, ref, what)
	warning := ""
	if err != nil {
		// Only a registry that could not be asked may be stood in for;
		// one that answered no, or whose certificate or credentials are
		// wrong, must be fixed.
		if KindOf(err) != KindUnreachable {
			return nil, err
		}
		cached, cdigest, ok := r.c.cachedManifest(cacheKey)
		if !ok {
			return nil, fmt.Errorf("%w; the cache has no copy of it", err)
		}
		manifest, digest = cached, cdigest
		warning = fmt.Sprintf("%s; using the cached copy of %s:%s (%s)", err.Error(), component, version, cdigest)
	} else if r.c.o.Cache != nil {
		r.c.o.Cache.Put(digest, manifest)
		r.c.o.Cache.SetTag(cacheKey, digest)
	}
	m, err := v1.ParseManifest(bytes.NewReader(manifest))
	if err != nil {
		return nil, fmt.Errorf("%s: the manifest is malformed: %w", what, err)
	}
	raw, err := DescriptorFromManifest(m, func(digest string) ([]byte, error) {
		return r.c.blob(ctx, ref.Context(), digest, ocm.MaxDescriptorSize*2, "the component descriptor of "+what)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	d, err := ocm.ParseDescriptor(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &ocm.ComponentVersion{
		Descriptor: d,
		Raw:        raw,
		Digest:     digest,
		Repository: r.spec,
		Blobs:      &blobs{r: r, repo: ref.Context(), manifest: m},
		Warning:    warning,
	}, nil
}

// DescriptorFromManifest finds the component descriptor layer of a
// component version's manifest, in any of the known media types, and
// returns the descriptor; blob reads a layer by digest.
func DescriptorFromManifest(m *v1.Manifest, blob func(digest string) ([]byte, error)) ([]byte, error) {
	var layer *v1.Descriptor
	for i := range m.Layers {
		if _, ok := descriptorLayerTypes[string(m.Layers[i].MediaType)]; ok {
			layer = &m.Layers[i]
			break
		}
	}
	if layer == nil {
		types := make([]string, 0, len(m.Layers))
		for _, l := range m.Layers {
			types = append(types, string(l.MediaType))
		}
		return nil, fmt.Errorf("the artifact holds no component descriptor layer (config %s, layers %s)", m.Config.MediaType, strings.Join(types, ", "))
	}
	if layer.Size > ocm.MaxDescriptorSize*2 {
		return nil, fmt.Errorf("the descriptor layer is %d bytes, larger than the limit", layer.Size)
	}
	data, err := blob(layer.Digest.String())
	if err != nil {
		return nil, err
	}
	if descriptorLayerTypes[string(layer.MediaType)] {
		return descriptorFromTar(data)
	}
	return data, nil
}

// descriptorFromTar takes component-descriptor.yaml out of a descriptor
// layer tar.
func descriptorFromTar(data []byte) ([]byte, error) {
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the descriptor layer holds no component-descriptor.yaml")
		}
		if err != nil {
			return nil, fmt.Errorf("the descriptor layer is not a tar archive: %w", err)
		}
		if path.Clean(h.Name) == "component-descriptor.yaml" {
			return ocm.ReadLimited(tr, ocm.MaxDescriptorSize, "component-descriptor.yaml")
		}
	}
}

// manifest fetches a manifest: the one request a settled plan makes per
// component version. Its digest is computed here from the bytes received,
// and compared with the one asked for: go-containerregistry takes a signed
// schema-1 manifest's digest from the registry's Docker-Content-Digest
// header, even when pulling by digest, so its descriptor's digest is
// never used.
func (c *Client) manifest(ctx context.Context, ref name.Reference, what string) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(withBound(ctx, maxManifestBody, "a manifest"), c.o.Timeout)
	defer cancel()
	desc, err := c.puller.Get(ctx, ref)
	if err != nil {
		return nil, "", c.classify(ref.Context().RegistryStr(), what, err)
	}
	if int64(len(desc.Manifest)) > ocm.MaxDescriptorSize {
		return nil, "", fmt.Errorf("%s: the manifest is larger than the limit", what)
	}
	if err := refuseSchema1(ctx, string(desc.MediaType), desc.Manifest); err != nil {
		return nil, "", fmt.Errorf("%s: %w", what, err)
	}
	digest := ocm.Digest(desc.Manifest)
	if d, ok := ref.(name.Digest); ok && d.DigestStr() != digest {
		return nil, "", fmt.Errorf("%s: the registry answered with a manifest whose digest is %s, not the %s asked for", what, digest, d.DigestStr())
	}
	return desc.Manifest, digest, nil
}

// Docker's schema-1 manifest media types.
const (
	mediaTypeSchema1       = "application/vnd.docker.distribution.manifest.v1+json"
	mediaTypeSchema1Signed = "application/vnd.docker.distribution.manifest.v1+prettyjws"
)

// refuseSchema1 refuses a Docker schema-1 manifest, by its Content-Type or
// its own schemaVersion: its digest is, by Docker's rules, what the
// registry says (the signed payload without its signatures), not the hash
// of the bytes received, and nothing the provider reads is stored that
// way (OCM, helm and Landscaper write OCI or schema-2 manifests).
func refuseSchema1(ctx context.Context, contentType string, manifest []byte) error {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.TrimSpace(mt)
	var head struct {
		SchemaVersion int    `json:"schemaVersion"`
		MediaType     string `json:"mediaType"`
	}
	_ = json.Unmarshal(manifest, &head)
	if mt != mediaTypeSchema1 && mt != mediaTypeSchema1Signed && head.SchemaVersion != 1 &&
		head.MediaType != mediaTypeSchema1 && head.MediaType != mediaTypeSchema1Signed {
		return nil
	}
	if ocm.VerifiedFetch(ctx) {
		return fmt.Errorf("the registry answered with a Docker schema-1 manifest (%s): a verifying installation refuses schema-1 manifests, "+
			"whose digest is the registry's word (its Docker-Content-Digest header), not the hash of what was received", contentType)
	}
	return fmt.Errorf("the registry answered with a Docker schema-1 manifest (%s), which is not supported: its digest is the registry's "+
		"word (its Docker-Content-Digest header), not the hash of what was received; push the artifact as an OCI or Docker schema-2 manifest", contentType)
}

func (c *Client) cachedManifest(key string) ([]byte, string, bool) {
	if c.o.Cache == nil {
		return nil, "", false
	}
	digest, ok := c.o.Cache.Tag(key)
	if !ok {
		return nil, "", false
	}
	data, ok := c.o.Cache.Get(digest)
	return data, digest, ok
}

// blob returns a blob of a repository, from the cache when it has it.
func (c *Client) blob(ctx context.Context, repo name.Repository, digest string, limit int64, what string) ([]byte, error) {
	if c.o.Cache != nil {
		if data, ok := c.o.Cache.Get(digest); ok {
			return data, nil
		}
	}
	ref, err := name.NewDigest(repo.String()+"@"+digest, c.nameOptions(ctx, repo.RegistryStr())...)
	if err != nil {
		return nil, fmt.Errorf("%s: bad digest %q: %w", what, digest, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	l, err := c.puller.Layer(ctx, ref)
	if err != nil {
		return nil, c.classify(repo.RegistryStr(), what, err)
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, c.classify(repo.RegistryStr(), what, err)
	}
	defer func() { _ = rc.Close() }()
	data, err := ocm.ReadLimited(rc, limit, what)
	if err != nil {
		return nil, c.classify(repo.RegistryStr(), what, err)
	}
	if ocm.Digest(data) != digest {
		return nil, fmt.Errorf("%s: the content does not match its digest %s", what, digest)
	}
	if c.o.Cache != nil {
		c.o.Cache.Put(digest, data)
	}
	return data, nil
}

// blobs serves the local blobs of one component version.
type blobs struct {
	r        *repository
	repo     name.Repository
	manifest *v1.Manifest
}

func (b *blobs) Blob(ctx context.Context, access map[string]any) (*ocm.Blob, error) {
	if ocm.AccessType(access) == ocm.AccessRelativeOCIReference {
		var a struct {
			Reference string `json:"reference"`
		}
		if err := ocm.DecodeAccess(access, &a); err != nil {
			return nil, err
		}
		if a.Reference == "" {
			return nil, errors.New("relativeOciReference: reference is required")
		}
		host, _ := b.r.base()
		return b.r.c.artifact(ctx, host+"/"+strings.TrimPrefix(a.Reference, "/"))
	}
	ref, mediaType, ok, err := ocm.LocalBlobRef(access)
	if !ok || ocm.AccessType(access) == ocm.AccessLocalFilesystemBlob {
		return nil, ocm.ErrUnsupportedAccess
	}
	if err != nil {
		return nil, err
	}
	return b.local(ctx, ref, mediaType)
}

func (b *blobs) local(ctx context.Context, digest, mediaType string) (*ocm.Blob, error) {
	if !strings.HasPrefix(digest, "sha256:") {
		return nil, fmt.Errorf("local blob %q: a digest (sha256:...) is expected in a registry", digest)
	}
	var layer *v1.Descriptor
	for i := range b.manifest.Layers {
		if b.manifest.Layers[i].Digest.String() == digest {
			layer = &b.manifest.Layers[i]
		}
	}
	if layer == nil {
		return nil, fmt.Errorf("local blob %s is not a layer of the component version's artifact: %w", digest, ocm.ErrNotFound)
	}
	if layer.Size > b.r.c.o.MaxBlobSize {
		return nil, fmt.Errorf("local blob %s is %d bytes, larger than the limit of %d", digest, layer.Size, b.r.c.o.MaxBlobSize)
	}
	data, err := b.r.c.blob(ctx, b.repo, digest, b.r.c.o.MaxBlobSize, "local blob "+digest)
	if err != nil {
		return nil, err
	}
	if mediaType == "" {
		mediaType = string(layer.MediaType)
	}
	return &ocm.Blob{MediaType: mediaType, Data: data, Digest: digest}, nil
}
