package e2e

import (
	"fmt"
	"testing"
)

// deletionBlueprint has two manifest items, app depending on base; app's
// objects go in deletion groups (two custom groups of one object each, a
// group that deletes an object no item deployed, then the predefined
// namespaced resources), one object is kept on deletion (policy keep),
// one never applied (policy ignore).
const deletionBlueprint = blueprintHeader + `deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      {{- $ns := .imports.namespace }}
      deployItems:
        - name: base
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            updateStrategy: update
            manifests:
              - policy: manage
                manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: base, namespace: {{ $ns }}}, data: {role: base}}
        - name: app
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          dependsOn: [base]
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            updateStrategy: update
            manifests:
              {{- range list "app-first" "app-second" "app-third" }}
              - policy: manage
                manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: {{ . }}, namespace: {{ $ns }}}, data: {role: app}}
              {{- end }}
              - policy: keep
                manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: kept, namespace: {{ $ns }}}, data: {role: kept}}
              - policy: ignore
                manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: ignored, namespace: {{ $ns }}}, data: {role: ignored}}
              - policy: manage
                manifest: {apiVersion: v1, kind: Secret, metadata: {name: app-secret, namespace: {{ $ns }}}, stringData: {password: s3cr3t}}
            deletionGroups:
              - customResourceGroup:
                  resources: [{apiVersion: v1, kind: ConfigMap, names: [app-second]}]
              - customResourceGroup:
                  resources: [{apiVersion: v1, kind: ConfigMap, names: [app-first]}]
              - customResourceGroup:
                  deleteAllResources: true
                  resources: [{apiVersion: v1, kind: ConfigMap, names: [stray], namespaces: [{{ $ns }}]}]
              - customResourceGroup:
                  resources: [{apiVersion: v1, kind: Secret}]
              - predefinedResourceGroup: {type: namespaced-resources}
`

// TestLandscaperDifferential_deletion: deletion groups order the deletion
// of an item's objects (custom groups, deleteAllResources for an object
// no one deployed, the predefined namespaced resources), items are deleted
// in reverse dependency order, policy keep leaves its object, policy
// ignore never applies one.
func TestLandscaperDifferential_deletion(t *testing.T) {
	t.Parallel()
	differential(t, diffCase{
		name:        "deletion",
		blueprint:   map[string]string{"blueprint.yaml": deletionBlueprint},
		targets:     []string{"cluster"},
		resources:   []string{"configmaps", "secrets"},
		strays:      []string{"stray"},
		deleteOrder: true,
	})
}

// readinessBlueprint has an item whose custom readiness checks pass (by
// resource and by label selector, with several operators), and, when
// fail is set, an item whose check never passes within its timeout.
func readinessBlueprint(fail bool) string {
	failing := ""
	if fail {
		failing = `        - name: never-ready
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          timeout: 15s
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            updateStrategy: update
            manifests:
              - policy: manage
                manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: waiting, namespace: {{ $ns }}}, data: {state: pending}}
            readinessChecks:
              custom:
                - name: waiting-ready
                  resourceSelector:
                    - {apiVersion: v1, kind: ConfigMap, name: waiting, namespace: {{ $ns }}}
                  requirements:
                    - {jsonPath: .data.state, operator: ==, values: [{value: ready}]}
`
	}
	return blueprintHeader + `deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      {{- $ns := .imports.namespace }}
      deployItems:
        - name: ready
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            updateStrategy: update
            manifests:
              - policy: manage
                manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: ready, namespace: {{ $ns }}, labels: {tier: checked}}, data: {state: ready, replicas: "3"}}
              - policy: manage
                manifest: {apiVersion: v1, kind: ConfigMap, metadata: {name: also-ready, namespace: {{ $ns }}, labels: {tier: checked}}, data: {state: ready, replicas: "1"}}
            readinessChecks:
              disableDefault: true
              custom:
                - name: by-resource
                  resourceSelector:
                    - {apiVersion: v1, kind: ConfigMap, name: ready, namespace: {{ $ns }}}
                  requirements:
                    - {jsonPath: .data.state, operator: ==, values: [{value: ready}]}
                    - {jsonPath: .data.replicas, operator: in, values: [{value: "1"}, {value: "3"}]}
                    - {jsonPath: .data.missing, operator: "!", values: []}
                - name: by-label
                  labelSelector: {apiVersion: v1, kind: ConfigMap, matchLabels: {tier: checked}}
                  requirements:
                    - {jsonPath: .data.state, operator: exists}
                    - {jsonPath: .data.state, operator: "!=", values: [{value: broken}]}
` + failing
}

// TestLandscaperDifferential_readiness: custom readiness checks that
// pass, by resource and by label selector, with ==, in, !, exists and !=.
func TestLandscaperDifferential_readiness(t *testing.T) {
	t.Parallel()
	differential(t, diffCase{
		name:      "readiness",
		blueprint: map[string]string{"blueprint.yaml": readinessBlueprint(false)},
		targets:   []string{"cluster"},
		resources: []string{"configmaps"},
	})
}

// failingBlueprint has items that fail in different ways: a readiness
// check that never passes within the item's timeout, a mock item
// configured to fail, and an item that depends on a failed one and never
// runs; one item succeeds.
func failingBlueprint() string {
	return readinessBlueprint(true) + fmt.Sprintf(`        - name: mock-failed
          type: landscaper.gardener.cloud/mock
          config: {apiVersion: mock.deployer.landscaper.gardener.cloud/v1alpha1, kind: ProviderConfiguration, phase: Failed}
        - name: after-failed
          type: landscaper.gardener.cloud/mock
          dependsOn: [mock-failed]
          config: {apiVersion: mock.deployer.landscaper.gardener.cloud/v1alpha1, kind: ProviderConfiguration, export: %q}
`, "never")
}

// TestLandscaperDifferential_failingItems: the phases of the installation
// and of each item, and the error codes of the failed items.
func TestLandscaperDifferential_failingItems(t *testing.T) {
	t.Parallel()
	differential(t, diffCase{
		name:      "failing",
		blueprint: map[string]string{"blueprint.yaml": failingBlueprint()},
		targets:   []string{"cluster"},
		resources: []string{"configmaps"},
		explained: map[string]string{
			"items/after-failed":  "Items that never ran are Init",
			"reasons/mock-failed": "The mock deployer",
		},
	})
}
