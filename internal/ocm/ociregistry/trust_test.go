package ociregistry

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
)

// What a hostile registry can do against the digests and credentials the
// client relies on (issue 25): forge a manifest's digest with a schema-1
// content type, and send credentials elsewhere with redirects and chart
// URLs.

// forgedRegistry serves, for charts/echo@<signed>, the manifest of another
// chart (stored in the same repository, so its layers are there) as a
// signed schema-1 manifest whose Docker-Content-Digest is the signed
// digest; and the same under the tag 1.0.0.
func forgedRegistry(t *testing.T) (reg *ocitest.Registry, ca *ocitest.CA, signed string) {
	t.Helper()
	ca, _ = ocitest.NewCA()
	reg = ocitest.Start(t, ocitest.Options{CA: ca})
	signed = pushChart(t, reg, "charts/echo:1.0.0", []byte("the signed chart"))
	pushChart(t, reg, "charts/echo:evil", []byte("the attacker's chart"))
	forged := ocitest.Forgery{Body: reg.Manifest(t, "charts/echo", "evil"), ContentType: ocitest.MediaTypeSchema1Signed, DigestHeader: signed}
	reg.Forge("charts/echo", signed, forged)
	reg.Forge("charts/echo", "1.0.0", forged)
	return reg, ca, signed
}

// A manifest's digest is computed from the bytes received: a schema-1
// content type with a forged Docker-Content-Digest does not make another
// manifest pass for the one asked for by digest, and schema-1 answers are
// refused, saying so, verified or not, by digest or by tag.
func TestForgedSchema1DigestIsRefused(t *testing.T) {
	reg, ca, signed := forgedRegistry(t)
	c := testClient(t, ca, Options{})
	for name, ctx := range map[string]context.Context{"verified": ocm.WithVerifiedFetch(context.Background()), "not verified": context.Background()} {
		for _, ref := range []string{reg.Host + "/charts/echo@" + signed, reg.Host + "/charts/echo:1.0.0"} {
			b, err := c.Pull(ctx, ref)
			if err == nil {
				t.Errorf("%s %s: pulled %q as manifest %s", name, ref, b.Data, b.ArtifactDigest)
				continue
			}
			if !strings.Contains(err.Error(), "schema-1") {
				t.Errorf("%s %s: the error does not name schema 1: %v", name, ref, err)
			}
			if name == "verified" && !strings.Contains(err.Error(), "a verifying installation refuses") {
				t.Errorf("%s %s: the error does not say verification refuses it: %v", name, ref, err)
			}
		}
	}
	// The same as an ociArtifact access of a verified resource.
	_, err := c.Blob(ocm.WithVerifiedFetch(context.Background()), map[string]any{"type": "ociArtifact", "imageReference": reg.Host + "/charts/echo@" + signed})
	if err == nil || !strings.Contains(err.Error(), "schema-1") {
		t.Errorf("ociArtifact access: %v", err)
	}
}

// A component version's manifest is refused the same way, and what a
// forged answer claims never lands in the cache under the claimed digest.
func TestForgedSchema1ComponentManifest(t *testing.T) {
	ca, _ := ocitest.NewCA()
	reg := ocitest.Start(t, ocitest.Options{CA: ca})
	stored := reg.PushComponent(t, "ocm", "example.com/app", "1.0.0", descriptor("example.com/app", "1.0.0", "    []"), ocitest.OCM)
	reg.PushComponent(t, "ocm", "example.com/app", "6.6.6", descriptor("example.com/app", "1.0.0", "    []"), ocitest.OCM)
	repo := "ocm/component-descriptors/example.com/app"
	reg.Forge(repo, "1.0.0", ocitest.Forgery{Body: reg.Manifest(t, repo, "6.6.6"), ContentType: ocitest.MediaTypeSchema1Signed, DigestHeader: stored})
	cache := ocm.NewMemoryCache()
	c := testClient(t, ca, Options{Cache: cache})
	cv, err := c.Repository(spec(reg.Host)).ComponentVersion(context.Background(), "example.com/app", "1.0.0")
	if err == nil || !strings.Contains(err.Error(), "schema-1") {
		t.Fatalf("got %v, %v", cv, err)
	}
	if _, ok := cache.Get(stored); ok {
		t.Fatal("the forged manifest is cached")
	}
}

