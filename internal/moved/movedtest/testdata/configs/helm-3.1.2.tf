terraform {
  required_providers {
    helm = { source = "hashicorp/helm" }
  }
}

provider "helm" {
  kubernetes = {
    config_path = "../kubeconfig"
  }
}

resource "helm_release" "app" {
  name             = "moved-helm3"
  namespace        = "moved-helm3"
  create_namespace = true
  chart            = "./demo"
  values           = [yamlencode({ nested = { color = "red" } })]
  set_sensitive = [{
    name  = "message"
    value = "from-helm3"
  }]
}
