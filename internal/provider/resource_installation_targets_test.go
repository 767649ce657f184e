package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// targetsBlueprint imports a target, a target list and a target map,
// renders one mock item per target (target references by import, index
// and key), and exports data and a target.
const targetsBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - name: main
    targetType: landscaper.gardener.cloud/kubernetes-cluster
  - name: fleet
    type: targetList
    targetType: landscaper.gardener.cloud/kubernetes-cluster
  - name: regions
    type: targetMap
    targetType: landscaper.gardener.cloud/kubernetes-cluster
exports:
  - name: fleetSize
    type: data
    schema: {type: integer}
  - name: regionNames
    type: data
    schema: {type: array, items: {type: string}}
  - name: mainCluster
    type: target
    targetType: landscaper.gardener.cloud/kubernetes-cluster
deployExecutions:
  - name: default
    type: GoTemplate
    file: /deploy.yaml
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        fleetSize: {{ len .imports.fleet }}
        regionNames: {{ keys .imports.regions | sortAlpha | toJson }}
        mainCluster:
          type: {{ .imports.main.spec.type }}
          config: {{ toJson .imports.main.spec.config }}
`

const targetsDeploy = `deployItems:
{{- range $i, $t := .imports.fleet }}
  - name: fleet-{{ $i }}
    type: landscaper.gardener.cloud/mock
    target: {import: fleet, index: {{ $i }}}
    config: {export: {{ toJson $t.metadata.name }}}
{{- end }}
{{- range $k, $t := .imports.regions }}
  - name: region-{{ $k }}
    type: landscaper.gardener.cloud/mock
    target: {import: regions, key: {{ $k }}}
    config: {export: {{ $k }}}
{{- end }}
  - name: main
    type: landscaper.gardener.cloud/mock
    target: {import: main}
    config: {export: {{ .imports.main.spec.type }}}
`

// chainedBlueprint doubles a number it imports.
const chainedBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: count, type: data, schema: {type: integer}}
exports:
  - {name: doubled, type: data, schema: {type: integer}}
deployExecutions:
  - name: default
    type: Spiff
    template:
      deployItems:
        - name: double
          type: mock
          config:
            export: (( imports.count * 2 ))
exportExecutions:
  - name: default
    type: Spiff
    template:
      exports:
        doubled: (( deployitems.double ))
`

func targetsConfig() string {
	return fmt.Sprintf(`
locals {
  kubeconfig = yamlencode({
    kubeconfig = yamlencode({
      apiVersion        = "v1"
      kind              = "Config"
      clusters          = [{ name = "c", cluster = { server = "https://127.0.0.1:1" } }]
      users             = [{ name = "u", user = { token = "t0k3n-secret" } }]
      contexts          = [{ name = "c", context = { cluster = "c", user = "u" } }]
      "current-context" = "c"
    })
  })
  cluster = { type = "landscaper.gardener.cloud/kubernetes-cluster", config = local.kubeconfig }
}

resource "landscaper_installation" "targets" {
  name = "targets"
  blueprint = {
    filesystem = {
      "blueprint.yaml" = %q
      "deploy.yaml"    = %q
    }
  }
  targets      = { main = local.cluster }
  target_lists = { fleet = [local.cluster, local.cluster] }
  target_maps  = { regions = { eu = local.cluster, us = local.cluster } }
}

# Chained in HCL: Terraform orders the two roots, as Landscaper's root
# data objects would.
resource "landscaper_installation" "chained" {
  name      = "chained"
  blueprint = { filesystem = { "blueprint.yaml" = %q } }
  imports   = { count = landscaper_installation.targets.exports.fleetSize }
}
`, targetsBlueprint, targetsDeploy, chainedBlueprint)
}

