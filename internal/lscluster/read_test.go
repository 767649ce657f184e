//go:build unix

package lscluster

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The guided tour's basics/manifest-deployer Installation, verbatim but
// for the status Landscaper wrote after it succeeded.
const manifestInstallation = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Installation
metadata:
  name: hello-world
  namespace: ${namespace}
  annotations:
    landscaper.gardener.cloud/operation: reconcile
spec:
  imports:
    targets:
      - name: cluster
        target: my-cluster
  blueprint:
    inline:
      filesystem:
        blueprint.yaml: |
          apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: Blueprint
          jsonSchema: "https://json-schema.org/draft/2019-09/schema"
          imports:
            - name: cluster
              type: target
              targetType: landscaper.gardener.cloud/kubernetes-cluster
          deployExecutions:
            - name: default
              type: GoTemplate
              template: |
                deployItems:
                  - name: default-deploy-item
                    type: landscaper.gardener.cloud/kubernetes-manifest
                    target:
                      import: cluster
                    config:
                      apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
                      kind: ProviderConfiguration
                      updateStrategy: update
                      manifests:
                        - policy: manage
                          manifest:
                            apiVersion: v1
                            kind: ConfigMap
                            metadata:
                              name: hello-world
                              namespace: example
                            data:
                              testData: hello
status:
  observedGeneration: 1
  phase: Succeeded
  jobID: 5f0e2a43-job
  jobIDFinished: 5f0e2a43-job
  executionRef:
    name: hello-world
    namespace: ${namespace}
`

// execution writes the Execution of an installation and its DeployItems
// as Landscaper's execution controller does: named after the
// installation, owned by it; items named "<execution>-<item>-<suffix>",
// labelled with the execution and their name, owned by the execution. With
// cache, the execution records the items in status.deployItemCache.
func (c *cluster) execution(inst, instUID string, cache bool, items ...string) {
	c.t.Helper()
	owner := func(kind, name, uid string) []any {
		return []any{map[string]any{
			"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": kind,
			"name": name, "uid": uid, "controller": true, "blockOwnerDeletion": true,
		}}
	}
	var templates, active []any
	type di struct {
		name, object   string
		spec           map[string]any
		providerStatus any
	}
	var dis []di
	for i, body := range items {
		var spec map[string]any
		if err := yamlUnmarshal(strings.ReplaceAll(body, "${namespace}", c.ns), &spec); err != nil {
			c.t.Fatal(err)
		}
		name, _ := spec["name"].(string)
		obj := fmt.Sprintf("%s-%s-%05d", inst, name, i)
		ps := spec["providerStatus"]
		delete(spec, "providerStatus")
		templates = append(templates, spec)
		active = append(active, map[string]any{"specName": name, "objectName": obj})
		itemSpec := map[string]any{}
		for k, v := range spec {
			if k != "name" {
				itemSpec[k] = v
			}
		}
		dis = append(dis, di{name, obj, itemSpec, ps})
	}
	status := map[string]any{"phase": "Succeeded"}
	if cache {
		status["deployItemCache"] = map[string]any{"activeDIs": active}
	}
	execUID := c.writeObject(map[string]any{
		"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "Execution",
		"metadata": map[string]any{"name": inst, "ownerReferences": owner("Installation", inst, instUID)},
		"spec":     map[string]any{"deployItems": templates},
		"status":   status,
	})
	for _, d := range dis {
		c.writeObject(map[string]any{
			"apiVersion": "landscaper.gardener.cloud/v1alpha1", "kind": "DeployItem",
			"metadata": map[string]any{
				"name":            d.object,
				"labels":          map[string]any{labelExecManagedBy: inst, labelExecItemName: d.name},
				"ownerReferences": owner("Execution", inst, execUID),
			},
			"spec":   d.spec,
			"status": map[string]any{"observedGeneration": 1, "phase": "Succeeded", "providerStatus": d.providerStatus},
		})
	}
}

func (c *cluster) writeObject(obj map[string]any) string {
	c.t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		c.t.Fatal(err)
	}
	return c.write(string(data))
}

func yamlUnmarshal(s string, out any) error {
	js, err := yamlToJSON(s)
	if err != nil {
		return err
	}
	return json.Unmarshal(js, out)
}

const manifestItem = `name: default-deploy-item
type: landscaper.gardener.cloud/kubernetes-manifest
target:
  name: my-cluster
  namespace: ${namespace}
config:
  apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
  kind: ProviderConfiguration
  updateStrategy: update
  manifests:
  - policy: manage
    manifest:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: hello-world
        namespace: example
      data:
        testData: hello
providerStatus:
  apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
  kind: ProviderStatus
  managedResources:
  - policy: manage
    resource:
      apiVersion: v1
      kind: ConfigMap
      name: hello-world
      namespace: example
