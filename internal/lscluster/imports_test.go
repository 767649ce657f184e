//go:build unix

package lscluster

import (
	"crypto/md5"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/ocm"
)

// The guided tour's import-parameters example (a Context, a component,
// DataObjects) with a Secret and a ConfigMap import added, and an export
// Landscaper wrote.
func TestReadDataSecretConfigMapImports(t *testing.T) {
	c := newCluster(t)
	c.write(targetYAML("my-cluster"))
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Context
metadata:
  name: landscaper-examples
  namespace: ${namespace}
repositoryContext:
  baseUrl: europe-docker.pkg.dev/sap-gcp-cp-k8s-stable-hub/landscaper-examples/examples
  type: ociRegistry
registryPullSecrets:
- name: regcred
configurations:
  helmChartRepoCredentials:
    auths:
    - url: https://charts.example.com/stable
      authHeader: Basic czNjcjN0LXB3
`)
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: DataObject
metadata:
  name: my-release
  namespace: ${namespace}
data:
  name: echo
  namespace: example
`)
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: DataObject
metadata:
  name: my-values
  namespace: ${namespace}
data:
  text: Hello, Landscaper!
`)
	c.write(`apiVersion: v1
kind: Secret
metadata:
  name: credentials
stringData:
  password: s3cr3t-pw
  port: "5432"
`)
	c.write(`apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  settings.yaml: |
    replicas: 2
    tiers: [web, db]
  greeting: hello
`)
	uid := c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata:
  name: echo-server
  namespace: ${namespace}
  annotations:
    landscaper.gardener.cloud/operation: reconcile
spec:
  context: landscaper-examples
  componentDescriptor:
    ref:
      componentName: github.com/gardener/landscaper-examples/guided-tour/echo-server
      version: 2.2.0
  blueprint:
    ref:
      resourceName: blueprint
  imports:
    targets:
      - name: cluster
        target: my-cluster
    data:
      - name: release
        dataRef: my-release
      - name: values
        dataRef: my-values
      - name: password
        secretRef:
          name: credentials
          key: password
      - name: credentials
        secretRef:
          name: credentials
      - name: settings
        configMapRef:
          name: settings
          key: settings.yaml
      - name: all-settings
        configMapRef:
          name: settings
  exports:
    data:
      - name: url
        dataRef: echo-url
      - name: not-yet
        dataRef: echo-later
      - name: foreign
        dataRef: someone-elses
status:
  observedGeneration: 1
  phase: Succeeded
`)
	// The export DataObject as Landscaper's installation controller writes
	// it for a root installation: named after the dataRef, labelled with
	// its source, owned by the installation.
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: DataObject
metadata:
  name: echo-url
  namespace: ${namespace}
  labels:
    data.landscaper.gardener.cloud/source: Inst.echo-server
    data.landscaper.gardener.cloud/sourceType: export
    data.landscaper.gardener.cloud/key: echo-url
    data.landscaper.gardener.cloud/jobid: 5f0e2a43-job
  annotations:
    data.landscaper.gardener.cloud/hash: "0123"
  ownerReferences:
  - apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: Installation
    name: echo-server
    uid: ` + uid + `