// A manifest answered with a Docker-Content-Digest that is not its own
// (in a content type go-containerregistry hashes) gets the digest of its
// bytes, by tag as by digest.
func TestManifestDigestIsComputed(t *testing.T) {
	ca, _ := ocitest.NewCA()
	reg := ocitest.Start(t, ocitest.Options{CA: ca})
	d := pushChart(t, reg, "charts/echo:1.0.0", []byte("chart"))
	body := reg.Manifest(t, "charts/echo", "1.0.0")
	reg.Forge("charts/echo", "1.0.0", ocitest.Forgery{Body: body, ContentType: "application/vnd.oci.image.manifest.v1+json",
		DigestHeader: "sha256:" + strings.Repeat("0", 64)})
	b, err := testClient(t, ca, Options{}).Pull(context.Background(), reg.Host+"/charts/echo:1.0.0")
	if err != nil || b.ArtifactDigest != d || d != ocm.Digest(body) {
		t.Fatalf("%v: manifest digest %v, want %s", err, b, d)
	}
}

// chartRepos starts a chart repository that asks for credentials and
// another one (another port of the same host) that does not, with the
// chart echo 1.0.0 in the first.
func chartRepos(t *testing.T) (repo, other *ocitest.ChartRepo, ca *ocitest.CA, archive []byte) {
	t.Helper()
	ca, _ = ocitest.NewCA()
	repo = ocitest.StartChartRepo(t, ocitest.ChartRepoOptions{CA: ca, Username: "ci", Password: secret})
	other = ocitest.StartChartRepo(t, ocitest.ChartRepoOptions{CA: ca})
	archive = []byte("chart archive")
	repo.AddChart("echo", "1.0.0", archive)
	// Where a hostile repository sends the client: open to anyone, as a
	// CDN would be.
	for _, r := range []*ocitest.ChartRepo{repo, other} {
		r.Serve("/cdn/echo-1.0.0.tgz", archive)
		r.Open("/cdn/echo-1.0.0.tgz")
		r.Serve("/cdn/index.yaml", []byte("apiVersion: v1\nentries:\n  echo:\n  - {version: 1.0.0, urls: ["+repo.URL+"/charts/echo-1.0.0.tgz]}\n"))
		r.Open("/cdn/index.yaml")
	}
	return repo, other, ca, archive
}

// noCredentialsLeft fails for every credentialed request a repository
// received over plain HTTP or on a path outside charts/ and index.yaml.
func noCredentialsLeft(t *testing.T, name string, repos ...*ocitest.ChartRepo) {
	t.Helper()
	for _, r := range repos {
		for _, q := range r.Credentialed() {
			if q.Scheme != "https" || strings.HasPrefix(q.Path, "/cdn/") {
				t.Errorf("%s: credentials went to %s://%s%s", name, q.Scheme, r.Host, q.Path)
			}
		}
	}
}

// Chart-repository credentials go to the scheme, host and port they are
// for: not along a redirect to another port, not along a redirect to
// http:// on the same host and port, not to an index.yaml's chart URL
// naming http:// on the same host and port.
func TestChartRepositoryCredentialsStayOnTheirOrigin(t *testing.T) {
	cases := map[string]func(repo, other *ocitest.ChartRepo){
		"index redirected to another port": func(repo, other *ocitest.ChartRepo) { repo.Redirect("/index.yaml", other.URL+"/cdn/index.yaml") },
		"archive redirected to another port": func(repo, other *ocitest.ChartRepo) {
			repo.Redirect("/charts/echo-1.0.0.tgz", other.URL+"/cdn/echo-1.0.0.tgz")
		},
		"archive redirected to http://": func(repo, _ *ocitest.ChartRepo) {
			repo.Redirect("/charts/echo-1.0.0.tgz", repo.PlainURL+"/cdn/echo-1.0.0.tgz")
		},
		"chart URL with http://": func(repo, _ *ocitest.ChartRepo) {
			repo.SetChartURL("echo", "1.0.0", repo.PlainURL+"/cdn/echo-1.0.0.tgz")
		},
	}
	for name, hostile := range cases {
		t.Run(name, func(t *testing.T) {
			repo, other, ca, archive := chartRepos(t)
			hostile(repo, other)
			c := testClient(t, ca, Options{Credentials: map[string]Credential{repo.Host: {Username: "ci", Password: secret}}})
			b, err := c.HelmChart(context.Background(), repo.URL, "echo", "1.0.0")
			if err != nil || string(b.Data) != string(archive) {
				t.Errorf("not verified: %v", err)
			}
			noCredentialsLeft(t, name, repo, other)
			if len(repo.Credentialed()) == 0 {
				t.Error("the repository never got the credentials: the test proves nothing")
			}
		})
	}
}

