# In the module of examples/installation: render its blueprint without running
# anything, to see what the deploy items would be configured with.
data "landscaper_blueprint" "app" {
  blueprint = { ref = "blueprint" }
  component = {
    name         = "github.com/acme/app"
    version      = "v1.0.0"
    constructors = ["${path.module}/component-constructor.yaml"]
  }

  imports = {
    environment = "staging"
    replicas    = 3
    scripts     = "${abspath(path.module)}/scripts"
  }
}

output "app_config" {
  value = jsondecode(data.landscaper_blueprint.app.deploy_items["app"].config)
}

output "monitoring_imports" {
  value = jsondecode(data.landscaper_blueprint.app.installations["monitoring"].imports)
}
