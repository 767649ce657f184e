package provider

import (
	"encoding/json"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/installation"
)

// A tree whose targets are all provider references holds no credential,
// so it is not rendered a second time; a target with a config is a secret.
func TestHasSecretsCountsTargetConfigsNotReferences(t *testing.T) {
	ref := &deployer.Target{Name: "cluster", Type: "landscaper.gardener.cloud/kubernetes-cluster", Ref: "prod-eu", Location: "https://prod"}
	inline := &deployer.Target{Name: "cluster", Type: "landscaper.gardener.cloud/kubernetes-cluster", Config: json.RawMessage(`{"kubeconfig":"x"}`)}
	cases := []struct {
		name  string
		imp   installation.Imports
		specs map[string]engine.ItemSpec
		want  bool
	}{
		{"references only", installation.Imports{
			Targets:     map[string]*deployer.Target{"cluster": ref},
			TargetLists: map[string][]*deployer.Target{"list": {ref}},
			TargetMaps:  map[string]map[string]*deployer.Target{"fleet": {"eu": ref}},
		}, map[string]engine.ItemSpec{"app": {Target: ref}}, false},
		{"inline target", installation.Imports{Targets: map[string]*deployer.Target{"cluster": inline}}, nil, true},
		{"inline list element", installation.Imports{TargetLists: map[string][]*deployer.Target{"list": {ref, inline}}}, nil, true},
		{"inline map element", installation.Imports{TargetMaps: map[string]map[string]*deployer.Target{"fleet": {"eu": inline}}}, nil, true},
		{"item with an inline target", installation.Imports{}, map[string]engine.ItemSpec{"app": {Target: inline}}, true},
	}
	for _, tc := range cases {
		if got := hasSecrets(shadowSpec{imp: tc.imp}, tc.specs); got != tc.want {
			t.Errorf("%s: hasSecrets = %v, want %v", tc.name, got, tc.want)
		}
	}
}
