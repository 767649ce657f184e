package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm/ocitest"
)

// fakeResolver serves one blob per resource name; a key stands for the
// resource "keyed".
type fakeResolver struct {
	blobs map[string][]byte
	got   []deployer.ResourceRef
}

func (f *fakeResolver) Resource(_ context.Context, ref deployer.ResourceRef) ([]byte, string, error) {
	f.got = append(f.got, ref)
	name := ref.Name
	if ref.Key != "" {
		name = "keyed"
	}
	b, ok := f.blobs[name]
	if !ok {
		return nil, "", fmt.Errorf("resource %q not found", name)
	}
	return b, "application/octet-stream", nil
}

// dirTar is what a component constructor's dir input makes of a chart
// directory: its files at the top level of a tar, gzipped or not.
func dirTar(t *testing.T, dir string, compress bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.Writer = &buf
	var gz *gzip.Writer
	if compress {
		gz = gzip.NewWriter(&buf)
		w = gz
	}
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil && gz != nil {
		err = gz.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestLoadChartSources(t *testing.T) {
	archive := helmtest.Archive(t, helmtest.Demo, "")
	repo := helmtest.NewRepo(t)
	repo.Add(t, helmtest.Archive(t, helmtest.Demo, "0.1.0"))
	repo.Add(t, helmtest.Archive(t, helmtest.Demo, "0.2.0"))
	reg := helmtest.NewRegistry(t)
	ref := reg.Push(t, helmtest.Archive(t, helmtest.Demo, "0.3.0"))

	dir := helmtest.Dir(t, helmtest.Demo)
	tgz := filepath.Join(t.TempDir(), "demo.tgz")
	if err := os.WriteFile(tgz, archive, 0o600); err != nil {
		t.Fatal(err)
	}
	res := &fakeResolver{blobs: map[string][]byte{
		"keyed": helmtest.Archive(t, helmtest.Demo, "0.4.0"),
		"tar":   dirTar(t, dir, false),
		"tgz":   dirTar(t, dir, true),
	}}
	d := New(Options{WorkingDir: filepath.Dir(dir)})

	cases := []struct {
		name    string
		chart   Chart
		version string
	}{
		{"raw", Chart{Archive: &Archive{Raw: base64.StdEncoding.EncodeToString(archive)}}, "0.1.0"},
		{"remote http", Chart{Archive: &Archive{Remote: &RemoteArchive{URL: repo.URL + "/charts/demo-0.2.0.tgz"}}}, "0.2.0"},
		{"directory path", Chart{Archive: &Archive{Remote: &RemoteArchive{URL: dir}}}, "0.1.0"},
		{"relative directory", Chart{Archive: &Archive{Remote: &RemoteArchive{URL: "demo"}}}, "0.1.0"},
		{"file url", Chart{Archive: &Archive{Remote: &RemoteArchive{URL: "file://" + tgz}}}, "0.1.0"},
		{"repo", Chart{HelmChartRepo: &HelmChartRepo{URL: repo.URL, Name: "demo", Version: "0.2.0"}}, "0.2.0"},
		{"repo trailing slash", Chart{HelmChartRepo: &HelmChartRepo{URL: repo.URL + "/", Name: "demo", Version: "0.1.0"}}, "0.1.0"},
		{"oci", Chart{Ref: ref}, "0.3.0"},
		{"oci scheme", Chart{Ref: "oci://" + ref}, "0.3.0"},
		{"resourceRef", Chart{ResourceRef: "a2V5"}, "0.4.0"},
		{"fromResource dir tar", Chart{FromResource: &ChartResource{ResourceName: "tar"}}, "0.1.0"},
		{"fromResource dir tgz", Chart{FromResource: &ChartResource{ResourceName: "tgz",
			Ref: &ComponentRef{ComponentName: "example.com/c", Version: "1.0.0"}}}, "0.1.0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch, err := d.loadChart(t.Context(), &c.chart, res)
			if err != nil {
				t.Fatal(err)
			}
			if ch.Name() != "demo" || ch.Metadata.Version != c.version || len(ch.Templates) == 0 {
				t.Fatalf("got %s %s with %d templates", ch.Name(), ch.Metadata.Version, len(ch.Templates))
			}
		})
	}
	want := []deployer.ResourceRef{{Key: "a2V5"}, {Name: "tar"}, {Name: "tgz", ComponentName: "example.com/c", Version: "1.0.0"}}
	if !reflect.DeepEqual(res.got, want) {
		t.Fatalf("resolver got %+v, want %+v", res.got, want)
	}
}

func TestLoadChartErrors(t *testing.T) {
	repo := helmtest.NewRepo(t)
	repo.Add(t, helmtest.Archive(t, helmtest.Demo, "0.1.0"))
	reg := helmtest.NewRegistry(t)
	d := New(Options{})
	cases := []struct {
		name      string
		chart     Chart
		want      string
		transient bool
		// unreachable: the host does not resolve or refuses connections,
		// which the engine retries for its grace period only.
		unreachable bool
	}{
		{"not base64", Chart{Archive: &Archive{Raw: "!!"}}, "not base64", false, false},
		{"not an archive", Chart{Archive: &Archive{Raw: base64.StdEncoding.EncodeToString([]byte("hello"))}}, "unable to load chart", false, false},
		{"http 404", Chart{Archive: &Archive{Remote: &RemoteArchive{URL: repo.URL + "/nope.tgz"}}}, "has no " + repo.URL + "/nope.tgz", false, false},
		{"missing path", Chart{Archive: &Archive{Remote: &RemoteArchive{URL: "/does/not/exist"}}}, "no such file", false, false},
		{"bad scheme", Chart{Archive: &Archive{Remote: &RemoteArchive{URL: "ftp://x/y.tgz"}}}, "unsupported scheme", false, false},
		{"repo unknown version", Chart{HelmChartRepo: &HelmChartRepo{URL: repo.URL, Name: "demo", Version: "9.9.9"}}, `no version of chart "demo" matches "9.9.9"`, false, false},
		{"repo unknown chart", Chart{HelmChartRepo: &HelmChartRepo{URL: repo.URL, Name: "other", Version: "0.1.0"}}, `chart "other"`, false, false},
		{"repo unreachable", Chart{HelmChartRepo: &HelmChartRepo{URL: "http://127.0.0.1:1", Name: "demo", Version: "0.1.0"}}, "connection refused", true, true},
		{"host does not resolve", Chart{Archive: &Archive{Remote: &RemoteArchive{URL: "https://charts.invalid/demo-0.1.0.tgz"}}},
			"unable to fetch chart.archive.remote.url https://charts.invalid/demo-0.1.0.tgz: registry charts.invalid cannot be reached", true, true},
		{"oci missing", Chart{Ref: reg.Host + "/charts/none:1.0.0"}, "unable to pull chart", false, false},
		{"component without resolver", Chart{ResourceRef: "a2V5"}, "no component", false, false},
		{"unknown resource", Chart{FromResource: &ChartResource{ResourceName: "nope"}}, `resource "nope" not found`, false, false},
	}
	res := &fakeResolver{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r deployer.ResourceResolver
			if c.chart.FromResource != nil {
				r = res
			}
			_, err := d.loadChart(t.Context(), &c.chart, r)
			var ce *core.Error
			if !errors.As(err, &ce) {
				t.Fatalf("want *core.Error, got %v", err)
			}
			if !strings.Contains(ce.Message, c.want) || ce.Transient != c.transient || ce.Unreachable != c.unreachable {
				t.Fatalf("got %q transient=%v unreachable=%v, want %q transient=%v unreachable=%v",
					ce.Message, ce.Transient, ce.Unreachable, c.want, c.transient, c.unreachable)
			}
		})
	}
}

