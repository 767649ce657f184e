package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ociregistry"
)

// maxChartSize bounds what is read from a remote chart source, so a wrong
// URL cannot fill the memory.
const maxChartSize = 64 << 20

// loadChart fetches and loads the chart a config names. Sources that cannot
// work without a change of config fail terminally; network and server
// errors are transient, since a registry may come back.
func (d *Deployer) loadChart(ctx context.Context, ch *Chart, resources deployer.ResourceResolver) (*chart.Chart, error) {
	signed := deployer.Verifying(resources)
	switch {
	case ch.Archive != nil && ch.Archive.Raw != "":
		data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(ch.Archive.Raw))
		if err != nil {
			return nil, core.ConfigurationProblem("chart.archive.raw is not base64: %v", err)
		}
		return loadArchive(data, "chart.archive.raw")
	case ch.Archive != nil && ch.Archive.Remote != nil:
		return d.loadRemoteArchive(ctx, ch.Archive.Remote.URL, signed)
	case ch.Ref != "":
		return d.loadOCI(ctx, ch.Ref, signed)
	case ch.HelmChartRepo != nil:
		return d.loadFromRepo(ctx, ch.HelmChartRepo, signed)
	case ch.FromResource != nil || ch.ResourceRef != "":
		if resources == nil {
			return nil, core.ConfigurationProblem("the chart is a component's resource, but this deploy item has no component to take it from")
		}
		ref := deployer.ResourceRef{Key: ch.ResourceRef}
		from := "chart.resourceRef"
		if fr := ch.FromResource; fr != nil {
			ref = deployer.ResourceRef{Name: fr.ResourceName}
			if fr.Ref != nil {
				ref.ComponentName, ref.Version = fr.Ref.ComponentName, fr.Ref.Version
			}
			from = fmt.Sprintf("resource %q", fr.ResourceName)
		}
		data, _, err := resources.Resource(ctx, ref)
		if err != nil {
			return nil, asConfigProblem(fmt.Errorf("unable to get the chart from %s: %w", from, err))
		}
		return loadResourceArchive(data, from)
	}
	return nil, core.ConfigurationProblem("no chart was provided")
}

// loadResourceArchive loads a chart that is a component's resource: a
// chart archive, or the tar (compressed or not) of a chart directory that
// a component constructor's dir input makes, which has the chart's files
// at its top level instead of in a directory named after the chart.
func loadResourceArchive(data []byte, from string) (*chart.Chart, error) {
	var r io.Reader = bytes.NewReader(data)
	if len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, core.ConfigurationProblem("unable to load chart from %s: %v", from, err)
		}
		r = zr
	}
	var files []*loader.BufferedFile
	topLevel := false
	tr := tar.NewReader(io.LimitReader(r, maxChartSize))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, core.ConfigurationProblem("unable to load chart from %s: not a chart archive: %v", from, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := strings.TrimPrefix(path.Clean(strings.TrimPrefix(h.Name, "./")), "/")
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, core.ConfigurationProblem("unable to load chart from %s: %v", from, err)
		}
		if name == "Chart.yaml" {
			topLevel = true
		}
		files = append(files, &loader.BufferedFile{Name: name, Data: b})
	}
	if !topLevel {
		return loadArchive(data, from)
	}
	c, err := loader.LoadFiles(files)
	if err != nil {
		return nil, core.ConfigurationProblem("unable to load chart from %s: %v", from, err)
	}
	return c, nil
}

func loadArchive(data []byte, from string) (*chart.Chart, error) {
	c, err := loader.LoadArchive(bytes.NewReader(data))
	if err != nil {
		return nil, core.ConfigurationProblem("unable to load chart from %s: %v", from, err)
	}
	return c, nil
}