// Credentials go over plain HTTP only to a host the user configured
// http:// for (a registry_credentials key http://host, or a repository
// context's baseUrl): not to a loopback registry found to speak plain
// HTTP, not on a reference's http:// (registry content can write one).
func TestCredentialsOverPlainHTTPOnlyWhereConfigured(t *testing.T) {
	reg := ocitest.Start(t, ocitest.Options{Auth: ocitest.Basic, Username: "ci", Password: secret})
	pushChart(t, reg, "charts/echo:1.0.0", []byte("chart"))
	reg.PushComponent(t, "ocm", "example.com/app", "1.0.0", descriptor("example.com/app", "1.0.0", "    []"), ocitest.OCM)
	byHost := map[string]Credential{reg.Host: {Username: "ci", Password: secret}}
	for name, ref := range map[string]string{"learned loopback": reg.Host + "/charts/echo:1.0.0", "reference with http://": "http://" + reg.Host + "/charts/echo:1.0.0"} {
		_, err := testClient(t, nil, Options{Credentials: byHost}).Pull(context.Background(), ref)
		if KindOf(err) != KindRefused || !strings.Contains(err.Error(), "not sent over plain HTTP") || !strings.Contains(err.Error(), "http://"+reg.Host) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if reg.Counts()["unauthorized"] == 0 {
		t.Fatal("the registry never refused: the credentials went over plain HTTP")
	}
	c := testClient(t, nil, Options{Credentials: map[string]Credential{"http://" + reg.Host: {Username: "ci", Password: secret}}})
	if b, err := c.Pull(context.Background(), reg.Host+"/charts/echo:1.0.0"); err != nil || string(b.Data) != "chart" {
		t.Errorf("key http://%s: %v", reg.Host, err)
	}
	s, _ := ocm.ParseRepositorySpec(map[string]any{"type": "OCIRegistry", "baseUrl": "http://" + reg.Host + "/ocm"})
	if _, err := testClient(t, nil, Options{Credentials: byHost}).Repository(s).ComponentVersion(context.Background(), "example.com/app", "1.0.0"); err != nil {
		t.Errorf("baseUrl http://: %v", err)
	}
}

// The same for chart repositories: a repository named with http:// gets
// no credentials unless configured so.
func TestChartRepositoryCredentialsOverPlainHTTP(t *testing.T) {
	repo, _, ca, archive := chartRepos(t)
	_, err := testClient(t, ca, Options{Credentials: map[string]Credential{repo.Host: {Username: "ci", Password: secret}}}).
		HelmChart(context.Background(), repo.PlainURL, "echo", "1.0.0")
	if KindOf(err) != KindRefused || !strings.Contains(err.Error(), "not sent over plain HTTP") {
		t.Errorf("host key: %v", err)
	}
	noCredentialsLeft(t, "host key", repo)
	c := testClient(t, ca, Options{Credentials: map[string]Credential{"http://" + repo.Host: {Username: "ci", Password: secret}}})
	if b, err := c.HelmChart(context.Background(), repo.PlainURL, "echo", "1.0.0"); err != nil || string(b.Data) != string(archive) {
		t.Errorf("key http://: %v", err)
	}
	plain := 0
	for _, q := range repo.Credentialed() {
		if q.Scheme == "http" {
			plain++
		}
	}
	if plain == 0 {
		t.Error("with a key http://host, no credentials went over plain HTTP")
	}
}

// A plain HTTP allowance of one fetch (a reference's http://) is not left
// behind on the shared client for the next.
func TestPlainHTTPAllowanceIsPerFetch(t *testing.T) {
	reg := ocitest.Start(t, ocitest.Options{})
	pushChart(t, reg, "charts/echo:1.0.0", []byte("chart"))
	c := testClient(t, nil, Options{})
	if _, err := c.Pull(context.Background(), "http://"+reg.Host+"/charts/echo:1.0.0"); err != nil {
		t.Fatal(err)
	}
	if c.tr.plainAllowed(reg.Host) {
		t.Fatal("a reference's http:// allowed plain HTTP to its host for every later fetch")
	}
}

// A verified fetch does not follow a chart repository to another origin
// at all: a redirect to another port or to http://, or a chart URL with
// http://, is refused before anything is sent there.
func TestVerifiedChartRepositoryStaysOnItsOrigin(t *testing.T) {
	cases := map[string]func(repo, other *ocitest.ChartRepo){
		"redirect to another port": func(repo, other *ocitest.ChartRepo) {
			repo.Redirect("/charts/echo-1.0.0.tgz", other.URL+"/cdn/echo-1.0.0.tgz")
		},
		"redirect to http://": func(repo, _ *ocitest.ChartRepo) {
			repo.Redirect("/charts/echo-1.0.0.tgz", repo.PlainURL+"/cdn/echo-1.0.0.tgz")
		},
		"chart URL with http://": func(repo, _ *ocitest.ChartRepo) {
			repo.SetChartURL("echo", "1.0.0", repo.PlainURL+"/cdn/echo-1.0.0.tgz")
		},
	}
	for name, hostile := range cases {
		t.Run(name, func(t *testing.T) {
			repo, other, ca, _ := chartRepos(t)
			hostile(repo, other)
			c := testClient(t, ca, Options{Credentials: map[string]Credential{repo.Host: {Username: "ci", Password: secret}}})
			_, err := c.Blob(ocm.WithVerifiedFetch(context.Background()), map[string]any{"type": "helm", "helmRepository": repo.URL, "helmChart": "echo:1.0.0"})
			if err == nil || !strings.Contains(err.Error(), "does not follow") {
				t.Fatalf("got %v", err)
			}
			for _, r := range []*ocitest.ChartRepo{repo, other} {
				for _, q := range r.Requests() {
					if strings.HasPrefix(q.Path, "/cdn/") {
						t.Errorf("%s://%s%s was asked", q.Scheme, r.Host, q.Path)
					}
				}
			}
		})
	}
}

// originAuth binds credentials to scheme, host and port: a subdomain,
// another port, plain HTTP or a header a client copied along get none.
func TestOriginAuthBindsSchemeHostAndPort(t *testing.T) {
	var got map[string]string
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got[r.URL.String()] = r.Header.Get("Authorization")
		return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
	})
	start, _ := url.Parse("https://charts.example.com/repo/")
	tr := &originAuth{next: next, origin: origin(start), header: "Basic c2VjcmV0"}
	want := map[string]string{
		"https://charts.example.com/repo/index.yaml": "Basic c2VjcmV0",
		"https://charts.example.com:443/x.tgz":       "Basic c2VjcmV0",
		"https://CHARTS.example.com/x.tgz":           "Basic c2VjcmV0",
		"https://charts.example.com:8443/x.tgz":      "",
		"http://charts.example.com/x.tgz":            "",
		"http://charts.example.com:443/x.tgz":        "",
		"https://cdn.charts.example.com/x.tgz":       "",
		"https://example.com/x.tgz":                  "",
	}
	got = map[string]string{}
	for u := range want {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		// As net/http copies it along a redirect within a domain.
		req.Header.Set("Authorization", "Basic Y29waWVk")
		if _, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
	}
	for u, w := range want {
		if got[u] != w {
			t.Errorf("%s: Authorization %q, want %q", u, got[u], w)
		}
	}
}

