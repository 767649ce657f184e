# A progressive rollout with landscaper_installation. The blueprint renders
# one deploy item per cluster of the target map "clusters"; those renders
# are the rollout's members, named by cluster. A new app_version reaches
# the first cluster, bakes while the health command watches it, then a
# quarter of the rest, then the rest.
# Once `make install-mirror` has installed the provider: terraform init, then
#   terraform apply -var 'clusters={"eu-1"="eu-1.kubeconfig", ...}'
terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
}

variable "clusters" {
  description = "Kubeconfig file per cluster name, such as kind or k3d clusters."
  type        = map(string)
}

variable "app_version" {
  type    = string
  default = "1.0.0"
}

variable "bake" {
  description = "How long the canary bakes."
  type        = string
  default     = "10m"
}

variable "health_command" {
  description = "Judges a canary member's health during the bake (non-zero: unhealthy)."
  type        = list(string)
  default     = ["sh", "-c", "kubectl --context kind-$LANDSCAPER_MEMBER get --raw /readyz"]
}

variable "paused" {
  type    = bool
  default = false
}

# The clusters are the provider's targets: their kubeconfigs stay out of
# the state and the plans, which show only the names the map uses.
provider "landscaper" {
  targets = {
    for name, kubeconfig in var.clusters : name => {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = file(kubeconfig) })
      labels = { region = split("-", name)[0] }
    }
  }
}

resource "landscaper_installation" "fleet" {
  name      = "fleet"
  blueprint = { path = "${path.module}/blueprint" }
  imports   = { version = var.app_version }

  target_maps = {
    clusters = { for name in keys(var.clusters) : name => { name = name } }
  }

  rollout = {
    canary     = { members = [sort(keys(var.clusters))[0]] }
    duration   = var.bake
    batches    = ["25%", "100%"]
    auto_pause = { max_restarts = 2 }
    auto_fail  = { max_restarts = 5 }
    paused     = var.paused
    health = {
      command  = var.health_command
      interval = "30s"
    }
  }
}

output "rollout" {
  value = landscaper_installation.fleet.status.rollout["clusters"].phase
}

output "members_on_new_spec" {
  value = sort([for m, s in landscaper_installation.fleet.status.rollout["clusters"].members : m if s.new_spec])
}
