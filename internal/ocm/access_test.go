package ocm

import (
	"errors"
	"strings"
	"testing"
)

// Access types are OCM's exact names (a version suffix aside): another
// spelling would be read here but not pinned by the verified view.
func TestCheckAccessTypeIsExact(t *testing.T) {
	for _, typ := range []string{"ociArtifact", "ociArtifact/v1", "ociRegistry", "OCIImage", "localBlob", "localBlob/v1",
		"localOciBlob", "localFilesystemBlob", "helm", "relativeOciReference"} {
		if err := CheckAccessType(map[string]any{"type": typ}); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
	for _, typ := range []string{"ociartifact", "OciArtifact", "ociArtifact ", "OCIRegistry", "LocalBlob", "Helm", "s3", ""} {
		if err := CheckAccessType(map[string]any{"type": typ}); !errors.Is(err, ErrUnsupportedAccess) {
			t.Errorf("%q: %v", typ, err)
		}
	}
}

// Keys that differ only in case (or Unicode folding: ſ folds to s) are
// refused: encoding/json would let either win.
func TestAccessKeysThatFoldAlikeAreRefused(t *testing.T) {
	var a struct {
		ImageReference string `json:"imageReference"`
	}
	for _, dup := range []string{"imagereference", "IMAGEREFERENCE"} {
		access := map[string]any{"type": AccessOCIArtifact, "imageReference": "registry.test/a:1", dup: "evil.test/a:1"}
		if err := DecodeAccess(access, &a); err == nil || !strings.Contains(err.Error(), "differ only in case") {
			t.Errorf("%q: %v (decoded %q)", dup, err, a.ImageReference)
		}
		if err := CheckAccessType(access); err == nil {
			t.Errorf("%q: CheckAccessType accepts it", dup)
		}
	}
	if err := CheckAccessKeys(map[string]any{"mask": "a", "ma\u017fk": "b"}); err == nil {
		t.Error("keys that fold alike (long s) are accepted")
	}
	if err := DecodeAccess(map[string]any{"type": AccessOCIArtifact, "imageReference": "registry.test/a:1"}, &a); err != nil || a.ImageReference != "registry.test/a:1" {
		t.Errorf("plain access: %v %q", err, a.ImageReference)
	}
}
