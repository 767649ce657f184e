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

// An exec item rendered inside an installation gets the rest of
// Landscaper's container contract: CONTENT_PATH holds the blueprint's
// files, COMPONENT_DESCRIPTOR_PATH the resolved component descriptor.
func TestAccInstallation_execContainerContract(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name      = "app"
  blueprint = { ref = "blueprint" }
  component = {
    name         = "example.com/contract"
    version      = "v0.3.0"
    constructors = [%q]
  }
}`, testdataPath(t, "installation", "contract", "component-constructor.yaml")),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(inst, tfjsonpath.New("exports").AtMapKey("content"), knownvalue.StringExact("hello from the blueprint")),
				statecheck.ExpectKnownValue(inst, tfjsonpath.New("exports").AtMapKey("component"), knownvalue.StringExact("example.com/contract")),
			},
		}},
	})
}

// The installation's own timeouts bound a whole apply: when one expires,
// running items stop and fail with ERR_TIMEOUT.
func TestAccInstallation_operationTimeout(t *testing.T) {
	bp := `apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
deployExecutions:
  - name: default
    type: GoTemplate
    template: |
      deployItems:
        - name: never-ready
          type: landscaper.gardener.cloud/mock
          config: {phase: Progressing}
`
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
resource "landscaper_installation" "app" {
  name      = "app"
  blueprint = { filesystem = { "blueprint.yaml" = %q } }
  timeouts  = { create = "2s" }
}`, bp),
			ExpectError: regexp.MustCompile(`(?s)Deploy item "never-ready" failed.*ERR_TIMEOUT`),
		}},
	})
}
