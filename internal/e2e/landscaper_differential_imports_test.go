package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
)

// exporterBlueprint exports, as a target, the cluster it imports, with a
// label of its own.
const exporterBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
exports:
  - {name: exported, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        exported:
          type: {{ .imports.cluster.spec.type }}
          labels: {role: exported}
          config: {{ .imports.cluster.spec.config | toJson }}
`

// userBlueprint deploys a ConfigMap to the target it imports, with what
// it knows of the target (its type, and the label its exporter gave it:
// Landscaper adds labels of its own, data.landscaper.gardener.cloud/*)
// and the data its parent gave it.
const userBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: exported, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: namespace, type: data, schema: {type: string}}
  - {name: text, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: user
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: exported}
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            updateStrategy: update
            manifests:
              - policy: manage
                manifest:
                  apiVersion: v1
                  kind: ConfigMap
                  metadata: {name: user, namespace: {{ .imports.namespace }}}
                  data:
                    text: {{ .imports.text | quote }}
                    targetType: {{ .imports.exported.spec.type | quote }}
                    targetRole: {{ index .imports.exported.metadata.labels "role" | quote }}
`

// optionalBlueprint has optional data imports: one given, one not given
// with a default, one not given without; a sub-installation exports a
// target that its sibling imports and deploys to.
func optionalBlueprint() string {
	quoted := func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	return fmt.Sprintf(blueprintHeader+`  - {name: given, type: data, required: false, schema: {type: string}}
  - {name: defaulted, type: data, required: false, default: {value: {greeting: hello}}, schema: {type: object}}
  - {name: missing, type: data, required: false, schema: {type: string}}
exports:
  - {name: seen, type: data, schema: {type: object}}
subinstallations:
  - apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: InstallationTemplate
    name: exporter
    blueprint:
      filesystem:
        blueprint.yaml: %s
    imports:
      targets:
        - {name: cluster, target: cluster}
    exports:
      targets:
        - {name: exported, target: shared}
  - apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: InstallationTemplate
    name: user
    blueprint:
      filesystem:
        blueprint.yaml: %s
    imports:
      targets:
        - {name: exported, target: shared}
      data:
        - {name: namespace, dataRef: namespace}
        - {name: given, dataRef: given}
        - {name: defaulted, dataRef: defaulted}
    importDataMappings:
      text: '(( given "/" defaulted.greeting ))'
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        seen:
          given: {{ .imports.given | quote }}
          defaulted: {{ .imports.defaulted | toJson }}
          hasMissing: {{ hasKey .imports "missing" }}
          keys: {{ keys .imports | sortAlpha | toJson }}
`, quoted(exporterBlueprint), quoted(userBlueprint))
}

// TestLandscaperDifferential_optionalImports: optional data imports given,
// defaulted and missing, as templates and data mappings see them, and a
// target exported by one sub-installation and deployed to by its sibling.
func TestLandscaperDifferential_optionalImports(t *testing.T) {
	t.Parallel()
	differential(t, diffCase{
		name:      "optional",
		blueprint: map[string]string{"blueprint.yaml": optionalBlueprint()},
		imports:   map[string]any{"given": "given-value"},
		targets:   []string{"cluster"},
		resources: []string{"configmaps"},
	})
}
