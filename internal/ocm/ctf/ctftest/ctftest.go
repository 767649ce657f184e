// Package ctftest writes common transport formats and component archives
// for tests, in the layouts `ocm add componentversions --create --file`
// and `ocm download component` write.
package ctftest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
)

// Blob is a local blob of a component version.
type Blob struct {
	MediaType string
	Data      []byte
}

// Version is a component version to write: its descriptor (local blob
// references are digests, sha256:<hex>) and its local blobs.
type Version struct {
	Name, Version string
	Descriptor    []byte
	Blobs         []Blob
}

func digest(data []byte) string {
	s := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(s[:])
}

// Files returns the files of a CTF holding the versions, by path.
func Files(t testing.TB, versions ...Version) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	put := func(data []byte) string {
		d := digest(data)
		files["blobs/"+strings.Replace(d, ":", ".", 1)] = data
		return d
	}
	type desc struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
		Size      int    `json:"size"`
	}
	var artifacts []map[string]any
	for _, v := range versions {
		layer := ocitest.DescriptorTar(t, v.Descriptor)
		layerDesc := desc{"application/vnd.ocm.software.component-descriptor.v2+yaml+tar", put(layer), len(layer)}
		cfg, _ := json.Marshal(map[string]any{"componentDescriptorLayer": layerDesc})
		layers := []desc{layerDesc}
		for _, b := range v.Blobs {
			layers = append(layers, desc{b.MediaType, put(b.Data), len(b.Data)})
		}
		m, _ := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
			"config": desc{"application/vnd.ocm.software.component.config.v1+json", put(cfg), len(cfg)}, "layers": layers})
		artifacts = append(artifacts, map[string]any{"repository": "component-descriptors/" + v.Name,
			"tag": strings.ReplaceAll(v.Version, "+", ".build-"), "digest": put(m), "mediaType": "application/vnd.oci.image.manifest.v1+json"})
	}
	idx, _ := json.Marshal(map[string]any{"schemaVersion": 1, "artifacts": artifacts})
	files["artifact-index.json"] = idx
	return files
}

// ComponentArchiveFiles returns the files of a component archive of one
// version: blobs are named sha256.<hex>, and so are the local references.
func ComponentArchiveFiles(t testing.TB, v Version) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	desc := string(v.Descriptor)
	for _, b := range v.Blobs {
		d := digest(b.Data)
		name := strings.Replace(d, ":", ".", 1)
		files["blobs/"+name] = b.Data
		desc = strings.ReplaceAll(desc, d, name)
	}
	files["component-descriptor.yaml"] = []byte(desc)
	return files
}

// WriteDir writes files into dir.
func WriteDir(t testing.TB, dir string, files map[string][]byte) string {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// WriteArchive writes files as a tar archive at p, gzipped if p ends in
// .tgz or .gz.
func WriteArchive(t testing.TB, p string, files map[string][]byte) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), ModTime: time.Unix(0, 0)}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(files[n])
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if strings.HasSuffix(p, ".tgz") || strings.HasSuffix(p, ".gz") {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		_, _ = zw.Write(data)
		_ = zw.Close()
		data = z.Bytes()
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
