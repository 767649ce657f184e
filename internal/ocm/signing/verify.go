package signing

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// Signature algorithms and media types.
const (
	AlgorithmRSAPKCS1v15 = "RSASSA-PKCS1-V1_5"
	AlgorithmRSAPSS      = "RSASSA-PSS"
	MediaTypePEM         = "application/x-pem-file"
)

// Digest algorithms of resources, and the marker of a resource excluded
// from signing.
const (
	GenericBlobDigestV1 = "genericBlobDigest/v1"
	OCIArtifactDigestV1 = "ociArtifactDigest/v1"
	NoDigest            = "NO-DIGEST"
)

// Verifier verifies signatures with one key: a public key, or a CA
// certificate that issued the signer's certificate.
type Verifier struct {
	// Name is the signature name it verifies.
	Name string
	key  *rsa.PublicKey
	ca   *x509.CertPool
	// subject, when set, is the one signer a CA verifier accepts, as
	// sorted "TYPE=value" attributes, or a common name alone.
	subject    []string
	subjectRaw string
}

// NewVerifier reads a PEM public key (PKIX or PKCS#1, or a certificate
// whose key to use) or a PEM CA certificate; exactly one must be given.
func NewVerifier(name, publicKey, caCertificate string) (*Verifier, error) {
	v := &Verifier{Name: name}
	switch {
	case publicKey != "" && caCertificate != "":
		return nil, errors.New("set exactly one of public_key and ca_certificate")
	case publicKey != "":
		k, err := parsePublicKey([]byte(publicKey))
		if err != nil {
			return nil, fmt.Errorf("public_key of signature %q: %w", name, err)
		}
		v.key = k
	case caCertificate != "":
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(caCertificate)) {
			return nil, fmt.Errorf("ca_certificate of signature %q holds no PEM certificate", name)
		}
		v.ca = pool
	default:
		return nil, fmt.Errorf("signature %q has neither public_key nor ca_certificate", name)
	}
	return v, nil
}

// RequireSubject makes a CA verifier accept only signers whose
// certificate carries this subject: a distinguished name as RFC 2253
// writes it ("CN=signer,O=Acme", attributes in any order), or a plain
// common name. Without it, any certificate the CA issued is accepted,
// which for a CA that issues to more than one party is anyone's.
func (v *Verifier) RequireSubject(subject string) error {
	if v.ca == nil {
		return fmt.Errorf("subject of signature %q applies to ca_certificate only (a public_key names its signer already)", v.Name)
	}
	subject = trimSubject(subject)
	if subject == "" {
		return fmt.Errorf("subject of signature %q is empty", v.Name)
	}
	if strings.Contains(subject, "=") {
		dn, err := parseDN(subject)
		if err != nil {
			return fmt.Errorf("subject of signature %q: %w", v.Name, err)
		}
		v.subject = dn
	}
	v.subjectRaw = subject
	return nil
}

// trimSubject drops the spaces around a subject, except one a trailing
// backslash escapes: that one is part of the last value.
func trimSubject(subject string) string {
	trimmed := strings.TrimSpace(subject)
	tail := len(trimmed) - len(strings.TrimRight(trimmed, "\\"))
	if tail%2 == 1 && len(trimmed) < len(strings.TrimLeftFunc(subject, unicode.IsSpace)) {
		trimmed += " "
	}
	return trimmed
}

// subjectMatches reports whether a signer's certificate carries the
// required subject.
func (v *Verifier) subjectMatches(c *x509.Certificate) bool {
	if v.subjectRaw == "" {
		return true
	}
	if v.subject == nil {
		return c.Subject.CommonName == v.subjectRaw
	}
	return slices.Equal(subjectAttributes(c.Subject), v.subject)
}

// dnOIDs are the short names of the attribute types Go names; others
// compare by their dotted OID, as Go prints them.
var dnOIDs = map[string]string{"2.5.4.3": "CN", "2.5.4.10": "O", "2.5.4.11": "OU", "2.5.4.6": "C", "2.5.4.7": "L",
	"2.5.4.8": "ST", "2.5.4.9": "STREET", "2.5.4.17": "POSTALCODE", "2.5.4.5": "SERIALNUMBER"}

// subjectAttributes are a certificate subject's attributes as sorted
// "TYPE=value", read from the certificate's own values: printing the
// name and parsing it back would lose what printing escapes (leading and
// trailing spaces), and so accept another identity the CA may issue.
func subjectAttributes(n pkix.Name) []string {
	attrs := n.Names
	if len(attrs) == 0 {
		for _, rdn := range n.ToRDNSequence() {
			attrs = append(attrs, rdn...)
		}
	}
	out := make([]string, 0, len(attrs))
	for _, a := range attrs {
		k := a.Type.String()
		if short, ok := dnOIDs[k]; ok {
			k = short
		}
		out = append(out, k+"="+fmt.Sprint(a.Value))
	}
	slices.Sort(out)
	return out
}

