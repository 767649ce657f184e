terraform {
  required_providers {
    kubectl = { source = "alekc/kubectl" }
  }
}

provider "kubectl" {
  config_path      = "../kubeconfig"
  load_config_file = true
}

resource "kubectl_manifest" "app" {
  yaml_body = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: moved-alekc
      namespace: default
    data:
      greeting: hello from alekc/kubectl
  YAML
}
