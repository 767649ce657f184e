package moved

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/moved/movedtest"
)

func convert(t *testing.T, provider, typ string, version int64, attrs string) *Item {
	t.Helper()
	it, err := Convert(provider, typ, version, []byte(attrs))
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func configOf(t *testing.T, it *Item) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(it.Config, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func refusedAttributes(t *testing.T, err error) []string {
	t.Helper()
	var r *Refused
	if !errors.As(err, &r) {
		t.Fatalf("got %v, want a refusal", err)
	}
	var out []string
	for _, p := range r.Problems {
		out = append(out, p.Attribute)
	}
	return out
}

// The values helm_release passes are rebuilt as it builds them: values
// documents merged in order, then set (auto and string), set_list and
// set_sensitive; the chart repository becomes helmChartRepo with the
// installed version, and the release is what the item adopts.
func TestHelmRelease_valuesAndRepository(t *testing.T) {
	it := convert(t, "registry.terraform.io/hashicorp/helm", "helm_release", 1, `{
		"name": "web", "namespace": "apps", "create_namespace": true,
		"repository": "https://charts.example.com/stable", "chart": "web", "version": "~1.2",
		"values": ["a: {b: 1, c: [1, 2]}\nkeep: yes\n", "a: {b: 2}\n"],
		"set": [{"name": "x.y", "value": "3", "type": ""}, {"name": "s", "value": "007", "type": "string"}],
		"set_list": [{"name": "l", "value": ["p", "q"]}],
		"set_sensitive": [{"name": "password", "value": "hunter2", "type": "auto"}],
		"postrender": [], "timeout": 300, "wait": true, "atomic": false,
		"metadata": [{"version": "1.2.7", "revision": 4}]
	}`)
	if it.Name != ItemRelease || it.Type != "helm" || it.Execution != "web" {
		t.Fatalf("item %q of type %q in execution %q", it.Name, it.Type, it.Execution)
	}
	want := `{"chart":{"helmChartRepo":{"helmChartName":"web","helmChartRepoUrl":"https://charts.example.com/stable","helmChartVersion":"1.2.7"}},` +
		`"createNamespace":true,"name":"web","namespace":"apps",` +
		`"values":{"a":{"b":2,"c":[1,2]},"keep":true,"l":["p","q"],"password":"hunter2","s":"007","x":{"y":3}}}`
	if string(it.Config) != want {
		t.Fatalf("config\n%s\nwant\n%s", it.Config, want)
	}
	wantAdopt := &deployer.Adoption{Source: "helm_release", Release: &deployer.ObjectRef{Namespace: "apps", Name: "web"}}
	if !reflect.DeepEqual(it.Adopt, wantAdopt) {
		t.Fatalf("adoption %+v", it.Adopt)
	}
	if len(it.Warnings) != 1 || it.Warnings[0].Attribute != "set_sensitive" {
		t.Fatalf("warnings %+v, want one about set_sensitive", it.Warnings)
	}
}

// helm 3.x keeps metadata and postrender as single objects, and has the
// literal set type and take_ownership; options Landscaper's
// helmDeploymentConfig knows are carried, wait = false turns the item's
// default readiness check off, an OCI repository becomes chart.ref.
func TestHelmRelease_v3OptionsAndOCI(t *testing.T) {
	it := convert(t, "registry.opentofu.org/hashicorp/helm", "helm_release", 2, `{
		"name": "db", "namespace": null, "repository": "oci://registry.example.com/charts/", "chart": "db",
		"version": "2.0.0", "set": [{"name": "cfg", "value": "{a: 1}", "type": "literal"}],
		"postrender": null, "set_wo_revision": null, "timeout": 600, "wait": false, "atomic": true,
		"force_update": true, "take_ownership": true, "metadata": {"version": "2.0.0"},
		"repository_username": "u", "repository_password": "p"
	}`)
	cfg := configOf(t, it)
	if got := jsonOf(t, cfg["chart"]); got != `{"ref":"registry.example.com/charts/db:2.0.0"}` {
		t.Fatalf("chart %s", got)
	}
	if cfg["namespace"] != "default" || jsonOf(t, cfg["values"]) != `{"cfg":{"a":1}}` {
		t.Fatalf("namespace %v values %s", cfg["namespace"], jsonOf(t, cfg["values"]))
	}
	want := `{"install":{"atomic":true,"takeOwnership":true,"timeout":"600s"},` +
		`"uninstall":{"timeout":"600s"},"upgrade":{"atomic":true,"force":true,"takeOwnership":true,"timeout":"600s"}}`
	if got := jsonOf(t, cfg["helmDeploymentConfig"]); got != want {
		t.Fatalf("helmDeploymentConfig %s\nwant %s", got, want)
	}
	if got := jsonOf(t, cfg["readinessChecks"]); got != `{"disableDefault":true}` {
		t.Fatalf("readinessChecks %s", got)
	}
	var warned []string
	for _, w := range it.Warnings {
		warned = append(warned, w.Attribute)
		if !strings.Contains(w.Detail, `"registry.example.com"`) {
			t.Errorf("warning %s does not name the host: %s", w.Attribute, w.Detail)
		}
	}
	if strings.Join(warned, ",") != "repository_username,repository_password" {
		t.Fatalf("warnings about %v", warned)
	}
}

// A local chart is referred to by its path, as helm_release found it.
func TestHelmRelease_localChart(t *testing.T) {
	dir := t.TempDir()
	chart := filepath.Join(dir, "demo")
	if err := os.Mkdir(chart, 0o755); err != nil {
		t.Fatal(err)
	}
	it := convert(t, "hashicorp/helm", "helm_release", 1, `{"name": "a", "namespace": "b", "chart": `+jsonOf(t, chart)+`}`)
	if got := jsonOf(t, configOf(t, it)["chart"]); got != `{"archive":{"remote":{"url":`+jsonOf(t, chart)+`}}}` {
		t.Fatalf("chart %s", got)
	}
}

// Whatever cannot be carried over refuses the move, each attribute named;
// attributes at their defaults (or null) do not.
func TestHelmRelease_refused(t *testing.T) {
	_, err := Convert("hashicorp/helm", "helm_release", 1, []byte(`{
		"name": "a", "namespace": "b", "repository": "https://c.example", "chart": "c", "version": "1.0.0",
		"postrender": [{"binary_path": "./kustomize.sh", "args": null}], "skip_crds": true,
		"verify": false, "reuse_values": false, "wait_for_jobs": true, "dependency_update": false
	}`))
	got := refusedAttributes(t, err)
	if strings.Join(got, ",") != "postrender,skip_crds,wait_for_jobs" {
		t.Fatalf("refused %v", got)
	}
	if !strings.Contains(err.Error(), "postrender: a post-renderer") {
		t.Fatalf("error %v", err)
	}

	_, err = Convert("hashicorp/helm", "helm_release", 2, []byte(`{"name": "a", "namespace": "b", "chart": "c",
		"repository": "https://c.example", "set_wo_revision": 1, "postrender": {"binary_path": "x"}}`))
	if got := refusedAttributes(t, err); strings.Join(got, ",") != "postrender,set_wo_revision" {
		t.Fatalf("refused %v", got)
	}

	_, err = Convert("hashicorp/helm", "helm_release", 1, []byte(`{"name": "a", "namespace": "b", "repository": "bitnami", "chart": "c"}`))
	if got := refusedAttributes(t, err); strings.Join(got, ",") != "repository" {
		t.Fatalf("refused %v", got)
	}
	_, err = Convert("hashicorp/helm", "helm_release", 1, []byte(`{"name": "a", "namespace": "b", "chart": "bitnami/c"}`))
	if got := refusedAttributes(t, err); strings.Join(got, ",") != "chart" {
		t.Fatalf("refused %v", got)
	}
}

// kubernetes_manifest's dynamic manifest becomes the item's one manifest,
// without nulls, in the namespace the object lives in; its wait
// conditions become custom readiness checks; the object is adopted by
// group, kind, namespace and name.
func TestKubernetesManifest(t *testing.T) {
	it := convert(t, "registry.terraform.io/hashicorp/kubernetes", "kubernetes_manifest", 1, `{
		"manifest": {"value": {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "labels": null},
			"spec": {"size": 2}}, "type": ["object", {}]},
		"object": {"value": {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "apps"}}},
		"wait": [{"rollout": null, "fields": null, "condition": [{"type": "Ready", "status": "True"}]}],
		"wait_for": null, "field_manager": [{"name": "Terraform", "force_conflicts": false}], "computed_fields": null
	}`)
	want := `{"manifests":[{"manifest":{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"apps"},"spec":{"size":2}}}],` +
		`"readinessChecks":{"custom":[{"name":"condition-Ready","requirements":[{"jsonPath":".status.conditions[?(@.type == \"Ready\")].status",` +
		`"operator":"==","values":[{"value":"True"}]}],"resourceSelector":[{"apiVersion":"example.com/v1","kind":"Widget","name":"w","namespace":"apps"}]}]}}`
	if string(it.Config) != want {
		t.Fatalf("config\n%s\nwant\n%s", it.Config, want)
	}
	if it.Type != "kubernetes-manifest" || it.Name != ItemManifest || it.Execution != "w" {
		t.Fatalf("item %+v", it)
	}
	wantAdopt := &deployer.Adoption{Source: "kubernetes_manifest", Objects: []deployer.ObjectRef{
		{APIVersion: "example.com/v1", Kind: "Widget", Namespace: "apps", Name: "w"}}}
	if !reflect.DeepEqual(it.Adopt, wantAdopt) {
		t.Fatalf("adoption %+v", it.Adopt)
	}

	_, err := Convert("hashicorp/kubernetes", "kubernetes_manifest", 1, []byte(`{
		"manifest": {"value": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}},
		"wait": [{"fields": {"status.phase": "Running"}}], "wait_for": {"fields": {"a": "b"}}}`))
	if got := refusedAttributes(t, err); strings.Join(got, ",") != "wait_for,wait.fields" {
		t.Fatalf("refused %v", got)
	}
}

// Both kubectl providers' kubectl_manifest: yaml_body, with
// override_namespace applied; apply_only keeps the object on delete;
// wait_for_rollout = false turns the default readiness check off; a
// Secret's data warns that config is not sensitive.
func TestKubectlManifest(t *testing.T) {
	for _, p := range []string{"alekc/kubectl", "gavinbunney/kubectl"} {
		it := convert(t, "registry.terraform.io/"+p, "kubectl_manifest", 1, `{
			"yaml_body": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  k: v\n",
			"override_namespace": "apps", "namespace": "apps", "apply_only": true, "wait_for_rollout": false,
			"force_new": false, "ignore_fields": null, "sensitive_fields": ["stringData.k"]
		}`)
		want := `{"manifests":[{"manifest":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"apps"},"stringData":{"k":"v"}},"policy":"keep"}],` +
			`"readinessChecks":{"disableDefault":true}}`
		if string(it.Config) != want {
			t.Fatalf("%s: config\n%s\nwant\n%s", p, it.Config, want)
		}
		if it.Adopt.Source != "kubectl_manifest" || len(it.Adopt.Objects) != 1 || it.Adopt.Objects[0].Namespace != "apps" {
			t.Fatalf("%s: adoption %+v", p, it.Adopt)
		}
		if len(it.Warnings) != 2 {
			t.Fatalf("%s: warnings %+v, want sensitive_fields and the Secret", p, it.Warnings)
		}
	}
	_, err := Convert("alekc/kubectl", "kubectl_manifest", 1, []byte(`{
		"yaml_body": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "force_new": true,
		"ignore_fields": ["data.x"], "wait_for": [{"field": [{"key": "a", "value": "b"}], "condition": []}]}`))
	if got := refusedAttributes(t, err); strings.Join(got, ",") != "force_new,ignore_fields,wait_for.field" {
		t.Fatalf("refused %v", got)
	}
}

// Sources this package does not know, and schema versions newer than it
// reads, are errors naming them, not refusals of an attribute.
func TestConvert_unknown(t *testing.T) {
	for _, c := range []struct {
		provider, typ string
		version       int64
		want          string
	}{
		{"hashicorp/kubernetes", "kubernetes_config_map_v1", 0, "not from kubernetes_config_map_v1"},
		{"example/helm", "helm_release", 1, "not from helm_release of example/helm"},
		{"hashicorp/helm", "helm_release", 3, "schema version 3"},
	} {
		_, err := Convert(c.provider, c.typ, c.version, []byte(`{}`))
		var r *Refused
		if err == nil || errors.As(err, &r) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want an error containing %q", c.provider, c.typ, err, c.want)
		}
	}
}

// The recorded helm_release states convert to the values the helm
// provider itself passed to helm, which it recorded in metadata.values
// (set_sensitive values cloaked there), and to its chart.
func TestRecordedHelmReleases(t *testing.T) {
	for _, file := range []string{movedtest.Helm2, movedtest.Helm3} {
		r := movedtest.Load(t, file)
		t.Chdir(t.TempDir())
		if err := os.Mkdir("demo", 0o755); err != nil { // helm 3.x's recording used the chart directory ./demo
			t.Fatal(err)
		}
		it := convert(t, r.Provider, r.Type, r.SchemaVersion, string(r.JSON(t)))
		cfg := configOf(t, it)
		var meta struct {
			Values string `json:"values"`
		}
		var metas []json.RawMessage
		if err := json.Unmarshal(r.Attributes["metadata"], &metas); err != nil {
			metas = []json.RawMessage{r.Attributes["metadata"]} // 3.x: one object
		}
		if err := json.Unmarshal(metas[0], &meta); err != nil {
			t.Fatal(err)
		}
		var recorded map[string]any
		if err := json.Unmarshal([]byte(meta.Values), &recorded); err != nil {
			t.Fatal(err)
		}
		values, _ := cfg["values"].(map[string]any)
		var sensitive []struct{ Name string }
		_ = json.Unmarshal(r.Attributes["set_sensitive"], &sensitive)
		for _, s := range sensitive {
			if recorded[s.Name] != "(sensitive value)" || values[s.Name] == nil {
				t.Fatalf("%s: set_sensitive %s: recorded %v, converted %v", file, s.Name, recorded[s.Name], values[s.Name])
			}
			recorded[s.Name] = values[s.Name]
		}
		if jsonOf(t, values) != jsonOf(t, recorded) {
			t.Fatalf("%s: values %s, the helm provider passed %s", file, jsonOf(t, values), jsonOf(t, recorded))
		}
		if cfg["name"] != jsonString(t, r.Attributes["name"]) || cfg["namespace"] != jsonString(t, r.Attributes["namespace"]) {
			t.Fatalf("%s: release %v/%v", file, cfg["namespace"], cfg["name"])
		}
		t.Logf("%s: %s", file, it.Config)
	}
}

func jsonString(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// The recorded manifest resources convert to their one object, in the
// namespace the source provider put it in, adopted by its exact reference.
func TestRecordedManifests(t *testing.T) {
	for _, c := range []struct{ file, name, object string }{
		{movedtest.Kubernetes, "moved-kubernetes", `{"apiVersion":"v1","data":{"greeting":"hello from kubernetes_manifest"},"kind":"ConfigMap",` +
			`"metadata":{"labels":{"app":"moved"},"name":"moved-kubernetes","namespace":"default"}}`},
		{movedtest.Alekc, "moved-alekc", `{"apiVersion":"v1","data":{"greeting":"hello from alekc/kubectl"},"kind":"ConfigMap",` +
			`"metadata":{"name":"moved-alekc","namespace":"default"}}`},
		{movedtest.Gavinbunney, "moved-gavinbunney", `{"apiVersion":"v1","data":{"greeting":"hello from gavinbunney/kubectl"},"kind":"ConfigMap",` +
			`"metadata":{"name":"moved-gavinbunney","namespace":"default"}}`},
	} {
		r := movedtest.Load(t, c.file)
		it := convert(t, r.Provider, r.Type, r.SchemaVersion, string(r.JSON(t)))
		if want := `{"manifests":[{"manifest":` + c.object + `}]}`; string(it.Config) != want {
			t.Errorf("%s: config\n%s\nwant\n%s", c.file, it.Config, want)
		}
		wantAdopt := &deployer.Adoption{Source: r.Type, Objects: []deployer.ObjectRef{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "default", Name: c.name}}}
		if !reflect.DeepEqual(it.Adopt, wantAdopt) || it.Execution != c.name || len(it.Warnings) > 0 {
			t.Errorf("%s: adoption %+v, execution %q, warnings %v", c.file, it.Adopt, it.Execution, it.Warnings)
		}
	}
}
