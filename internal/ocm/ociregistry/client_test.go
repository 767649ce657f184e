package ociregistry

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
)

const secret = "s3cr3t-pa55"

func descriptor(name, version string, resources string) []byte {
	return []byte(fmt.Sprintf(`meta:
  schemaVersion: v2
component:
  name: %s
  version: %s
  provider: acme
  repositoryContexts: []
  sources: []
  componentReferences: []
  resources:
%s
`, name, version, resources))
}

func descriptorV3(name, version string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: ocm.software/v3alpha1
kind: ComponentVersion
metadata:
  name: %s
  version: %s
  provider:
    name: acme
spec:
  resources:
  - name: data
    version: %s
    type: plainText
    relation: local
    access:
      type: localBlob
      localReference: %s
      mediaType: text/plain
`, name, version, version, ocitest.Blob{Data: []byte("hello v3")}.Digest()))
}

// testClient trusts ca and uses no Docker config unless keys says so.
func testClient(t *testing.T, ca *ocitest.CA, o Options) *Client {
	t.Helper()
	tr, _ := http.DefaultTransport.(*http.Transport)
	tr = tr.Clone()
	if ca != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	}
	o.Transport = tr
	if o.Keychain == nil {
		o.Keychain = authn.NewMultiKeychain() // nothing: anonymous
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func spec(host string, extra ...string) ocm.RepositorySpec {
	raw := map[string]any{"type": "OCIRegistry", "baseUrl": host + "/ocm"}
	for i := 0; i+1 < len(extra); i += 2 {
		raw[extra[i]] = extra[i+1]
	}
	s, err := ocm.ParseRepositorySpec(raw)
	if err != nil {
		panic(err)
	}
	return s
}

func TestLayoutsAndAccesses(t *testing.T) {
	ca, err := ocitest.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	reg := ocitest.Start(t, ocitest.Options{CA: ca, Auth: ocitest.Basic, Username: "ci", Password: secret})
	blob := ocitest.Blob{MediaType: "text/plain", Data: []byte("hello")}
	res := fmt.Sprintf(`  - name: data
    version: v1
    type: plainText
    relation: local
    access: {type: localBlob, localReference: %q, mediaType: text/plain}
  - name: legacy
    version: v1
    type: plainText
    relation: local
    access: {type: localOciBlob, digest: %q}`, blob.Digest(), blob.Digest())
	layouts := map[string]ocitest.Layout{"ocm": ocitest.OCM, "legacy": ocitest.Legacy, "legacy-json": ocitest.LegacyJSON, "cnudie-tar": ocitest.CnudieTar}
	for name, layout := range layouts {
		reg.PushComponent(t, "ocm", "example.com/"+name, "v1.0.0+build.1", descriptor("example.com/"+name, "v1.0.0+build.1", res), layout, blob)
	}
	c := testClient(t, ca, Options{Credentials: map[string]Credential{reg.Host: {Username: "ci", Password: secret}}})
	repo := c.Repository(spec(reg.Host))
	// The tags of a component's repository are its versions ('+' is
	// ".build-" in a tag).
	reg.PushComponent(t, "ocm", "example.com/ocm", "v2.0.0", descriptor("example.com/ocm", "v2.0.0", res), ocitest.OCM, blob)
	l, ok := repo.(ocm.VersionLister)
	if !ok {
		t.Fatal("a registry repository lists no versions")
	}
	vs, err := l.Versions(context.Background(), "example.com/ocm")
	if slices.Sort(vs); err != nil || !slices.Equal(vs, []string{"v1.0.0+build.1", "v2.0.0"}) {
		t.Fatalf("versions %v, %v", vs, err)
	}
	for name := range layouts {
		t.Run(name, func(t *testing.T) {
			cv, err := repo.ComponentVersion(context.Background(), "example.com/"+name, "v1.0.0+build.1")
			if err != nil {
				t.Fatal(err)
			}
			if cv.Descriptor.ID().String() != "example.com/"+name+":v1.0.0+build.1" || !strings.HasPrefix(cv.Digest, "sha256:") {
				t.Fatalf("got %s %s", cv.Descriptor.ID(), cv.Digest)
			}
			for _, rn := range []string{"data", "legacy"} {
				r, _ := cv.Descriptor.Resource(rn, nil)
				b, err := cv.Blobs.Blob(context.Background(), r.Access)
				if err != nil || string(b.Data) != "hello" || b.MediaType != "text/plain" {
					t.Fatalf("%s: %v %v", rn, b, err)
				}
			}
		})
	}

	// v3 descriptors, subPath and the sha256-digest name mapping.
	v3 := ocitest.Blob{MediaType: "text/plain", Data: []byte("hello v3")}
	reg.PushComponent(t, "ocm/team", "example.com/v3", "1.0.0", descriptorV3("example.com/v3", "1.0.0"), ocitest.OCM, v3)
	cv, err := c.Repository(spec(reg.Host, "subPath", "team")).ComponentVersion(context.Background(), "example.com/v3", "1.0.0")
	if err != nil || cv.Descriptor.Schema != ocm.SchemaV3 {
		t.Fatalf("v3: %v %v", cv, err)
	}
	reg.PushComponent(t, "ocm", "3b8c6b0a5d3b7c2c4b1c0f0a8e9d2f1e", "x", descriptor("x", "x", "    []"), ocitest.OCM) // not the mapped name
	hashed := "component-descriptors/" + sha256hex("example.com/hashed")
	reg.PushArtifact(t, "ocm/"+hashed+":1.0.0", ocitest.Blob{MediaType: "application/vnd.ocm.software.component.config.v1+json", Data: []byte("{}")},
		ocitest.Blob{MediaType: "application/vnd.ocm.software.component-descriptor.v2+yaml", Data: descriptor("example.com/hashed", "1.0.0", "    []")})
	if _, err := c.Repository(spec(reg.Host, "componentNameMapping", "sha256-digest")).ComponentVersion(context.Background(), "example.com/hashed", "1.0.0"); err != nil {
		t.Fatalf("sha256-digest: %v", err)
	}

	// ociArtifact: a blueprint stored as an OCI artifact.
	bp := ocitest.Blob{MediaType: MediaTypeBlueprintLayer, Data: []byte("blueprint tar")}
	mdigest := reg.PushArtifact(t, "blueprints/app:1.0.0", ocitest.Blob{MediaType: "application/vnd.gardener.landscaper.blueprint.config.v1", Data: []byte("{}")}, bp)
	b, err := c.Blob(context.Background(), map[string]any{"type": "ociArtifact", "imageReference": reg.Host + "/blueprints/app:1.0.0"})
	if err != nil || string(b.Data) != "blueprint tar" || b.ArtifactDigest != mdigest {
		t.Fatalf("ociArtifact: %+v %v", b, err)
	}
	// relativeOciReference: the same artifact, relative to the registry.
	b, err = cv.Blobs.Blob(context.Background(), map[string]any{"type": "relativeOciReference", "reference": "blueprints/app:1.0.0"})
	if err != nil || string(b.Data) != "blueprint tar" {
		t.Fatalf("relativeOciReference: %+v %v", b, err)
	}
	if _, err := c.Blob(context.Background(), map[string]any{"type": "s3"}); !errors.Is(err, ocm.ErrUnsupportedAccess) {
		t.Fatalf("s3: %v", err)
	}
}

func sha256hex(s string) string { return strings.TrimPrefix(ocm.Digest([]byte(s)), "sha256:") }

func TestErrorsNameWhatAndNeverTheSecret(t *testing.T) {
	ca, _ := ocitest.NewCA()
	reg := ocitest.Start(t, ocitest.Options{CA: ca, Auth: ocitest.Bearer, Username: "ci", Password: secret})
	reg.PushComponent(t, "ocm", "example.com/app", "1.0.0", descriptor("example.com/app", "1.0.0", "    []"), ocitest.OCM)

	// Bearer tokens: the right credentials work.
	good := testClient(t, ca, Options{Credentials: map[string]Credential{reg.Host: {Username: "ci", Password: secret}}})
	if _, err := good.Repository(spec(reg.Host)).ComponentVersion(context.Background(), "example.com/app", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	// Wrong ones: the error names the registry and the source, not the password.
	bad := testClient(t, ca, Options{Credentials: map[string]Credential{reg.Host: {Username: "ci", Password: "wrong-" + secret}}})
	_, err := bad.Repository(spec(reg.Host)).ComponentVersion(context.Background(), "example.com/app", "1.0.0")
	if err == nil || !strings.Contains(err.Error(), reg.Host) || !strings.Contains(err.Error(), "registry_credentials") || strings.Contains(err.Error(), secret) {
		t.Fatalf("err = %v", err)
	}
	anon := testClient(t, ca, Options{})
	_, err = anon.Repository(spec(reg.Host)).ComponentVersion(context.Background(), "example.com/app", "1.0.0")
	if err == nil || !strings.Contains(err.Error(), "anonymous") {
		t.Fatalf("anonymous: %v", err)
	}
	// The Docker config is the second source.
	dir := t.TempDir()
	auth := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, reg.Host, b64("ci:"+secret))
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(auth), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
	docker := testClient(t, ca, Options{Keychain: authn.DefaultKeychain})
	if _, err := docker.Repository(spec(reg.Host)).ComponentVersion(context.Background(), "example.com/app", "1.0.0"); err != nil {
		t.Fatalf("docker config: %v", err)
	}
	// A missing version names the repository and the reference.
	_, err = good.Repository(spec(reg.Host)).ComponentVersion(context.Background(), "example.com/app", "9.9.9")
	if !errors.Is(err, ocm.ErrNotFound) || !strings.Contains(err.Error(), reg.Host+"/ocm/component-descriptors/example.com/app:9.9.9") {
		t.Fatalf("missing: %v", err)
	}
}

func TestSlowRegistryTimesOut(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	c := testClient(t, nil, Options{Timeout: 200 * time.Millisecond})
	host := strings.TrimPrefix(slow.URL, "http://")
	start := time.Now()
	_, err := c.Repository(spec(host)).ComponentVersion(context.Background(), "a", "1")
	if err == nil || !strings.Contains(err.Error(), "did not answer within") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatalf("took %s", time.Since(start))
	}
}

func TestCacheMakesOneManifestRequestAndServesWhenDown(t *testing.T) {
	reg := ocitest.Start(t, ocitest.Options{})
	blob := ocitest.Blob{MediaType: "text/plain", Data: []byte("content")}
	res := fmt.Sprintf("  - {name: data, version: v1, type: plainText, relation: local, access: {type: localBlob, localReference: %q}}", blob.Digest())
	reg.PushComponent(t, "ocm", "example.com/app", "1.0.0", descriptor("example.com/app", "1.0.0", res), ocitest.OCM, blob)
	cache, err := ocm.NewDiskCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	get := func(c *Client) (*ocm.ComponentVersion, *ocm.Blob, error) {
		cv, err := c.Repository(spec(reg.Host)).ComponentVersion(context.Background(), "example.com/app", "1.0.0")
		if err != nil {
			return nil, nil, err
		}
		r, _ := cv.Descriptor.Resource("data", nil)
		b, err := cv.Blobs.Blob(context.Background(), r.Access)
		return cv, b, err
	}
	if _, _, err := get(testClient(t, nil, Options{Cache: cache})); err != nil {
		t.Fatal(err)
	}
	reg.ResetCounts()
	// Another client (another provider process) with the warm cache.
	cv, b, err := get(testClient(t, nil, Options{Cache: cache}))
	if err != nil || string(b.Data) != "content" || cv.Warning != "" {
		t.Fatalf("%v %v", b, err)
	}
	if n := reg.Counts(); n["manifest"] != 1 || n["blob"] != 0 {
		t.Fatalf("warm lookup made %v requests", n)
	}
	reg.SetDown(true)
	cv, b, err = get(testClient(t, nil, Options{Cache: cache, Timeout: 2 * time.Second}))
	if err != nil || string(b.Data) != "content" || !strings.Contains(cv.Warning, "cached") {
		t.Fatalf("down: %v %v %v", cv, b, err)
	}
	// Down with a cold cache: an error saying so.
	_, _, err = get(testClient(t, nil, Options{Timeout: 2 * time.Second}))
	if err == nil || !strings.Contains(err.Error(), "cannot be reached") && !strings.Contains(err.Error(), "did not answer") {
		t.Fatalf("cold: %v", err)
	}
}

func TestPlainHTTPOnlyForLoopback(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1:5000": true, "localhost:5000": true, "[::1]:5000": true, "10.0.0.1:5000": false, "registry.example": false} {
		if isLoopback(host) != want {
			t.Errorf("isLoopback(%s) = %v", host, !want)
		}
	}
	// A private address that speaks plain HTTP is refused unless asked for.
	tr := newSchemeTransport(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Scheme == "https" {
			return nil, errors.New("http: server gave HTTP response to HTTPS client")
		}
		return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
	}))
	req, _ := http.NewRequest(http.MethodGet, "http://10.0.0.1:5000/v2/", nil)
	if _, err := tr.RoundTrip(req); err == nil || !strings.Contains(err.Error(), "plain HTTP") {
		t.Fatalf("err = %v", err)
	}
	tr.configurePlain("10.0.0.1:5000")
	if _, err := tr.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	req, _ = http.NewRequest(http.MethodGet, "http://127.0.0.1:5000/v2/", nil)
	if _, err := tr.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestOversizedBlobIsNotRead(t *testing.T) {
	reg := ocitest.Start(t, ocitest.Options{})
	big := ocitest.Blob{MediaType: "application/octet-stream", Data: make([]byte, 4096)}
	res := fmt.Sprintf("  - {name: data, version: v1, type: blob, relation: local, access: {type: localBlob, localReference: %q}}", big.Digest())
	reg.PushComponent(t, "ocm", "example.com/big", "1.0.0", descriptor("example.com/big", "1.0.0", res), ocitest.OCM, big)
	c := testClient(t, nil, Options{MaxBlobSize: 1024})
	cv, err := c.Repository(spec(reg.Host)).ComponentVersion(context.Background(), "example.com/big", "1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	reg.ResetCounts()
	r, _ := cv.Descriptor.Resource("data", nil)
	if _, err := cv.Blobs.Blob(context.Background(), r.Access); err == nil || !strings.Contains(err.Error(), "larger than the limit of 1024") {
		t.Fatalf("err = %v", err)
	}
	if n := reg.Counts()["blob"]; n != 0 {
		t.Fatalf("the oversized blob was requested %d times", n)
	}
}

func TestHelmChartRepository(t *testing.T) {
	chart := []byte("chart archive bytes")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/charts/index.yaml":
			fmt.Fprintf(w, "apiVersion: v1\nentries:\n  echo:\n  - version: 1.0.0\n    urls: [echo-1.0.0.tgz]\n    digest: %s\n  - version: 2.0.0\n    urls: [echo-2.0.0.tgz]\n",
				strings.TrimPrefix(ocm.Digest(chart), "sha256:"))
		case "/charts/echo-1.0.0.tgz":
			_, _ = w.Write(chart)
		case "/charts/echo-2.0.0.tgz":
			_, _ = w.Write([]byte("not what the index says"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := testClient(t, nil, Options{})
	b, err := c.Blob(context.Background(), map[string]any{"type": "helm", "helmRepository": srv.URL + "/charts", "helmChart": "echo:1.0.0"})
	if err != nil || string(b.Data) != string(chart) {
		t.Fatalf("%v %v", b, err)
	}
	if _, err := c.Blob(context.Background(), map[string]any{"type": "helm", "helmRepository": srv.URL + "/charts", "helmChart": "echo:9.9.9"}); !errors.Is(err, ocm.ErrNotFound) {
		t.Fatalf("missing chart: %v", err)
	}
	if _, err := c.Blob(context.Background(), map[string]any{"type": "helm", "helmRepository": srv.URL + "/charts", "helmChart": "echo"}); err == nil {
		t.Fatal("a chart without a version accepted")
	}
}

func TestRegistryToken(t *testing.T) {
	ca, _ := ocitest.NewCA()
	reg := ocitest.Start(t, ocitest.Options{CA: ca, Auth: ocitest.Bearer, Username: "ci", Password: secret})
	reg.PushComponent(t, "ocm", "example.com/app", "1.0.0", descriptor("example.com/app", "1.0.0", "    []"), ocitest.OCM)
	req, _ := http.NewRequest(http.MethodGet, reg.URL()+"/token", nil)
	req.SetBasicAuth("ci", secret)
	resp, err := reg.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	c := testClient(t, ca, Options{Credentials: map[string]Credential{reg.Host: {Token: tok.Token}}})
	if _, err := c.Repository(spec(reg.Host)).ComponentVersion(context.Background(), "example.com/app", "1.0.0"); err != nil {
		t.Fatal(err)
	}
}

// A baseUrl with http:// asks for plain HTTP to its host.
func TestExplicitPlainHTTPBaseURL(t *testing.T) {
	reg := ocitest.Start(t, ocitest.Options{})
	reg.PushComponent(t, "ocm", "example.com/app", "1.0.0", descriptor("example.com/app", "1.0.0", "    []"), ocitest.OCM)
	c := testClient(t, nil, Options{})
	s, err := ocm.ParseRepositorySpec(map[string]any{"type": "OCIRegistry", "baseUrl": "http://" + reg.Host + "/ocm"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Repository(s).ComponentVersion(context.Background(), "example.com/app", "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if !c.tr.plainAllowed(reg.Host) {
		t.Fatal("http:// did not allow plain HTTP")
	}
}

// A verified fetch of a helm access goes over HTTPS to the repository's
// host only, and trusts no CA the (unsigned) access names: the digest
// check comes after the connection.
func TestVerifiedHelmAccess(t *testing.T) {
	chart := []byte("chart archive bytes")
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/charts/index.yaml":
			fmt.Fprint(w, "apiVersion: v1\nentries:\n  echo:\n  - version: 1.0.0\n    urls: [echo-1.0.0.tgz]\n")
		default:
			_, _ = w.Write(chart)
		}
	}))
	defer other.Close()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; {
		case p == "/charts/index.yaml":
			fmt.Fprintf(w, "apiVersion: v1\nentries:\n  echo:\n  - version: 1.0.0\n    urls: [echo-1.0.0.tgz]\n  - version: 2.0.0\n    urls: [%s/echo-2.0.0.tgz]\n", other.URL)
		case strings.HasPrefix(p, "/moved/"):
			http.Redirect(w, r, "/charts/"+strings.TrimPrefix(p, "/moved/"), http.StatusFound)
		case strings.HasPrefix(p, "/away/"):
			http.Redirect(w, r, other.URL+"/charts/"+strings.TrimPrefix(p, "/away/"), http.StatusFound)
		case p == "/charts/echo-1.0.0.tgz":
			_, _ = w.Write(chart)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	plain := httptest.NewServer(other.Config.Handler)
	defer plain.Close()
	tr, _ := srv.Client().Transport.(*http.Transport)
	c, err := New(Options{Transport: tr.Clone(), Keychain: authn.NewMultiKeychain()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ocm.WithVerifiedFetch(context.Background())
	helm := func(repo, chart string, extra ...string) map[string]any {
		a := map[string]any{"type": "helm", "helmRepository": repo, "helmChart": chart}
		for i := 0; i+1 < len(extra); i += 2 {
			a[extra[i]] = extra[i+1]
		}
		return a
	}
	for _, ok := range []map[string]any{helm(srv.URL+"/charts", "echo:1.0.0"), helm(srv.URL+"/moved", "echo:1.0.0")} {
		if b, err := c.Blob(ctx, ok); err != nil || string(b.Data) != string(chart) {
			t.Errorf("%v: %v", ok, err)
		}
	}
	refused := map[string]struct {
		access map[string]any
		want   string
	}{
		"plain HTTP":                 {helm(plain.URL+"/charts", "echo:1.0.0"), "over HTTPS only"},
		"a CA the access names":      {helm(srv.URL+"/charts", "echo:1.0.0", "caCert", "-----BEGIN CERTIFICATE-----"), "does not trust the caCert"},
		"a redirect to another host": {helm(srv.URL+"/away", "echo:1.0.0"), "does not follow " + other.URL},
		"a chart on another host":    {helm(srv.URL+"/charts", "echo:2.0.0"), "does not follow " + other.URL},
	}
	for name, tc := range refused {
		if _, err := c.Blob(ctx, tc.access); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", name, err)
		}
		if !strings.HasPrefix(name, "a CA") {
			// Without verification the same access is fetched.
			if _, err := c.Blob(context.Background(), tc.access); err != nil {
				t.Errorf("%s, not verified: %v", name, err)
			}
		}
	}
}
