package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"
	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// maxChartSize bounds what is read from a remote chart source, so a wrong
// URL cannot fill the memory.
const maxChartSize = 64 << 20

// loadChart fetches and loads the chart a config names. Sources that cannot
// work without a change of config fail terminally; network and server
// errors are transient, since a registry may come back.
func (d *Deployer) loadChart(ctx context.Context, ch *Chart, resources deployer.ResourceResolver) (*chart.Chart, error) {
	switch {
	case ch.Archive != nil && ch.Archive.Raw != "":
		data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(ch.Archive.Raw))
		if err != nil {
			return nil, core.ConfigurationProblem("chart.archive.raw is not base64: %v", err)
		}
		return loadArchive(data, "chart.archive.raw")
	case ch.Archive != nil && ch.Archive.Remote != nil:
		return d.loadRemoteArchive(ctx, ch.Archive.Remote.URL)
	case ch.Ref != "":
		return d.loadOCI(ctx, ch.Ref)
	case ch.HelmChartRepo != nil:
		return d.loadFromRepo(ctx, ch.HelmChartRepo)
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

// loadRemoteArchive reads archive.remote.url: http(s) as Landscaper does,
// and file:// URLs or plain paths to an archive or a chart directory.
func (d *Deployer) loadRemoteArchive(ctx context.Context, raw string) (*chart.Chart, error) {
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		data, err := d.get(ctx, raw)
		if err != nil {
			return nil, err
		}
		return loadArchive(data, redact(raw))
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
	if _, err := os.Stat(p); err != nil {
		return nil, core.ConfigurationProblem("chart.archive.remote.url: %v", err)
	}
	c, err := loader.Load(p)
	if err != nil {
		return nil, core.ConfigurationProblem("unable to load chart from %s: %v", p, err)
	}
	return c, nil
}

// get fetches a URL. 4xx answers are terminal (the config names something
// that is not there); everything else that fails is transient.
func (d *Deployer) get(ctx context.Context, rawURL string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, core.ConfigurationProblem("invalid URL %s: %v", redact(rawURL), err)
	}
	resp, err := d.httpClient().Do(req)
	if err != nil {
		return nil, core.Transient("FetchChart", fmt.Sprintf("unable to fetch %s: %v", redact(rawURL), unwrapURLError(err)))
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return nil, core.ConfigurationProblem("unable to fetch %s: %s", redact(rawURL), resp.Status)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, core.Transient("FetchChart", fmt.Sprintf("unable to fetch %s: %s", redact(rawURL), resp.Status))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxChartSize+1))
	if err != nil {
		return nil, core.Transient("FetchChart", fmt.Sprintf("unable to read %s: %v", redact(rawURL), err))
	}
	if len(data) > maxChartSize {
		return nil, core.ConfigurationProblem("%s is larger than %d bytes", redact(rawURL), maxChartSize)
	}
	return data, nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redact drops user info from a URL before it goes into a message.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}

func (d *Deployer) httpClient() *http.Client {
	if d.opts.HTTPClient != nil {
		return d.opts.HTTPClient
	}
	return http.DefaultClient
}

// loadFromRepo finds a chart version in a repository's index.yaml and
// downloads its archive. URLs in the index may be relative to the
// repository, as helm allows.
func (d *Deployer) loadFromRepo(ctx context.Context, r *HelmChartRepo) (*chart.Chart, error) {
	base := strings.TrimSuffix(r.URL, "/")
	data, err := d.get(ctx, base+"/index.yaml")
	if err != nil {
		return nil, err
	}
	var idx repo.IndexFile
	if err := yaml.Unmarshal(data, &idx); err != nil {
		return nil, core.ConfigurationProblem("the index.yaml of %s is not valid: %v", redact(base), err)
	}
	idx.SortEntries()
	cv, err := idx.Get(r.Name, r.Version)
	if err != nil {
		return nil, core.ConfigurationProblem("chart %q version %q not found in helm chart repository %s", r.Name, r.Version, redact(base))
	}
	if len(cv.URLs) == 0 {
		return nil, core.ConfigurationProblem("chart %q version %q in %s has no download URL", r.Name, r.Version, redact(base))
	}
	ref, err := url.Parse(cv.URLs[0])
	if err != nil {
		return nil, core.ConfigurationProblem("chart %q version %q has an invalid URL: %v", r.Name, r.Version, err)
	}
	baseURL, err := url.Parse(base + "/")
	if err != nil {
		return nil, core.ConfigurationProblem("invalid helmChartRepoUrl: %v", err)
	}
	archive := baseURL.ResolveReference(ref).String()
	data, err = d.get(ctx, archive)
	if err != nil {
		return nil, err
	}
	return loadArchive(data, redact(archive))
}

// loadOCI pulls a chart from an OCI registry. Landscaper writes refs
// without a scheme (host/repo:tag); the oci:// prefix is accepted too.
// Registries on a loopback address are spoken to over plain http, as
// container tools do for local registries.
func (d *Deployer) loadOCI(ctx context.Context, ref string) (*chart.Chart, error) {
	ref = strings.TrimPrefix(ref, registry.OCIScheme+"://")
	opts := []registry.ClientOption{registry.ClientOptWriter(io.Discard)}
	if d.opts.RegistryCredentialsFile != "" {
		opts = append(opts, registry.ClientOptCredentialsFile(d.opts.RegistryCredentialsFile))
	}
	if d.opts.HTTPClient != nil {
		opts = append(opts, registry.ClientOptHTTPClient(d.opts.HTTPClient))
	}
	if isLoopback(ref) {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	client, err := registry.NewClient(opts...)
	if err != nil {
		return nil, core.Terminal("RegistryClient", err.Error(), core.CodeInternalProblem)
	}
	type pulled struct {
		res *registry.PullResult
		err error
	}
	// Pull takes no context; run it aside so a stop is not held up.
	done := make(chan pulled, 1)
	go func() {
		res, err := client.Pull(ref)
		done <- pulled{res, err}
	}()
	var p pulled
	select {
	case p = <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if p.err != nil {
		msg := fmt.Sprintf("unable to pull chart %s: %v", ref, p.err)
		if strings.Contains(p.err.Error(), "not found") || strings.Contains(p.err.Error(), "invalid reference") {
			return nil, core.ConfigurationProblem("%s", msg)
		}
		return nil, core.Transient("PullChart", msg)
	}
	return loadArchive(p.res.Chart.Data, ref)
}

func isLoopback(ref string) bool {
	host := ref
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host = host[:i]
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
