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
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

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
	// http.DefaultTransport (system roots, SSL_CERT_FILE, proxies).
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
		base = http.DefaultTransport
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

// classify turns a request error into one that says what went wrong,
// naming the registry and, for refused access, the credential sources
// tried. It never includes a secret: transport errors carry status and
// the registry's error codes, not request headers.
func (c *Client) classify(host, what string, err error) error {
	var te *transport.Error
	if errors.As(err, &te) {
		switch te.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("registry %s refused access to %s (%d); credentials tried: %s", host, what, te.StatusCode, c.keys.sources(host))
		case http.StatusNotFound:
			return fmt.Errorf("registry %s has no %s: %w", host, what, ocm.ErrNotFound)
		}
		if slices.ContainsFunc(te.Errors, func(d transport.Diagnostic) bool {
			return d.Code == transport.ManifestUnknownErrorCode || d.Code == transport.NameUnknownErrorCode || d.Code == transport.BlobUnknownErrorCode
		}) {
			return fmt.Errorf("registry %s has no %s: %w", host, what, ocm.ErrNotFound)
		}
		return fmt.Errorf("registry %s: %s: status %d", host, what, te.StatusCode)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &unreachableError{fmt.Errorf("registry %s did not answer within %s for %s", host, c.o.Timeout, what)}
	}
	var ne net.Error
	var oe *net.OpError
	var de *net.DNSError
	if errors.As(err, &oe) || errors.As(err, &de) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &unreachableError{fmt.Errorf("registry %s cannot be reached for %s: %v", host, what, err)}
	}
	return fmt.Errorf("registry %s: %s: %w", host, what, err)
}

// unreachableError marks a registry that could not be asked at all, so a
// warm cache may stand in for it.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// schemeTransport decides between HTTPS and plain HTTP. go-containerregistry
// picks plain HTTP for loopback and private addresses; here HTTPS is tried
// first everywhere, and plain HTTP is used only for loopback hosts that
// turn out to speak it, and for hosts the user named with http://.
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
	if req.URL.Scheme != "http" || t.plainAllowed(host) {
		return t.base.RoundTrip(req)
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
	if err == nil || !isLoopback(host) || !speaksPlainHTTP(err) {
		if err != nil && !isLoopback(host) && speaksPlainHTTP(err) {
			return nil, fmt.Errorf("registry %s speaks plain HTTP, which is used only for loopback registries or a baseUrl starting with http://", host)
		}
		return resp, err
	}
	t.mu.Lock()
	t.learned[host] = true
	t.mu.Unlock()
	return t.base.RoundTrip(req)
}

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
