package ociregistry

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// Layer media types of artifacts whose content is one layer.
const (
	MediaTypeBlueprintLayer            = "application/vnd.gardener.landscaper.blueprint.layer.v1.tar+gzip"
	MediaTypeBlueprintArtifact         = "application/vnd.gardener.landscaper.blueprint.v1+tar+gzip"
	MediaTypeHelmChartContent          = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	MediaTypeJSONSchemaLayer           = "application/vnd.gardener.landscaper.jsonschema.layer.v1.json"
	MediaTypeHelmChartProvenance       = "application/vnd.cncf.helm.chart.provenance.v1.prov"
	maxHelmIndexSize             int64 = 32 << 20
)

// contentLayers are the layers that are an artifact's content, in order
// of preference.
var contentLayers = []string{MediaTypeBlueprintLayer, MediaTypeBlueprintArtifact, MediaTypeHelmChartContent, MediaTypeJSONSchemaLayer}

// Blob serves the access types that are not relative to a repository:
// ociArtifact and its older names, and helm chart repositories.
func (c *Client) Blob(ctx context.Context, access map[string]any) (*ocm.Blob, error) {
	switch ocm.AccessType(access) {
	case ocm.AccessOCIArtifact, ocm.AccessOCIRegistry, ocm.AccessOCIImage:
		var a struct {
			ImageReference string `json:"imageReference"`
		}
		if err := ocm.DecodeAccess(access, &a); err != nil {
			return nil, err
		}
		if a.ImageReference == "" {
			return nil, fmt.Errorf("%s access: imageReference is required", ocm.AccessType(access))
		}
		// The same rules as for a chart's reference: oci:// and http://
		// are understood.
		return c.Pull(ctx, a.ImageReference)
	case ocm.AccessHelm:
		var a struct {
			HelmRepository string `json:"helmRepository"`
			HelmChart      string `json:"helmChart"`
			CACert         string `json:"caCert"`
		}
		if err := ocm.DecodeAccess(access, &a); err != nil {
			return nil, err
		}
		chartName, version, ok := strings.Cut(a.HelmChart, ":")
		if !ok {
			return nil, fmt.Errorf("helm access: helmChart must be name:version, got %q", a.HelmChart)
		}
		if ocm.VerifiedFetch(ctx) {
			if err := verifiedHelmAccess(a.CACert); err != nil {
				return nil, err
			}
		}
		return c.helmChart(ctx, a.HelmRepository, chartName, version, a.CACert)
	}
	return nil, fmt.Errorf("%w %q", ocm.ErrUnsupportedAccess, ocm.AccessType(access))
}

// artifact fetches an OCI artifact and returns the layer that is its
// content: a blueprint, a helm chart or a JSON schema, or the only layer.
// ArtifactDigest is the manifest's digest, what ociArtifactDigest/v1
// records.
func (c *Client) artifact(ctx context.Context, reference string) (*ocm.Blob, error) {
	ref, err := name.ParseReference(reference, name.StrictValidation)
	if err != nil {
		if ref, err = name.ParseReference(reference); err != nil {
			return nil, fmt.Errorf("OCI artifact %q: %w", reference, err)
		}
	}
	if opts := c.nameOptions(ctx, ref.Context().RegistryStr()); len(opts) > 0 {
		if ref, err = name.ParseReference(reference, opts...); err != nil {
			return nil, err
		}
	}
	what := "OCI artifact " + reference
	manifest, digest, err := c.manifest(ctx, ref, what)
	if err != nil {
		return nil, err
	}
	m, err := v1.ParseManifest(bytes.NewReader(manifest))
	if err != nil || len(m.Layers) == 0 {
		return nil, fmt.Errorf("%s: not an image manifest with layers (an index is not supported)", what)
	}
	layer := &m.Layers[0]
	if len(m.Layers) > 1 {
		layer = nil
		for _, want := range contentLayers {
			for i := range m.Layers {
				if string(m.Layers[i].MediaType) == want && layer == nil {
					layer = &m.Layers[i]
				}
			}
		}
		if layer == nil {
			return nil, fmt.Errorf("%s has %d layers and none is a blueprint, helm chart or JSON schema", what, len(m.Layers))
		}
	}
	if layer.Size > c.o.MaxBlobSize {
		return nil, fmt.Errorf("%s: its layer is %d bytes, larger than the limit of %d", what, layer.Size, c.o.MaxBlobSize)
	}
	data, err := c.blob(ctx, ref.Context(), layer.Digest.String(), c.o.MaxBlobSize, what)
	if err != nil {
		return nil, err
	}
	return &ocm.Blob{MediaType: string(layer.MediaType), Data: data, Digest: layer.Digest.String(), ArtifactDigest: digest}, nil
}