`

// noSecrets fails when the kubeconfig of a Target shows up in what the
// reader returns.
func noSecrets(t *testing.T, inst *Installation, secrets ...string) {
	t.Helper()
	data, err := json.Marshal(inst)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(secrets, "target-token-do-not-leak", "shoot.example.invalid") {
		if strings.Contains(string(data), s) {
			t.Errorf("the description carries %q:\n%s", s, data)
		}
	}
}

func TestReadManifestInstallation(t *testing.T) {
	c := newCluster(t)
	c.write(targetYAML("my-cluster"))
	uid := c.write(manifestInstallation)
	c.execution("hello-world", uid, true, manifestItem)

	inst := c.mustRead("hello-world")
	if inst.Name != "hello-world" || inst.Namespace != c.ns || inst.Phase != "Succeeded" {
		t.Errorf("identity = %s/%s %s", inst.Namespace, inst.Name, inst.Phase)
	}
	bp := inst.Blueprint.Filesystem["blueprint.yaml"]
	if inst.Blueprint.Ref != "" || len(inst.Blueprint.Filesystem) != 1 || !strings.Contains(bp, "type: landscaper.gardener.cloud/kubernetes-manifest") || !strings.HasPrefix(bp, "apiVersion: landscaper.gardener.cloud/v1alpha1\nkind: Blueprint\n") {
		t.Errorf("blueprint = %+v", inst.Blueprint)
	}
	if inst.Component != nil {
		t.Errorf("component = %+v, want none", inst.Component)
	}
	want := map[string]TargetImport{"cluster": {Target: &TargetRef{Name: "my-cluster", Object: "my-cluster", Type: "landscaper.gardener.cloud/kubernetes-cluster"}}}
	if !reflect.DeepEqual(inst.Targets, want) {
		t.Errorf("targets = %+v", inst.Targets)
	}
	if len(inst.Imports) != 0 || len(inst.Exports) != 0 || len(inst.Subinstallations) != 0 {
		t.Errorf("imports %v, exports %v, subs %v: want none", inst.Imports, inst.Exports, inst.Subinstallations)
	}
	wantExec := &Execution{Object: "hello-world", Phase: "Succeeded", DeployItems: map[string]DeployItem{
		"default-deploy-item": {
			Object: "hello-world-default-deploy-item-00000", Type: TypeManifest, Target: "my-cluster", Phase: "Succeeded",
			ManagedLabel:     ManifestManagedLabel,
			ManagedResources: []ObjectRef{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "example", Name: "hello-world"}},
		},
	}}
	if !reflect.DeepEqual(inst.Execution, wantExec) {
		t.Errorf("execution =\n%+v\nwant\n%+v", inst.Execution, wantExec)
	}
	if len(inst.Warnings) != 0 {
		t.Errorf("warnings: %q", inst.Warnings)
	}
	noSecrets(t, inst)
}

func TestReadHelmInstallation(t *testing.T) {
	c := newCluster(t)
	c.write(targetYAML("my-cluster"))
	// The guided tour's hello-world: the same Installation with a helm
	// deploy item; Landscaper left it Failed this time.
	uid := c.write(strings.NewReplacer(
		"type: landscaper.gardener.cloud/kubernetes-manifest", "type: landscaper.gardener.cloud/helm",
		"phase: Succeeded", "phase: Failed",
	).Replace(manifestInstallation))
	helmItem := `name: default-deploy-item
type: landscaper.gardener.cloud/helm
target:
  name: my-cluster
  namespace: ${namespace}
config:
  apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1
  kind: ProviderConfiguration
  name: hello-world
  namespace: example
  createNamespace: true
  chart:
    ref: europe-docker.pkg.dev/sap-gcp-cp-k8s-stable-hub/landscaper-examples/examples/charts/hello-world:1.0.0
  values:
    testData: hello
providerStatus:
  apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1
  kind: ProviderStatus
  managedResources:
  - policy: manage
    resource:
      apiVersion: v1
      kind: ConfigMap
      name: hello-world
      namespace: example
`
	manifestsOnly := strings.Replace(strings.Replace(helmItem, "name: default-deploy-item", "name: no-release", 1), "createNamespace: true", "helmDeployment: false", 1)
	// Without a deployItemCache, as older Landscapers wrote executions:
	// the items are found by label.
	container := `name: worker
type: landscaper.gardener.cloud/container
config:
  apiVersion: container.deployer.landscaper.gardener.cloud/v1alpha1
  kind: ProviderConfiguration
  image: alpine
`
	c.execution("hello-world", uid, false, helmItem, manifestsOnly, container)

	inst := c.mustRead("hello-world")
	items := inst.Execution.DeployItems
	got := items["default-deploy-item"]
	if got.Type != TypeHelm || got.ManagedLabel != HelmManagedLabel || got.Object != "hello-world-default-deploy-item-00000" ||
		!reflect.DeepEqual(got.Release, &HelmRelease{Name: "hello-world", Namespace: "example"}) || len(got.ManagedResources) != 1 {
		t.Errorf("helm item = %+v", got)
	}
	if other := items["no-release"]; other.Release != nil || other.ManagedLabel != HelmManagedLabel || other.Object != "hello-world-no-release-00001" {
		t.Errorf("helm item with helmDeployment false = %+v, want no release", other)
	}
	for _, w := range []string{`phase is "Failed"`, `deploy item "worker" (DeployItem hello-world-worker-00002) of type landscaper.gardener.cloud/container cannot be adopted`} {
		if !slices.ContainsFunc(inst.Warnings, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("warnings %q: want one containing %q", inst.Warnings, w)
		}
	}
	if len(inst.Warnings) != 2 {
		t.Errorf("warnings %q: want exactly those two", inst.Warnings)
	}
	noSecrets(t, inst)
}
