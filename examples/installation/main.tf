# An installation as a team would keep it in its repository: the HCL module,
# the blueprints it runs and the component constructor that names them, side
# by side. The blueprints are written as for a Landscaper cluster; here they
# run in-process, with exec and mock deploy items, so no cluster is needed.
# Once `make install-mirror` has installed the provider: terraform init, then
# terraform apply, or terraform test for installation.tftest.hcl.
terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
}

variable "environment" {
  type    = string
  default = "staging"
}

resource "landscaper_installation" "app" {
  name = "app"

  blueprint = { ref = "blueprint" }
  component = {
    name         = "github.com/acme/app"
    version      = "v1.0.0"
    constructors = ["${path.module}/component-constructor.yaml"]
  }

  imports = {
    environment = var.environment
    replicas    = 3
    scripts     = "${abspath(path.module)}/scripts"
  }
}

output "url" {
  value = landscaper_installation.app.exports.url
}

output "dashboard" {
  value = landscaper_installation.app.exports.dashboard
}
