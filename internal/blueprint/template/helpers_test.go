package template

import (
	"errors"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// execs parses an execution list written as in a blueprint.yaml.
func execs(t testing.TB, doc string) []Execution {
	t.Helper()
	var raw []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		File     string `json:"file"`
		Template any    `json:"template"`
	}
	if err := yaml.Unmarshal([]byte(doc), &raw); err != nil {
		t.Fatalf("bad execution list: %v", err)
	}
	out := make([]Execution, len(raw))
	for i, r := range raw {
		out[i] = Execution{Name: r.Name, Type: r.Type, File: r.File, Template: r.Template}
	}
	return out
}

func loadMap(t testing.TB, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// v2Components returns the v2 root component and its list.
func v2Components(t testing.TB) (map[string]any, []map[string]any) {
	root := loadMap(t, "testdata/cd-v2.yaml")
	return root, []map[string]any{root, loadMap(t, "testdata/cd-v2-leaf.yaml")}
}

func v3Components(t testing.TB) (map[string]any, []map[string]any) {
	root := loadMap(t, "testdata/cd-v3.yaml")
	return root, []map[string]any{root, loadMap(t, "testdata/cd-v3-leaf.yaml")}
}

// fakeResolver serves resource content by resource name.
type fakeResolver map[string]struct {
	data      string
	mediaType string
}

func (f fakeResolver) ResourceContent(component, resource map[string]any) ([]byte, string, error) {
	name, _ := resource["name"].(string)
	c, ok := f[name]
	if !ok {
		return nil, "", errors.New("no content for " + name)
	}
	return []byte(c.data), c.mediaType, nil
}

// fakeCluster records calls and returns fixed kubeconfigs; panics when asked
// for OIDC so that panics inside functions are exercised.
type fakeCluster struct{ calls []string }

var fixedExpiry = time.Unix(1695369282, 0).UTC()

func (f *fakeCluster) ShootAdminKubeconfig(name, ns string, sec int64, target map[string]any) (string, time.Time, error) {
	f.calls = append(f.calls, "shoot:"+name+"/"+ns)
	return "c2hvb3Q=", fixedExpiry, nil
}

func (f *fakeCluster) ServiceAccountKubeconfig(name, ns string, sec int64, target map[string]any) (string, time.Time, error) {
	f.calls = append(f.calls, "sa:"+name+"/"+ns)
	return "c2E=", fixedExpiry, nil
}

func (f *fakeCluster) OIDCKubeconfig(issuer, client string, target map[string]any) (string, error) {
	panic("oidc boom")
}
