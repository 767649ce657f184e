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
		return c.artifact(ctx, a.ImageReference)
	case ocm.AccessHelm:
		var a struct {
			HelmRepository string `json:"helmRepository"`
			HelmChart      string `json:"helmChart"`
			CACert         string `json:"caCert"`
		}
		if err := ocm.DecodeAccess(access, &a); err != nil {
			return nil, err
		}
		return c.helmChart(ctx, a.HelmRepository, a.HelmChart, a.CACert)
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
	if opts := c.nameOptions(ref.Context().RegistryStr()); len(opts) > 0 {
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

// helmChart downloads a chart from a chart repository: its index, then
// the chart archive the index names for the version.
func (c *Client) helmChart(ctx context.Context, repo, chart, caCert string) (*ocm.Blob, error) {
	chartName, version, ok := strings.Cut(chart, ":")
	if repo == "" || !ok || chartName == "" || version == "" {
		return nil, fmt.Errorf("helm access: helmRepository and helmChart (name:version) are required, got %q and %q", repo, chart)
	}
	client := &http.Client{Transport: c.tr.base}
	if caCert != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(caCert)) {
			return nil, errors.New("helm access: caCert holds no PEM certificate")
		}
		tr, ok := c.tr.base.(*http.Transport)
		if !ok {
			tr = http.DefaultTransport.(*http.Transport) //nolint:forcetypeassert // the standard library's default
		}
		tr = tr.Clone()
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		client.Transport = tr
	}
	base, err := url.Parse(strings.TrimSuffix(repo, "/") + "/")
	if err != nil {
		return nil, fmt.Errorf("helm repository %q: %w", repo, err)
	}
	index, err := c.get(ctx, client, base.JoinPath("index.yaml").String(), maxHelmIndexSize)
	if err != nil {
		return nil, fmt.Errorf("helm repository %s: index: %w", repo, err)
	}
	var idx struct {
		Entries map[string][]struct {
			Version string   `json:"version"`
			URLs    []string `json:"urls"`
			Digest  string   `json:"digest"`
		} `json:"entries"`
	}
	if err := yaml.Unmarshal(index, &idx); err != nil {
		return nil, fmt.Errorf("helm repository %s: index.yaml: %w", repo, err)
	}
	for _, e := range idx.Entries[chartName] {
		if e.Version != version || len(e.URLs) == 0 {
			continue
		}
		u, err := base.Parse(e.URLs[0])
		if err != nil {
			return nil, fmt.Errorf("helm repository %s: chart URL %q: %w", repo, e.URLs[0], err)
		}
		data, err := c.get(ctx, client, u.String(), c.o.MaxBlobSize)
		if err != nil {
			return nil, fmt.Errorf("helm chart %s from %s: %w", chart, repo, err)
		}
		d := ocm.Digest(data)
		if e.Digest != "" && "sha256:"+strings.TrimPrefix(e.Digest, "sha256:") != d {
			return nil, fmt.Errorf("helm chart %s from %s: the archive does not match the index's digest", chart, repo)
		}
		return &ocm.Blob{MediaType: "application/vnd.cncf.helm.chart.content.v1.tar+gzip", Data: data, Digest: d}, nil
	}
	return nil, fmt.Errorf("helm repository %s has no chart %s: %w", repo, chart, ocm.ErrNotFound)
}

func (c *Client) get(ctx context.Context, client *http.Client, u string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if c.o.UserAgent != "" {
		req.Header.Set("User-Agent", c.o.UserAgent)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return ocm.ReadLimited(resp.Body, limit, u)
}
