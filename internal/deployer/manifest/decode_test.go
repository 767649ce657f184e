//go:build unix

package manifest

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/kube"
)

func TestDecode(t *testing.T) {
	const cmYAML = "{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}"
	cases := []struct {
		name, config     string
		invalid, unknown string // substrings; "" means none
	}{
		{"minimal v1alpha2", "manifests: [{manifest: " + cmYAML + "}]", "", ""},
		{"full header", "apiVersion: " + APIVersionV1alpha2 + "\nkind: ProviderConfiguration\nmanifests: [{manifest: " + cmYAML + "}]", "", ""},
		{"v1alpha1", "apiVersion: " + APIVersionV1alpha1 + "\nkind: ProviderConfiguration\nmanifests: [" + cmYAML + "]", "", ""},
		{"v1alpha1 merge", "apiVersion: " + APIVersionV1alpha1 + "\nupdateStrategy: merge\nmanifests: [" + cmYAML + "]", "supported values: update, patch", ""},
		{"wrong kind", "kind: Configuration", `kind: must be "ProviderConfiguration"`, ""},
		{"wrong apiVersion", "apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1", "apiVersion: must be", ""},
		{"unknown field", "manifests: [{manifest: " + cmYAML + ", polcy: keep}]\nreadinesChecks: {}", "", "polcy"},
		{"case matters", "Manifests: []", "", "Manifests"},
		{"type error", "manifests: {a: 1}", "cannot unmarshal", ""},
		{"bad policy", "manifests: [{policy: own, manifest: " + cmYAML + "}]", "manifests[0].policy", ""},
		{"no manifest", "manifests: [{policy: keep}]", "manifests[0].manifest", ""},
		{"nameless", "manifests: [{manifest: {apiVersion: v1, kind: ConfigMap}}]", "no metadata.name", ""},
		{"bad strategy", "updateStrategy: replace", "updateStrategy", ""},
		{"bad readiness", "readinessChecks: {custom: [{name: x, requirements: [{jsonPath: '.a', operator: '>'}]}]}", "resourceSelector or a labelSelector", ""},
		{"bad operator", "readinessChecks: {custom: [{name: x, resourceSelector: [{apiVersion: v1, kind: ConfigMap, name: c}], requirements: [{jsonPath: '.a', operator: '>'}]}]}", "not a valid operator", ""},
		{"missing values", "readinessChecks: {custom: [{name: x, resourceSelector: [{apiVersion: v1, kind: ConfigMap, name: c}], requirements: [{jsonPath: '.a', operator: '='}]}]}", "at least one value", ""},
		{"bad export", "exports: {exports: [{key: '', jsonPath: '.a['}]}", "exports.exports[0].key", ""},
		{"bad deletion group", "deletionGroups: [{predefinedResourceGroup: {type: all}}]", "deletionGroups[0].predefinedResourceGroup.type", ""},
		{"empty deletion group", "deletionGroupsDuringUpdate: [{}]", "either predefinedResourceGroup or customResourceGroup", ""},
		{"kubeconfig", "kubeconfig: abc", "no longer part of the configuration", ""},
		{"legacy timeouts", "deleteTimeout: 5m\nreadinessChecks: {timeout: 3m}\ncontinuousReconcile: {every: 1h}", "", ""},
		{"bad legacy timeout", "readinessChecks: {timeout: soon}", "invalid duration", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			js, err := yaml.YAMLToJSON([]byte(c.config))
			if err != nil {
				t.Fatal(err)
			}
			_, p := Decode(js)
			check := func(what string, got []string, want string) {
				all := strings.Join(got, "\n")
				if want == "" && all != "" || want != "" && !strings.Contains(all, want) {
					t.Errorf("%s problems %q, want %q", what, all, want)
				}
			}
			check("invalid", p.Invalid, c.invalid)
			check("unknown", p.Unknown, c.unknown)
			if (c.invalid == "" && c.unknown == "") != (New().Validate(js) == nil) {
				t.Errorf("Validate disagrees with Decode: %v", New().Validate(js))
			}
		})
	}
}

func TestDecodeDefaults(t *testing.T) {
	cfg, p := Decode([]byte(`{"manifests": [{"manifest": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}}]}`))
	if p.Err() != nil {
		t.Fatal(p.Err())
	}
	if cfg.UpdateStrategy != kube.StrategyUpdate || cfg.Manifests[0].Policy != kube.PolicyManage {
		t.Errorf("defaults: %q %q", cfg.UpdateStrategy, cfg.Manifests[0].Policy)
	}
	if New().TargetTypes()[0] != "landscaper.gardener.cloud/kubernetes-cluster" {
		t.Error("target type")
	}
}