// An archive URL (chart.archive.remote.url) is fetched by the same rules:
// credentials of its origin only, none along a redirect, none over plain
// HTTP; http:// refused under verification; the digest computed.
func TestFetch(t *testing.T) {
	repo, other, ca, archive := chartRepos(t)
	repo.Redirect("/moved.tgz", other.URL+"/cdn/echo-1.0.0.tgz")
	c := testClient(t, ca, Options{Credentials: map[string]Credential{repo.Host: {Username: "ci", Password: secret}}})
	for _, u := range []string{repo.URL + "/charts/echo-1.0.0.tgz", repo.URL + "/moved.tgz", repo.PlainURL + "/cdn/echo-1.0.0.tgz"} {
		b, err := c.Fetch(context.Background(), u)
		if err != nil || string(b.Data) != string(archive) || b.Digest != ocm.Digest(archive) {
			t.Errorf("%s: %v", u, err)
		}
	}
	noCredentialsLeft(t, "fetch", repo, other)
	if _, err := c.Fetch(ocm.WithVerifiedFetch(context.Background()), repo.PlainURL+"/cdn/echo-1.0.0.tgz"); err == nil || !strings.Contains(err.Error(), "plain HTTP") {
		t.Errorf("verified http://: %v", err)
	}
	if _, err := c.Fetch(ocm.WithVerifiedFetch(context.Background()), repo.URL+"/moved.tgz"); err == nil || !strings.Contains(err.Error(), "does not follow") {
		t.Errorf("verified redirect: %v", err)
	}
	if _, err := c.Fetch(context.Background(), repo.URL+"/nope.tgz"); KindOf(err) != KindNotFound {
		t.Errorf("missing: %v", err)
	}
}

