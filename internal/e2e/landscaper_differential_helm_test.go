package e2e

import (
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer/helm/helmtest"
)

// helmBlueprint installs the demo chart, given inline as a base64 archive
// import, twice: as a helm release with values from the imports and an
// export read from one of its objects, and with helmDeployment false
// (rendered and applied as manifests).
const helmBlueprint = blueprintHeader + `  - {name: chart, type: data, schema: {type: string}}
  - {name: message, type: data, schema: {type: string}}
exports:
  - {name: message, type: data, schema: {type: string}}
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      {{- $ns := .imports.namespace }}
      deployItems:
        - name: release
          type: landscaper.gardener.cloud/helm
          target: {import: cluster}
          config:
            apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1
            kind: ProviderConfiguration
            name: demo
            namespace: {{ $ns }}
            chart:
              archive: {raw: {{ .imports.chart }}}
            values:
              message: {{ .imports.message | quote }}
              nested: {color: blue}
            exports:
              exports:
                - key: message
                  jsonPath: .data.message
                  fromResource: {apiVersion: v1, kind: ConfigMap, name: demo-config, namespace: {{ $ns }}}
        - name: rendered
          type: landscaper.gardener.cloud/helm
          target: {import: cluster}
          config:
            apiVersion: helm.deployer.landscaper.gardener.cloud/v1alpha1
            kind: ProviderConfiguration
            name: plain
            namespace: {{ $ns }}
            helmDeployment: false
            chart:
              archive: {raw: {{ .imports.chart }}}
            values:
              message: rendered
              nested: {color: green}
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        message: {{ .values.deployitems.release.message | quote }}
`

// TestLandscaperDifferential_helm: the helm deployer with an inline chart,
// as a release and with helmDeployment false, and an export read from a
// release's object.
func TestLandscaperDifferential_helm(t *testing.T) {
	t.Parallel()
	differential(t, diffCase{
		name:      "helm",
		blueprint: map[string]string{"blueprint.yaml": helmBlueprint},
		imports: map[string]any{
			"chart":   helmtest.ArchiveBase64(t, helmtest.Demo, ""),
			"message": "hello from helm",
		},
		targets:   []string{"cluster"},
		resources: []string{"configmaps", "secrets"},
	})
}
