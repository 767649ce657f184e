// Package signtest signs component descriptors for tests, as `ocm sign
// componentversions` does: it records digests and appends a signature.
package signtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing"
)

// Options say how to sign.
type Options struct {
	Name          string
	Key           *rsa.PrivateKey
	Algorithm     string // signing.AlgorithmRSAPKCS1v15 (default) or AlgorithmRSAPSS
	Normalisation string // signing.JSONNormalisationV1 (default for v2) or v2/v3
	// Chain, when set, makes the signature a PEM with the signer's
	// certificate chain (leaf first), as OCM writes it for CA verification.
	Chain  [][]byte // DER certificates
	Issuer string
}

// Sign returns the descriptor (YAML or JSON, schema v2 or v3) with a
// signature appended, as YAML.
func Sign(raw []byte, o Options) ([]byte, error) {
	if o.Algorithm == "" {
		o.Algorithm = signing.AlgorithmRSAPKCS1v15
	}
	if o.Normalisation == "" {
		o.Normalisation = signing.JSONNormalisationV1
	}
	digest, err := signing.DescriptorDigest(raw, o.Normalisation, "SHA-256")
	if err != nil {
		return nil, err
	}
	sum, _ := hex.DecodeString(digest)
	var sig []byte
	switch o.Algorithm {
	case signing.AlgorithmRSAPSS:
		sig, err = rsa.SignPSS(rand.Reader, o.Key, crypto.SHA256, sum, nil)
	default:
		sig, err = rsa.SignPKCS1v15(rand.Reader, o.Key, crypto.SHA256, sum)
	}
	if err != nil {
		return nil, err
	}
	spec := map[string]any{"algorithm": o.Algorithm, "value": hex.EncodeToString(sig), "mediaType": "application/vnd.ocm.signature.rsa"}
	if len(o.Chain) > 0 {
		value := pem.EncodeToMemory(&pem.Block{Type: "SIGNATURE", Headers: map[string]string{"Signature Algorithm": o.Algorithm}, Bytes: sig})
		for _, c := range o.Chain {
			value = append(value, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c})...)
		}
		spec["value"], spec["mediaType"] = string(value), signing.MediaTypePEM
		if o.Issuer != "" {
			spec["issuer"] = o.Issuer
		}
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, err
	}
	sigs, _ := doc["signatures"].([]any)
	doc["signatures"] = append(sigs, map[string]any{
		"name":      o.Name,
		"digest":    map[string]any{"hashAlgorithm": "SHA-256", "normalisationAlgorithm": o.Normalisation, "value": digest},
		"signature": spec,
	})
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(out)
}

// PrependCopy puts a copy of the descriptor's last signature, claiming
// another normalisation, before its signatures: what whoever serves a
// descriptor can do, since signatures are not part of what is signed.
func PrependCopy(raw []byte, normalisation string) ([]byte, error) {
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, err
	}
	sigs, _ := doc["signatures"].([]any)
	if len(sigs) == 0 {
		return nil, fmt.Errorf("the descriptor has no signature to copy")
	}
	var fake map[string]any
	last, _ := json.Marshal(sigs[len(sigs)-1])
	if err := json.Unmarshal(last, &fake); err != nil {
		return nil, err
	}
	if d, ok := fake["digest"].(map[string]any); ok {
		d["normalisationAlgorithm"] = normalisation
	}
	doc["signatures"] = append([]any{fake}, sigs...)
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(out)
}

// PublicKeyPEM is the PKIX PEM of a key's public half.
func PublicKeyPEM(k *rsa.PrivateKey) string {
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		panic(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// Digest returns the hex SHA-256 of data, as resources record it.
func Digest(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// ReferenceDigest returns the digest spec a reference to a descriptor
// records.
func ReferenceDigest(raw []byte, normalisation string) (map[string]any, error) {
	d, err := signing.DescriptorDigest(raw, normalisation, "SHA-256")
	if err != nil {
		return nil, fmt.Errorf("reference digest: %w", err)
	}
	return map[string]any{"hashAlgorithm": "SHA-256", "normalisationAlgorithm": normalisation, "value": d}, nil
}

// CA issues signer certificates, for CA-mode verification
// (verification_signatures.<name>.ca_certificate).
type CA struct {
	Cert *x509.Certificate
	key  *rsa.PrivateKey
	der  []byte
}

// NewCA makes a self-signed CA with the given common name.
func NewCA(commonName string) (*CA, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: commonName}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, key: key, der: der}, nil
}

// PEM is the CA certificate as ca_certificate takes it.
func (ca *CA) PEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.der}))
}

// Issue returns the DER certificate of a signer key with the given
// subject and usages (zero values leave the extension out).
func (ca *CA) Issue(signer *rsa.PrivateKey, subject pkix.Name, usage x509.KeyUsage, ext ...x509.ExtKeyUsage) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: subject, KeyUsage: usage, ExtKeyUsage: ext,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	return x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &signer.PublicKey, ca.key)
}
