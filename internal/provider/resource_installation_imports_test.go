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

// importsBlueprint declares imports with localTypes (local://), a schema
// file of the blueprint (blueprint://), a default, and a conditional
// import; its import executions add a binding (Spiff) and report errors
// (GoTemplate) when prefix and suffix are equal. A sub-installation imports
// the defaulted import from the installation's context, as in Landscaper.
const importsBlueprint = `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
jsonSchemaVersion: https://json-schema.org/draft/2019-09/schema
localTypes:
  word:
    type: string
    pattern: "^[a-z]+$"
imports:
  - name: prefix
    type: data
    schema: {$ref: "local://word"}
  - name: suffix
    type: data
    schema: {$ref: "blueprint://schemas/suffix.json"}
  - name: replicas
    type: data
    required: false
    default: {value: 2}
    schema: {type: integer}
  - name: tls
    type: data
    required: false
    schema: {type: boolean}
    imports:
      - name: certificate
        type: data
        schema: {type: string}
exports:
  - {name: compound, type: data, schema: {type: string}}
  - {name: replicas, type: data, schema: {type: integer}}
  - {name: certificate, type: data, schema: {type: string}}
  - {name: doubled, type: data, schema: {type: integer}}
  - {name: contextReplicas, type: data, schema: {type: integer}}
subinstallations:
  - apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: InstallationTemplate
    name: double
    blueprint:
      filesystem:
        blueprint.yaml: |
          apiVersion: landscaper.gardener.cloud/v1alpha1
          kind: Blueprint
          jsonSchemaVersion: https://json-schema.org/draft/2019-09/schema
          imports:
            - {name: replicas, type: data, schema: {type: integer}}
          exports:
            - {name: doubled, type: data, schema: {type: integer}}
          exportExecutions:
            - name: default
              type: GoTemplate
              template: |
                exports:
                  doubled: {{ mul .imports.replicas 2 }}
    imports:
      data:
        - {name: replicas, dataRef: replicas}
    exports:
      data:
        - {name: doubled, dataRef: doubled}
importExecutions:
  - name: check
    type: GoTemplate
    template: |
      errors:
      {{- if eq .imports.prefix .imports.suffix }}
        - prefix and suffix must differ
      {{- end }}
  - name: compose
    type: Spiff
    template:
      bindings:
        compound: (( imports.prefix "-" imports.suffix ))
exportExecutions:
  - name: default
    type: GoTemplate
    template: |
      exports:
        compound: {{ .imports.compound }}
        replicas: {{ .imports.replicas }}
        certificate: {{ .imports.certificate | default "none" }}
        doubled: {{ .values.dataobjects.doubled }}
        contextReplicas: {{ .values.dataobjects.replicas }}
`

func importsConfig(imports string) string {
	return fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name = "app"
  blueprint = {
    filesystem = {
      "blueprint.yaml"      = %q
      "schemas/suffix.json" = jsonencode({ type = "string", maxLength = 5 })
    }
  }
  imports = %s
}`, importsBlueprint, imports)
}

func TestAccInstallation_importDeclarations(t *testing.T) {
	exports := tfjsonpath.New("exports")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				// A default applies, in the context too (the sub-installation
				// imports it, the export execution sees it among the data
				// objects); the import execution's binding is seen by the
				// export execution.
				Config: importsConfig(`{ prefix = "app", suffix = "web" }`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(inst, exports.AtMapKey("compound"), knownvalue.StringExact("app-web")),
					statecheck.ExpectKnownValue(inst, exports.AtMapKey("replicas"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(inst, exports.AtMapKey("doubled"), knownvalue.Int64Exact(4)),
					statecheck.ExpectKnownValue(inst, exports.AtMapKey("contextReplicas"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue(inst, exports.AtMapKey("certificate"), knownvalue.StringExact("none")),
				},
			},
			{
				// A conditional import, given with its parent.
				Config: importsConfig(`{ prefix = "app", suffix = "web", tls = true, certificate = "pem" }`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(inst, exports.AtMapKey("certificate"), knownvalue.StringExact("pem")),
				},
			},
			// A missing required import is named in the message: Terraform
			// cannot point at a map key the configuration does not have.
			{Config: importsConfig(`{ suffix = "web" }`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid import.*data import "prefix": required import is not given`)},
			{Config: importsConfig(`{ prefix = "App", suffix = "web" }`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid import.*prefix.*pattern|(?s)Invalid import.*prefix.*match`)},
			{Config: importsConfig(`{ prefix = "app", suffix = "toolong" }`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid import.*suffix`)},
			{Config: importsConfig(`{ prefix = "app", suffix = "web", certificate = "pem" }`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid import.*certificate`)},
			{Config: importsConfig(`{ prefix = "same", suffix = "same" }`), PlanOnly: true, ExpectError: regexp.MustCompile(`prefix and suffix must differ`)},
		},
	})
}
