package ociregistry

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
)

// hostileRegistry is a TLS server on loopback answering as h does, and a
// client trusting it with cred for it.
func hostileRegistry(t *testing.T, h http.HandlerFunc, cred Credential) (host string, c *Client) {
	t.Helper()
	srv := httptest.NewTLSServer(h)
	t.Cleanup(srv.Close)
	host = strings.TrimPrefix(srv.URL, "https://")
	c, err := New(Options{Transport: srv.Client().Transport, Keychain: authn.NewMultiKeychain(),
		Credentials: map[string]Credential{host: cred}})
	if err != nil {
		t.Fatal(err)
	}
	return host, c
}

// A token endpoint (any host a Bearer challenge names) answering without
// a token gets its answer quoted by go-containerregistry; echoing what it
// was sent would put the credentials into the diagnostic.
func TestTokenEndpointEchoStaysOutOfErrors(t *testing.T) {
	const user, pass = "ci", "echoed-registry-password-91"
	for name, cred := range map[string]Credential{
		"basic": {Username: user, Password: pass},
		"token": {Token: pass},
	} {
		t.Run(name, func(t *testing.T) {
			var host string
			host, c := hostileRegistry(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/token" {
					fmt.Fprintf(w, `{"received":%q,"form":%q,"said":"anything else the server says"}`, r.Header.Get("Authorization"), r.URL.RawQuery)
					return
				}
				w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="https://%s/token",service="reg"`, host))
				w.WriteHeader(http.StatusUnauthorized)
			}, cred)
			_, err := c.Repository(spec(host)).ComponentVersion(context.Background(), "example.com/app", "1.0.0")
			if err == nil {
				t.Fatal("want an error")
			}
			msg := err.Error()
			for _, s := range []string{pass, base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))} {
				if strings.Contains(msg, s) {
					t.Fatalf("a credential is in the error: %s", msg)
				}
			}
			if strings.Contains(msg, "the server says") {
				t.Fatalf("the token endpoint's answer is in the error: %s", msg)
			}
			if !strings.Contains(msg, "registry "+host) {
				t.Fatalf("the error names no registry: %s", msg)
			}
		})
	}
}

// What is left of a foreign error is masked of the credentials in every
// form the client sends them in.
func TestForeignErrorsAreMaskedOfCredentials(t *testing.T) {
	const user, pass = "ci", "pa ss/word+91"
	host, c := hostileRegistry(t, func(http.ResponseWriter, *http.Request) {}, Credential{Username: user, Password: pass})
	for _, s := range []string{pass, base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)), url.QueryEscape(pass)} {
		err := c.classify(host, "something", errors.New("a document quoting "+s+" on its first line"))
		if strings.Contains(err.Error(), s) || !strings.Contains(err.Error(), "a document quoting *** on its first line") {
			t.Errorf("%q: %v", s, err)
		}
	}
}

// versionsOf is the Versions of the repository at host.
func versionsOf(t *testing.T, c *Client, host string) func(context.Context, string) ([]string, error) {
	t.Helper()
	r, ok := c.Repository(spec(host)).(*repository)
	if !ok {
		t.Fatal("not an OCI repository")
	}
	return r.Versions
}

// A registry decides the size of a tag list and how many pages it links;
// listing versions (for an unknown version's message) reads a bounded
// amount of either.
func TestTagListIsBounded(t *testing.T) {
	t.Run("page", func(t *testing.T) {
		var served atomic.Int64
		host, c := hostileRegistry(t, func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/tags/list") {
				return
			}
			n, _ := io.WriteString(w, `{"name":"x","tags":[`)
			served.Add(int64(n))
			chunk := strings.Repeat(`"`+strings.Repeat("v", 100)+`",`, 1000)
			for served.Load() < 64<<20 {
				n, err := io.WriteString(w, chunk)
				served.Add(int64(n))
				if err != nil {
					return
				}
			}
			io.WriteString(w, `"last"]}`) //nolint:errcheck // the client may be gone
		}, Credential{Username: "user", Password: "password"})
		_, err := versionsOf(t, c, host)(context.Background(), "example.com/app")
		if err == nil || !strings.Contains(err.Error(), "more than 1048576 bytes") {
			t.Fatalf("a 64 MiB tag list: err = %v, want the limit named", err)
		}
	})
	t.Run("pages", func(t *testing.T) {
		var pages atomic.Int64
		// Plain HTTP: go-containerregistry follows a Link only with the
		// scheme it gives the host, http for loopback.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/tags/list") {
				return
			}
			n := pages.Add(1)
			w.Header().Set("Link", fmt.Sprintf(`<%s?n=10&last=t%d>; rel="next"`, r.URL.Path, n))
			fmt.Fprintf(w, `{"name":"x","tags":["t%d"]}`, n)
		}))
		t.Cleanup(srv.Close)
		host := strings.TrimPrefix(srv.URL, "http://")
		c, err := New(Options{Keychain: authn.NewMultiKeychain(), Credentials: map[string]Credential{"http://" + host: {Username: "user", Password: "password"}}})
		if err != nil {
			t.Fatal(err)
		}
		versions, err := versionsOf(t, c, host)(context.Background(), "example.com/app")
		if err != nil {
			t.Fatal(err)
		}
		if got := pages.Load(); got != maxTagPages || len(versions) != maxTagPages {
			t.Fatalf("an endless tag list: %d pages read, %d versions; want %d of each", got, len(versions), maxTagPages)
		}
	})
}

// A manifest is refused while it is read, not after go-containerregistry
// held up to 100 MiB of it; also when the registry redirects the request.
func TestManifestIsBoundedWhileRead(t *testing.T) {
	const total = 48 << 20
	for _, redirect := range []bool{false, true} {
		var served atomic.Int64
		host, c := hostileRegistry(t, func(w http.ResponseWriter, r *http.Request) {
			switch {
			case redirect && strings.Contains(r.URL.Path, "/manifests/"):
				http.Redirect(w, r, "/cdn/blob-of-a-manifest", http.StatusTemporaryRedirect)
				return
			case redirect && r.URL.Path != "/cdn/blob-of-a-manifest", !redirect && !strings.Contains(r.URL.Path, "/manifests/"):
				return
			}
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			w.Header().Set("Content-Length", fmt.Sprint(total))
			if r.Method == http.MethodHead {
				return
			}
			chunk := strings.Repeat(" ", 1<<20)
			n, _ := io.WriteString(w, `{"schemaVersion":2,"layers":[]`)
			served.Add(int64(n))
			for served.Load() < total-1 {
				n, err := io.WriteString(w, chunk[:min(int64(len(chunk)), total-1-served.Load())])
				served.Add(int64(n))
				if err != nil {
					return
				}
			}
			io.WriteString(w, "}") //nolint:errcheck // the client may be gone
		}, Credential{Username: "user", Password: "password"})
		_, err := c.Repository(spec(host)).ComponentVersion(context.Background(), "example.com/app", "1.0.0")
		if err == nil {
			t.Fatalf("redirected %v: a 48 MiB manifest was accepted", redirect)
		}
		// What the server wrote includes what the sockets buffered
		// (several MiB on loopback); without the bound it is all of it.
		if served.Load() > total/2 {
			t.Errorf("redirected %v: the client read %d MiB of one manifest before refusing it: %v", redirect, served.Load()>>20, err)
		}
	}
}

// The registry API's bounds are the registry API's: a chart repository or
// URL whose path holds "manifests" keeps the blob limit.
func TestChartUnderAManifestsPathKeepsTheBlobLimit(t *testing.T) {
	chart := strings.Repeat("c", 5<<20)
	host, c := hostileRegistry(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/org/manifests/charts/index.yaml":
			fmt.Fprintf(w, "apiVersion: v1\nentries:\n  app:\n  - version: 1.0.0\n    urls: [app-1.0.0.tgz]\n")
		case "/org/manifests/charts/app-1.0.0.tgz":
			_, _ = w.Write([]byte(chart))
		default:
			http.NotFound(w, r)
		}
	}, Credential{Username: "user", Password: "password"})
	b, err := c.HelmChart(context.Background(), "https://"+host+"/org/manifests/charts", "app", "1.0.0")
	if err != nil || len(b.Data) != len(chart) {
		t.Fatalf("a 5 MiB chart of a repository under /org/manifests/: %v", err)
	}
	if _, err := c.Fetch(context.Background(), "https://"+host+"/org/manifests/charts/app-1.0.0.tgz"); err != nil {
		t.Fatalf("a 5 MiB archive under /org/manifests/: %v", err)
	}
}

// A body of exactly the limit is read; one byte more is refused, also
// when it comes with the end of the body.
func TestBoundedBodyAllowsExactlyTheLimit(t *testing.T) {
	for size, ok := range map[int]bool{10: true, 11: false} {
		b := &boundedBody{ReadCloser: io.NopCloser(strings.NewReader(strings.Repeat("x", size))), limit: 10, what: "a test"}
		data, err := io.ReadAll(b)
		if (err == nil) != ok || ok && len(data) != size {
			t.Errorf("%d bytes: %d read, err %v", size, len(data), err)
		}
	}
}

// A credential of one or two characters is not masked inside messages:
// it would garble them, and the masks would spell it.
func TestShortCredentialDoesNotGarbleErrors(t *testing.T) {
	host, c := hostileRegistry(t, func(http.ResponseWriter, *http.Request) {}, Credential{Username: "ci", Password: "e"})
	err := c.classify(host, "something", errors.New("the manifest is not a valid OCI manifest: unexpected end of JSON input"))
	if strings.Contains(err.Error(), "***") {
		t.Fatalf("a one-letter password masks every e of the message: %v", err)
	}
}
