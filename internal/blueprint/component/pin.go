package component

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/signing"
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
// type, spelled exactly: the registry client reads no other spelling.
var ociImageKeys = map[string]string{
	ocm.AccessOCIArtifact:          "imageReference",
	ocm.AccessOCIRegistry:          "imageReference",
	ocm.AccessOCIImage:             "imageReference",
	ocm.AccessRelativeOCIReference: "reference",
}

// localBlobKeys are the keys of a localBlob access a template may see:
// they address content the signature's digest checks, so a registry that
// changes them can only make the read fail. globalAccess is rebuilt by
// the same rules as any access.
var localBlobKeys = []string{"localReference", "mediaType", "referenceName"}

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
// An oci:// prefix stays (helm's chart.ref wants it); http:// goes, since
// a verifying installation does not ask for plain HTTP on a registry's
// word. ok is false when the result is not one OCI reference naming that
// digest: the reference is not signed, and text that only looks like a
// reference (a line break, a second key) would render as something else.
func pinReference(ref, hexDigest string) (string, bool) {
	prefix := ""
	if strings.HasPrefix(ref, "oci://") {
		prefix, ref = "oci://", strings.TrimPrefix(ref, "oci://")
	} else {
		ref = strings.TrimPrefix(ref, "http://")
	}
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		ref = ref[:i]
	}
	pinned := ref + "@sha256:" + hexDigest
	// Weak validation: short Docker Hub names (nginx, docker.io/nginx) are
	// references OCM descriptors carry; the character rules are the same.
	d, err := name.NewDigest(pinned)
	if err != nil || d.DigestStr() != "sha256:"+hexDigest || d.String() != pinned {
		return "", false
	}
	return prefix + pinned, true
}

// verifiedAccess is what a template of a verifying installation sees of
// an access: built from what is known, never copied. An OCI access of a
// known type (exact spelling) keeps its reference pinned to the signed
// artifact digest d, or loses it; a localBlob keeps the keys that address
// its signed content; every other access, whatever it names, shows only
// its type: no template can render a location no one signed.
func verifiedAccess(access map[string]any, d *ocm.DigestSpec) map[string]any {
	if access == nil {
		return nil
	}
	out := map[string]any{}
	if t, ok := access["type"].(string); ok {
		out["type"] = t
	}
	typ := ocm.AccessType(access)
	if key, ok := ociImageKeys[typ]; ok {
		ref, _ := access[key].(string)
		if signed := signedSHA256(d, ociArtifactDigest); signed != "" && ref != "" {
			if pinned, ok := pinReference(ref, signed); ok {
				out[key] = pinned
			}
		}
		return out
	}
	if typ == ocm.AccessLocalBlob {
		for _, k := range localBlobKeys {
			if v, ok := access[k].(string); ok {
				out[k] = v
			}
		}
		if g, ok := access["globalAccess"].(map[string]any); ok {
			out["globalAccess"] = verifiedAccess(g, d)
		}
	}
	return out
}

// pinnedAccess is the access a verified resource is fetched by: an OCI
// access rebuilt with its reference pinned, any other as stored (its
// reader refuses what a verified fetch must not do). An OCI access with
// no signed artifact digest, or whose reference cannot be pinned, is not
// fetched at all: the signature check would refuse the content, but only
// after a connection to wherever the registry pointed.
func pinnedAccess(res ocm.Resource) (map[string]any, error) {
	access, _ := generic(res.Access).(map[string]any)
	if err := ocm.CheckAccessKeys(access); err != nil {
		return nil, err
	}
	key, ok := ociImageKeys[ocm.AccessType(access)]
	if !ok {
		return access, nil
	}
	if signedSHA256(res.Digest, ociArtifactDigest) == "" {
		return nil, fmt.Errorf("its OCI access cannot be pinned: the signed descriptor records no OCI artifact digest for it")
	}
	pinned := verifiedAccess(access, res.Digest)
	if pinned[key] == nil {
		return nil, fmt.Errorf("its OCI access cannot be pinned: %s is not an OCI reference", key)
	}
	return pinned, nil
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
// for a component of a constructor file, which no signature covers;
// sourcesSigned says the checked normalisation covers the sources.
func verifiedView(doc map[string]any, d *ocm.Descriptor, verified, sourcesSigned bool) {
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
			markLabels(m, verified && (key == "resources" || sourcesSigned))
			var digest *ocm.DigestSpec
			if verified && i < len(list) {
				digest = list[i].Digest
			}
			if access, ok := m["access"].(map[string]any); ok {
				m["access"] = verifiedAccess(access, digest)
			}
			if signing.NoneAccess(m["access"]) {
				// The signed form leaves this digest out: it is the
				// registry's to choose.
				delete(m, "digest")
			}
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
				// A none access's digest is not part of the signed form.
				if r.Digest == nil || signing.NoneAccess(r.Access) {
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
