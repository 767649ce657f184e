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
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
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
	// Docker config. They go to that host over HTTPS only; a key written
	// http://host[:port] lets them go over plain HTTP too (and allows
	// plain HTTP to the host).
	Credentials map[string]Credential
	// Keychain is consulted after Credentials; nil is the Docker config
	// (DOCKER_CONFIG, ~/.docker/config.json, credential helpers).
	Keychain authn.Keychain
	// Cache holds descriptors and blobs by digest; nil caches nothing.
	Cache ocm.Cache
	// Timeout bounds each request; 0 is DefaultTimeout.
	Timeout time.Duration
	// PlainHTTP are hosts the user configured plain HTTP for: they may be
	// reached over it, with their credentials.
	PlainHTTP []string
	// MaxBlobSize bounds a blob; 0 is DefaultMaxBlobSize.
	MaxBlobSize int64
	// UserAgent is sent with every request.
	UserAgent string
	// Transport is the HTTP transport under the client; nil is
	// http.DefaultTransport's settings (proxies, timeouts) trusting
	// RootCAs() as they are at the client's first request.
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
		base = &defaultTransport{}
	}
	c := &Client{o: o}
	c.tr = newSchemeTransport(base)
	c.keys = &keychain{explicit: map[string]Credential{}, fallback: o.Keychain, tr: c.tr}
	for key, cr := range o.Credentials {
		host := key
		if h, ok := strings.CutPrefix(key, "http://"); ok {
			host = strings.TrimSuffix(h, "/")
			c.tr.configurePlain(host)
		} else if h, ok := strings.CutPrefix(key, "https://"); ok {
			host = strings.TrimSuffix(h, "/")
		}
		c.keys.explicit[host] = cr
	}
	for _, h := range o.PlainHTTP {
		c.tr.configurePlain(h)
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
// HTTP where the user configured it or this fetch asked for it.
func (c *Client) nameOptions(ctx context.Context, host string) []name.Option {
	if c.tr.plainAllowed(host) || plainForFetch(ctx, host) {
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
	tr       *schemeTransport
}

// Resolve is what go-containerregistry asks: the credentials, guarded by
// plainGuard.
func (k *keychain) Resolve(r authn.Resource) (authn.Authenticator, error) {
	a, err := k.resolve(r)
	if err != nil || a == authn.Anonymous {
		return a, err
	}
	return &plainGuard{Authenticator: a, host: r.RegistryStr(), tr: k.tr}, nil
}

// plainGuard withholds a registry's credentials altogether once the
// registry has answered over plain HTTP that the user did not configure
// for it. The plain requests go without them anyway; what is left is
// the token exchange: go-containerregistry sends the credentials to the
// realm a Bearer challenge names, over HTTPS to any host, and a
// challenge that came over plain HTTP is anyone's on the path to write.
type plainGuard struct {
	authn.Authenticator
	host string
	tr   *schemeTransport
}

func (g *plainGuard) Authorization() (*authn.AuthConfig, error) {
	return g.AuthorizationContext(context.Background())
}

func (g *plainGuard) AuthorizationContext(ctx context.Context) (*authn.AuthConfig, error) {
	if g.tr.answeredPlain(g.host) {
		g.tr.markWithheld(g.host)
		return &authn.AuthConfig{}, nil
	}
	return authn.Authorization(ctx, g.Authenticator)
}

func (k *keychain) resolve(r authn.Resource) (authn.Authenticator, error) {
	if cr, ok := k.explicit[r.RegistryStr()]; ok {
		if cr.Token != "" {
			return &authn.Bearer{Token: cr.Token}, nil
		}
		return &authn.Basic{Username: cr.Username, Password: cr.Password}, nil
	}
	return k.fallback.Resolve(r)
}

// header is the Authorization header of host's credentials, by the same
// rules as for registries: registry_credentials, then the Docker config,
// then none ("").
func (k *keychain) header(host string) (string, error) {
	cfg, err := k.authConfig(host)
	if cfg == nil || err != nil {
		return "", err
	}
	switch {
	case cfg.RegistryToken != "":
		return "Bearer " + cfg.RegistryToken, nil
	case cfg.Username != "" || cfg.Password != "":
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(cfg.Username+":"+cfg.Password)), nil
	case cfg.Auth != "":
		return "Basic " + cfg.Auth, nil
	}
	return "", nil
}

// authConfig is what host's credentials are, by the same rules as for
// registries: registry_credentials, then the Docker config; nil for none.
func (k *keychain) authConfig(host string) (*authn.AuthConfig, error) {
	reg, err := name.NewRegistry(host, name.WeakValidation)
	if err != nil {
		return nil, nil //nolint:nilerr,nilnil // a host no registry can have has no credentials
	}
	if reg.RegistryStr() != host {
		// go-containerregistry reads docker.io as index.docker.io: Docker
		// Hub's credentials are not for the origin https://docker.io.
		return nil, nil //nolint:nilnil // none
	}
	a, err := k.resolve(reg)
	if err != nil || a == authn.Anonymous {
		return nil, err
	}
	return a.Authorization()
}

// minMasked is the shortest credential text masked in messages.
const minMasked = 3

// sent are the texts host's credentials are sent as (the secret parts of
// the Authorization header and of the token exchange's form), longest
// first, to mask them out of messages.
func (k *keychain) sent(host string) []string {
	cfg, err := k.authConfig(host)
	if cfg == nil || err != nil {
		return nil
	}
	var out []string
	for _, s := range []string{cfg.Password, cfg.RegistryToken, cfg.IdentityToken, cfg.Auth,
		base64.StdEncoding.EncodeToString([]byte(cfg.Username + ":" + cfg.Password)),
		url.QueryEscape(cfg.Password), url.QueryEscape(cfg.IdentityToken)} {
		// Shorter texts are everywhere in a message, and masking them
		// would spell them out (as the provider's masking leaves them).
		if len(s) >= minMasked && s != base64.StdEncoding.EncodeToString([]byte(":")) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
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

// defaultTransport is http.DefaultTransport's settings (proxies, timeouts)
// trusting RootCAs(), made at its first request: reading the roots costs
// tens of milliseconds (where SSL_CERT_DIR names a directory of hundreds of
// certificates, a hundred), which every provider process paid in Configure
// although most of them never reach a registry.
type defaultTransport struct {
	once sync.Once
	tr   *http.Transport
}

// transport is the transport, made on first use.
func (d *defaultTransport) transport() *http.Transport {
	d.once.Do(func() {
		d.tr = http.DefaultTransport.(*http.Transport).Clone() //nolint:forcetypeassert // the standard library's default
		d.tr.TLSClientConfig = &tls.Config{RootCAs: RootCAs(), MinVersion: tls.VersionTLS12}
	})
	return d.tr
}

func (d *defaultTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return d.transport().RoundTrip(r)
}

// RootCAs are the certificates registries are trusted by: the system's
// roots plus the PEM files of SSL_CERT_FILE and the directories of
// SSL_CERT_DIR. Go reads these variables instead of (not beside) its
// default locations, and only once per process, and not at all on some
// platforms; reading them here makes them count everywhere, in addition
// to the system's roots, as of the client's first request.
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