// A registry's credentials do not follow a blob download it redirects to
// another port of its host (go-containerregistry adds them for the
// registry's host and port only), and the content is still checked.
func TestRegistryCredentialsDoNotFollowRedirects(t *testing.T) {
	ca, _ := ocitest.NewCA()
	reg := ocitest.Start(t, ocitest.Options{CA: ca, Auth: ocitest.Basic, Username: "ci", Password: secret})
	other := ocitest.StartChartRepo(t, ocitest.ChartRepoOptions{CA: ca})
	chart := []byte("chart")
	pushChart(t, reg, "charts/echo:1.0.0", chart)
	other.Serve("/cdn/chart", chart)
	reg.Redirect("/v2/charts/echo/blobs/"+ocm.Digest(chart), other.URL+"/cdn/chart")
	c := testClient(t, ca, Options{Credentials: map[string]Credential{reg.Host: {Username: "ci", Password: secret}}})
	if b, err := c.Pull(context.Background(), reg.Host+"/charts/echo:1.0.0"); err != nil || string(b.Data) != string(chart) {
		t.Fatalf("%v", err)
	}
	if len(other.Requests()) == 0 {
		t.Fatal("the redirect was not followed: the test proves nothing")
	}
	if got := other.Credentialed(); len(got) != 0 {
		t.Fatalf("credentials followed the redirect: %v", got)
	}
	// Content that is not the blob asked for is refused.
	other.Serve("/cdn/chart", []byte("other"))
	if _, err := testClient(t, ca, Options{Credentials: map[string]Credential{reg.Host: {Username: "ci", Password: secret}}}).
		Pull(context.Background(), reg.Host+"/charts/echo:1.0.0"); err == nil {
		t.Fatal("a redirected blob that does not match its digest was accepted")
	}
}

