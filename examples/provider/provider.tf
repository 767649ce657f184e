terraform {
  required_providers {
    landscaper = {
      source = "landscaper-tf/landscaper"
    }
  }
}

provider "landscaper" {
  # Deploy items running at once, across all executions of this provider.
  max_parallelism = 10
}

# Components from an OCM repository in an OCI registry, as Landscaper's
# Context says where they are (see the guide "Components from OCM
# repositories").
# provider "landscaper" {
#   repository_context      = { type = "OCIRegistry", baseUrl = "ghcr.io/acme/ocm" }
#   registry_credentials    = { "ghcr.io" = { username = "acme-ci", password = var.ghcr_token } }
#   verification_signatures = { acme = { public_key = file("acme.pub") } }
# }
