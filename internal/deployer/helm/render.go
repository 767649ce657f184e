package helm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"reflect"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/jsonpath"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
)

// userValues decodes the config's values; no values are an empty map.
func userValues(c *Config) (map[string]any, error) {
	vals := map[string]any{}
	if len(c.Values) == 0 || string(c.Values) == "null" {
		return vals, nil
	}
	if err := json.Unmarshal(c.Values, &vals); err != nil {
		return nil, core.ConfigurationProblem("values: %v", err)
	}
	return vals, nil
}

// renderValues merges the user's values over the chart's defaults and adds
// what templates see besides (.Release, .Chart, .Capabilities), as
// Landscaper does before templating: a first install of revision 0, schema
// validation left to helm's install and upgrade.
func renderValues(c *Config, ch *chart.Chart, vals map[string]any) (chartutil.Values, error) {
	opts := chartutil.ReleaseOptions{Name: c.Name, Namespace: c.Namespace, IsInstall: true}
	rv, err := chartutil.ToRenderValuesWithSchemaValidation(ch, vals, opts, nil, true)
	if err != nil {
		return nil, core.ConfigurationProblem("unable to prepare the helm values: %v", err)
	}
	return rv, nil
}

// render templates the chart for helmDeployment: false. Errors name the
// template and line, as helm reports them.
func render(ch *chart.Chart, rv chartutil.Values, cfg *rest.Config) (map[string]string, error) {
	var files map[string]string
	var err error
	if cfg != nil {
		files, err = engine.RenderWithClient(ch, rv, cfg)
	} else {
		files, err = engine.Render(ch, rv)
	}
	if err != nil {
		return nil, core.ConfigurationProblem("unable to render the chart: %v", err)
	}
	return files, nil
}

// manifestObjects turns rendered files and the chart's CRDs into objects in
// apply order: CRDs first, then the templates sorted by file name. NOTES
// and empty documents are dropped; List kinds are expanded.
func manifestObjects(ch *chart.Chart, files map[string]string) ([]*unstructured.Unstructured, error) {
	crds := map[string]string{}
	for _, crd := range ch.CRDObjects() {
		crds[crd.Filename] = string(crd.File.Data)
	}
	crdObjs, err := splitManifests(crds)
	if err != nil {
		return nil, err
	}
	templates := map[string]string{}
	for name, content := range files {
		if strings.HasSuffix(name, "NOTES.txt") || path.Base(name)[0] == '_' {
			continue
		}
		templates[name] = content
	}
	objs, err := splitManifests(templates)
	if err != nil {
		return nil, err
	}
	return append(crdObjs, objs...), nil
}

// splitManifests decodes YAML streams (by file, in name order) into objects.
func splitManifests(files map[string]string) ([]*unstructured.Unstructured, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []*unstructured.Unstructured
	for _, name := range names {
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(files[name])), 4096)
		for {
			var m map[string]any
			if err := dec.Decode(&m); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, core.ConfigurationProblem("%s: the rendered manifest is not valid YAML: %v", name, err)
			}
			if len(m) == 0 {
				continue
			}
			u := &unstructured.Unstructured{Object: m}
			if u.GetKind() == "" || u.GetAPIVersion() == "" {
				return nil, core.ConfigurationProblem("%s: an object without apiVersion or kind", name)
			}
			if u.IsList() {
				l, err := u.ToList()
				if err != nil {
					return nil, core.ConfigurationProblem("%s: %v", name, err)
				}
				for i := range l.Items {
					out = append(out, &l.Items[i])
				}
				continue
			}
			out = append(out, u)
		}
	}
	return out, nil
}

// valueExports computes the exports without fromResource from the render
// values (paths such as .Values.a.b), building each key as a nested path
// and merging them, as Landscaper does.
func valueExports(exports []Export, rv chartutil.Values) (map[string]any, error) {
	out := map[string]any{}
	var data map[string]any = rv
	for _, e := range exports {
		if len(e.FromResource) > 0 {
			continue
		}
		v, err := getPath(data, e.JSONPath)
		if err != nil {
			return nil, core.ConfigurationProblem("export %q: jsonPath %s: %v", e.Key, e.JSONPath, err)
		}
		nested, err := constructPath(e.Key, v)
		if err != nil {
			return nil, core.ConfigurationProblem("export %q: %v", e.Key, err)
		}
		out = kube.MergeMaps(out, nested)
	}
	return out, nil
}

// getPath reads one value at a Kubernetes JSONPath (with or without the
// leading dot) and returns it as plain JSON data.
func getPath(data any, p string) (any, error) {
	if !strings.HasPrefix(p, ".") {
		p = "." + p
	}
	jp := jsonpath.New("export")
	if err := jp.Parse("{" + p + "}"); err != nil {
		return nil, err
	}
	res, err := jp.FindResults(data)
	if err != nil {
		return nil, err
	}
	if len(res) == 0 || len(res[0]) == 0 {
		return nil, errors.New("not found")
	}
	if len(res) != 1 || len(res[0]) != 1 {
		return nil, errors.New("expected exactly one result")
	}
	v := reflect.Indirect(res[0][0])
	if !v.IsValid() {
		return nil, nil
	}
	// Round-trip through JSON so chartutil.Values and helm's structs become
	// the plain maps an export is made of.
	raw, err := json.Marshal(v.Interface())
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// constructPath turns a key such as "a.b" into {"a": {"b": value}}.
func constructPath(key string, value any) (map[string]any, error) {
	parts := strings.Split(strings.TrimPrefix(key, "."), ".")
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("invalid export key %q", key)
		}
	}
	var v = value
	for i := len(parts) - 1; i >= 0; i-- {
		v = map[string]any{parts[i]: v}
	}
	m, _ := v.(map[string]any)
	return m, nil
}
