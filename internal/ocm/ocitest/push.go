package ocitest

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"testing"
	"time"
)

// Layout is how a component version is stored.
type Layout int

// Layouts.
const (
	// OCM is OCM's layout: config application/vnd.ocm.software.component.config.v1+json
	// and the descriptor as a tar layer.
	OCM Layout = iota
	// Legacy is the Gardener component-cli's: the cnudie config and
	// descriptor tar media types.
	Legacy
	// LegacyJSON is the component-cli's JSON descriptor layer.
	LegacyJSON
	// CnudieTar is the oldest: an application/sap-cnudie+tar layer.
	CnudieTar
)

// Blob is a blob to push.
type Blob struct {
	MediaType string
	Data      []byte
}

// Digest of a blob.
func (b Blob) Digest() string { return digest(b.Data) }

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int    `json:"size"`
}

func (b Blob) descriptor() descriptor {
	return descriptor{MediaType: b.MediaType, Digest: b.Digest(), Size: len(b.Data)}
}

// PushComponent stores a component version under
// <prefix>/component-descriptors/<name>:<version> (a version's '+' becomes
// ".build-", as OCM tags it) with the descriptor and the local blobs as
// layers, and returns the manifest digest. Pushes go straight to the
// registry's handler, past authentication.
func (r *Registry) PushComponent(t testing.TB, prefix, name, version string, desc []byte, layout Layout, blobs ...Blob) string {
	t.Helper()
	repo := path.Join(prefix, "component-descriptors", name)
	var layer Blob
	var configType string
	switch layout {
	case OCM:
		layer, configType = Blob{"application/vnd.ocm.software.component-descriptor.v2+yaml+tar", DescriptorTar(t, desc)}, "application/vnd.ocm.software.component.config.v1+json"
	case Legacy:
		layer, configType = Blob{"application/vnd.gardener.cloud.cnudie.component-descriptor.v2+yaml+tar", DescriptorTar(t, desc)}, "application/vnd.gardener.cloud.cnudie.component.config.v1+json"
	case LegacyJSON:
		js, err := yamlToJSON(desc)
		if err != nil {
			t.Fatal(err)
		}
		layer, configType = Blob{"application/vnd.gardener.cloud.cnudie.component-descriptor.v2+json", js}, "application/vnd.gardener.cloud.cnudie.component.config.v1+json"
	case CnudieTar:
		layer, configType = Blob{"application/sap-cnudie+tar", DescriptorTar(t, desc)}, "application/vnd.gardener.cloud.cnudie.component.config.v1+json"
	}
	cfg, _ := json.Marshal(map[string]any{"componentDescriptorLayer": layer.descriptor()})
	return r.PushArtifact(t, repo+":"+strings.ReplaceAll(version, "+", ".build-"), Blob{configType, cfg}, append([]Blob{layer}, blobs...)...)
}

// PushArtifact stores an OCI image manifest with a config and layers under
// repo:tag and returns its digest.
func (r *Registry) PushArtifact(t testing.TB, repoTag string, config Blob, layers ...Blob) string {
	t.Helper()
	repo, tag, ok := strings.Cut(repoTag, ":")
	if !ok {
		t.Fatalf("PushArtifact: %q has no tag", repoTag)
	}
	m := map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": config.descriptor()}
	ls := []descriptor{}
	for _, b := range append([]Blob{config}, layers...) {
		r.putBlob(t, repo, b.Data)
	}
	for _, b := range layers {
		ls = append(ls, b.descriptor())
	}
	m["layers"] = ls
	data, _ := json.Marshal(m)
	r.do(t, http.MethodPut, "/v2/"+repo+"/manifests/"+tag, "application/vnd.oci.image.manifest.v1+json", data, http.StatusCreated)
	return digest(data)
}

// Delete removes a tag, as a registry that lost a version would.
func (r *Registry) Delete(t testing.TB, repoTag string) {
	t.Helper()
	repo, tag, _ := strings.Cut(repoTag, ":")
	r.do(t, http.MethodDelete, "/v2/"+repo+"/manifests/"+tag, "", nil, http.StatusAccepted)
}

func (r *Registry) putBlob(t testing.TB, repo string, data []byte) {
	t.Helper()
	r.do(t, http.MethodPost, "/v2/"+repo+"/blobs/uploads/?digest="+digest(data), "application/octet-stream", data, http.StatusCreated)
}

func (r *Registry) do(t testing.TB, method, p, contentType string, body []byte, want int) {
	t.Helper()
	req := httptest.NewRequest(method, p, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	r.handler.ServeHTTP(rec, req)
	if rec.Code != want {
		t.Fatalf("%s %s: %d %s", method, p, rec.Code, rec.Body.String())
	}
}

// DescriptorTar is a descriptor layer as OCM writes it: a tar holding
// component-descriptor.yaml.
func DescriptorTar(t testing.TB, desc []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "component-descriptor.yaml", Mode: 0o644, Size: int64(len(desc)), ModTime: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	_, _ = tw.Write(desc)
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func yamlToJSON(y []byte) ([]byte, error) {
	var v any
	if err := yamlUnmarshal(y, &v); err != nil {
		return nil, fmt.Errorf("descriptor: %w", err)
	}
	return json.Marshal(v)
}
