terraform {
  required_providers {
    helm = { source = "hashicorp/helm" }
  }
}

provider "helm" {
  kubernetes {
    config_path = "../kubeconfig"
  }
}

resource "helm_release" "app" {
  name             = "moved-helm2"
  namespace        = "moved-helm2"
  create_namespace = true
  repository       = "http://127.0.0.1:18931"
  chart            = "demo"
  version          = "0.1.0"
  values           = [yamlencode({ message = "from-helm2", nested = { color = "blue" } })]
  set {
    name  = "nested.color"
    value = "green"
  }
  set {
    name  = "replicas"
    value = "2"
  }
}