// dnTypes maps the attribute names RFC 2253 and OpenSSL write to the
// ones Go prints, so either spelling compares equal.
var dnTypes = map[string]string{"COMMONNAME": "CN", "ORGANIZATIONNAME": "O", "ORGANIZATIONALUNITNAME": "OU",
	"COUNTRYNAME": "C", "LOCALITYNAME": "L", "STATEORPROVINCENAME": "ST", "S": "ST", "STREETADDRESS": "STREET"}

// parseDN splits a distinguished name into sorted "TYPE=value"
// attributes: RDNs (",") and multi-valued RDNs ("+") alike, a backslash
// escaping the next character. Order does not count; every attribute of
// the name does. Spaces around a value are dropped unless escaped (RFC
// 4514), so "CN=\\ signer" requires the leading space.
func parseDN(dn string) ([]string, error) {
	var out []string
	var cur strings.Builder
	// lastEsc is one past the last escaped byte of cur: spaces before it
	// are the value's own.
	lastEsc, firstEsc := 0, -1
	flush := func() error {
		s := cur.String()
		eq := strings.IndexByte(s, '=')
		cur.Reset()
		keep, first := lastEsc, firstEsc
		lastEsc, firstEsc = 0, -1
		if eq < 0 || (first >= 0 && first < eq) {
			return fmt.Errorf("%q is not a distinguished name (TYPE=value, ...)", dn)
		}
		k := strings.ToUpper(strings.TrimSpace(s[:eq]))
		if k == "" {
			return fmt.Errorf("%q is not a distinguished name (TYPE=value, ...)", dn)
		}
		if alias, ok := dnTypes[k]; ok {
			k = alias
		}
		val := s[eq+1:]
		end := len(val)
		for end > 0 && val[end-1] == ' ' && eq+1+end > keep {
			end--
		}
		start := 0
		for start < end && val[start] == ' ' && (first < 0 || eq+1+start < first) {
			start++
		}
		out = append(out, k+"="+val[start:end])
		return nil
	}
	for i := 0; i < len(dn); i++ {
		switch ch := dn[i]; {
		case ch == '\\' && i+1 < len(dn):
			i++
			if firstEsc < 0 {
				firstEsc = cur.Len()
			}
			cur.WriteByte(dn[i])
			lastEsc = cur.Len()
		case ch == ',' || ch == '+':
			if err := flush(); err != nil {
				return nil, err
			}
		default:
			cur.WriteByte(ch)
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// checkKeyUsage refuses a signer's certificate that its issuer limited
// to something other than signing. A certificate without the key usage
// extension is unrestricted (RFC 5280 4.2.1.3); with it, it must allow
// digital signatures (or content commitment, which some CAs set for
// signing certificates instead). Extended key usages are checked by the
// chain verification: code signing, or none given.
func checkKeyUsage(c *x509.Certificate) error {
	if c.KeyUsage != 0 && c.KeyUsage&(x509.KeyUsageDigitalSignature|x509.KeyUsageContentCommitment) == 0 {
		return errors.New("the signer's certificate does not allow digital signatures (key usage)")
	}
	return nil
}

func parsePublicKey(data []byte) (*rsa.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("not PEM")
	}
	var key any
	var err error
	switch block.Type {
	case "PUBLIC KEY":
		key, err = x509.ParsePKIXPublicKey(block.Bytes)
	case "RSA PUBLIC KEY":
		key, err = x509.ParsePKCS1PublicKey(block.Bytes)
	case "CERTIFICATE":
		var cert *x509.Certificate
		if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
			key = cert.PublicKey
		}
	default:
		return nil, fmt.Errorf("PEM block %q is not a public key", block.Type)
	}
	if err != nil {
		return nil, err
	}
	rk, ok := key.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("a %T key is not supported (RSA)", key)
	}
	return rk, nil
}