data: http://echo.example:8080
`)

	// A DataObject of the export's name that another installation wrote
	// is not this installation's export.
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: DataObject
metadata:
  name: someone-elses
  labels:
    data.landscaper.gardener.cloud/source: Inst.other
    data.landscaper.gardener.cloud/sourceType: export
data: not ours
`)

	inst := c.mustRead("echo-server")
	if inst.Blueprint.Ref != "blueprint" || inst.Blueprint.Filesystem != nil {
		t.Errorf("blueprint = %+v", inst.Blueprint)
	}
	wantComp := &Component{
		Name: "github.com/gardener/landscaper-examples/guided-tour/echo-server", Version: "2.2.0",
		RepositoryContext:     map[string]any{"baseUrl": "europe-docker.pkg.dev/sap-gcp-cp-k8s-stable-hub/landscaper-examples/examples", "type": "ociRegistry"},
		RepositoryContextFrom: `Context "landscaper-examples"`,
	}
	if !reflect.DeepEqual(inst.Component, wantComp) {
		t.Errorf("component = %+v", inst.Component)
	}
	ns := c.ns
	want := map[string]Import{
		"release":     {Value: map[string]any{"name": "echo", "namespace": "example"}, Source: SourceDataObject, Object: ns + "/my-release"},
		"values":      {Value: map[string]any{"text": "Hello, Landscaper!"}, Source: SourceDataObject, Object: ns + "/my-values"},
		"password":    {Value: "s3cr3t-pw", Sensitive: true, Source: SourceSecret, Object: ns + "/credentials#password"},
		"credentials": {Value: map[string]any{"password": "s3cr3t-pw", "port": 5432.0}, Sensitive: true, Source: SourceSecret, Object: ns + "/credentials"},
		"settings":    {Value: map[string]any{"replicas": 2.0, "tiers": []any{"web", "db"}}, Source: SourceConfigMap, Object: ns + "/settings#settings.yaml"},
		"all-settings": {Value: map[string]any{
			"settings.yaml": map[string]any{"replicas": 2.0, "tiers": []any{"web", "db"}},
			"greeting":      "hello",
		}, Source: SourceConfigMap, Object: ns + "/settings"},
	}
	if !reflect.DeepEqual(inst.Imports, want) {
		t.Errorf("imports =\n%#v\nwant\n%#v", inst.Imports, want)
	}
	wantExports := map[string]Export{
		"url":     {DataRef: "echo-url", Value: "http://echo.example:8080", Known: true},
		"not-yet": {DataRef: "echo-later"},
		"foreign": {DataRef: "someone-elses"},
	}
	if !reflect.DeepEqual(inst.Exports, wantExports) {
		t.Errorf("exports = %#v", inst.Exports)
	}
	for _, w := range []string{`registryPullSecrets (Secret "regcred")`, "registry_credentials",
		`configurations.helmChartRepoCredentials are not copied: set the provider's registry_credentials for "charts.example.com"`, `export "not-yet": DataObject ` + ns + "/echo-later does not exist",
		`export "foreign": DataObject ` + ns + `/someone-elses was not exported by this installation (its data.landscaper.gardener.cloud/source is "Inst.other")`} {
		if !slices.ContainsFunc(inst.Warnings, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("warnings %q: want one containing %q", inst.Warnings, w)
		}
	}
	if inst.Execution != nil || len(inst.Subinstallations) != 0 {
		t.Errorf("execution %+v, subs %+v: want none", inst.Execution, inst.Subinstallations)
	}
	noSecrets(t, &Installation{Targets: inst.Targets, Warnings: inst.Warnings}, "s3cr3t-pw")
	noSecrets(t, inst, "czNjcjN0LXB3")
}

// A component reference's own repository context wins over its Context's,
// and the Context's ComponentVersionOverwrites apply to it, as in
// Landscaper.
func TestReadRepositoryContextOfReference(t *testing.T) {
	c := newCluster(t)
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: ComponentVersionOverwrites
metadata:
  name: my-overwrites
overwrites:
- source:
    componentName: example.com/app
    version: 1.0.0
  substitution:
    version: 1.0.1
- source:
    componentName: example.com/library
  substitution:
    repositoryContext:
      type: OCIRegistry
      baseUrl: registry.example/mirror
`)
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Context
metadata:
  name: landscaper-examples
repositoryContext:
  baseUrl: registry.example/context
  type: OCIRegistry
componentVersionOverwrites: my-overwrites
`)
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata:
  name: app
spec:
  context: landscaper-examples
  componentDescriptor:
    ref:
      repositoryContext:
        type: OCIRegistry
        baseUrl: registry.example/own
        componentNameMapping: urlPath
      componentName: example.com/app
      version: 1.0.0
  verification:
    signatureName: release-signature
  blueprint:
    ref:
      resourceName: blueprint
  exportDataMappings:
    renamed: (( exports.url ))
status:
  observedGeneration: 1
  phase: Succeeded
