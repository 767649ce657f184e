package ocitest

import (
	"bufio"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// ChartRepo is a helm chart repository (index.yaml and archives) on
// 127.0.0.1 that speaks HTTPS and plain HTTP on the same port, as a
// server reachable both ways looks to a client: the first byte of a
// connection says which. It records every request with the Authorization
// header it carried, so a test can tell where credentials went, and has
// the moves of a hostile repository: redirects anywhere and chart URLs
// of its choosing.
type ChartRepo struct {
	// Host is 127.0.0.1:port.
	Host string
	// URL is https://Host, PlainURL http://Host.
	URL, PlainURL string

	opts     ChartRepoOptions
	listener net.Listener
	srv      *http.Server

	mu        sync.Mutex
	entries   map[string][]chartEntry
	files     map[string][]byte
	redirects map[string]string
	open      map[string]bool
	requests  []ChartRequest
}

// ChartRepoOptions configure a ChartRepo.
type ChartRepoOptions struct {
	// CA signs the HTTPS certificate; it is required.
	CA *CA
	// Username and Password, when set, are required by every path not
	// made Open.
	Username, Password string
}

// ChartRequest is a request a ChartRepo received.
type ChartRequest struct {
	// Scheme is "https" or "http": how the request arrived.
	Scheme        string
	Path          string
	Authorization string
}

type chartEntry struct {
	Version string   `json:"version"`
	URLs    []string `json:"urls"`
	Digest  string   `json:"digest"`
}

// StartChartRepo starts a chart repository; it stops when the test ends.
func StartChartRepo(t testing.TB, o ChartRepoOptions) *ChartRepo {
	t.Helper()
	if o.CA == nil {
		t.Fatal("StartChartRepo: a CA is required")
	}
	cfg, err := o.CA.serverConfig()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &ChartRepo{opts: o, listener: l, entries: map[string][]chartEntry{}, files: map[string][]byte{},
		redirects: map[string]string{}, open: map[string]bool{}}
	r.Host = l.Addr().String()
	r.URL, r.PlainURL = "https://"+r.Host, "http://"+r.Host
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(&sniffListener{Listener: l, tls: cfg, done: make(chan struct{})}) }()
	t.Cleanup(func() { _ = r.srv.Close() })
	return r
}

// AddChart publishes an archive as name-version.tgz under charts/ and
// lists it in index.yaml with that relative URL and its digest.
func (r *ChartRepo) AddChart(name, version string, archive []byte) {
	file := fmt.Sprintf("charts/%s-%s.tgz", name, version)
	sum := sha256.Sum256(archive)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.files["/"+file] = archive
	r.entries[name] = append(r.entries[name], chartEntry{Version: version, URLs: []string{file}, Digest: hex.EncodeToString(sum[:])})
}

// SetChartURL makes index.yaml list the chart version at url, as a
// repository's index may name any URL.
func (r *ChartRepo) SetChartURL(name, version, url string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.entries[name] {
		if r.entries[name][i].Version == version {
			r.entries[name][i].URLs = []string{url}
		}
	}
}

// Serve publishes data at path, without listing it.
func (r *ChartRepo) Serve(path string, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.files[path] = data
}

// Redirect answers requests for path with 302 Found to location.
func (r *ChartRepo) Redirect(path, location string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.redirects[path] = location
}

// Open serves path without asking for credentials, as a CDN that a
// repository redirects to would.
func (r *ChartRepo) Open(path string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.open[path] = true
}

// Requests returns the requests received so far.
func (r *ChartRepo) Requests() []ChartRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

// Credentialed returns the requests that carried an Authorization header.
func (r *ChartRepo) Credentialed() []ChartRequest {
	var out []ChartRequest
	for _, q := range r.Requests() {
		if q.Authorization != "" {
			out = append(out, q)
		}
	}
	return out
}

func (r *ChartRepo) serve(w http.ResponseWriter, req *http.Request) {
	scheme := "http"
	if req.TLS != nil {
		scheme = "https"
	}
	r.mu.Lock()
	r.requests = append(r.requests, ChartRequest{Scheme: scheme, Path: req.URL.Path, Authorization: req.Header.Get("Authorization")})
	location, redirect := r.redirects[req.URL.Path]
	open := r.open[req.URL.Path] || r.opts.Username == ""
	data, file := r.files[req.URL.Path]
	var index []byte
	if req.URL.Path == "/index.yaml" {
		index = r.indexYAML()
	}
	r.mu.Unlock()
	if !open {
		if u, p, ok := req.BasicAuth(); !ok || u != r.opts.Username || p != r.opts.Password {
			w.Header().Set("WWW-Authenticate", `Basic realm="charts"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
	}
	switch {
	case redirect:
		http.Redirect(w, req, location, http.StatusFound)
	case index != nil:
		_, _ = w.Write(index)
	case file:
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(data)
	default:
		http.NotFound(w, req)
	}
}

// indexYAML writes index.yaml; r.mu is held.
func (r *ChartRepo) indexYAML() []byte {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nentries:\n")
	names := make([]string, 0, len(r.entries))
	for n := range r.entries {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %s:\n", n)
		for _, e := range r.entries[n] {
			fmt.Fprintf(&b, "  - {name: %s, version: %q, urls: [%q], digest: %q}\n", n, e.Version, e.URLs[0], e.Digest)
		}
	}
	return []byte(b.String())
}

// sniffListener hands out TLS connections for clients that open with a
// TLS handshake record and plain ones for the rest. Connections are
// sorted in their own goroutines, so a client that says nothing holds up
// no other.
type sniffListener struct {
	net.Listener
	tls   *tls.Config
	once  sync.Once
	conns chan net.Conn
	err   chan error
	done  chan struct{}
	stop  sync.Once
}

func (l *sniffListener) Close() error {
	l.stop.Do(func() { close(l.done) })
	return l.Listener.Close()
}

func (l *sniffListener) Accept() (net.Conn, error) {
	l.once.Do(func() {
		l.conns, l.err = make(chan net.Conn), make(chan error, 1)
		go l.loop()
	})
	select {
	case c := <-l.conns:
		return c, nil
	case err := <-l.err:
		l.err <- err
		return nil, err
	}
}

func (l *sniffListener) loop() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			l.err <- err
			return
		}
		go func() {
			br := bufio.NewReader(c)
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			first, err := br.Peek(1)
			_ = c.SetReadDeadline(time.Time{})
			if err != nil {
				_ = c.Close()
				return
			}
			var out net.Conn = &peekedConn{Conn: c, r: br}
			if first[0] == 0x16 {
				out = tls.Server(out, l.tls)
			}
			select {
			case l.conns <- out:
			case <-l.done:
				_ = out.Close()
			}
		}()
	}
}

type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