// VerifyComponent checks the signature named v.Name of a component
// version: the recorded digest must be the digest of the descriptor as
// stored, and the signature must be valid for it. It returns the
// normalisation of that signature, which says what the signature covers.
// A descriptor carrying the name more than once is refused: signatures
// are not part of what is signed, so a registry can add entries, and
// which of two counts would be the reader's guess.
func (v *Verifier) VerifyComponent(cv *ocm.ComponentVersion) (normalisation string, err error) {
	if err := sameReading(cv); err != nil {
		return "", fmt.Errorf("signature %q: %w", v.Name, err)
	}
	var sig *ocm.Signature
	names := make([]string, 0, len(cv.Descriptor.Signatures))
	count := 0
	for i := range cv.Descriptor.Signatures {
		names = append(names, cv.Descriptor.Signatures[i].Name)
		if cv.Descriptor.Signatures[i].Name == v.Name {
			sig = &cv.Descriptor.Signatures[i]
			count++
		}
	}
	switch {
	case count > 1:
		return "", fmt.Errorf("signature %q: the component version carries %d signatures of that name, and one is expected: "+
			"signatures are not signed, so whoever serves the descriptor can add some", v.Name, count)
	case sig == nil && len(names) == 0:
		return "", fmt.Errorf("signature %q: the component version is not signed", v.Name)
	case sig == nil:
		return "", fmt.Errorf("signature %q: the component version has no such signature (it has %s)", v.Name, strings.Join(names, ", "))
	}
	digest, err := DescriptorDigest(cv.Raw, sig.Digest.NormalisationAlgorithm, sig.Digest.HashAlgorithm)
	if err != nil {
		return "", fmt.Errorf("signature %q: %w", v.Name, err)
	}
	if !strings.EqualFold(digest, sig.Digest.Value) {
		return "", fmt.Errorf("signature %q: the descriptor does not match the signed digest: it was modified after signing", v.Name)
	}
	sum, err := hex.DecodeString(sig.Digest.Value)
	if err != nil {
		return "", fmt.Errorf("signature %q: digest value is not hex: %w", v.Name, err)
	}
	if err := v.verifySignature(sig.Signature, sum); err != nil {
		return "", err
	}
	return sig.Digest.NormalisationAlgorithm, nil
}

// DescriptorDigest returns the hex digest of a stored descriptor.
func DescriptorDigest(raw []byte, normalisation, hash string) (string, error) {
	if !isSHA256(hash) {
		return "", fmt.Errorf("hash algorithm %q is not supported (SHA-256)", hash)
	}
	norm, err := Normalise(raw, normalisation)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(norm)
	return hex.EncodeToString(sum[:]), nil
}

func isSHA256(h string) bool {
	return strings.EqualFold(h, "SHA-256") || strings.EqualFold(h, "sha256")
}

func (v *Verifier) verifySignature(s ocm.SignatureSpec, digest []byte) error {
	key := v.key
	var sigBytes []byte
	var chain []*x509.Certificate
	if s.MediaType == MediaTypePEM || strings.HasPrefix(strings.TrimSpace(s.Value), "-----BEGIN") {
		rest := []byte(s.Value)
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			switch block.Type {
			case "SIGNATURE":
				sigBytes = block.Bytes
			case "CERTIFICATE":
				c, err := x509.ParseCertificate(block.Bytes)
				if err != nil {
					return fmt.Errorf("signature %q: certificate: %w", v.Name, err)
				}
				chain = append(chain, c)
			}
		}
		if sigBytes == nil {
			return fmt.Errorf("signature %q: the PEM value holds no SIGNATURE block", v.Name)
		}
	} else {
		var err error
		if sigBytes, err = hex.DecodeString(s.Value); err != nil {
			return fmt.Errorf("signature %q: the value is neither hex nor PEM", v.Name)
		}
	}
	if v.ca != nil {
		if len(chain) == 0 {
			return fmt.Errorf("signature %q carries no certificate to check against ca_certificate (sign with a certificate, or verify with public_key)", v.Name)
		}
		inter := x509.NewCertPool()
		for _, c := range chain[1:] {
			inter.AddCert(c)
		}
		// Code signing: a certificate its issuer meant for TLS servers
		// (or anything else) does not sign components.
		if _, err := chain[0].Verify(x509.VerifyOptions{Roots: v.ca, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning}}); err != nil {
			var inv x509.CertificateInvalidError
			if errors.As(err, &inv) && inv.Reason == x509.IncompatibleUsage {
				return fmt.Errorf("signature %q: the signer's certificate is not for code signing (extended key usage): %w", v.Name, err)
			}
			return fmt.Errorf("signature %q: the signer's certificate is not issued by ca_certificate: %w", v.Name, err)
		}
		if err := checkKeyUsage(chain[0]); err != nil {
			return fmt.Errorf("signature %q: %w", v.Name, err)
		}
		if !v.subjectMatches(chain[0]) {
			return fmt.Errorf("signature %q: the signer's certificate has subject %q, not the subject %q that verification_signatures requires",
				v.Name, chain[0].Subject.String(), v.subjectRaw)
		}
		if s.Issuer != "" && !issuerMatches(s.Issuer, chain[0]) {
			return fmt.Errorf("signature %q: the signer's certificate (%s) is not the issuer the signature names (%s)", v.Name, chain[0].Subject, s.Issuer)
		}
		rk, ok := chain[0].PublicKey.(*rsa.PublicKey)
		if !ok {
			return fmt.Errorf("signature %q: the signer's key is not RSA", v.Name)
		}
		key = rk
	}
	var err error
	switch s.Algorithm {
	case AlgorithmRSAPKCS1v15:
		err = rsa.VerifyPKCS1v15(key, crypto.SHA256, digest, sigBytes)
	case AlgorithmRSAPSS:
		err = rsa.VerifyPSS(key, crypto.SHA256, digest, sigBytes, nil)
	default:
		return fmt.Errorf("signature %q: algorithm %q is not supported (%s, %s)", v.Name, s.Algorithm, AlgorithmRSAPKCS1v15, AlgorithmRSAPSS)
	}
	if err != nil {
		return fmt.Errorf("signature %q is not valid for the key: %w", v.Name, err)
	}
	return nil
}

