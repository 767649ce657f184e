package component

import (
	"fmt"
	"strings"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// What a verifying installation shows templates. A signature covers a
// descriptor's identities, digests and signing labels, not its accesses
// (a transfer rewrites them) nor its other labels: those a registry can
// change at will. So, under verification:
//
//   - the OCI accesses of a verified component are pinned to the digest
//     the signature covers (imageReference becomes repo@sha256:<signed>),
//     and one whose resource records no signed OCI artifact digest loses
//     its imageReference: no template can pull what no one signed;
//   - every label no checked signature covers (no signing: true, or a
//     component that is not verified) carries unsigned: true.

// Digest algorithms the pins understand; the signing package checks them.
const (
	ociArtifactDigest = "ociArtifactDigest/v1"
	genericBlobDigest = "genericBlobDigest/v1"
)

// UnsignedLabelKey marks, under verification, a label whose value no
// checked signature covers.
const UnsignedLabelKey = "unsigned"

// ociImageKeys are the access keys that name an OCI artifact, by access
// type.
var ociImageKeys = map[string]string{
	ocm.AccessOCIArtifact:          "imageReference",
	ocm.AccessOCIRegistry:          "imageReference",
	ocm.AccessOCIImage:             "imageReference",
	ocm.AccessRelativeOCIReference: "reference",
}

// signedSHA256 returns the hex value of a SHA-256 digest of the given
// normalisation, or "".
func signedSHA256(d *ocm.DigestSpec, normalisation string) string {
	if d == nil || d.NormalisationAlgorithm != normalisation {
		return ""
	}
	if !strings.EqualFold(d.HashAlgorithm, "SHA-256") && !strings.EqualFold(d.HashAlgorithm, "sha256") {
		return ""
	}
	v := strings.ToLower(d.Value)
	if len(v) != 64 || strings.Trim(v, "0123456789abcdef") != "" {
		return ""
	}
	return v
}

// pinReference replaces the tag or digest of an OCI reference by a
// digest: host/repo:tag and host/repo@sha256:x become host/repo@sha256:d.
func pinReference(ref, hexDigest string) string {
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		ref = ref[:i]
	}
	return ref + "@sha256:" + hexDigest
}

// pinAccess pins an OCI access of a resource in place to the resource's
// signed artifact digest, or drops its reference when there is none. A
// localBlob's globalAccess is the same artifact and is pinned alike.
func pinAccess(access map[string]any, d *ocm.DigestSpec) {
	if access == nil {
		return
	}
	if g, ok := access["globalAccess"].(map[string]any); ok {
		pinAccess(g, d)
	}
	key, ok := ociImageKeys[ocm.AccessType(access)]
	if !ok {
		return
	}
	ref, _ := access[key].(string)
	if signed := signedSHA256(d, ociArtifactDigest); signed != "" && ref != "" {
		access[key] = pinReference(ref, signed)
		return
	}
	delete(access, key)
}

// pinnedAccess is a copy of a verified resource's access, pinned, for
// fetching its content; nil when it cannot be pinned (the signature
// check then refuses the content, without fetching it).
func pinnedAccess(res ocm.Resource) map[string]any {
	access, _ := generic(res.Access).(map[string]any)
	if _, ok := ociImageKeys[ocm.AccessType(access)]; !ok {
		return access
	}
	if signedSHA256(res.Digest, ociArtifactDigest) == "" {
		return nil
	}
	pinAccess(access, res.Digest)
	return access
}

// markLabels marks the labels of a generic descriptor entry that no
// checked signature covers: all of them when the component is not
// verified.
func markLabels(entry map[string]any, verified bool) {
	list, _ := entry["labels"].([]any)
	for _, l := range list {
		m, ok := l.(map[string]any)
		if !ok {
			continue
		}
		if s, _ := m["signing"].(bool); !verified || !s {
			m[UnsignedLabelKey] = true
		}
	}
}

// verifiedView applies the rules above to a generic v2 descriptor (doc,
// as Descriptor.Generic builds it, in the order of d's lists). d is nil
// for a component of a constructor file, which no signature covers.
func verifiedView(doc map[string]any, d *ocm.Descriptor, verified bool) {
	comp, _ := doc["component"].(map[string]any)
	if comp == nil {
		return
	}
	markLabels(comp, verified)
	lists := map[string][]ocm.Resource{"resources": nil, "sources": nil}
	if d != nil {
		lists["resources"], lists["sources"] = d.Component.Resources, d.Component.Sources
	}
	for key, list := range lists {
		entries, _ := comp[key].([]any)
		for i, e := range entries {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			markLabels(m, verified)
			access, _ := m["access"].(map[string]any)
			var digest *ocm.DigestSpec
			if verified && i < len(list) {
				digest = list[i].Digest
			}
			pinAccess(access, digest)
		}
	}
	refs, _ := comp["componentReferences"].([]any)
	for _, e := range refs {
		if m, ok := e.(map[string]any); ok {
			markLabels(m, verified)
		}
	}
}

// unverifiedError is the refusal to read content of a component that
// no checked signature vouches for.
func (c *Component) unverifiedError(what string) error {
	return &VerificationError{Err: fmt.Errorf("%s of component %s (%s): the installation verifies signatures, and no checked signature "+
		"vouches for this component (it comes from a constructor file, or is reached only through one); take the content from "+
		"the verified component or from components its signed references reach", what, c.ID(), c.origin())}
}

// Verifying reports whether the Set verifies signatures.
func (s *Set) Verifying() bool { return s.verifier != nil }

// SignedArtifact names the resource of a verified component whose signed
// OCI artifact digest is digest ("sha256:<hex>").
func (s *Set) SignedArtifact(digest string) (string, bool) {
	return s.signed(ociArtifactDigest, digest)
}

// SignedBlob names the resource of a verified component whose signed blob
// digest (genericBlobDigest/v1) is digest ("sha256:<hex>").
func (s *Set) SignedBlob(digest string) (string, bool) {
	return s.signed(genericBlobDigest, digest)
}

func (s *Set) signed(normalisation, digest string) (string, bool) {
	s.signedOnce.Do(func() {
		s.signedDigests = map[string]string{}
		for _, c := range s.components {
			if !c.verified || c.cv == nil {
				continue
			}
			for _, r := range c.cv.Descriptor.Component.Resources {
				if r.Digest == nil {
					continue
				}
				if v := signedSHA256(r.Digest, r.Digest.NormalisationAlgorithm); v != "" {
					key := r.Digest.NormalisationAlgorithm + "@sha256:" + v
					if _, ok := s.signedDigests[key]; !ok {
						s.signedDigests[key] = fmt.Sprintf("resource %q of component %s", r.Name, c.ID())
					}
				}
			}
		}
	})
	what, ok := s.signedDigests[normalisation+"@"+strings.ToLower(digest)]
	return what, ok
}