// Pull fetches the OCI artifact a reference names and returns its
// content layer (a helm chart, blueprint or JSON schema, or the only
// layer) with the manifest's digest in ArtifactDigest, so a caller can
// check what it got. The reference is host/repository:tag or @digest; an
// oci:// prefix is dropped, http:// asks for plain HTTP to its host, and
// a '+' in the tag becomes '_', as helm tags chart versions.
func (c *Client) Pull(ctx context.Context, reference string) (*ocm.Blob, error) {
	ref, plain := pullReference(reference)
	if plain {
		if ocm.VerifiedFetch(ctx) {
			// The reference is not signed, and the allowance would outlive
			// this fetch on the shared client.
			return nil, fmt.Errorf("OCI artifact %q: a verifying installation does not ask registries for plain HTTP (http://); "+
				"loopback registries that speak only plain HTTP are still reached without it", redact(reference))
		}
		host, _, _ := strings.Cut(ref, "/")
		ctx = withPlainHTTP(ctx, host)
	}
	return c.artifact(ctx, ref)
}

// pullReference is the OCI reference Pull reads for a reference, and
// whether plain HTTP was asked for.
func pullReference(reference string) (string, bool) {
	ref := strings.TrimPrefix(reference, "oci://")
	ref, plain := strings.CutPrefix(ref, "http://")
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') && !strings.Contains(ref, "@") {
		ref = ref[:i] + strings.ReplaceAll(ref[i:], "+", "_")
	}
	return ref, plain
}

// CheckReference says whether Pull can read a reference, without asking
// any registry: for checks at plan time.
func CheckReference(reference string) error {
	ref, _ := pullReference(reference)
	if _, err := name.ParseReference(ref); err != nil {
		return fmt.Errorf("%q is not an OCI reference (host/repository:tag or @digest): %w", reference, err)
	}
	if host, _, _ := strings.Cut(ref, "/"); !strings.Contains(ref, "/") || !strings.ContainsAny(host, ".:") && host != "localhost" {
		return fmt.Errorf("%q names no registry host (host/repository:tag)", reference)
	}
	return nil
}

// HelmChart downloads a chart from a helm chart repository: its index,
// then the archive the index names for the version. version is a version
// or, as helm reads it, a semver constraint (the highest match wins; an
// exact match first). An archive whose digest the index gives comes from
// the cache when it holds it.
func (c *Client) HelmChart(ctx context.Context, repo, chart, version string) (*ocm.Blob, error) {
	return c.helmChart(ctx, repo, chart, version, "")
}

// verifiedHelmAccess refuses what a verified helm access must not make
// the provider do before its digest is checked: the access is not signed,
// so whoever controls the registry chooses the URL and the CA.
func verifiedHelmAccess(caCert string) error {
	if caCert != "" {
		return errors.New("helm access: a verifying installation does not trust the caCert an access names (accesses are not signed); " +
			"the chart repository's certificate must be trusted by the system (SSL_CERT_FILE)")
	}
	return nil
}

func (c *Client) helmChart(ctx context.Context, repo, chartName, version, caCert string) (*ocm.Blob, error) {
	if repo == "" || chartName == "" || version == "" {
		return nil, fmt.Errorf("helm chart repository, chart name and version are required, got %q, %q and %q", repo, chartName, version)
	}
	tr, credentials := c.tr, true
	if caCert != "" {
		// The CA is the access's word, not the user's: a server that only
		// it vouches for is not known to be the host the user's
		// credentials are for.
		credentials = false
		var base *http.Transport
		switch b := c.tr.base.(type) {
		case *defaultTransport:
			base = b.transport()
		case *http.Transport:
			base = b
		default:
			base = http.DefaultTransport.(*http.Transport) //nolint:forcetypeassert // the standard library's default
		}
		var pool *x509.CertPool
		if base.TLSClientConfig != nil && base.TLSClientConfig.RootCAs != nil {
			pool = base.TLSClientConfig.RootCAs.Clone()
		} else {
			pool = RootCAs()
		}
		if !pool.AppendCertsFromPEM([]byte(caCert)) {
			return nil, errors.New("helm access: caCert holds no PEM certificate")
		}
		base = base.Clone()
		base.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		tr = c.tr.withBase(base)
	}
	base, err := url.Parse(strings.TrimSuffix(repo, "/") + "/")
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("helm chart repository %q: not an http or https URL", redact(repo))
	}
	verified := ocm.VerifiedFetch(ctx)
	if verified && base.Scheme != "https" {
		return nil, fmt.Errorf("helm chart repository %s: a verifying installation reaches chart repositories over HTTPS only", redact(repo))
	}
	if base.Scheme == "http" {
		ctx = withPlainHTTP(ctx, base.Host)
	}
	client, err := c.httpClient(base, tr, verified, credentials)
	if err != nil {
		return nil, err
	}
	what := fmt.Sprintf("the index of helm chart repository %s", redact(repo))
	index, err := c.get(ctx, client, base.JoinPath("index.yaml"), maxHelmIndexSize, what)
	if err != nil {
		if auth, _ := c.keys.header(base.Host); !credentials && auth != "" && KindOf(err) == KindRefused {
			return nil, newError(KindRefused, nil, "%s; its credentials were not sent: the access names a caCert, and a server only the access's CA "+
				"vouches for is not known to be %s (trust the CA through SSL_CERT_FILE to send them)", err.Error(), base.Host)
		}
		return nil, err
	}
	var idx helmIndex
	if err := yaml.Unmarshal(index, &idx); err != nil {
		return nil, fmt.Errorf("%s is not valid: %w", what, err)
	}
	e, err := idx.find(chartName, version)
	if err != nil {
		return nil, newError(KindNotFound, ocm.ErrNotFound, "helm chart repository %s: %v", redact(repo), err)
	}
	u, err := base.Parse(e.URLs[0])
	if err != nil {
		return nil, fmt.Errorf("helm chart repository %s: chart URL %q: %w", redact(repo), e.URLs[0], err)
	}
	if verified {
		if err := sameOriginHTTPS(base, u); err != nil {
			return nil, fmt.Errorf("helm chart %s %s from %s: %w", chartName, e.Version, redact(repo), err)
		}
	}
	want := ""
	if e.Digest != "" {
		want = "sha256:" + strings.TrimPrefix(e.Digest, "sha256:")
		if c.o.Cache != nil {
			if data, ok := c.o.Cache.Get(want); ok {
				return &ocm.Blob{MediaType: MediaTypeHelmChartContent, Data: data, Digest: want}, nil
			}
		}
	}
	data, err := c.get(ctx, client, u, c.o.MaxBlobSize, fmt.Sprintf("helm chart %s %s", chartName, e.Version))
	if err != nil {
		return nil, err
	}
	d := ocm.Digest(data)
	if want != "" && want != d {
		return nil, fmt.Errorf("helm chart %s %s from %s: the archive does not match the index's digest", chartName, e.Version, redact(repo))
	}
	if want != "" && c.o.Cache != nil {
		c.o.Cache.Put(d, data)
	}
	return &ocm.Blob{MediaType: MediaTypeHelmChartContent, Data: data, Digest: d}, nil
}

