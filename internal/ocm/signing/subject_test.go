package signing

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"testing"
)

// A CA verifier with a required subject compares the certificate's own
// attribute values: CN=" signer" is another identity a CA may issue, not
// "CN=signer". A subject that means the spaces escapes them.
func TestSubjectComparesCertificateValuesExactly(t *testing.T) {
	v := &Verifier{Name: "acme", ca: x509.NewCertPool()}
	if err := v.RequireSubject("CN=signer,O=Acme"); err != nil {
		t.Fatal(err)
	}
	other := &x509.Certificate{Subject: pkix.Name{CommonName: " signer ", Organization: []string{"Acme "}}}
	if v.subjectMatches(other) {
		t.Errorf("subject %q is accepted for the required %q", other.Subject.String(), v.subjectRaw)
	}
	if err := v.RequireSubject(`CN=\ signer\ ,O=Acme\ `); err != nil {
		t.Fatal(err)
	}
	if !v.subjectMatches(other) {
		t.Errorf("subject %q is refused for the required %q", other.Subject.String(), v.subjectRaw)
	}
	same := &x509.Certificate{Subject: pkix.Name{CommonName: "signer", Organization: []string{"Acme"}}}
	if v.subjectMatches(same) {
		t.Errorf("subject %q is accepted for the required %q", same.Subject.String(), v.subjectRaw)
	}
}