// useResourceRef is how a refused chart source can be made one a
// verifying installation accepts.
const useResourceRef = "take the chart from the verified component instead: chart.resourceRef: " +
	`{{ getResourceKey "cd://resources/<name>" }}` + " (the chart resource's content is checked against its signed digest), " +
	`or chart.ref: {{ (getResource .cd "name" "<name>").access.imageReference }}` + ", which a verifying installation pins to the signed digest"

// checkSignedArtifact refuses, under verification, an OCI chart whose
// manifest digest no verified component signs: a reference's tag, host
// and repository are not signed, and a registry may serve anything.
func checkSignedArtifact(signed deployer.SignedContent, ref, manifestDigest string) error {
	if signed == nil {
		return nil
	}
	if _, ok := signed.SignedArtifact(manifestDigest); ok {
		return nil
	}
	return core.ConfigurationProblem("chart.ref %s: the installation verifies signatures, and the chart pulled (manifest %s) is no artifact "+
		"a verified component signs; %s", ref, manifestDigest, useResourceRef)
}

// checkSignedBlob refuses, under verification, a chart archive whose
// digest no verified component signs.
func checkSignedBlob(signed deployer.SignedContent, from string, data []byte) error {
	if signed == nil {
		return nil
	}
	sum := sha256.Sum256(data)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	if _, ok := signed.SignedBlob(digest); ok {
		return nil
	}
	return core.ConfigurationProblem("%s: the installation verifies signatures, and the chart archive fetched (%s) is no resource "+
		"a verified component signs; %s", from, digest, useResourceRef)
}

// loadRemoteArchive reads archive.remote.url: http(s) as Landscaper does,
// through the registry client (its credentials, HTTPS-first rule,
// timeouts and limits), and file:// URLs or plain paths to an archive or
// a chart directory. Under verification, the archive must be one a
// verified component signs, and the fetch neither goes over plain HTTP
// nor follows redirects to another origin.
func (d *Deployer) loadRemoteArchive(ctx context.Context, raw string, signed deployer.SignedContent) (*chart.Chart, error) {
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		if signed != nil {
			ctx = ocm.WithVerifiedFetch(ctx)
		}
		b, err := d.registry().Fetch(ctx, raw)
		if err != nil {
			return nil, registryError(ctx, "FetchChart", "unable to fetch chart.archive.remote.url "+redact(raw), err)
		}
		if err := checkSignedBlob(signed, "chart.archive.remote.url "+redact(raw), b.Data); err != nil {
			return nil, err
		}
		return loadArchive(b.Data, redact(raw))
	}
	p := raw
	if err == nil && u.Scheme == "file" {
		p = u.Path
	} else if err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		return nil, core.ConfigurationProblem("chart.archive.remote.url: unsupported scheme %q (http, https, file or a path)", u.Scheme)
	}
	if !filepath.IsAbs(p) && d.opts.WorkingDir != "" {
		p = filepath.Join(d.opts.WorkingDir, p)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, core.ConfigurationProblem("chart.archive.remote.url: %v", err)
	}
	if signed != nil {
		if fi.IsDir() {
			return nil, core.ConfigurationProblem("chart.archive.remote.url %s: the installation verifies signatures, and a chart directory "+
				"has no digest a signature could cover; %s", p, useResourceRef)
		}
		data, err := readFileLimited(p)
		if err != nil {
			return nil, core.ConfigurationProblem("chart.archive.remote.url: %v", err)
		}
		if err := checkSignedBlob(signed, "chart.archive.remote.url "+p, data); err != nil {
			return nil, err
		}
		return loadArchive(data, p)
	}
	c, err := loader.Load(p)
	if err != nil {
		return nil, core.ConfigurationProblem("unable to load chart from %s: %v", p, err)
	}
	return c, nil
}

// readFileLimited reads a chart archive, refusing one above
// maxChartSize.
func readFileLimited(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, maxChartSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxChartSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, maxChartSize)
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

