# The provider is found by plain `terraform init` once `make install-mirror`
# has installed it (from a clone of the repository; no registry needed).
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

# Clusters defined here are used by resources by name
# (targets = { cluster = { name = "prod-eu" } }). Terraform never stores a
# provider's configuration, and an ephemeral variable is not even kept in a
# saved plan: the kubeconfig stays out of the state (see the guide "Security").
# variable "kubeconfig" {
#   type      = string
#   ephemeral = true
# }
#
# provider "landscaper" {
#   targets = {
#     "prod-eu" = {
#       type   = "landscaper.gardener.cloud/kubernetes-cluster"
#       config = yamlencode({ kubeconfig = var.kubeconfig })
#       labels = { region = "eu" }
#     }
#   }
#   # Only these deployers may run; an exec item from a blueprint is a plan-time error.
#   allowed_deployers = ["landscaper.gardener.cloud/kubernetes-manifest", "landscaper.gardener.cloud/helm"]
# }
