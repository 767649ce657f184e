package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

func TestAccSmoke(t *testing.T) {
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: `
resource "landscaper_execution" "app" {
  name = "app"
  deploy_items = {
    db  = { type = "mock", config = jsonencode({ export = { host = "db.local", port = 5432 } }) }
    web = { type = "mock", depends_on = ["db"], config = jsonencode({ export = "x" }) }
  }
}
resource "terraform_data" "use" {
  input = landscaper_execution.app.exports.db.host
}
`,
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr("landscaper_execution.app", "status.phase", "Succeeded"),
					resource.TestCheckResourceAttr("terraform_data.use", "output", "db.local"),
				),
			},
			{
				Config: `
resource "landscaper_execution" "app" {
  name = "app"
  deploy_items = {
    db  = { type = "mock", config = jsonencode({ export = { host = "db.local", port = 5432 } }) }
    web = { type = "mock", depends_on = ["db"], config = jsonencode({ export = "y" }) }
  }
}
resource "terraform_data" "use" {
  input = landscaper_execution.app.exports.db.host
}
`,
				Check: resource.ComposeTestCheckFunc(
					resource.TestCheckResourceAttr("landscaper_execution.app", "status.phase", "Succeeded"),
					resource.TestCheckResourceAttr("landscaper_execution.app", "exports.web", "y"),
				),
			},
		},
	})
}
