package provider

import (
	"fmt"
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