func TestAccInstallation_targetsListsMapsAndChaining(t *testing.T) {
	items := tfjsonpath.New("status").AtMapKey("deploy_items")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: targetsConfig(),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("landscaper_installation.targets", tfjsonpath.New("exports").AtMapKey("fleetSize"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue("landscaper_installation.targets", tfjsonpath.New("exports").AtMapKey("regionNames"),
						knownvalue.TupleExact([]knownvalue.Check{knownvalue.StringExact("eu"), knownvalue.StringExact("us")})),
					statecheck.ExpectKnownValue("landscaper_installation.targets", tfjsonpath.New("target_exports").AtMapKey("mainCluster").AtMapKey("type"),
						knownvalue.StringExact("landscaper.gardener.cloud/kubernetes-cluster")),
					statecheck.ExpectKnownValue("landscaper_installation.targets", items.AtMapKey("fleet-1"), knownvalue.StringExact("Succeeded")),
					statecheck.ExpectKnownValue("landscaper_installation.targets", items.AtMapKey("region-us"), knownvalue.StringExact("Succeeded")),
					statecheck.ExpectKnownValue("landscaper_installation.chained", tfjsonpath.New("exports").AtMapKey("doubled"), knownvalue.Int64Exact(4)),
				},
			},
		},
	})
}

func TestAccInstallation_exportSchemaViolation(t *testing.T) {
	bp := `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
exports:
  - {name: port, type: data, schema: {type: integer}}
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        port: not-a-number
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name      = "app"
  blueprint = { filesystem = { "blueprint.yaml" = %q } }
}`, bp),
			ExpectError: regexp.MustCompile(`(?s)Installation failed.*export "port" does not match its schema`),
		}},
	})
}

// Target metadata reaches templates, and targets flow out of
// sub-installations: see testdata/installation/targetmeta/blueprint.yaml.
func TestAccInstallation_targetMetadataAndExports(t *testing.T) {
	ex := tfjsonpath.New("exports")
	str := knownvalue.StringExact
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
locals {
  kubeconfig = yamlencode({ kubeconfig = "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n" })
  kind       = "landscaper.gardener.cloud/kubernetes-cluster"
}

resource "landscaper_installation" "meta" {
  name      = "meta"
  blueprint = { path = %q }
  targets = {
    main = {
      name        = "prod-eu"
      type        = local.kind
      config      = local.kubeconfig
      labels      = { region = "eu", tier = "prod" }
      annotations = { owner = "team-a" }
    }
  }
  target_maps = {
    fleet = {
      a = { type = local.kind, config = local.kubeconfig, labels = { region = "us" } }
      b = { name = "fleet-b", type = local.kind, config = local.kubeconfig, labels = { region = "eu" } }
      c = { type = local.kind, config = local.kubeconfig, labels = { region = "eu" } }
    }
  }
}
`, testdataPath(t, "installation", "targetmeta")),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue("landscaper_installation.meta", ex.AtMapKey("main"), knownvalue.ObjectExact(map[string]knownvalue.Check{
					"name":    str("prod-eu"),
					"labels":  knownvalue.ObjectExact(map[string]knownvalue.Check{"region": str("eu"), "tier": str("prod")}),
					"owner":   str("team-a"),
					"euFleet": knownvalue.TupleExact([]knownvalue.Check{str("b"), str("c")}),
				})),
				statecheck.ExpectKnownValue("landscaper_installation.meta", ex.AtMapKey("read"), knownvalue.ObjectExact(map[string]knownvalue.Check{
					"cLabels":  knownvalue.ObjectExact(map[string]knownvalue.Check{"exported": str("yes"), "from": str("prod-eu")}),
					"mKeys":    knownvalue.TupleExact([]knownvalue.Check{str("exp"), str("fb")}),
					"expFrom":  str("prod-eu"),
					"fbName":   str("fleet-b"),
					"fbRegion": str("eu"),
				})),
				statecheck.ExpectKnownValue("landscaper_installation.meta", tfjsonpath.New("target_exports").AtMapKey("rootOut").AtMapKey("labels"),
					knownvalue.MapExact(map[string]knownvalue.Check{"exported": str("yes"), "from": str("prod-eu")})),
				statecheck.ExpectKnownValue("landscaper_installation.meta", tfjsonpath.New("status").AtMapKey("deploy_items").AtMapKey("reader/read"),
					str("Succeeded")),
			},
		}},
	})
}
