package ocitest

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// Auth is how a Registry authenticates requests.
type Auth int

// Authentication modes.
const (
	NoAuth Auth = iota
	// Basic requires basic authentication on every request.
	Basic
	// Bearer challenges with WWW-Authenticate: Bearer and accepts only
	// tokens its /token endpoint issued for the basic credentials.
	Bearer
)

// Options configure a Registry.
type Options struct {
	// CA signs the server certificate; nil serves plain HTTP.
	CA *CA
	// Auth, with Username and Password, protects every request.
	Auth               Auth
	Username, Password string
	// Addr is the address to listen on (host:port); empty is a free
	// port on 127.0.0.1. A registry on another address tests what the
	// client does with registries that are not on loopback.
	Addr string
}

// Registry is a running test registry.
type Registry struct {
	// Host is host:port, on 127.0.0.1 unless Options.Addr says otherwise.
	Host string
	// Client pushes to the registry (it trusts the CA and knows the
	// credentials).
	Client *http.Client

	srv     *httptest.Server
	opts    Options
	mu      sync.Mutex
	tokens  map[string]bool
	counts  map[string]int
	down    bool
	handler http.Handler
	forged  map[string]Forgery
	moved   map[string]string
}

// Redirect answers authorized requests for path (/v2/<repo>/blobs/<digest>,
// say) with 302 Found to location, as registries send blob downloads to
// a CDN.
func (r *Registry) Redirect(path, location string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.moved == nil {
		r.moved = map[string]string{}
	}
	r.moved[path] = location
}

// Forgery is a manifest answer of a hostile registry: any bytes, with the
// Content-Type and Docker-Content-Digest headers it likes.
type Forgery struct {
	Body         []byte
	ContentType  string
	DigestHeader string
}

// MediaTypeSchema1Signed is Docker's signed schema-1 manifest type, whose
// digest go-containerregistry takes from the Docker-Content-Digest header.
const MediaTypeSchema1Signed = "application/vnd.docker.distribution.manifest.v1+prettyjws"

// Forge makes the registry answer GET and HEAD of the manifest
// repo:reference (a tag, or a digest "sha256:...") with f instead of what
// it stores, as a hostile registry can.
func (r *Registry) Forge(repo, reference string, f Forgery) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.forged == nil {
		r.forged = map[string]Forgery{}
	}
	r.forged["/v2/"+repo+"/manifests/"+reference] = f
}

// Manifest returns the bytes of a stored manifest, for a Forgery that
// serves one artifact's manifest under another's digest.
func (r *Registry) Manifest(t testing.TB, repo, reference string) []byte {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/v2/"+repo+"/manifests/"+reference, nil)
	req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
	rec := httptest.NewRecorder()
	r.handler.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("manifest %s:%s: %d", repo, reference, rec.Code)
	}
	return rec.Body.Bytes()
}

// Start starts a registry; it stops when the test ends.
func Start(t testing.TB, o Options) *Registry {
	t.Helper()
	r := &Registry{opts: o, tokens: map[string]bool{}, counts: map[string]int{},
		handler: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	if o.Addr != "" {
		l, err := net.Listen("tcp", o.Addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = r.srv.Listener.Close()
		r.srv.Listener = l
	}
	tr := &http.Transport{}
	if o.CA != nil {
		cfg, err := o.CA.serverConfig()
		if err != nil {
			t.Fatal(err)
		}
		r.srv.TLS = cfg
		r.srv.StartTLS()
		tr.TLSClientConfig = &tls.Config{RootCAs: o.CA.Pool(), MinVersion: tls.VersionTLS12}
	} else {
		r.srv.Start()
	}
	t.Cleanup(r.srv.Close)
	r.Host = strings.TrimPrefix(strings.TrimPrefix(r.srv.URL, "https://"), "http://")
	r.Client = &http.Client{Transport: tr}
	return r
}

// URL is the registry's base URL.
func (r *Registry) URL() string { return r.srv.URL }

// SetDown makes the registry refuse every connection (true) or serve
// again (false), as a registry that is down would.
func (r *Registry) SetDown(down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = down
}

// Counts returns how many requests were served by kind: "manifest" (GET
// or HEAD of a manifest), "blob" (GET of a blob), "ping" (/v2/), "token"
// and "other"; refused ones count as "unauthorized".
func (r *Registry) Counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.counts))
	for k, v := range r.counts {
		out[k] = v
	}
	return out
}

// ResetCounts forgets the counts.
func (r *Registry) ResetCounts() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.counts = map[string]int{}
}

func (r *Registry) count(kind string) {
	r.mu.Lock()
	r.counts[kind]++
	r.mu.Unlock()
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	down := r.down
	r.mu.Unlock()
	if down {
		// Hijack and close: the client sees a broken connection, as with a
		// registry that went away.
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
				return
			}
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if req.URL.Path == "/token" {
		r.count("token")
		r.issueToken(w, req)
		return
	}
	if !r.authorized(req) {
		r.count("unauthorized")
		switch r.opts.Auth {
		case Bearer:
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="%s/token",service="ocitest",scope="repository:*:pull"`, r.srv.URL))
		default:
			w.Header().Set("WWW-Authenticate", `Basic realm="ocitest"`)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"code": "UNAUTHORIZED", "message": "authentication required"}}})
		return
	}
	r.mu.Lock()
	location, moved := r.moved[req.URL.Path]
	r.mu.Unlock()
	if moved {
		r.count("redirect")
		http.Redirect(w, req, location, http.StatusFound)
		return
	}
	switch {
	case req.URL.Path == "/v2/" || req.URL.Path == "/v2":
		r.count("ping")
	case strings.Contains(req.URL.Path, "/manifests/") && (req.Method == http.MethodGet || req.Method == http.MethodHead):
		r.count("manifest")
		r.mu.Lock()
		f, ok := r.forged[req.URL.Path]
		r.mu.Unlock()
		if ok {
			w.Header().Set("Content-Type", f.ContentType)
			w.Header().Set("Docker-Content-Digest", f.DigestHeader)
			w.Header().Set("Content-Length", fmt.Sprint(len(f.Body)))
			if req.Method == http.MethodGet {
				_, _ = w.Write(f.Body)
			}
			return
		}
	case strings.Contains(req.URL.Path, "/blobs/") && req.Method == http.MethodGet:
		r.count("blob")
	default:
		r.count("other")
	}
	r.handler.ServeHTTP(w, req)
}

// SetPassword changes the password the registry accepts from now on, as
// a registry whose credential was rotated.
func (r *Registry) SetPassword(password string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opts.Password = password
}

func (r *Registry) credentials() (username, password string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.opts.Username, r.opts.Password
}

func (r *Registry) authorized(req *http.Request) bool {
	switch r.opts.Auth {
	case Basic:
		u, p, ok := req.BasicAuth()
		wantU, wantP := r.credentials()
		return ok && u == wantU && p == wantP
	case Bearer:
		tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		r.mu.Lock()
		defer r.mu.Unlock()
		return ok && r.tokens[tok]
	}
	return true
}

func (r *Registry) issueToken(w http.ResponseWriter, req *http.Request) {
	u, p, ok := req.BasicAuth()
	wantU, wantP := r.credentials()
	if !ok || u != wantU || p != wantP {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	tok := hex.EncodeToString(b)
	r.mu.Lock()
	r.tokens[tok] = true
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"token": tok, "access_token": tok, "expires_in": 300})
}
