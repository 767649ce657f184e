package ociregistry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// Every request of the client, to registries, chart repositories and
// archive URLs, goes through one schemeTransport, which decides the
// scheme and whether credentials may go over it; chart repositories and
// archive URLs add originAuth above it, which decides where credentials
// go. go-containerregistry adds registry credentials for the registry's
// host only (and drops them on redirects to other hosts).

// schemeTransport decides between HTTPS and plain HTTP. go-containerregistry
// picks plain HTTP for loopback and private addresses; here HTTPS is tried
// first everywhere, and plain HTTP is used only for hosts the user
// configured http:// for, for hosts one fetch asked for with http:// (a
// reference or URL with http://, see withPlainHTTP), and for loopback hosts
// that turn out to speak it (HTTPS refused with a plain HTTP answer, not a
// certificate error). Credentials go over plain HTTP only to hosts the
// user configured http:// for: from any other plain request the
// Authorization header is dropped, whoever set it.
type schemeTransport struct {
	base http.RoundTripper
	st   *schemeState
}

// schemeState is what every schemeTransport of a Client shares.
type schemeState struct {
	mu         sync.Mutex
	configured map[string]bool // hosts the user configured http:// for
	learned    map[string]bool // loopback hosts that speak plain HTTP
	withheld   map[string]bool // hosts credentials were kept from, for messages
	// answered are the hosts that answered over plain HTTP the user did
	// not configure for them: what they said (a token realm) is anyone's.
	answered map[string]bool
}

func newSchemeTransport(base http.RoundTripper) *schemeTransport {
	return &schemeTransport{base: base, st: &schemeState{configured: map[string]bool{}, learned: map[string]bool{},
		withheld: map[string]bool{}, answered: map[string]bool{}}}
}

// withBase is the transport over another base (one trusting more roots),
// sharing what was configured and learned.
func (t *schemeTransport) withBase(base http.RoundTripper) *schemeTransport {
	return &schemeTransport{base: base, st: t.st}
}

// configurePlain records that the user configured http:// for host: a
// repository context's baseUrl, or a registry_credentials key.
func (t *schemeTransport) configurePlain(host string) {
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	t.st.configured[host] = true
}

// plainAllowed reports whether the user configured http:// for host.
func (t *schemeTransport) plainAllowed(host string) bool {
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	return t.st.configured[host]
}

// wasWithheld reports whether credentials were kept from a plain HTTP
// request to host.
func (t *schemeTransport) wasWithheld(host string) bool {
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	return t.st.withheld[host]
}

func (t *schemeTransport) markWithheld(host string) {
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	t.st.withheld[host] = true
}

// answeredPlain reports whether host answered over plain HTTP without the
// user configuring http:// for it.
func (t *schemeTransport) answeredPlain(host string) bool {
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	return t.st.answered[host] && !t.st.configured[host]
}

// unconfiguredPlain sends a plain HTTP request to a host the user did not
// configure http:// for: without credentials, and remembering that the
// host answered that way.
func (t *schemeTransport) unconfiguredPlain(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	resp, err := send(t.withoutCredentials(req))
	if err == nil {
		t.st.mu.Lock()
		t.st.answered[req.URL.Host] = true
		t.st.mu.Unlock()
	}
	return resp, err
}

type plainFetchKey struct{}

// withPlainHTTP allows plain HTTP to host for the requests of one fetch,
// whose reference or URL asked for it with http://: registry content can
// write that, so the allowance neither outlives the fetch nor carries
// credentials.
func withPlainHTTP(ctx context.Context, host string) context.Context {
	return context.WithValue(ctx, plainFetchKey{}, host)
}

func plainForFetch(ctx context.Context, host string) bool {
	h, _ := ctx.Value(plainFetchKey{}).(string)
	return h != "" && h == host
}

// maxTagListBody bounds one page of a tag list: go-containerregistry
// decodes a page whole, and the registry decides its size. Tags are at
// most 128 characters (OCI distribution spec): this holds thousands.
const maxTagListBody = 1 << 20

// maxManifestBody bounds a manifest (or index) read: component
// descriptors' manifests, charts' and images', hold a few descriptors.
const maxManifestBody = ocm.MaxDescriptorSize

func (t *schemeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.roundTrip(req)
	if b, ok := req.Context().Value(boundKey{}).(bound); ok && err == nil {
		resp.Body = &boundedBody{ReadCloser: resp.Body, limit: b.limit, what: b.what}
	}
	return resp, err
}

// bound limits the bodies of the responses to a fetch (every hop of a
// redirect included); the fetches of the registry API set it, where
// go-containerregistry reads a body whole before anything here can look
// at its size (up to 100 MiB of a manifest, any tag list).
type bound struct {
	limit int64
	what  string
}

