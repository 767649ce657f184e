# A blueprint from a component, as Landscaper runs it: the component
# constructor names the blueprint resource and every component it references.
# It needs those files and the provider's target "prod-eu" (see the provider's
# page). examples/installation is a complete module to run: once
# `make install-mirror` has installed the provider, terraform init, then
# terraform apply.
terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
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
    environment = "staging"
    replicas    = 3
  }

  # The provider's target "prod-eu" (see the provider's targets): the state
  # keeps its name and server, never its kubeconfig. An inline target,
  # { type = "...", config = "..." }, works too, and is stored in the state.
  targets = {
    cluster = { name = "prod-eu" }
  }

  timeouts = { create = "30m", update = "30m", delete = "30m" }
}

# A blueprint directory next to the module, no component needed.
resource "landscaper_installation" "local" {
  name      = "local"
  blueprint = { path = "${path.module}/blueprint" }
  imports   = { url = landscaper_installation.app.exports.url }
}

# A secret that no state or plan keeps (Terraform 1.11+, OpenTofu 1.11+):
# an ephemeral variable, given write-only. Change the version whenever the
# value changes; the deploy items it reaches run again with the new one.
variable "db_password" {
  type      = string
  ephemeral = true
}

resource "landscaper_installation" "db" {
  name      = "db"
  blueprint = { path = "${path.module}/blueprint-db" }
  targets   = { cluster = { name = "prod-eu" } }

  sensitive_imports_wo         = { password = var.db_password }
  sensitive_imports_wo_version = 3
}
