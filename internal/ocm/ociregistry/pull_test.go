package ociregistry

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
)

// pushChart stores a chart the way `helm push` lays it out.
func pushChart(t *testing.T, reg *ocitest.Registry, repoTag string, data []byte) string {
	t.Helper()
	return reg.PushArtifact(t, repoTag, ocitest.Blob{MediaType: "application/vnd.cncf.helm.config.v1+json", Data: []byte("{}")},
		ocitest.Blob{MediaType: MediaTypeHelmChartContent, Data: data},
		ocitest.Blob{MediaType: MediaTypeHelmChartProvenance, Data: []byte("provenance")})
}

// A chart on a TLS registry on 127.0.0.1 is pulled over HTTPS with the
// configured credentials, and the pull says which manifest it came from.
func TestPullFromTLSLoopbackRegistry(t *testing.T) {
	ca, _ := ocitest.NewCA()
	reg := ocitest.Start(t, ocitest.Options{CA: ca, Auth: ocitest.Basic, Username: "ci", Password: secret})
	chart := []byte("chart archive")
	digest := pushChart(t, reg, "charts/echo:1.0.0_build.1", chart)
	c := testClient(t, ca, Options{Credentials: map[string]Credential{reg.Host: {Username: "ci", Password: secret}}})
	for _, ref := range []string{reg.Host + "/charts/echo:1.0.0+build.1", "oci://" + reg.Host + "/charts/echo:1.0.0_build.1", reg.Host + "/charts/echo@" + digest} {
		b, err := c.Pull(context.Background(), ref)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		if string(b.Data) != string(chart) || b.ArtifactDigest != digest || b.Digest != ocm.Digest(chart) || b.MediaType != MediaTypeHelmChartContent {
			t.Fatalf("%s: got %q, manifest %s (want %s)", ref, b.Data, b.ArtifactDigest, digest)
		}
	}
	// An ociArtifact access reads the same way.
	b, err := c.Blob(context.Background(), map[string]any{"type": "ociArtifact", "imageReference": "oci://" + reg.Host + "/charts/echo:1.0.0+build.1"})
	if err != nil || b.ArtifactDigest != digest {
		t.Fatalf("ociArtifact: %v %v", b, err)
	}
	if c.tr.st.learned[reg.Host] {
		t.Fatal("a TLS registry was taken for a plain HTTP one")
	}
	// Without credentials: refused, terminal, naming what was tried.
	_, err = testClient(t, ca, Options{}).Pull(context.Background(), reg.Host+"/charts/echo:1.0.0_build.1")
	if KindOf(err) != KindRefused || !IsTerminal(err) || !strings.Contains(err.Error(), "anonymous") || !strings.Contains(err.Error(), reg.Host+"/charts/echo") {
		t.Fatalf("anonymous: %v", err)
	}
	// A missing tag: not found, terminal.
	_, err = c.Pull(context.Background(), reg.Host+"/charts/echo:9.9.9")
	if KindOf(err) != KindNotFound || !errors.Is(err, ocm.ErrNotFound) || !IsTerminal(err) {
		t.Fatalf("missing: %v", err)
	}
}

// A registry whose certificate is not trusted fails at once, naming the
// registry, the reference and where trusted certificates come from; it
// is never retried over plain HTTP, even on loopback, nor served from
// the cache.
func TestUntrustedCertificateIsTerminal(t *testing.T) {
	ca, _ := ocitest.NewCA()
	other, _ := ocitest.NewCA()
	reg := ocitest.Start(t, ocitest.Options{CA: ca})
	pushChart(t, reg, "charts/echo:1.0.0", []byte("chart"))
	c := testClient(t, other, Options{})
	for _, ref := range []string{reg.Host + "/charts/echo:1.0.0", "http://" + reg.Host + "/charts/echo:1.0.0"} {
		_, err := c.Pull(context.Background(), ref)
		if KindOf(err) != KindTLS || !IsTerminal(err) {
			t.Fatalf("%s: want a TLS error, got %v", ref, err)
		}
		for _, want := range []string{reg.Host, "charts/echo:1.0.0", "SSL_CERT_FILE", "certificate"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q does not name %s", ref, err, want)
			}
		}
	}
	if n := reg.Counts()["manifest"]; n != 0 {
		t.Fatalf("%d manifest requests reached the registry", n)
	}
	// The same holds for components: a warm cache does not stand in.
	_, err := c.Repository(spec(reg.Host)).ComponentVersion(context.Background(), "example.com/app", "1.0.0")
	if KindOf(err) != KindTLS {
		t.Fatalf("component: %v", err)
	}
}

