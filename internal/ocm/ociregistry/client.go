// Package ociregistry reads OCM repositories in OCI registries: component
// versions stored as OCI artifacts under component-descriptors/ (OCM's
// media types and the legacy Gardener ones), their local blobs, and the
// artifacts that resources point to (ociArtifact, relativeOciReference,
// and helm chart repositories).
//
// Credentials are held here and go nowhere else: not into errors, logs or
// returned values.
package ociregistry

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// Credential is what the provider configuration gives for one registry.
type Credential struct {
	Username, Password string
	// Token is a registry token sent as a bearer token.
	Token string
}

// Options configure a Client.
type Options struct {
	// Credentials by registry host (host[:port]); they come before the
	// Docker config.
	Credentials map[string]Credential
	// Keychain is consulted after Credentials; nil is the Docker config
	// (DOCKER_CONFIG, ~/.docker/config.json, credential helpers).
	Keychain authn.Keychain
	// Cache holds descriptors and blobs by digest; nil caches nothing.
	Cache ocm.Cache
	// Timeout bounds each request; 0 is DefaultTimeout.
	Timeout time.Duration
	// PlainHTTP are hosts that may be reached over plain HTTP besides
	// loopback ones.
	PlainHTTP []string
	// MaxBlobSize bounds a blob; 0 is DefaultMaxBlobSize.
	MaxBlobSize int64
	// UserAgent is sent with every request.
	UserAgent string
	// Transport is the HTTP transport under the client; nil is
	// http.DefaultTransport's settings (proxies, timeouts) trusting
	// RootCAs().
	Transport http.RoundTripper
}

// Defaults.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultMaxBlobSize = 64 << 20
)

// Client reaches OCI registries. It is safe for concurrent use and meant
// to live as long as the provider: it keeps authenticated transports per
// repository.
type Client struct {
	o      Options
	keys   *keychain
	puller *remote.Puller
	tr     *schemeTransport
}

// New returns a Client.
func New(o Options) (*Client, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBlobSize <= 0 {
		o.MaxBlobSize = DefaultMaxBlobSize
	}
	if o.Keychain == nil {
		o.Keychain = authn.DefaultKeychain
	}
	base := o.Transport
	if base == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone() //nolint:forcetypeassert // the standard library's default
		tr.TLSClientConfig = &tls.Config{RootCAs: RootCAs(), MinVersion: tls.VersionTLS12}
		base = tr
	}
	c := &Client{o: o, keys: &keychain{explicit: o.Credentials, fallback: o.Keychain}}
	c.tr = &schemeTransport{base: base, explicit: map[string]bool{}, learned: map[string]bool{}}
	for _, h := range o.PlainHTTP {
		c.tr.explicit[h] = true
	}
	opts := []remote.Option{remote.WithTransport(c.tr), remote.WithAuthFromKeychain(c.keys)}
	if o.UserAgent != "" {
		opts = append(opts, remote.WithUserAgent(o.UserAgent))
	}
	p, err := remote.NewPuller(opts...)
	if err != nil {
		return nil, err
	}
	c.puller = p
	return c, nil
}

// nameOptions are the go-containerregistry name options for a host: plain
// HTTP where it was asked for.
func (c *Client) nameOptions(host string) []name.Option {
	if c.tr.plainAllowed(host) {
		return []name.Option{name.Insecure}
	}
	return nil
}

// keychain resolves credentials: the explicit ones, then the fallback
// (Docker config), then anonymous. It remembers nothing of the secrets
// beyond what it was given.
type keychain struct {
	explicit map[string]Credential
	fallback authn.Keychain
}

func (k *keychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	if cr, ok := k.explicit[r.RegistryStr()]; ok {
		if cr.Token != "" {
			return &authn.Bearer{Token: cr.Token}, nil
		}
		return &authn.Basic{Username: cr.Username, Password: cr.Password}, nil
	}
	return k.fallback.Resolve(r)
}

// authorize sets the credentials of host on a plain HTTP request (a chart
// repository's), by the same rules as for registries: registry_credentials,
// then the Docker config, then none.
func (k *keychain) authorize(req *http.Request, host string) error {
	reg, err := name.NewRegistry(host, name.WeakValidation)
	if err != nil {
		return nil //nolint:nilerr // a host no registry can have has no credentials
	}
	a, err := k.Resolve(reg)
	if err != nil || a == authn.Anonymous {
		return err
	}
	cfg, err := a.Authorization()
	if err != nil {
		return err
	}
	switch {
	case cfg.RegistryToken != "":
		req.Header.Set("Authorization", "Bearer "+cfg.RegistryToken)
	case cfg.Username != "" || cfg.Password != "":
		req.SetBasicAuth(cfg.Username, cfg.Password)
	case cfg.Auth != "":
		req.Header.Set("Authorization", "Basic "+cfg.Auth)
	}
	return nil
}