// issuerMatches compares the signature's issuer, an RFC 2253 name or a
// plain common name, with the certificate's subject.
func issuerMatches(issuer string, c *x509.Certificate) bool {
	if issuer == c.Subject.String() || issuer == c.Subject.CommonName {
		return true
	}
	parts := strings.Split(issuer, ",")
	for _, p := range parts {
		k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(k, "CN") && val == c.Subject.CommonName {
			return true
		}
	}
	return false
}

// CheckBlob checks blob content against the digest its resource records
// in a signed descriptor.
func (v *Verifier) CheckBlob(res ocm.Resource, blob *ocm.Blob) error {
	d := res.Digest
	if d == nil {
		return fmt.Errorf("the signed descriptor records no digest for resource %q, so its content cannot be verified", res.Name)
	}
	if d.HashAlgorithm == NoDigest || d.NormalisationAlgorithm == "EXCLUDE-FROM-SIGNATURE" {
		return fmt.Errorf("resource %q is excluded from the signature, so its content cannot be verified", res.Name)
	}
	if !isSHA256(d.HashAlgorithm) {
		return fmt.Errorf("resource %q: hash algorithm %q is not supported (SHA-256)", res.Name, d.HashAlgorithm)
	}
	var got string
	switch d.NormalisationAlgorithm {
	case GenericBlobDigestV1:
		sum := sha256.Sum256(blob.Data)
		got = hex.EncodeToString(sum[:])
	case OCIArtifactDigestV1:
		if blob.ArtifactDigest == "" {
			return fmt.Errorf("resource %q records an OCI artifact digest, but its content was not read as an OCI artifact", res.Name)
		}
		got = strings.TrimPrefix(blob.ArtifactDigest, "sha256:")
	default:
		return fmt.Errorf("resource %q: digest normalisation %q is not supported (%s, %s)", res.Name, d.NormalisationAlgorithm, GenericBlobDigestV1, OCIArtifactDigestV1)
	}
	if !strings.EqualFold(got, d.Value) {
		return fmt.Errorf("resource %q does not match the digest its signed descriptor records: its content was modified", res.Name)
	}
	return nil
}

// CheckReference checks a referenced component version against the digest
// a signed descriptor records for the reference.
func (v *Verifier) CheckReference(ref ocm.Reference, referenced *ocm.ComponentVersion) error {
	if ref.Digest == nil {
		return fmt.Errorf("the signed descriptor records no digest for reference %q, so %s cannot be verified", ref.Name, referenced.Descriptor.ID())
	}
	if err := sameReading(referenced); err != nil {
		return fmt.Errorf("reference %q: %w", ref.Name, err)
	}
	got, err := DescriptorDigest(referenced.Raw, ref.Digest.NormalisationAlgorithm, ref.Digest.HashAlgorithm)
	if err != nil {
		return fmt.Errorf("reference %q: %w", ref.Name, err)
	}
	if !strings.EqualFold(got, ref.Digest.Value) {
		return fmt.Errorf("%s does not match the digest recorded by reference %q: it changed after the referencing version was signed", referenced.Descriptor.ID(), ref.Name)
	}
	return nil
}

// sameReading refuses a component version whose descriptor is not what
// its stored bytes parse to: the digest is computed over the stored bytes,
// and only what they parse to may be used.
func sameReading(cv *ocm.ComponentVersion) error {
	d, err := ocm.ParseDescriptor(cv.Raw)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(d, cv.Descriptor) {
		return fmt.Errorf("the descriptor of %s in use is not the one its repository stores", cv.Descriptor.ID())
	}
	return nil
}