// nonLoopbackIP is an address of this machine that is not loopback, or
// "" when it has none.
func nonLoopbackIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	return ""
}

// A registry that is not on loopback and speaks plain HTTP is refused at
// once, unless asked for with http://.
func TestPlainHTTPRegistryNotOnLoopback(t *testing.T) {
	ip := nonLoopbackIP()
	if ip == "" {
		t.Skip("this machine has no address besides loopback")
	}
	reg := ocitest.Start(t, ocitest.Options{Addr: ip + ":0"})
	pushChart(t, reg, "charts/echo:1.0.0", []byte("chart"))
	c := testClient(t, nil, Options{})
	_, err := c.Pull(context.Background(), reg.Host+"/charts/echo:1.0.0")
	if KindOf(err) != KindProtocol || !IsTerminal(err) || !strings.Contains(err.Error(), "plain HTTP") || !strings.Contains(err.Error(), reg.Host+"/charts/echo:1.0.0") {
		t.Fatalf("want a protocol error naming the reference, got %v", err)
	}
	if b, err := c.Pull(context.Background(), "http://"+reg.Host+"/charts/echo:1.0.0"); err != nil || string(b.Data) != "chart" {
		t.Fatalf("http://: %v", err)
	}
}

// A TLS server asked for with plain HTTP says so, instead of a bare 400.
func TestPlainHTTPToTLSServer(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "https://")
	tr := newSchemeTransport(http.DefaultTransport)
	tr.configurePlain(host)
	req, _ := http.NewRequest(http.MethodGet, "http://"+host+"/v2/", nil)
	_, err := tr.RoundTrip(req)
	c := testClient(t, nil, Options{})
	err = c.classify(host, "OCI artifact x", err)
	if KindOf(err) != KindProtocol || !strings.Contains(err.Error(), "speaks HTTPS") {
		t.Fatalf("got %v", err)
	}
}

// Chart repositories get the registry's credentials by host, versions are
// picked as helm picks them, and archives come from the cache by digest.
func TestHelmChartRepositoryCredentialsVersionsAndCache(t *testing.T) {
	chart10, chart11 := []byte("chart 1.0.0"), []byte("chart 1.1.0")
	var archives int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ci" || p != secret {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/index.yaml":
			_, _ = w.Write([]byte("apiVersion: v1\nentries:\n  echo:\n  - {version: 1.1.0, urls: [echo-1.1.0.tgz], digest: " + sha256hex(string(chart11)) +
				"}\n  - {version: 1.0.0, urls: [echo-1.0.0.tgz], digest: " + sha256hex(string(chart10)) + "}\n  - {version: 2.0.0-rc.1, urls: [x.tgz]}\n"))
		case "/echo-1.0.0.tgz":
			archives++
			_, _ = w.Write(chart10)
		case "/echo-1.1.0.tgz":
			archives++
			_, _ = w.Write(chart11)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	cache, err := ocm.NewDiskCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// A plain HTTP repository: its credentials say so.
	c := testClient(t, nil, Options{Cache: cache, Credentials: map[string]Credential{"http://" + host: {Username: "ci", Password: secret}}})
	for version, want := range map[string][]byte{"1.0.0": chart10, "~1.0": chart10, "^1": chart11, ">=1.0.0 <2": chart11} {
		b, err := c.HelmChart(context.Background(), srv.URL, "echo", version)
		if err != nil || string(b.Data) != string(want) {
			t.Fatalf("%s: %v %v", version, b, err)
		}
	}
	if archives != 2 {
		t.Fatalf("%d archives downloaded, want 2 (the rest from the cache)", archives)
	}
	if _, err := c.HelmChart(context.Background(), srv.URL, "echo", "3.0.0"); KindOf(err) != KindNotFound {
		t.Fatalf("3.0.0: %v", err)
	}
	_, err = testClient(t, nil, Options{}).HelmChart(context.Background(), srv.URL, "echo", "1.0.0")
	if KindOf(err) != KindRefused || !strings.Contains(err.Error(), host) || !strings.Contains(err.Error(), "anonymous") {
		t.Fatalf("anonymous: %v", err)
	}
	wrong := testClient(t, nil, Options{Credentials: map[string]Credential{"http://" + host: {Username: "ci", Password: "wrong-" + secret}}})
	if _, err := wrong.HelmChart(context.Background(), srv.URL, "echo", "1.0.0"); KindOf(err) != KindRefused || strings.Contains(err.Error(), secret) ||
		!strings.Contains(err.Error(), "registry_credentials") {
		t.Fatalf("wrong credentials: %v", err)
	}
}