type boundKey struct{}

func withBound(ctx context.Context, limit int64, what string) context.Context {
	return context.WithValue(ctx, boundKey{}, bound{limit, what})
}

// boundedBody fails a read past limit bytes.
type boundedBody struct {
	io.ReadCloser
	limit, read int64
	what        string
}

func (b *boundedBody) Read(p []byte) (int, error) {
	// One byte beyond the limit tells a body of exactly limit bytes
	// from a longer one.
	if left := b.limit + 1 - b.read; int64(len(p)) > left {
		p = p[:max(left, 0)]
	}
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	if b.read > b.limit {
		return n, fmt.Errorf("the registry sent more than %d bytes for %s", b.limit, b.what)
	}
	return n, err
}

func (t *schemeTransport) roundTrip(req *http.Request) (*http.Response, error) {
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
		return plainRoundTrip(t.base, req, "speaks HTTPS, but plain HTTP was asked for (http://)")
	}
	if plainForFetch(req.Context(), host) {
		return t.unconfiguredPlain(req, func(r *http.Request) (*http.Response, error) {
			return plainRoundTrip(t.base, r, "speaks HTTPS, but plain HTTP was asked for (http://)")
		})
	}
	t.st.mu.Lock()
	plain := t.st.learned[host]
	t.st.mu.Unlock()
	if plain {
		return t.unconfiguredPlain(req, t.base.RoundTrip)
	}
	// The same host and port over TLS: what credentials the request
	// carries are for that host, and safe there.
	secure := req.Clone(req.Context())
	secure.URL.Scheme = "https"
	resp, err := t.base.RoundTrip(secure)
	if err == nil || !speaksPlainHTTP(err) {
		return resp, err
	}
	if !isLoopback(host) {
		return nil, &protocolError{plainRefused}
	}
	t.st.mu.Lock()
	t.st.learned[host] = true
	t.st.mu.Unlock()
	return t.unconfiguredPlain(req, t.base.RoundTrip)
}

// withoutCredentials is req without its Authorization header, for a plain
// HTTP request to a host the user did not configure http:// for.
func (t *schemeTransport) withoutCredentials(req *http.Request) *http.Request {
	if req.Header.Get("Authorization") == "" {
		return req
	}
	t.st.mu.Lock()
	t.st.withheld[req.URL.Host] = true
	t.st.mu.Unlock()
	out := req.Clone(req.Context())
	out.Header.Del("Authorization")
	return out
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

// origin is where credentials belong: scheme, host and port, the default
// port written out, so that https://h and https://h:443 are one origin
// and http://h, https://h:8443 and https://sub.h are others.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// originAuth sends one origin's credentials to that origin only: to the
// URL a fetch starts from, and to whatever it leads to (a redirect, a
// chart URL of an index) on the same scheme, host and port. Every other
// request goes without, so a header the client would copy along a
// redirect never leaves. Credentials in a URL's user info are that URL's
// own, and left to the client.
type originAuth struct {
	next   http.RoundTripper
	origin string
	header string
}

func (t *originAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.User != nil {
		return t.next.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	out.Header.Del("Authorization")
	if t.header != "" && origin(req.URL) == t.origin {
		out.Header.Set("Authorization", t.header)
	}
	return t.next.RoundTrip(out)
}

// httpClient is the client of one fetch that starts at start (a chart
// repository, an archive URL): start's credentials, unless credentials is
// false, go to start's origin only, and over plain HTTP only where the
// user configured http:// for the host. A verified fetch follows
// redirects on start's origin, over HTTPS, only.
func (c *Client) httpClient(start *url.URL, tr *schemeTransport, verified, credentials bool) (*http.Client, error) {
	auth := ""
	if credentials {
		var err error
		if auth, err = c.keys.header(start.Host); err != nil {
			return nil, err
		}
	}
	if auth != "" && start.Scheme == "http" && !c.tr.plainAllowed(start.Host) {
		c.tr.st.mu.Lock()
		c.tr.st.withheld[start.Host] = true
		c.tr.st.mu.Unlock()
		auth = ""
	}
	client := &http.Client{Transport: &originAuth{next: tr, origin: origin(start), header: auth}}
	if verified {
		client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return sameOriginHTTPS(start, req.URL)
		}
	}
	return client, nil
}

// sameOriginHTTPS refuses, for a verified fetch, a URL the first one leads
// to (a redirect, or a chart URL of the index) on another origin or over
// plain HTTP.
func sameOriginHTTPS(from, to *url.URL) error {
	if to.Scheme != "https" || origin(to) != origin(from) {
		return fmt.Errorf("a verifying installation does not follow %s from %s: only HTTPS on the same host and port", to.Redacted(), from.Host)
	}
	return nil
}
