package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
)

// producerBlueprint deploys a ConfigMap and exports a greeting computed by
// a mock item from the imported prefix.
const producerBlueprint = blueprintHeader + `  - {name: prefix, type: data, schema: {type: string}}
exports:
  - {name: greeting, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: config
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {import: cluster}
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            updateStrategy: update
            manifests:
              - policy: manage
                manifest:
                  apiVersion: v1
                  kind: ConfigMap
                  metadata: {name: producer, namespace: {{ .imports.namespace }}}
                  data: {prefix: {{ .imports.prefix | quote }}}
        - name: greeter
          type: landscaper.gardener.cloud/mock
          config:
            apiVersion: mock.deployer.landscaper.gardener.cloud/v1alpha1
            kind: ProviderConfiguration
            export: {greeting: {{ printf "%s, world" .imports.prefix | quote }}}
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        greeting: {{ .values.deployitems.greeter.greeting | quote }}
`

// consumerBlueprint deploys a ConfigMap to each element of a target list
// and of a target map, and one to a single target, with the message its
// parent mapped from the producer's export. Its export execution counts the
// target list's and map's elements from .imports: Landscaper's
// .values.targets holds one arbitrary element of each (see the guide).
const consumerBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: fleet, type: targetList, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: regions, type: targetMap, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: second, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: namespace, type: data, schema: {type: string}}
  - {name: message, type: data, schema: {type: string}}
exports:
  - {name: echoed, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      {{- $ns := .imports.namespace }}
      {{- $message := .imports.message }}
      {{- $items := list }}
      {{- range $i, $t := .imports.fleet }}
      {{- $items = append $items (dict "name" (printf "fleet-%d" $i) "target" (dict "import" "fleet" "index" $i) "object" $t) }}
      {{- end }}
      {{- range $k, $t := .imports.regions }}
      {{- $items = append $items (dict "name" (printf "region-%s" $k) "target" (dict "import" "regions" "key" $k) "object" $t) }}
      {{- end }}
      {{- $items = append $items (dict "name" "second" "target" (dict "import" "second") "object" .imports.second) }}
      deployItems:
      {{- range $items }}
        - name: {{ .name }}
          type: landscaper.gardener.cloud/kubernetes-manifest
          target: {{ .target | toJson }}
          config:
            apiVersion: manifest.deployer.landscaper.gardener.cloud/v1alpha2
            kind: ProviderConfiguration
            updateStrategy: update
            manifests:
              - policy: manage
                manifest:
                  apiVersion: v1
                  kind: ConfigMap
                  metadata: {name: {{ .name }}, namespace: {{ $ns }}}
                  data: {target: {{ .object.metadata.name | quote }}, type: {{ .object.spec.type | quote }}, message: {{ $message | quote }}}
      {{- end }}
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        echoed: {{ printf "%s (%d targets, second %s)" .values.dataobjects.message (add (len .imports.fleet) (len .imports.regions)) .values.targets.second.spec.type | quote }}
`

// subinstBlueprint has a static sub-installation (producer) and one that
// a GoTemplate renders (consumer), whose message is mapped from the
// producer's export with importDataMappings; the consumer gets the target
// list, the target map and one element of the list. The root exports
// what both export.
func subinstBlueprint() string {
	producer, err := json.Marshal(producerBlueprint)
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf(`apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: fleet, type: targetList, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: regions, type: targetMap, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: namespace, type: data, schema: {type: string}}
  - {name: prefix, type: data, schema: {type: string}}
exports:
  - {name: final, type: data, schema: {type: object}}
subinstallations:
  - apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: InstallationTemplate
    name: producer
    blueprint:
      filesystem:
        blueprint.yaml: %s
    imports:
      targets:
        - {name: cluster, target: cluster}
      data:
        - {name: namespace, dataRef: namespace}
        - {name: prefix, dataRef: prefix}
    exports:
      data:
        - {name: greeting, dataRef: greeting}
subinstallationExecutions:
  - name: consumers
    type: GoTemplate
    template: |
      subinstallations:
        - apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: InstallationTemplate
          name: consumer
          blueprint:
            filesystem:
              blueprint.yaml: {{ readFile "consumer/blueprint.yaml" | toString | toJson }}
          imports:
            targets:
              - {name: fleet, targetListRef: fleet}
              - {name: regions, targetMapRef: regions}
              - {name: second, target: "fleet[1]"}
            data:
              - {name: namespace, dataRef: namespace}
              - {name: greeting, dataRef: greeting}
          importDataMappings:
            message: '(( "message: " greeting ))'
          exports:
            data:
              - {name: echoed, dataRef: echoed}
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        final:
          greeting: {{ .values.dataobjects.greeting | quote }}
          echoed: {{ .values.dataobjects.echoed | quote }}
`, producer)
}

// TestLandscaperDifferential_subinstallations: a static and a templated
// sub-installation, data flowing from one to the other through an export
// and importDataMappings, target lists and maps passed down whole and by
// element, and exports collected by the root.
func TestLandscaperDifferential_subinstallations(t *testing.T) {
	t.Parallel()
	differential(t, diffCase{
		name: "subinst",
		blueprint: map[string]string{
			"blueprint.yaml":          subinstBlueprint(),
			"consumer/blueprint.yaml": consumerBlueprint,
		},
		imports:     map[string]any{"prefix": "hello"},
		targets:     []string{"cluster"},
		targetLists: map[string]int{"fleet": 2},
		targetMaps:  map[string][]string{"regions": {"eu", "us"}},
		resources:   []string{"configmaps"},
		explained: map[string]string{
			"objects/configmaps/fleet-*/data/target": "Target lists keep their order",
		},
	})
}
