package signing

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"testing"
)

// A CA verifier with a required subject accepts a certificate whose
// subject differs from it: parseDN trims the spaces Go's Subject.String()
// escapes, so CN=" signer" (another identity a CA may issue) passes for
// subject "CN=signer"; and a plain common name compares CN only.
func TestReview18SubjectWhitespace(t *testing.T) {
	v := &Verifier{Name: "acme", ca: x509.NewCertPool()}
	if err := v.RequireSubject("CN=signer,O=Acme"); err != nil {
		t.Fatal(err)
	}
	other := &x509.Certificate{Subject: pkix.Name{CommonName: " signer ", Organization: []string{"Acme "}}}
	if v.subjectMatches(other) {
		t.Errorf("subject %q is accepted for the required %q", other.Subject.String(), v.subjectRaw)
	}
}
