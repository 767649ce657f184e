# A progressive rollout of one component to a fleet of clusters with
# landscaper_execution: one deploy item per cluster, all in rollout group
# "fleet". A changed spec reaches eu-1 first, bakes for 10 minutes while
# its health command runs, then a quarter of the rest, then the rest.
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

variable "chart_version" {
  type    = string
  default = "1.0.0"
}

resource "landscaper_execution" "fleet" {
  name = "fleet"

  targets = {
    for name, kubeconfig in var.clusters : name => {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = file(kubeconfig) })
    }
  }

  deploy_items = {
    for name, _ in var.clusters : name => {
      type          = "exec"
      target        = name
      rollout_group = "fleet"
      config = jsonencode({
        command = ["sh", "-c", "echo deploying chart $VERSION to $TARGET_NAME"]
        env     = { VERSION = var.chart_version, TARGET_NAME = name }
      })
    }
  }

  rollout = {
    canary     = { members = ["eu-1"] }
    duration   = "10m"
    batches    = ["25%", "100%"]
    auto_pause = { max_restarts = 2 }
    auto_fail  = { max_restarts = 5 }
    paused     = false
    health = {
      # Kubernetes items report their pods' restarts themselves; for exec
      # items, a command judges the member's health (non-zero: unhealthy).
      command  = ["sh", "-c", "kubectl --context kind-$LANDSCAPER_MEMBER get --raw /readyz"]
      interval = "30s"
    }
  }
}

output "rollout" {
  value = landscaper_execution.fleet.status.rollout
}
