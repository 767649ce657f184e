package e2e

import "testing"

// blueprintHeader starts a blueprint whose deploy namespace is the data
// import "namespace" and whose target import is "cluster".
const blueprintHeader = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchema: "https://json-schema.org/draft/2019-09/schema"
imports:
  - {name: cluster, type: target, targetType: landscaper.gardener.cloud/kubernetes-cluster}
  - {name: namespace, type: data, schema: {type: string}}
`

// goTemplateBlueprint renders a ConfigMap with sprig's functions and
// Landscaper's own (readFile, readDir, toYaml, fromYaml, parseOCIRef,
// ociRefRepo, ociRefVersion), a mock item whose export the export
// execution reads beside the manifest item's export and the imports, and
// takes an optional import that is not given.
const goTemplateBlueprint = blueprintHeader + `  - {name: config, type: data, schema: {type: object}}
  - {name: replicas, type: data, schema: {type: integer}}
  - {name: note, type: data, required: false, schema: {type: string}}
exports:
  - {name: summary, type: data, schema: {type: object}}
  - {name: upper, type: data, schema: {type: string}}
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
                  metadata:
                    name: functions
                    namespace: {{ .imports.namespace }}
                    labels: {app: {{ .imports.config.name | lower | trunc 5 | quote }}}
                  data:
                    upper: {{ .imports.config.name | upper | quote }}
                    sha: {{ .imports.config.name | sha256sum | quote }}
                    b64: {{ .imports.config.name | b64enc | quote }}
                    sorted: {{ list "c" "a" "b" | sortAlpha | join "," | quote }}
                    dict: {{ dict "a" 1 "b" (list 1 2) | toJson | quote }}
                    replicas: {{ .imports.replicas | quote }}
                    replicasPlusOne: {{ add .imports.replicas 1 | quote }}
                    asYaml: {{ .imports.config | toYaml | quote }}
                    file: {{ readFile "data/motd.txt" | quote }}
                    dir: {{ readDir "data" | toJson | quote }}
                    fromYaml: {{ (readFile "data/values.yaml" | toString | fromYaml).greeting | quote }}
                    ociRepo: {{ ociRefRepo .imports.config.image | quote }}
                    ociVersion: {{ ociRefVersion .imports.config.image | quote }}
                    parsed: {{ parseOCIRef .imports.config.image | toJson | quote }}
                    note: {{ .imports.note | default "no note" | quote }}
                    hasNote: {{ hasKey .imports "note" | quote }}
                    semver: {{ semverCompare ">=1.2.0" "1.4.0" | quote }}
                    ternary: {{ ternary "yes" "no" (gt (int .imports.replicas) 2) | quote }}
            exports:
              exports:
                - key: upper
                  jsonPath: .data.upper
                  fromResource: {apiVersion: v1, kind: ConfigMap, name: functions, namespace: {{ .imports.namespace }}}
        - name: mock
          type: landscaper.gardener.cloud/mock
          config:
            apiVersion: mock.deployer.landscaper.gardener.cloud/v1alpha1
            kind: ProviderConfiguration
            export:
              image: {{ .imports.config.image }}
              replicas: {{ .imports.replicas }}
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        upper: {{ .values.deployitems.config.upper | quote }}
        summary:
          image: {{ .values.deployitems.mock.image | quote }}
          replicas: {{ .values.deployitems.mock.replicas }}
          name: {{ .values.dataobjects.config.name | quote }}
          namespace: {{ .values.dataobjects.namespace | quote }}
`

// TestLandscaperDifferential_goTemplate: GoTemplate with sprig's and
// Landscaper's functions, blueprint files, an optional import not given,
// deploy item exports of a manifest and a mock item, and export executions.
func TestLandscaperDifferential_goTemplate(t *testing.T) {
	t.Parallel()
	differential(t, diffCase{
		name: "gotemplate",
		blueprint: map[string]string{
			"blueprint.yaml":   goTemplateBlueprint,
			"data/motd.txt":    "hello from a blueprint file\n",
			"data/values.yaml": "greeting: hi\n",
		},
		imports: map[string]any{
			"config":   map[string]any{"name": "Differential", "image": "eu.gcr.io/gardener-project/landscaper/app:v1.4.0"},
			"replicas": 3,
		},
		targets:   []string{"cluster"},
		resources: []string{"configmaps"},
	})
}

// spiffBlueprint renders with Spiff: arithmetic, string functions, a
// lambda, a file of the blueprint read with read(), the functions Spiff
// v1.7.0-beta-8 added (deepmerge, filter, optional), and Landscaper's
// parseOCIRef; its export execution is Spiff too.
const spiffBlueprint = blueprintHeader + `  - {name: words, type: data, schema: {type: array, items: {type: string}}}
  - {name: base, type: data, schema: {type: object}}
  - {name: image, type: data, schema: {type: string}}
exports:
  - {name: merged, type: data, schema: {type: object}}
  - {name: count, type: data, schema: {type: integer}}
deployExecutions:
  - name: default
    type: Spiff
    file: /deploy-execution.yaml
exportExecutions:
  - name: default
    type: Spiff
    template:
      exports:
        merged: (( deepmerge(values.dataobjects.base, { "nested" = { "added" = true } }) ))
        count: (( length(values.dataobjects.words) ))
`

const spiffDeployExecution = `deployItems:
  - name: spiff
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
              name: spiff
              namespace: (( imports.namespace ))
            data:
              joined: (( join(",", imports.words) ))
              sum: (( "" 2 * length(imports.words) + 1 ))
              long: (( join(",", filter[imports.words|w|-> length(w) > 4]) ))
              lambda: (( "" ( |x|-> x * 3 )(7) ))
              motd: (( read("data/motd.txt", "text") ))
              merged: (( asjson(deepmerge(imports.base, { "nested" = { "b" = 2 } })) ))
              optional: (( asjson(optional(true, { "x" = 1 }) || "absent") ))
              repo: (( parseOCIRef(imports.image)[0] ))
              tag: (( parseOCIRef(imports.image)[1] ))
              substr: (( substr(imports.image, 0, 9) ))
              base64: (( base64(join("-", imports.words)) ))
`

// TestLandscaperDifferential_spiff: the Spiff executor, in deploy and
// export executions, with a template file of the blueprint.
func TestLandscaperDifferential_spiff(t *testing.T) {
	t.Parallel()
	differential(t, diffCase{
		name: "spiff",
		blueprint: map[string]string{
			"blueprint.yaml":        spiffBlueprint,
			"deploy-execution.yaml": spiffDeployExecution,
			"data/motd.txt":         "hello from spiff\n",
		},
		imports: map[string]any{
			"words": []any{"alpha", "beta", "gamma"},
			"base":  map[string]any{"a": 1, "nested": map[string]any{"a": "x"}},
			"image": "eu.gcr.io/gardener-project/landscaper/app:v1.4.0",
		},
		targets:   []string{"cluster"},
		resources: []string{"configmaps"},
	})
}
