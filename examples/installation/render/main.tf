# The example's blueprint rendered without running anything, for
# installation.tftest.hcl: the same blueprint, component and imports as the
# installation in ../main.tf.
terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
}

variable "environment" {
  type    = string
  default = "staging"
}

data "landscaper_blueprint" "app" {
  blueprint = { ref = "blueprint" }
  component = {
    name         = "github.com/acme/app"
    version      = "v1.0.0"
    constructors = ["${path.module}/../component-constructor.yaml"]
  }

  imports = {
    environment = var.environment
    replicas    = 3
    scripts     = "${abspath(path.module)}/../scripts"
  }
}

# Every rendered deploy item's config, decoded, by "<installation path>/<item>".
output "configs" {
  value = { for k, item in data.landscaper_blueprint.app.deploy_items : k => jsondecode(item.config) }
}
