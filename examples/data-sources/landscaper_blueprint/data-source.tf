# Renders the blueprint of examples/installation without running anything, to
# see what its deploy items would be configured with. Save it as
# preview/main.tf inside examples/installation (a module of its own, next to
# the component constructor it reads), then, once `make install-mirror` has
# installed the provider:
#   cd preview && terraform init && terraform apply
# The apply reads the data source and shows the outputs; nothing is deployed.
terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
}

data "landscaper_blueprint" "app" {
  blueprint = { ref = "blueprint" }
  component = {
    name         = "github.com/acme/app"
    version      = "v1.0.0"
    constructors = ["${path.module}/../component-constructor.yaml"]
  }

  imports = {
    environment = "staging"
    replicas    = 3
    scripts     = "${abspath(path.module)}/../scripts"
  }
}

output "app_config" {
  value = jsondecode(data.landscaper_blueprint.app.deploy_items["app"].config)
}

output "monitoring_imports" {
  value = jsondecode(data.landscaper_blueprint.app.installations["monitoring"].imports)
}
