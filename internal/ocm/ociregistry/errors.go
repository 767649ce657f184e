package ociregistry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// Kind says what went wrong with a registry request, so that callers can
// tell what a retry may fix from what only a change of configuration will.
type Kind int

// Kinds of registry errors.
const (
	// KindNotFound: the registry answered that it has no such artifact,
	// repository, chart or version.
	KindNotFound Kind = iota + 1
	// KindRefused: the registry refused the credentials (or their absence).
	KindRefused
	// KindTLS: the registry's certificate is not trusted or not for its
	// name, or the TLS handshake failed.
	KindTLS
	// KindProtocol: the registry speaks plain HTTP where HTTPS is required,
	// or HTTPS where plain HTTP was asked for.
	KindProtocol
	// KindRejected: the registry rejected the request as malformed (a
	// 4xx status other than the ones above, 408 and 429).
	KindRejected
	// KindUnreachable: the registry could not be asked at all (connection
	// refused, no such host, no answer in time).
	KindUnreachable
	// KindServer: the registry answered with a server error, a rate limit
	// or something else unexpected.
	KindServer
)

// Error is a failed registry request. Its message names the registry and
// what was asked for and, where access was refused, the credential
// sources that were tried; never a secret.
type Error struct {
	Kind Kind
	msg  string
	// err is the cause: ocm.ErrNotFound for KindNotFound, so that
	// errors.Is(err, ocm.ErrNotFound) holds for every repository.
	err error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.err }

// Terminal reports whether only a change of configuration (a reference,
// credentials, trusted certificates, a scheme) can fix the error, so a
// retry is pointless.
func (e *Error) Terminal() bool { return e.Kind != KindUnreachable && e.Kind != KindServer }

// IsTerminal reports whether err is a registry error that a retry cannot
// fix. Errors of other origin (malformed artifacts, limits) are not
// registry errors; callers decide about them.
func IsTerminal(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Terminal()
}

// KindOf returns the kind of a registry error, or 0.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

func newError(kind Kind, cause error, format string, args ...any) *Error {
	return &Error{Kind: kind, msg: fmt.Sprintf(format, args...), err: cause}
}

// tlsHint says where trusted certificates come from, for TLS errors.
const tlsHint = "the registry's certificate must be issued for its name by a CA in the system's roots, SSL_CERT_FILE or SSL_CERT_DIR"

// classify turns a request error into an *Error that says what went
// wrong, naming the registry and what was asked for and, for refused
// access, the credential sources tried. Transport errors carry status
// codes and the registry's error codes, never request headers, so no
// secret can get into the message.
func (c *Client) classify(host, what string, err error) error {
	// TLS first: a registry asked for with http:// whose certificate is
	// not trusted fails both ways, and the certificate is what to fix.
	if tlsErr := tlsCause(err); tlsErr != nil {
		return newError(KindTLS, nil, "registry %s: TLS failed for %s: %v; %s (no credentials were sent)", host, what, tlsErr, tlsHint)
	}
	var pe *protocolError
	if errors.As(err, &pe) {
		return newError(KindProtocol, nil, "registry %s %s, for %s (no credentials were sent)", host, pe.reason, what)
	}
	var te *transport.Error
	if errors.As(err, &te) {
		if slices.ContainsFunc(te.Errors, func(d transport.Diagnostic) bool {
			return d.Code == transport.ManifestUnknownErrorCode || d.Code == transport.NameUnknownErrorCode || d.Code == transport.BlobUnknownErrorCode
		}) {
			return c.statusError(host, what, http.StatusNotFound)
		}
		return c.statusError(host, what, te.StatusCode)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return newError(KindUnreachable, nil, "registry %s did not answer within %s for %s", host, c.o.Timeout, what)
	}
	var ne net.Error
	var oe *net.OpError
	var de *net.DNSError
	if errors.As(err, &oe) || errors.As(err, &de) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) {
		return newError(KindUnreachable, nil, "registry %s cannot be reached for %s: %v", host, what, unwrapURL(err))
	}
	return &foreignError{msg: fmt.Sprintf("registry %s: %s: %s", host, what, c.scrub(host, err)), err: err}
}

// foreignError is an error of other origin than the registry protocol
// (a token endpoint's answer, a malformed document) whose text is
// scrubbed; it wraps the cause for errors.Is.
type foreignError struct {
	msg string
	err error
}

func (e *foreignError) Error() string { return e.msg }
func (e *foreignError) Unwrap() error { return e.err }

// scrub is err's message without what a server may have written into it:
// go-containerregistry quotes a token endpoint's answer after the first
// line ("no token in bearer response:\n<body>"), and that endpoint may
// echo the credentials it was sent. What is left is masked of host's
// credentials in every form they were sent in.
func (c *Client) scrub(host string, err error) string {
	msg, _, cut := strings.Cut(err.Error(), "\n")
	msg = strings.TrimSuffix(msg, ":")
	if cut {
		msg += " (the server's answer is not shown)"
	}
	for _, s := range c.keys.sent(host) {
		msg = strings.ReplaceAll(msg, s, "***")
	}
	return msg
}

// statusError classifies an HTTP status of a registry or chart
// repository.
func (c *Client) statusError(host, what string, status int) error {
	switch {
	case (status == http.StatusUnauthorized || status == http.StatusForbidden) && c.tr.wasWithheld(host):
		return newError(KindRefused, nil, "registry %s refused access to %s (%d %s); no credentials were sent: they are not sent over plain HTTP "+
			"to %s unless it is configured with http:// (a registry_credentials key \"http://%s\", or a repository_context baseUrl http://%s/...)",
			host, what, status, http.StatusText(status), host, host, host)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return newError(KindRefused, nil, "registry %s refused access to %s (%d %s); credentials tried: %s",
			host, what, status, http.StatusText(status), c.keys.sources(host))
	case status == http.StatusNotFound:
		return newError(KindNotFound, ocm.ErrNotFound, "registry %s has no %s", host, what)
	case status >= 400 && status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests:
		return newError(KindRejected, nil, "registry %s rejected the request for %s (%d %s)", host, what, status, http.StatusText(status))
	}
	return newError(KindServer, nil, "registry %s: %s: status %d %s", host, what, status, http.StatusText(status))
}

// tlsCause returns the TLS error inside err, if the request failed in
// the handshake or on the certificate.
func tlsCause(err error) error {
	var (
		ua  x509.UnknownAuthorityError
		he  x509.HostnameError
		ci  x509.CertificateInvalidError
		cve *tls.CertificateVerificationError
		ae  tls.AlertError
		rhe tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &cve):
		return cve.Err
	case errors.As(err, &ua):
		return ua
	case errors.As(err, &he):
		return he
	case errors.As(err, &ci):
		return ci
	case errors.As(err, &ae):
		return ae
	case errors.As(err, &rhe):
		return rhe
	}
	if strings.Contains(err.Error(), "tls: ") {
		return unwrapURL(err)
	}
	return nil
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// protocolError is raised by the transport when a registry speaks the
// other protocol than the one it may be spoken to with.
type protocolError struct{ reason string }

func (e *protocolError) Error() string { return e.reason }