// A chart pulled again comes from the cache but for its manifest.
func TestPullUsesTheCache(t *testing.T) {
	reg := ocitest.Start(t, ocitest.Options{})
	pushChart(t, reg, "charts/echo:1.0.0", []byte("chart"))
	cache, err := ocm.NewDiskCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testClient(t, nil, Options{Cache: cache}).Pull(context.Background(), reg.Host+"/charts/echo:1.0.0"); err != nil {
		t.Fatal(err)
	}
	reg.ResetCounts()
	b, err := testClient(t, nil, Options{Cache: cache}).Pull(context.Background(), reg.Host+"/charts/echo:1.0.0")
	if err != nil || string(b.Data) != "chart" {
		t.Fatalf("%v %v", b, err)
	}
	if n := reg.Counts(); n["manifest"] != 1 || n["blob"] != 0 {
		t.Fatalf("a cached chart took %v requests", n)
	}
}

// Without a transport of its own the client trusts the system's roots
// plus SSL_CERT_FILE and SSL_CERT_DIR as they are at its first request (Go
// reads them once per process, before the test could set them).
func TestRootsFromSSLCertFileAndDir(t *testing.T) {
	for _, env := range []string{"SSL_CERT_FILE", "SSL_CERT_DIR"} {
		t.Run(env, func(t *testing.T) {
			ca, _ := ocitest.NewCA()
			reg := ocitest.Start(t, ocitest.Options{CA: ca})
			pushChart(t, reg, "charts/echo:1.0.0", []byte("chart"))
			dir := t.TempDir()
			file, err := ca.WriteFile(dir)
			if err != nil {
				t.Fatal(err)
			}
			newClient := func() *Client {
				c, err := New(Options{Keychain: authn.NewMultiKeychain()})
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			if _, err := newClient().Pull(context.Background(), reg.Host+"/charts/echo:1.0.0"); KindOf(err) != KindTLS {
				t.Fatalf("before %s: want a TLS error, got %v", env, err)
			}
			if env == "SSL_CERT_FILE" {
				t.Setenv(env, file)
			} else {
				t.Setenv(env, dir)
			}
			if b, err := newClient().Pull(context.Background(), reg.Host+"/charts/echo:1.0.0"); err != nil || string(b.Data) != "chart" {
				t.Fatalf("with %s: %v", env, err)
			}
		})
	}
}

// The client reads the roots at its first request, not when it is made:
// reading them costs tens of milliseconds (a directory of hundreds of
// certificates in SSL_CERT_DIR), which every provider process paid in
// Configure although most of them never reach a registry. A client made
// before SSL_CERT_FILE names the registry's CA trusts it at its first
// request.
func TestRootsReadAtFirstRequest(t *testing.T) {
	ca, _ := ocitest.NewCA()
	reg := ocitest.Start(t, ocitest.Options{CA: ca})
	pushChart(t, reg, "charts/echo:1.0.0", []byte("chart"))
	file, err := ca.WriteFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Keychain: authn.NewMultiKeychain()})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", file)
	if b, err := c.Pull(context.Background(), reg.Host+"/charts/echo:1.0.0"); err != nil || string(b.Data) != "chart" {
		t.Fatalf("the roots were read before the first request: %v", err)
	}
}

// A verified fetch does not ask for plain HTTP on a reference's word (the
// reference is not signed), and leaves no plain HTTP allowance behind on
// the shared client for a later fetch.
func TestVerifiedPullRefusesPlainHTTP(t *testing.T) {
	c := testClient(t, nil, Options{})
	_, err := c.Pull(ocm.WithVerifiedFetch(context.Background()), "http://evil.test/charts/echo:1.0.0")
	if err == nil || !strings.Contains(err.Error(), "plain HTTP") || !strings.Contains(err.Error(), "evil.test/charts/echo") {
		t.Fatalf("got %v", err)
	}
	if c.tr.plainAllowed("evil.test") {
		t.Fatal("plain HTTP to evil.test is allowed after a refused verified pull")
	}
}

// BenchmarkNew is the client's cost in each provider process's Configure,
// which reads no roots (see TestRootsReadAtFirstRequest); with
// SSL_CERT_DIR set to a directory of certificates, reading them cost
// 40–150 ms a client on a 2-core machine.
func BenchmarkNew(b *testing.B) {
	for b.Loop() {
		if _, err := New(Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
