// Package helmtest holds test servers for helm charts: a chart repository
// (index.yaml and archives over HTTP) and an in-process OCI registry, both on
// 127.0.0.1, plus the small charts the tests install. Tests of the helm
// deployer and acceptance tests of the provider share them.
package helmtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	helmregistry "helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

//go:embed all:testdata
var charts embed.FS

// Charts the package holds: Demo renders a ConfigMap and a Secret from
// values (message, nested.color); Broken fails to render; Workload
// renders a ConfigMap <release>-config and a Secret <release>-secret from
// message, a ConfigMap <release>-extra when extra is true, a Deployment
// <release> when deployment is true and a ClusterRole
// <namespace>-<release>-reader when clusterRole is true.
const (
	Demo     = "demo"
	Broken   = "broken"
	Workload = "workload"
)

// Archive returns a chart as a .tgz, as `helm package` lays it out. With a
// non-empty version the Chart.yaml version is replaced, so one chart can
// be served in several versions.
func Archive(tb testing.TB, name, version string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	root := path.Join("testdata", name)
	err := fs.WalkDir(charts, root, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		data, err := charts.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, root+"/")
		if rel == "Chart.yaml" && version != "" {
			data = withVersion(tb, data, version)
		}
		if err := tw.WriteHeader(&tar.Header{Name: name + "/" + rel, Mode: 0o644, Size: int64(len(data))}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = gz.Close()
	}
	if err != nil {
		tb.Fatalf("packaging chart %s: %v", name, err)
	}
	return buf.Bytes()
}

func withVersion(tb testing.TB, chartYAML []byte, version string) []byte {
	var m map[string]any
	if err := yaml.Unmarshal(chartYAML, &m); err != nil {
		tb.Fatal(err)
	}
	m["version"] = version
	out, err := yaml.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// ArchiveBase64 is Archive as chart.archive.raw wants it.
func ArchiveBase64(tb testing.TB, name, version string) string {
	return base64.StdEncoding.EncodeToString(Archive(tb, name, version))
}

// Dir writes a chart as a directory under a fresh temporary directory and
// returns its path.
func Dir(tb testing.TB, name string) string {
	tb.Helper()
	dst := filepath.Join(tb.TempDir(), name)
	root := path.Join("testdata", name)
	err := fs.WalkDir(charts, root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(strings.TrimPrefix(p, root)))
		if de.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := charts.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o600)
	})
	if err != nil {
		tb.Fatalf("writing chart %s: %v", name, err)
	}
	return dst
}

// Repo is a helm chart repository on 127.0.0.1.
type Repo struct {
	URL    string
	server *httptest.Server

	mu       sync.Mutex
	index    *repo.IndexFile
	archives map[string][]byte
	requests []string
}

// NewRepo starts an empty chart repository, stopped when the test ends.
// Archives are served under charts/ and listed in index.yaml with URLs
// relative to the repository, as `helm repo index` writes them.
func NewRepo(tb testing.TB) *Repo {
	tb.Helper()
	r := &Repo{index: repo.NewIndexFile(), archives: map[string][]byte{}}
	r.server = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.server.URL
	tb.Cleanup(r.server.Close)
	return r
}

// Add publishes a chart archive.
func (r *Repo) Add(tb testing.TB, archive []byte) {
	tb.Helper()
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		tb.Fatal(err)
	}
	sum := sha256.Sum256(archive)
	file := fmt.Sprintf("charts/%s-%s.tgz", ch.Name(), ch.Metadata.Version)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.index.MustAdd(ch.Metadata, file, "", hex.EncodeToString(sum[:])); err != nil {
		tb.Fatal(err)
	}
	r.index.SortEntries()
	r.archives["/"+file] = archive
}

// Requests lists the paths requested so far.
func (r *Repo) Requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.requests...)
}

func (r *Repo) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, req.URL.Path)
	if req.URL.Path == "/index.yaml" {
		data, err := yaml.Marshal(r.index)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(data)
		return
	}
	if data, ok := r.archives[req.URL.Path]; ok {
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(data)
		return
	}
	http.NotFound(w, req)
}

// Registry is an OCI registry on 127.0.0.1, in process.
type Registry struct {
	// Host is host:port, as OCI references begin.
	Host   string
	server *httptest.Server
}

// NewRegistry starts an empty OCI registry, stopped when the test ends.
func NewRegistry(tb testing.TB) *Registry {
	tb.Helper()
	s := httptest.NewServer(registry.New(registry.Logger(discardLogger())))
	tb.Cleanup(s.Close)
	return &Registry{Host: strings.TrimPrefix(s.URL, "http://"), server: s}
}

// Push pushes a chart archive with helm's registry client, as `helm push`
// does, and returns its reference without scheme (host/charts/name:version).
func (r *Registry) Push(tb testing.TB, archive []byte) string {
	tb.Helper()
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		tb.Fatal(err)
	}
	client, err := helmregistry.NewClient(helmregistry.ClientOptPlainHTTP(),
		helmregistry.ClientOptCredentialsFile(filepath.Join(tb.TempDir(), "config.json")))
	if err != nil {
		tb.Fatal(err)
	}
	ref := fmt.Sprintf("%s/charts/%s:%s", r.Host, ch.Name(), ch.Metadata.Version)
	if _, err := client.Push(archive, ref); err != nil {
		tb.Fatalf("pushing %s: %v", ref, err)
	}
	return ref
}

// Load is loader.LoadArchive for tests.
func Load(tb testing.TB, archive []byte) *chart.Chart {
	tb.Helper()
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		tb.Fatal(err)
	}
	return ch
}

// discardLogger keeps the registry's request log out of test output.
func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }

// History lists the revisions of release name in ns from the Secrets helm
// keeps them in, as "<revision>:<status>", in the order the API server
// lists them.
func History(tb testing.TB, cs kubernetes.Interface, ns, name string) []string {
	tb.Helper()
	l, err := cs.CoreV1().Secrets(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm,name=" + name})
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, s := range l.Items {
		out = append(out, s.Labels["version"]+":"+s.Labels["status"])
	}
	return out
}

// DemoUIDs are the UIDs of the ConfigMap and the Secret the Demo chart
// renders for release name in ns.
func DemoUIDs(tb testing.TB, cs kubernetes.Interface, ns, name string) [2]string {
	tb.Helper()
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name+"-config", metav1.GetOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	s, err := cs.CoreV1().Secrets(ns).Get(context.Background(), name+"-secret", metav1.GetOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return [2]string{string(cm.UID), string(s.UID)}
}