`)
	inst := c.mustRead("app")
	own := map[string]any{"type": "OCIRegistry", "baseUrl": "registry.example/own", "componentNameMapping": "urlPath"}
	want := &Component{Name: "example.com/app", Version: "1.0.1",
		RepositoryContext: own, RepositoryContextFrom: "spec.componentDescriptor.ref",
		Overwritten: &ocm.Ref{ComponentName: "example.com/app", Version: "1.0.0", RepositoryContext: own}}
	if !reflect.DeepEqual(inst.Component, want) || inst.Verification != "release-signature" {
		t.Errorf("component = %+v, verification %q", inst.Component, inst.Verification)
	}
	wantOverwrites := []ocm.Overwrite{
		{Source: ocm.OverwriteRef{ComponentName: "example.com/app", Version: "1.0.0"}, Substitution: ocm.OverwriteRef{Version: "1.0.1"}},
		{Source: ocm.OverwriteRef{ComponentName: "example.com/library"}, Substitution: ocm.OverwriteRef{RepositoryContext: map[string]any{"type": "OCIRegistry", "baseUrl": "registry.example/mirror"}}},
	}
	if !reflect.DeepEqual(inst.ComponentOverwrites, wantOverwrites) {
		t.Errorf("component overwrites = %+v", inst.ComponentOverwrites)
	}
	for _, w := range []string{
		`ComponentVersionOverwrites "my-overwrites" (of Context "landscaper-examples") turn the component example.com/app:1.0.0 into example.com/app:1.0.1`,
		`ComponentVersionOverwrites "my-overwrites" (of Context "landscaper-examples", 2 substitution(s)) also apply to the components the component references: set the provider's component_overwrites`,
		"spec.exportDataMappings (renamed)",
	} {
		if !slices.ContainsFunc(inst.Warnings, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("warnings %q: want one containing %q", inst.Warnings, w)
		}
	}

	// Landscaper refuses a Context whose overwrites are gone; so does the
	// reader.
	c.remove("ComponentVersionOverwrites", "my-overwrites")
	_, err := c.read("app")
	wantErr(t, err, ErrNotFound, "ComponentVersionOverwrites "+c.ns+`/my-overwrites (componentVersionOverwrites of Context "landscaper-examples")`)
}