func TestRenderErrorNamesTemplateAndLine(t *testing.T) {
	ch := helmtest.Load(t, helmtest.Archive(t, helmtest.Broken, ""))
	c := &Config{Name: "r", Namespace: "ns"}
	rv, err := renderValues(c, ch, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = render(ch, rv, nil)
	var ce *core.Error
	if !errors.As(err, &ce) || ce.Transient || !reflect.DeepEqual(ce.Codes, []string{core.CodeConfigurationProblem}) {
		t.Fatalf("want a terminal configuration problem, got %#v", err)
	}
	if !strings.Contains(ce.Message, "broken/templates/configmap.yaml:6") {
		t.Fatalf("message does not name template and line: %s", ce.Message)
	}
	// The same error from helm's install is classified the same way.
	he := helmError("Install", "unable to install helm chart release", errors.New(ce.Message))
	if he.Transient || !strings.Contains(he.Message, "configmap.yaml:6") {
		t.Fatalf("install error: %+v", he)
	}
	if he := helmError("Install", "x", errors.New("connection refused")); !he.Transient {
		t.Fatalf("a cluster error must be transient: %+v", he)
	}
}

func TestRenderAndValues(t *testing.T) {
	ch := helmtest.Load(t, helmtest.Archive(t, helmtest.Demo, ""))
	c := &Config{Name: "rel", Namespace: "ns", Values: json.RawMessage(`{"message":"hi","nested":{"extra":1}}`)}
	vals, err := userValues(c)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := renderValues(c, ch, vals)
	if err != nil {
		t.Fatal(err)
	}
	files, err := render(ch, rv, nil)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := manifestObjects(ch, files)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetKind()+"/"+o.GetName())
	}
	if want := []string{"ConfigMap/rel-config", "Secret/rel-secret"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("objects %v, want %v", names, want)
	}
	data, _, _ := unstructured.NestedString(objs[0].Object, "data", "color")
	msg, _, _ := unstructured.NestedString(objs[0].Object, "data", "message")
	if data != "blue" || msg != "hi" {
		t.Fatalf("values not merged over chart defaults: color=%q message=%q", data, msg)
	}

	exports := []kube.Export{
		{Key: "message", JSONPath: ".Values.message"},
		{Key: "deep.color", JSONPath: "Values.nested.color"},
		{Key: "deep.extra", JSONPath: ".Values.nested.extra"},
		{Key: "nested", JSONPath: ".Values.nested"},
		{Key: "release", JSONPath: ".Release.Name"},
		{Key: "fromObject", JSONPath: ".data.x", FromResource: &kube.TypedObjectReference{}},
	}
	got, err := valueExports(exports, rv)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"message": "hi",
		"deep":    map[string]any{"color": "blue", "extra": float64(1)},
		"nested":  map[string]any{"color": "blue", "extra": float64(1)},
		"release": "rel",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("exports %#v, want %#v", got, want)
	}
	if _, err := valueExports([]kube.Export{{Key: "x", JSONPath: ".Values.absent"}}, rv); err == nil {
		t.Fatal("a missing value must fail the export")
	}
}

