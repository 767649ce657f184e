terraform {
  required_providers {
    kubernetes = { source = "hashicorp/kubernetes" }
  }
}

provider "kubernetes" {
  config_path = "../kubeconfig"
}

resource "kubernetes_manifest" "app" {
  manifest = {
    apiVersion = "v1"
    kind       = "ConfigMap"
    metadata = {
      name      = "moved-kubernetes"
      namespace = "default"
      labels    = { app = "moved" }
    }
    data = { greeting = "hello from kubernetes_manifest" }
  }
}