// The guided tour's import-data-mappings example, plus mappings over a
// Secret and a Target.
func TestReadImportDataMappings(t *testing.T) {
	c := newCluster(t)
	c.write(targetYAML("my-cluster"))
	c.write("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DataObject\nmetadata:\n  name: my-release-name\ndata: echo\n")
	c.write("apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: DataObject\nmetadata:\n  name: my-release-namespace\ndata: example\n")
	c.write("apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: s3cr3t-pw\n")
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata:
  name: echo-server
spec:
  blueprint:
    ref:
      resourceName: blueprint
  imports:
    targets:
      - name: cluster
        target: my-cluster
    data:
      - name: temp-name
        dataRef: my-release-name
      - name: temp-namespace
        dataRef: my-release-namespace
      - name: db
        secretRef:
          name: db
          key: password
      - name: values
        dataRef: my-release-name
  importDataMappings:
    release:
      name: (( temp-name ))
      namespace: (( temp-namespace ))
    values:
      text: hello
    dsn: (( "postgres://app:" db "@db." temp-namespace ))
    clusterType: (( cluster.spec.type ))
    kubeconfig: (( cluster.spec.config.kubeconfig ))
    encoded: (( base64(db) ))
    kubeHash: (( md5(cluster.spec.config.kubeconfig) ))
status:
  observedGeneration: 1
  phase: Succeeded
`)
	inst := c.mustRead("echo-server")
	got := map[string]any{}
	sensitive := map[string]bool{}
	for name, imp := range inst.Imports {
		got[name] = imp.Value
		sensitive[name] = imp.Sensitive
		if name == "release" || name == "dsn" || name == "clusterType" || name == "kubeconfig" || name == "encoded" || name == "kubeHash" {
			if imp.Source != SourceMapping {
				t.Errorf("import %s comes from %s, want a mapping", name, imp.Source)
			}
		}
	}
	want := map[string]any{
		"temp-name": "echo", "temp-namespace": "example", "db": "s3cr3t-pw",
		"release":     map[string]any{"name": "echo", "namespace": "example"},
		"values":      map[string]any{"text": "hello"}, // the mapping wins over the data import
		"dsn":         "postgres://app:s3cr3t-pw@db.example",
		"clusterType": "landscaper.gardener.cloud/kubernetes-cluster",
		"kubeconfig":  targetKubeconfig,
		"encoded":     "czNjcjN0LXB3",
		"kubeHash":    fmt.Sprintf("%x", md5.Sum([]byte(targetKubeconfig))),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("imports =\n%#v\nwant\n%#v", got, want)
	}
	wantSensitive := map[string]bool{"temp-name": false, "temp-namespace": false, "db": true, "release": false, "values": false,
		"dsn": true, "clusterType": false, "kubeconfig": true,
		// Made of a Secret's value or a Target's config, without their
		// text (issue 25): sensitive by derivation.
		"encoded": true, "kubeHash": true}
	if !reflect.DeepEqual(sensitive, wantSensitive) {
		t.Errorf("sensitive = %v, want %v", sensitive, wantSensitive)
	}
	for _, w := range []string{
		`importDataMappings["release"] is taken over as the value it has now, in imports`,
		`importDataMappings["values"] is taken over`,
		`importDataMappings["dsn"] is taken over as the value it has now, in sensitive_imports`,
		`importDataMappings["kubeconfig"] is taken over as the value it has now, in sensitive_imports`,
		`importDataMappings["values"] replaces the data import of the same name (DataObject ` + c.ns + `/my-release-name)`,
	} {
		if !slices.ContainsFunc(inst.Warnings, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("warnings %q: want one containing %q", inst.Warnings, w)
		}
	}
	// The Target is named, its config is not (only the mapping that asked
	// for it carries it, as a sensitive import).
	noSecrets(t, &Installation{Targets: inst.Targets, Warnings: inst.Warnings}, "s3cr3t-pw")
}

// Target lists and maps: by names, and by the labels Landscaper selects
// targetListRef and targetMapRef with.
func TestReadTargetListsAndMaps(t *testing.T) {
	c := newCluster(t)
	for _, n := range []string{"eu-1", "us-1", "ap-1"} {
		c.write(targetYAML(n))
	}
	// Targets written as imported ones of a root context, with the key,
	// index and target map key labels Landscaper sets.
	for i, n := range []string{"fleet-b", "fleet-a"} {
		c.write(importedTargetYAML(n, "fleet", "data.landscaper.gardener.cloud/index: \""+string(rune('0'+i))+"\""))
	}
	for _, k := range []string{"red", "blue"} {
		c.write(importedTargetYAML("by-color-"+k, "colors", "data.landscaper.gardener.cloud/targetmapkey: "+k))
	}
	// Same key, but in a sub-installation's context: not the root's.
	c.write(importedTargetYAML("other-context", "fleet", "data.landscaper.gardener.cloud/context: Inst.parent"))
	c.write(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata:
  name: fleet
spec:
  blueprint:
    ref:
      resourceName: blueprint
  imports:
    targets:
      - name: clusters
        targets: [us-1, eu-1]
      - name: regions
        targetMap:
          europe: eu-1
          asia: ap-1
      - name: fleet
        targetListRef: fleet
      - name: colors
        targetMapRef: colors
status:
  observedGeneration: 1
  phase: Succeeded
`)
	inst := c.mustRead("fleet")
	ref := func(n string) TargetRef {
		return TargetRef{Name: n, Object: n, Type: "landscaper.gardener.cloud/kubernetes-cluster"}
	}
	want := map[string]TargetImport{
		"clusters": {List: []TargetRef{ref("us-1"), ref("eu-1")}},
		"regions":  {Map: map[string]TargetRef{"europe": ref("eu-1"), "asia": ref("ap-1")}},
		"fleet":    {List: []TargetRef{ref("fleet-a"), ref("fleet-b")}}, // API order, as Landscaper reads it
		"colors":   {Map: map[string]TargetRef{"red": ref("by-color-red"), "blue": ref("by-color-blue")}},
	}
	if !reflect.DeepEqual(inst.Targets, want) {
		t.Errorf("targets =\n%+v\nwant\n%+v", inst.Targets, want)
	}
	noSecrets(t, inst)
}

// importedTargetYAML is a Target as Landscaper writes it for a target list
// or map import: the import's key and source type, plus one more label
// (index, map key or context).
func importedTargetYAML(name, key, label string) string {
	return strings.Replace(targetYAML(name), "  namespace: ${namespace}\n",
		"  namespace: ${namespace}\n  labels:\n    data.landscaper.gardener.cloud/key: "+key+
			"\n    data.landscaper.gardener.cloud/sourceType: import\n    "+label+"\n", 1)
}