// signedResolver is the resolver of a verifying installation: it signs
// the digests it is given, and records the ones it was asked about.
type signedResolver struct {
	fakeResolver
	artifacts, blobs map[string]bool
	asked            []string
}

func (s *signedResolver) Verifying() bool { return true }

func (s *signedResolver) SignedArtifact(d string) (string, bool) {
	s.asked = append(s.asked, d)
	return "resource \"chart\" of component example.com/c:1", s.artifacts[d]
}

func (s *signedResolver) SignedBlob(d string) (string, bool) {
	s.asked = append(s.asked, d)
	return "resource \"chart\" of component example.com/c:1", s.blobs[d]
}

// Under verification a chart fetched by reference or URL is used only if
// a verified component signs its digest; otherwise the refusal says how
// to take it from the component.
func TestLoadChartUnderVerification(t *testing.T) {
	archive := helmtest.Archive(t, helmtest.Demo, "0.2.0")
	repo := helmtest.NewRepo(t)
	repo.Add(t, archive)
	reg := helmtest.NewRegistry(t)
	ref := reg.Push(t, helmtest.Archive(t, helmtest.Demo, "0.3.0"))
	tgz := filepath.Join(t.TempDir(), "demo.tgz")
	if err := os.WriteFile(tgz, archive, 0o600); err != nil {
		t.Fatal(err)
	}
	// A verified fetch goes over HTTPS only.
	ca, _ := ocitest.NewCA()
	tlsRepo := ocitest.StartChartRepo(t, ocitest.ChartRepoOptions{CA: ca})
	tlsRepo.AddChart("demo", "0.2.0", archive)
	d := New(Options{Registry: registryClient(t, ca, nil)})
	sources := map[string]Chart{
		"oci":          {Ref: ref},
		"remote https": {Archive: &Archive{Remote: &RemoteArchive{URL: tlsRepo.URL + "/charts/demo-0.2.0.tgz"}}},
		"repo":         {HelmChartRepo: &HelmChartRepo{URL: tlsRepo.URL, Name: "demo", Version: "0.2.0"}},
		"file":         {Archive: &Archive{Remote: &RemoteArchive{URL: tgz}}},
	}
	for name, ch := range sources {
		t.Run(name, func(t *testing.T) {
			unsigned := &signedResolver{}
			_, err := d.loadChart(t.Context(), &ch, unsigned)
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Transient || !strings.Contains(ce.Message, "the installation verifies signatures") ||
				!strings.Contains(ce.Message, `chart.resourceRef: {{ getResourceKey "cd://resources/<name>" }}`) {
				t.Fatalf("unsigned chart: %v", err)
			}
			if len(unsigned.asked) != 1 || !strings.HasPrefix(unsigned.asked[0], "sha256:") {
				t.Fatalf("asked %v", unsigned.asked)
			}
			signed := &signedResolver{artifacts: map[string]bool{unsigned.asked[0]: true}, blobs: map[string]bool{unsigned.asked[0]: true}}
			c, err := d.loadChart(t.Context(), &ch, signed)
			if err != nil || c.Name() != "demo" {
				t.Fatalf("signed chart: %v", err)
			}
		})
	}
	// An archive digest does not stand for a manifest digest.
	blobOnly := &signedResolver{blobs: map[string]bool{}}
	_, _ = d.loadChart(t.Context(), &Chart{Ref: ref}, blobOnly)
	blobOnly.blobs[blobOnly.asked[0]] = true
	if _, err := d.loadChart(t.Context(), &Chart{Ref: ref}, blobOnly); err == nil {
		t.Fatal("a signed blob digest admitted an OCI manifest")
	}
	for name, ch := range map[string]Chart{
		"remote http": {Archive: &Archive{Remote: &RemoteArchive{URL: repo.URL + "/charts/demo-0.2.0.tgz"}}},
		"repo http":   {HelmChartRepo: &HelmChartRepo{URL: repo.URL, Name: "demo", Version: "0.2.0"}},
	} {
		unsigned := &signedResolver{}
		if _, err := d.loadChart(t.Context(), &ch, unsigned); err == nil || !strings.Contains(err.Error(), "HTTP") || len(unsigned.asked) != 0 {
			t.Errorf("%s: %v (digests asked: %v)", name, err, unsigned.asked)
		}
		if len(repo.Requests()) != 0 {
			t.Errorf("%s: the plain HTTP repository was asked %v", name, repo.Requests())
		}
	}
	dir := &Chart{Archive: &Archive{Remote: &RemoteArchive{URL: helmtest.Dir(t, helmtest.Demo)}}}
	if _, err := d.loadChart(t.Context(), dir, &signedResolver{}); err == nil || !strings.Contains(err.Error(), "chart directory has no digest") {
		t.Fatalf("directory: %v", err)
	}
}
