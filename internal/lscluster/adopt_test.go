package lscluster

import (
	"reflect"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

func TestAdoptionsOfTheTree(t *testing.T) {
	inst := &Installation{
		Execution: &Execution{DeployItems: map[string]DeployItem{
			"manifests": {Object: "hello-di-1", Type: TypeManifest, ManagedLabel: ManifestManagedLabel,
				ManagedResources: []ObjectRef{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "cm"}}},
			"chart": {Object: "hello-di-2", Type: TypeHelm, ManagedLabel: HelmManagedLabel,
				Release: &HelmRelease{Name: "hello", Namespace: "ns"}},
			"job": {Object: "hello-di-3", Type: "landscaper.gardener.cloud/container"},
		}},
		Subinstallations: map[string]*Subinstallation{"sub": {Execution: &Execution{DeployItems: map[string]DeployItem{
			"rendered": {Object: "sub-di-1", Type: TypeHelm, ManagedLabel: HelmManagedLabel},
		}}}},
	}
	want := map[string]*deployer.Adoption{
		"manifests":    {DeployItem: "hello-di-1", Objects: []deployer.ObjectRef{{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "cm"}}},
		"chart":        {DeployItem: "hello-di-2", Release: &deployer.ObjectRef{Namespace: "ns", Name: "hello"}},
		"sub/rendered": {DeployItem: "sub-di-1"},
	}
	if got := inst.Adoptions(); !reflect.DeepEqual(got, want) {
		t.Fatalf("adoptions %+v, want %+v", got, want)
	}
}
