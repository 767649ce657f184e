# Deploys to a real cluster, for example one made with
#   kind create cluster --name landscaper     (or: k3d cluster create landscaper)
# then, once `make install-mirror` has installed the provider:
#   terraform init
#   terraform apply -var kubeconfig=$HOME/.kube/config
# On the local control plane of `make cluster`, which has no nodes, the
# podinfo pods never start; do not wait for them:
#   terraform apply -var kubeconfig=<its KUBECONFIG> -var readiness_checks=false
terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
}

variable "kubeconfig" {
  type        = string
  description = "Path of the kubeconfig of the cluster to deploy to."
}

variable "readiness_checks" {
  type        = bool
  description = "Wait until the podinfo release's workloads are ready (Landscaper's default readiness checks). Set false on a cluster without nodes, such as `make cluster`'s."
  default     = true
}

variable "chart_repository" {
  type        = string
  description = "A helm chart repository holding the podinfo chart."
  default     = "https://stefanprodan.github.io/podinfo"
}

# The cluster is the provider's: Terraform does not store a provider's
# configuration, so the kubeconfig stays out of the state.
provider "landscaper" {
  targets = {
    local = {
      type   = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = file(var.kubeconfig) })
    }
  }
}

resource "landscaper_execution" "app" {
  name = "app"

  targets = {
    cluster = { name = "local" }
  }

  deploy_items = {
    # Landscaper's manifest deployer: a namespace and its settings.
    namespace = {
      type   = "landscaper.gardener.cloud/kubernetes-manifest"
      target = "cluster"
      config = yamlencode({
        apiVersion = "manifest.deployer.landscaper.gardener.cloud/v1alpha2"
        kind       = "ProviderConfiguration"
        manifests = [
          { policy = "manage", manifest = { apiVersion = "v1", kind = "Namespace", metadata = { name = "demo" } } },
          { policy = "manage", manifest = {
            apiVersion = "v1", kind = "ConfigMap"
            metadata   = { name = "settings", namespace = "demo" }
            data       = { greeting = "hello from Terraform" }
          } },
        ]
        exports = { exports = [{
          key          = "greeting"
          jsonPath     = ".data.greeting"
          fromResource = { apiVersion = "v1", kind = "ConfigMap", name = "settings", namespace = "demo" }
        }] }
      })
    }

    # Landscaper's helm deployer: a real helm release, waiting for readiness.
    podinfo = {
      type       = "landscaper.gardener.cloud/helm"
      target     = "cluster"
      depends_on = ["namespace"]
      timeout    = "10m"
      config = yamlencode({
        apiVersion = "helm.deployer.landscaper.gardener.cloud/v1alpha1"
        kind       = "ProviderConfiguration"
        name       = "podinfo"
        namespace  = "demo"
        chart = { helmChartRepo = {
          helmChartRepoUrl = var.chart_repository
          helmChartName    = "podinfo"
          helmChartVersion = "6.7.1"
        } }
        values          = { replicaCount = 1, ui = { message = "deployed by landscaper_execution" } }
        readinessChecks = { disableDefault = !var.readiness_checks }
        exports         = { exports = [{ key = "message", jsonPath = ".Values.ui.message" }] }
      })
    }
  }
}

output "greeting" {
  value = landscaper_execution.app.exports.namespace.greeting
}
