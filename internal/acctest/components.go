package acctest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/blueprint/component"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ctf/ctftest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
)

// PublishedVersion is a component version as `ocm add componentversions`
// would store it: a v2 descriptor whose input resources became local
// blobs, and those blobs.
type PublishedVersion struct {
	Name, Version string
	Descriptor    []byte // YAML
	Blobs         []PublishedBlob
}

// PublishedBlob is one local blob of a PublishedVersion.
type PublishedBlob struct {
	Digest    string // sha256:<hex>
	MediaType string
	Data      []byte
}

// Publish turns the components of constructor files into published
// versions. With archive, local references name blob files
// (sha256.<hex>, as in a component archive); otherwise they are digests
// (as in an OCI registry or a CTF).
func Publish(t testing.TB, archive bool, constructors ...string) []PublishedVersion {
	t.Helper()
	set, err := component.LoadFiles(constructors...)
	if err != nil {
		t.Fatalf("load constructors: %v", err)
	}
	var out []PublishedVersion
	for _, c := range set.All() {
		v := PublishedVersion{Name: c.Spec.Name, Version: c.Spec.Version}
		for _, r := range c.Resources() {
			if r.Blob != nil {
				d := "sha256:" + r.Blob.Digest
				if !slices.ContainsFunc(v.Blobs, func(b PublishedBlob) bool { return b.Digest == d }) {
					v.Blobs = append(v.Blobs, PublishedBlob{Digest: d, MediaType: r.Blob.MediaType, Data: r.Blob.Data})
				}
			}
		}
		cd := c.Descriptor()
		comp, _ := cd["component"].(map[string]any)
		for _, list := range []string{"resources", "sources"} {
			entries, _ := comp[list].([]any)
			for _, e := range entries {
				m, _ := e.(map[string]any)
				acc, _ := m["access"].(map[string]any)
				if ocm.AccessType(acc) != ocm.AccessLocalBlob {
					continue
				}
				ref, _ := acc["localReference"].(string)
				if !archive {
					acc["localReference"] = strings.Replace(ref, "sha256.", "sha256:", 1)
				}
			}
		}
		data, err := json.Marshal(cd)
		if err != nil {
			t.Fatal(err)
		}
		if v.Descriptor, err = yaml.JSONToYAML(data); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// Push stores published versions in a test registry under ocm/.
func Push(t testing.TB, reg *ocitest.Registry, layout ocitest.Layout, versions []PublishedVersion) {
	t.Helper()
	for _, v := range versions {
		var blobs []ocitest.Blob
		for _, b := range v.Blobs {
			blobs = append(blobs, ocitest.Blob{MediaType: b.MediaType, Data: b.Data})
		}
		reg.PushComponent(t, "ocm", v.Name, v.Version, v.Descriptor, layout, blobs...)
	}
}

// CTFVersions converts published versions for ctftest's writers.
func CTFVersions(versions []PublishedVersion) []ctftest.Version {
	out := make([]ctftest.Version, 0, len(versions))
	for _, v := range versions {
		cv := ctftest.Version{Name: v.Name, Version: v.Version, Descriptor: v.Descriptor}
		for _, b := range v.Blobs {
			cv.Blobs = append(cv.Blobs, ctftest.Blob{MediaType: b.MediaType, Data: b.Data})
		}
		out = append(out, cv)
	}
	return out
}
