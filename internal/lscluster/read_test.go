//go:build unix

package lscluster

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/lscluster/lstest"
)

// execution writes the Execution of an installation and its DeployItems
// as Landscaper's execution controller does (lstest.Cluster.Execution).
func (c *cluster) execution(inst, instUID string, cache bool, items ...string) {
	c.t.Helper()
	c.w.Execution(inst, types.UID(instUID), cache, items...)
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
	uid := c.write(lstest.TourManifestInstallation)
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
			Object: lstest.DeployItemName("hello-world", "default-deploy-item"), Type: TypeManifest, Target: "my-cluster", Phase: "Succeeded",
			JobIDFinished: lstest.JobID, ManagedLabel: ManifestManagedLabel,
			ManagedResources: []ObjectRef{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "example", Name: "hello-world"}},
		},
	}}
	if inst.Execution != nil {
		// The config is the item's, as the fixture wrote it.
		want := wantExec.DeployItems["default-deploy-item"]
		want.Config = inst.Execution.DeployItems["default-deploy-item"].Config
		wantExec.DeployItems["default-deploy-item"] = want
	}
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
	).Replace(lstest.TourManifestInstallation))
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
	if got.Type != TypeHelm || got.ManagedLabel != HelmManagedLabel || got.Object != lstest.DeployItemName("hello-world", "default-deploy-item") ||
		!reflect.DeepEqual(got.Release, &HelmRelease{Name: "hello-world", Namespace: "example"}) || len(got.ManagedResources) != 1 {
		t.Errorf("helm item = %+v", got)
	}
	if other := items["no-release"]; other.Release != nil || other.ManagedLabel != HelmManagedLabel || other.Object != lstest.DeployItemName("hello-world", "no-release") {
		t.Errorf("helm item with helmDeployment false = %+v, want no release", other)
	}
	for _, w := range []string{`phase is "Failed"`, `deploy item "worker" (DeployItem ` + lstest.DeployItemName("hello-world", "worker") + `) of type landscaper.gardener.cloud/container cannot be adopted`} {
		if !slices.ContainsFunc(inst.Warnings, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("warnings %q: want one containing %q", inst.Warnings, w)
		}
	}
	if len(inst.Warnings) != 2 {
		t.Errorf("warnings %q: want exactly those two", inst.Warnings)
	}
	noSecrets(t, inst)
}

// The UID of a namespace tells the cluster objects were written to from
// another one answering at the same URL; a missing namespace is
// ErrNotFound, so that it is not taken for unreadable.
func TestNamespaceUID(t *testing.T) {
	c := newCluster(t)
	r, err := New(restConfig())
	if err != nil {
		t.Fatal(err)
	}
	ns, err := c.d.Resource(namespacesGVR).Get(t.Context(), c.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if uid, err := r.NamespaceUID(t.Context(), c.ns); err != nil || uid == "" || uid != string(ns.GetUID()) {
		t.Errorf("NamespaceUID(%s) = %q, %v; want %s", c.ns, uid, err, ns.GetUID())
	}
	if uid, err := r.NamespaceUID(t.Context(), c.ns+"-missing"); !errors.Is(err, ErrNotFound) || uid != "" {
		t.Errorf("NamespaceUID of a missing namespace = %q, %v; want ErrNotFound", uid, err)
	}
}
