terraform {
  required_providers {
    kubectl = { source = "gavinbunney/kubectl" }
  }
}

provider "kubectl" {
  config_path      = "../kubeconfig"
  load_config_file = true
}

resource "kubectl_manifest" "app" {
  override_namespace = "default"
  yaml_body          = <<-YAML
    apiVersion: v1
    kind: ConfigMap
    metadata:
      name: moved-gavinbunney
    data:
      greeting: hello from gavinbunney/kubectl
  YAML
}