// sources says which credential sources apply to host, for messages.
func (k *keychain) sources(host string) string {
	if _, ok := k.explicit[host]; ok {
		return "registry_credentials"
	}
	reg, err := name.NewRegistry(host)
	if err == nil {
		if a, err := k.fallback.Resolve(reg); err == nil && a != authn.Anonymous {
			return "the Docker config (registry_credentials has no entry for this host)"
		}
	}
	return "anonymous access (neither registry_credentials nor the Docker config has an entry for this host)"
}

// schemeTransport decides between HTTPS and plain HTTP. go-containerregistry
// picks plain HTTP for loopback and private addresses; here HTTPS is tried
// first everywhere, and plain HTTP is used only for loopback hosts that
// turn out to speak it (HTTPS refused with a plain HTTP answer, not a
// certificate error), and for hosts the user named with http://.
type schemeTransport struct {
	base     http.RoundTripper
	mu       sync.Mutex
	explicit map[string]bool // hosts asked for with http://
	learned  map[string]bool // loopback hosts that speak plain HTTP
}

// allowPlain records that a repository context asked for plain HTTP to
// host (a baseUrl starting with http://).
func (t *schemeTransport) allowPlain(host string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.explicit[host] = true
}

func (t *schemeTransport) plainAllowed(host string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.explicit[host]
}

func (t *schemeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Host
	if req.URL.Scheme != "http" {
		// go-containerregistry asks public addresses over HTTPS only; on
		// loopback it asks both ways, and the plain request is decided
		// below.
		resp, err := t.base.RoundTrip(req)
		if err != nil && speaksPlainHTTP(err) && !isLoopback(host) {
			return nil, &protocolError{plainRefused}
		}
		return resp, err
	}
	if t.plainAllowed(host) {
		return plainRoundTrip(t.base, req, "speaks HTTPS, but plain HTTP was asked for (a reference starting with http://)")
	}
	t.mu.Lock()
	plain := t.learned[host]
	t.mu.Unlock()
	if plain {
		return t.base.RoundTrip(req)
	}
	secure := req.Clone(req.Context())
	secure.URL.Scheme = "https"
	resp, err := t.base.RoundTrip(secure)
	if err == nil || !speaksPlainHTTP(err) {
		return resp, err
	}
	if !isLoopback(host) {
		return nil, &protocolError{plainRefused}
	}
	t.mu.Lock()
	t.learned[host] = true
	t.mu.Unlock()
	return t.base.RoundTrip(req)
}

// plainRoundTrip sends a plain HTTP request and turns the answer of a TLS
// server (400 and a sentence saying so) into a protocol error.
func plainRoundTrip(base http.RoundTripper, req *http.Request, reason string) (*http.Response, error) {
	resp, err := base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		return resp, err
	}
	head := make([]byte, 512)
	n, _ := io.ReadFull(resp.Body, head)
	if strings.Contains(string(head[:n]), "HTTP request to an HTTPS server") {
		_ = resp.Body.Close()
		return nil, &protocolError{reason}
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head[:n]), resp.Body), resp.Body}
	return resp, nil
}

const plainRefused = "speaks plain HTTP, which is used only for loopback addresses or where asked for with http://"

func speaksPlainHTTP(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "server gave HTTP response to HTTPS client") ||
		strings.Contains(msg, "first record does not look like a TLS handshake")
}

func isLoopback(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

// RootCAs are the certificates registries are trusted by: the system's
// roots plus the PEM files of SSL_CERT_FILE and the directories of
// SSL_CERT_DIR. Go reads these variables instead of (not beside) its
// default locations, and only once per process, and not at all on some
// platforms; reading them here makes them count everywhere, in addition
// to the system's roots, as of the client's creation.
func RootCAs() *x509.CertPool {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	var files []string
	if f := os.Getenv("SSL_CERT_FILE"); f != "" {
		files = append(files, f)
	}
	for _, dir := range filepath.SplitList(os.Getenv("SSL_CERT_DIR")) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() {
				files = append(files, filepath.Join(dir, e.Name()))
			}
		}
	}
	for _, f := range files {
		// Unreadable files are skipped, as Go skips them: a certificate
		// that is missing shows as an untrusted registry, naming these
		// variables.
		if data, err := os.ReadFile(f); err == nil {
			pool.AppendCertsFromPEM(data)
		}
	}
	return pool
}