// A Bearer challenge that arrives over plain HTTP is anyone's on the
// path: its realm must not get the registry's credentials, which the
// client keeps off plain HTTP for that very reason.
func TestPlainChallengeRealmGetsNoCredentials(t *testing.T) {
	ca, _ := ocitest.NewCA()
	realm := ocitest.StartChartRepo(t, ocitest.ChartRepoOptions{CA: ca})
	port := strings.TrimPrefix(realm.Host, "127.0.0.1:")
	// The answer of whoever is on the plain HTTP path: a challenge naming
	// a token service of its own (over HTTPS, on a name, as
	// go-containerregistry's realm checks ask).
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="https://localhost:%s/token",service="x"`, port))
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer plain.Close()
	host := strings.TrimPrefix(plain.URL, "http://")
	for name, ref := range map[string]string{"reference with http://": "http://" + host + "/charts/echo:1.0.0", "learned loopback": host + "/charts/echo:1.0.0"} {
		c := testClient(t, ca, Options{Credentials: map[string]Credential{host: {Username: "ci", Password: secret}}})
		_, err := c.Pull(context.Background(), ref)
		if err == nil {
			t.Errorf("%s: pulled", name)
		}
		if got := realm.Credentialed(); len(got) != 0 {
			t.Errorf("%s: the realm a plain HTTP answer named got the credentials: %v", name, got)
		}
	}
	if len(realm.Requests()) == 0 {
		t.Fatal("the realm was never asked: the test proves nothing")
	}
}

// A helm access's caCert is the registry's word: a server that only this
// CA vouches for is not known to be the host the user's credentials are
// for, so they are not sent to it.
func TestAccessCACertGetsNoCredentials(t *testing.T) {
	ca, _ := ocitest.NewCA()
	attacker, _ := ocitest.NewCA()
	// The host the credentials are for, impersonated by a server whose
	// certificate the attacker's CA issued.
	fake := ocitest.StartChartRepo(t, ocitest.ChartRepoOptions{CA: attacker, Username: "ci", Password: secret})
	fake.AddChart("echo", "1.0.0", []byte("chart"))
	c := testClient(t, ca, Options{Credentials: map[string]Credential{fake.Host: {Username: "ci", Password: secret}}})
	_, err := c.Blob(context.Background(), map[string]any{"type": "helm", "helmRepository": fake.URL, "helmChart": "echo:1.0.0", "caCert": string(attacker.PEM)})
	if KindOf(err) != KindRefused || !strings.Contains(err.Error(), "names a caCert") || strings.Contains(err.Error(), secret) {
		t.Errorf("the refusal does not say why the credentials were not sent: %v", err)
	}
	if len(fake.Requests()) == 0 {
		t.Fatal("the server was never asked: the test proves nothing")
	}
	if got := fake.Credentialed(); len(got) != 0 {
		t.Fatalf("credentials went to a server only the access's caCert vouches for: %v", got)
	}
}

// What an index.yaml may name besides http(s) URLs: a protocol-relative
// URL is another origin (fetched without credentials, refused under
// verification); file:// and oci:// are no URLs the client fetches.
func TestChartURLsOfOtherKinds(t *testing.T) {
	for name, chartURL := range map[string]func(repo, other *ocitest.ChartRepo) string{
		"protocol-relative": func(_, other *ocitest.ChartRepo) string { return "//" + other.Host + "/cdn/echo-1.0.0.tgz" },
		"file://":           func(_, _ *ocitest.ChartRepo) string { return "file:///etc/hostname" },
		"oci://":            func(repo, _ *ocitest.ChartRepo) string { return "oci://" + repo.Host + "/charts/echo:1.0.0" },
	} {
		t.Run(name, func(t *testing.T) {
			repo, other, ca, archive := chartRepos(t)
			repo.SetChartURL("echo", "1.0.0", chartURL(repo, other))
			c := testClient(t, ca, Options{Credentials: map[string]Credential{repo.Host: {Username: "ci", Password: secret}}})
			b, err := c.HelmChart(context.Background(), repo.URL, "echo", "1.0.0")
			if name == "protocol-relative" {
				if err != nil || string(b.Data) != string(archive) {
					t.Errorf("not verified: %v", err)
				}
				_, err := c.Blob(ocm.WithVerifiedFetch(context.Background()), map[string]any{"type": "helm", "helmRepository": repo.URL, "helmChart": "echo:1.0.0"})
				if err == nil || !strings.Contains(err.Error(), "does not follow") {
					t.Errorf("verified: %v", err)
				}
			} else if err == nil {
				t.Errorf("fetched %q", b.Data)
			}
			noCredentialsLeft(t, name, repo, other)
		})
	}
}

// Docker config credentials are the host and port's they are written for:
// not another port of the host, not another name of the address.
func TestDockerConfigCredentialsByHostAndPort(t *testing.T) {
	repo, other, ca, archive := chartRepos(t)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, repo.Host, b64("ci:"+secret))
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
	c := testClient(t, ca, Options{Keychain: authn.DefaultKeychain})
	if b, err := c.HelmChart(context.Background(), repo.URL, "echo", "1.0.0"); err != nil || string(b.Data) != string(archive) {
		t.Fatalf("the Docker config's credentials were not used: %v", err)
	}
	before := len(repo.Credentialed())
	other.AddChart("echo", "1.0.0", archive)
	if _, err := c.HelmChart(context.Background(), other.URL, "echo", "1.0.0"); err != nil {
		t.Errorf("another port: %v", err)
	}
	port := strings.TrimPrefix(repo.Host, "127.0.0.1:")
	if _, err := c.HelmChart(context.Background(), "https://localhost:"+port, "echo", "1.0.0"); KindOf(err) != KindRefused {
		t.Errorf("localhost: %v", err)
	}
	if got := other.Credentialed(); len(got) != 0 {
		t.Errorf("another port got the credentials: %v", got)
	}
	if n := len(repo.Credentialed()); n != before {
		t.Errorf("localhost:%s got the credentials of %s", port, repo.Host)
	}
}

// A registry that redirects a blob download to http:// on its own host
// and port gets the request over HTTPS, where its credentials belong.
func TestBlobRedirectToPlainHTTPOnTheSameHost(t *testing.T) {
	ca, _ := ocitest.NewCA()
	reg := ocitest.Start(t, ocitest.Options{CA: ca, Auth: ocitest.Basic, Username: "ci", Password: secret})
	chart := []byte("chart")
	pushChart(t, reg, "charts/echo:1.0.0", chart)
	pushChart(t, reg, "charts/copy:1.0.0", chart)
	reg.Redirect("/v2/charts/echo/blobs/"+ocm.Digest(chart), "http://"+reg.Host+"/v2/charts/copy/blobs/"+ocm.Digest(chart))
	c := testClient(t, ca, Options{Credentials: map[string]Credential{reg.Host: {Username: "ci", Password: secret}}})
	if b, err := c.Pull(context.Background(), reg.Host+"/charts/echo:1.0.0"); err != nil || string(b.Data) != string(chart) {
		t.Fatalf("%v", err)
	}
	if reg.Counts()["redirect"] == 0 {
		t.Fatal("the redirect was not followed: the test proves nothing")
	}
}

// Schema 1 is recognised by its body too, and by a Content-Type with
// parameters (go-containerregistry takes the header's digest only for
// the exact type, and hashes otherwise).
func TestSchema1InDisguise(t *testing.T) {
	ca, _ := ocitest.NewCA()
	reg := ocitest.Start(t, ocitest.Options{CA: ca})
	signed := pushChart(t, reg, "charts/echo:1.0.0", []byte("the signed chart"))
	pushChart(t, reg, "charts/echo:evil", []byte("the attacker's chart"))
	schema1 := []byte(`{"schemaVersion": 1, "name": "charts/echo", "tag": "2.0.0", "fsLayers": [], "history": []}`)
	reg.Forge("charts/echo", "2.0.0", ocitest.Forgery{Body: schema1, ContentType: "application/vnd.oci.image.manifest.v1+json", DigestHeader: ocm.Digest(schema1)})
	reg.Forge("charts/echo", signed, ocitest.Forgery{Body: reg.Manifest(t, "charts/echo", "evil"),
		ContentType: ocitest.MediaTypeSchema1Signed + "; charset=utf-8", DigestHeader: signed})
	c := testClient(t, ca, Options{})
	if _, err := c.Pull(context.Background(), reg.Host+"/charts/echo:2.0.0"); err == nil || !strings.Contains(err.Error(), "schema-1") {
		t.Errorf("schema 1 with an OCI content type: %v", err)
	}
	if b, err := c.Pull(ocm.WithVerifiedFetch(context.Background()), reg.Host+"/charts/echo@"+signed); err == nil {
		t.Errorf("pulled %q as %s", b.Data, signed)
	}
}

// hubKeychain holds Docker Hub's credentials, as a Docker config does
// after docker login (go-containerregistry asks for index.docker.io).
type hubKeychain struct{}

func (hubKeychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if r.RegistryStr() == "index.docker.io" {
		return &authn.Basic{Username: "ci", Password: secret}, nil
	}
	return authn.Anonymous, nil
}

// A chart repository or archive URL gets the credentials of its own host
// only: https://docker.io is not Docker Hub's registry host, although
// go-containerregistry reads the name docker.io as index.docker.io.
func TestChartCredentialsOfAnAliasHost(t *testing.T) {
	c := testClient(t, nil, Options{Keychain: hubKeychain{}})
	if h, _ := c.keys.header("index.docker.io"); h == "" {
		t.Fatal("index.docker.io has no credentials: the test proves nothing")
	}
	if h, _ := c.keys.header("docker.io"); h != "" {
		t.Error("https://docker.io gets Docker Hub's credentials")
	}
}