// Fetch downloads what an http or https URL names (a chart archive),
// by the rules of every other fetch: HTTPS first, plain HTTP for an
// http:// URL without credentials unless the user configured http:// for
// the host, the host's credentials for its origin only, the request
// timeout and the blob size limit. A verified fetch refuses http:// and
// redirects to other origins. Digest is computed from the bytes received.
func (c *Client) Fetch(ctx context.Context, rawURL string) (*ocm.Blob, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http or https URL", redact(rawURL))
	}
	verified := ocm.VerifiedFetch(ctx)
	if u.Scheme == "http" {
		if verified {
			return nil, fmt.Errorf("%s: a verifying installation does not fetch over plain HTTP (http://)", redact(rawURL))
		}
		ctx = withPlainHTTP(ctx, u.Host)
	}
	client, err := c.httpClient(u, c.tr, verified, true)
	if err != nil {
		return nil, err
	}
	data, err := c.get(ctx, client, u, c.o.MaxBlobSize, redact(rawURL))
	if err != nil {
		return nil, err
	}
	return &ocm.Blob{Data: data, Digest: ocm.Digest(data)}, nil
}

// helmIndex is the part of a chart repository's index.yaml that is read.
type helmIndex struct {
	Entries map[string][]helmEntry `json:"entries"`
}

type helmEntry struct {
	Version string   `json:"version"`
	URLs    []string `json:"urls"`
	Digest  string   `json:"digest"`
}

// find picks a chart version as helm does: the exact version, else the
// highest one matching version read as a semver constraint.
func (idx *helmIndex) find(chart, version string) (helmEntry, error) {
	entries, ok := idx.Entries[chart]
	if !ok || len(entries) == 0 {
		return helmEntry{}, fmt.Errorf("no chart %q", chart)
	}
	for _, e := range entries {
		if e.Version == version && len(e.URLs) > 0 {
			return e, nil
		}
	}
	constraint, err := semver.NewConstraint(version)
	if err != nil {
		return helmEntry{}, fmt.Errorf("no version %q of chart %q", version, chart)
	}
	var best *semver.Version
	var found helmEntry
	for _, e := range entries {
		v, err := semver.NewVersion(e.Version)
		if err != nil || len(e.URLs) == 0 || !constraint.Check(v) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, found = v, e
		}
	}
	if best == nil {
		return helmEntry{}, fmt.Errorf("no version of chart %q matches %q", chart, version)
	}
	return found, nil
}

// get fetches a URL with a fetch's client, bounded by the request timeout
// and limit.
func (c *Client) get(ctx context.Context, client *http.Client, u *url.URL, limit int64, what string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	host := u.Host
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if c.o.UserAgent != "" {
		req.Header.Set("User-Agent", c.o.UserAgent)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, c.classify(host, what, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, c.statusError(resp.Request.URL.Host, what, resp.StatusCode)
	}
	data, err := ocm.ReadLimited(resp.Body, limit, what)
	if err != nil {
		return nil, c.classify(host, what, err)
	}
	return data, nil
}

// redact drops user info from a URL before it goes into a message.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}
