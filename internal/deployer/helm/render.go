package helm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"

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

// manifests turns rendered files and the chart's CRDs into Landscaper's
// managed manifests, as its helm deployer hands them to the manifest
// machinery: the CRDs, then the templates (by file name), each with policy
// manage, and, with createNamespace, the release namespace with policy
// keep, so it is created first (the apply orders namespaces first) and
// never deleted. NOTES and documents without an apiVersion are dropped;
// List kinds are expanded.
func manifests(c *Config, ch *chart.Chart, files map[string]string) ([]kube.Manifest, error) {
	objs, err := manifestObjects(ch, files)
	if err != nil {
		return nil, err
	}
	out := make([]kube.Manifest, 0, len(objs)+1)
	for _, o := range objs {
		raw, err := o.MarshalJSON()
		if err != nil {
			return nil, core.ConfigurationProblem("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
		out = append(out, kube.Manifest{Policy: kube.PolicyManage, Manifest: raw})
	}
	if c.CreateNamespace && c.Namespace != "" {
		ns, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": c.Namespace}})
		out = append(out, kube.Manifest{Policy: kube.PolicyKeep, Manifest: ns})
	}
	return out, nil
}

// manifestObjects decodes the chart's CRDs and the rendered templates into
// objects, CRDs first.
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

// splitManifests decodes YAML streams (by file, in name order) into
// objects. Documents without an apiVersion are skipped, as Landscaper
// skips them.
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
			u := &unstructured.Unstructured{Object: m}
			if len(m) == 0 || u.GetAPIVersion() == "" {
				continue
			}
			if u.GetKind() == "" {
				return nil, core.ConfigurationProblem("%s: an object without kind", name)
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
func valueExports(exports []kube.Export, rv chartutil.Values) (map[string]any, error) {
	out := map[string]any{}
	var data map[string]any = rv
	for _, e := range exports {
		if e.FromResource != nil {
			continue
		}
		v, err := kube.GetValue(e.JSONPath, data)
		if err != nil {
			return nil, core.ConfigurationProblem("export %q: jsonPath %s: %v", e.Key, e.JSONPath, err)
		}
		nested, err := kube.Construct(e.Key, v)
		if err != nil {
			return nil, core.ConfigurationProblem("export %q: %v", e.Key, err)
		}
		out = kube.MergeMaps(out, nested)
	}
	return out, nil
}
