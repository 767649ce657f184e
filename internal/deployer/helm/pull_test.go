package helm

import (
	"crypto/tls"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ociregistry"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
)

// registryClient trusts ca and knows creds, and nothing of the Docker
// config.
func registryClient(t *testing.T, ca *ocitest.CA, creds map[string]ociregistry.Credential) func() *ociregistry.Client {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone() //nolint:forcetypeassert // the standard library's default
	tr.TLSClientConfig = &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	c, err := ociregistry.New(ociregistry.Options{Credentials: creds, Transport: tr, Keychain: authn.NewMultiKeychain()})
	if err != nil {
		t.Fatal(err)
	}
	return func() *ociregistry.Client { return c }
}

// chart.ref goes through the registry client: a TLS registry on
// 127.0.0.1 over HTTPS with the client's credentials; refused
// credentials, an untrusted certificate and a missing chart fail at once,
// each saying so; the pull reports the manifest digest.
func TestChartRefThroughTheRegistryClient(t *testing.T) {
	ca, _ := ocitest.NewCA()
	reg := ocitest.Start(t, ocitest.Options{CA: ca, Auth: ocitest.Basic, Username: "ci", Password: "pw"})
	digest := reg.PushArtifact(t, "charts/demo:0.3.0", ocitest.Blob{MediaType: "application/vnd.cncf.helm.config.v1+json", Data: []byte("{}")},
		ocitest.Blob{MediaType: ociregistry.MediaTypeHelmChartContent, Data: helmtest.Archive(t, helmtest.Demo, "0.3.0")})
	ref := reg.Host + "/charts/demo:0.3.0"

	d := New(Options{Registry: registryClient(t, ca, map[string]ociregistry.Credential{reg.Host: {Username: "ci", Password: "pw"}})})
	ch, err := d.loadChart(t.Context(), &Chart{Ref: ref}, nil)
	if err != nil || ch.Metadata.Version != "0.3.0" {
		t.Fatalf("pull: %v", err)
	}
	p, err := d.pullChart(t.Context(), ref)
	if err != nil || p.ManifestDigest != digest || p.Digest != ocm.Digest(p.Data) {
		t.Fatalf("pulled %+v, %v; want manifest %s", p, err, digest)
	}

	other, _ := ocitest.NewCA()
	cases := []struct {
		name  string
		d     *Deployer
		ref   string
		code  string
		wants []string
	}{
		{"no credentials", New(Options{Registry: registryClient(t, ca, nil)}), ref, core.CodeUnauthorized, []string{reg.Host, "anonymous", "401"}},
		{"untrusted", New(Options{Registry: registryClient(t, other, nil)}), ref, core.CodeConfigurationProblem, []string{reg.Host, "certificate", "SSL_CERT_FILE"}},
		{"missing", d, reg.Host + "/charts/demo:9.9.9", core.CodeConfigurationProblem, []string{reg.Host + "/charts/demo:9.9.9", "has no"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.d.loadChart(t.Context(), &Chart{Ref: c.ref}, nil)
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Transient || !slices.Contains(ce.Codes, c.code) {
				t.Fatalf("want a terminal %s error, got %#v", c.code, err)
			}
			for _, w := range c.wants {
				if !strings.Contains(ce.Message, w) {
					t.Errorf("%q does not name %q", ce.Message, w)
				}
			}
			if strings.Contains(ce.Message, "pw") {
				t.Errorf("the message holds the password: %s", ce.Message)
			}
		})
	}
}

// chart.archive.remote.url goes through the registry client too: its
// trusted roots, and the credentials of the URL's origin, which go
// nowhere else; refused credentials fail at once.
func TestArchiveRemoteURLThroughTheRegistryClient(t *testing.T) {
	ca, _ := ocitest.NewCA()
	repo := ocitest.StartChartRepo(t, ocitest.ChartRepoOptions{CA: ca, Username: "ci", Password: "pw"})
	other := ocitest.StartChartRepo(t, ocitest.ChartRepoOptions{CA: ca})
	archive := helmtest.Archive(t, helmtest.Demo, "0.3.0")
	repo.AddChart("demo", "0.3.0", archive)
	other.Serve("/demo.tgz", archive)
	repo.Redirect("/moved.tgz", other.URL+"/demo.tgz")
	d := New(Options{Registry: registryClient(t, ca, map[string]ociregistry.Credential{repo.Host: {Username: "ci", Password: "pw"}})})
	for _, u := range []string{repo.URL + "/charts/demo-0.3.0.tgz", repo.URL + "/moved.tgz"} {
		ch, err := d.loadChart(t.Context(), &Chart{Archive: &Archive{Remote: &RemoteArchive{URL: u}}}, nil)
		if err != nil || ch.Metadata.Version != "0.3.0" {
			t.Fatalf("%s: %v", u, err)
		}
	}
	if n := len(repo.Credentialed()); n != 2 {
		t.Errorf("the repository got credentials %d times, want 2", n)
	}
	if got := other.Credentialed(); len(got) != 0 {
		t.Errorf("credentials followed the redirect: %v", got)
	}
	_, err := New(Options{Registry: registryClient(t, ca, nil)}).loadChart(t.Context(), &Chart{Archive: &Archive{Remote: &RemoteArchive{URL: repo.URL + "/charts/demo-0.3.0.tgz"}}}, nil)
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Transient || !slices.Contains(ce.Codes, core.CodeUnauthorized) {
		t.Fatalf("no credentials: %v", err)
	}
}