// loadFromRepo downloads a chart from a classic chart repository
// (index.yaml), through the registry client: its credentials, TLS rules,
// timeouts and cache are those of every other registry access. Under
// verification, the archive must be one a verified component signs, and
// the fetch stays on the repository's origin, over HTTPS.
func (d *Deployer) loadFromRepo(ctx context.Context, r *HelmChartRepo, signed deployer.SignedContent) (*chart.Chart, error) {
	if signed != nil {
		// The URL and the index are not signed: the fetch stays on the
		// repository's origin, over HTTPS.
		ctx = ocm.WithVerifiedFetch(ctx)
	}
	b, err := d.registry().HelmChart(ctx, r.URL, r.Name, r.Version)
	if err != nil {
		return nil, registryError(ctx, "FetchChart", fmt.Sprintf("unable to fetch chart %q version %q from helm chart repository %s", r.Name, r.Version, redact(r.URL)), err)
	}
	if err := checkSignedBlob(signed, "chart.helmChartRepo "+redact(r.URL), b.Data); err != nil {
		return nil, err
	}
	return loadArchive(b.Data, fmt.Sprintf("%s %s from %s", r.Name, r.Version, redact(r.URL)))
}

// loadOCI pulls a chart from an OCI registry through the registry client.
// Landscaper writes refs without a scheme (host/repo:tag); oci:// is
// accepted too, and http:// asks for plain HTTP. Under verification, the
// manifest pulled must be one a verified component signs, checked before
// anything of the chart is used, and http:// is refused.
func (d *Deployer) loadOCI(ctx context.Context, ref string, signed deployer.SignedContent) (*chart.Chart, error) {
	if signed != nil {
		// What the registry client must not do before the digest check
		// (plain HTTP on a reference's word) it refuses for this fetch.
		ctx = ocm.WithVerifiedFetch(ctx)
	}
	p, err := d.pullChart(ctx, ref)
	if err != nil {
		return nil, err
	}
	if err := checkSignedArtifact(signed, ref, p.ManifestDigest); err != nil {
		return nil, err
	}
	return loadArchive(p.Data, ref)
}

// PulledChart is a chart archive pulled by chart.ref, with the digest of
// the OCI manifest it was pulled by, to compare with a pinned digest.
type PulledChart struct {
	Data []byte
	// ManifestDigest is "sha256:<hex>" of the artifact's manifest.
	ManifestDigest string
	// Digest is "sha256:<hex>" of Data.
	Digest string
}

// pullChart pulls the chart archive chart.ref names.
func (d *Deployer) pullChart(ctx context.Context, ref string) (*PulledChart, error) {
	b, err := d.registry().Pull(ctx, ref)
	if err != nil {
		return nil, registryError(ctx, "PullChart", "unable to pull chart "+ref, err)
	}
	return &PulledChart{Data: b.Data, ManifestDigest: b.ArtifactDigest, Digest: b.Digest}, nil
}

// registry is the client charts are pulled with: the one Options.Registry
// gives, else one with the Docker config's credentials and no cache.
func (d *Deployer) registry() *ociregistry.Client {
	if d.opts.Registry != nil {
		if c := d.opts.Registry(); c != nil {
			return c
		}
	}
	d.defaultRegistryOnce.Do(func() {
		d.defaultRegistry, _ = ociregistry.New(ociregistry.Options{})
	})
	return d.defaultRegistry
}

// registryError classifies a failed pull: what only a change of
// configuration fixes (refused credentials, an untrusted certificate, the
// wrong protocol, a missing chart, a malformed artifact) fails at once,
// naming the registry and reference; what the registry may get over (not
// reachable, server errors, rate limits) is retried.
func registryError(ctx context.Context, reason, msg string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	full := msg + ": " + err.Error()
	switch ociregistry.KindOf(err) {
	case ociregistry.KindRefused:
		return core.Terminal(reason, full, core.CodeUnauthorized)
	case ociregistry.KindUnreachable, ociregistry.KindServer:
		return core.TransientCause(reason, full, err)
	}
	return core.ConfigurationProblem("%s", full)
}
