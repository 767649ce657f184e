# Written for landscaper_installation schema version 4, whose target_lists and
# target_maps were sensitive as a whole; terraform.tfstate is what that
# provider (main at 1142eec) and Terraform 1.11.4 wrote applying it.
terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
}

provider "landscaper" {
  targets = {
    prod = {
      type = "landscaper.gardener.cloud/kubernetes-cluster"
      config = yamlencode({ kubeconfig = yamlencode({
        apiVersion        = "v1"
        kind              = "Config"
        clusters          = [{ name = "c", cluster = { server = "https://127.0.0.1:1" } }]
        users             = [{ name = "u", user = { token = "prov-t0k3n-aa11" } }]
        contexts          = [{ name = "c", context = { cluster = "c", user = "u" } }]
        "current-context" = "c"
      }) })
      labels = { tier = "gold" }
    }
  }
}

resource "landscaper_installation" "fleet" {
  name = "fleet"
  blueprint = { filesystem = { "blueprint.yaml" = <<-EOT
    apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: Blueprint
    imports:
      - {name: fleet, type: targetList, targetType: landscaper.gardener.cloud/kubernetes-cluster}
      - {name: regions, type: targetMap, targetType: landscaper.gardener.cloud/kubernetes-cluster}
    deployExecutions:
      - name: default
        type: GoTemplate
        template: |
          deployItems:
          {{- range $i, $t := .imports.fleet }}
            - name: fleet-{{ $i }}
              type: landscaper.gardener.cloud/mock
              target: {import: fleet, index: {{ $i }}}
              config: {export: {{ toJson $t.metadata.name }}}
          {{- end }}
          {{- range $k, $t := .imports.regions }}
            - name: region-{{ $k }}
              type: landscaper.gardener.cloud/mock
              target: {import: regions, key: {{ $k }}}
              config: {export: {{ $k }}}
          {{- end }}
    EOT
  } }
  target_lists = { fleet = [{ name = "prod" }, { name = "inline-one", type = "landscaper.gardener.cloud/kubernetes-cluster", config = sensitive(yamlencode({ kubeconfig = yamlencode({
    apiVersion        = "v1"
    kind              = "Config"
    clusters          = [{ name = "c", cluster = { server = "https://127.0.0.9:1" } }]
    users             = [{ name = "u", user = { token = "inl1ne-t0k3n-bb22" } }]
    contexts          = [{ name = "c", context = { cluster = "c", user = "u" } }]
    "current-context" = "c"
  }) })) }] }
  target_maps = { regions = { eu = { name = "prod" } } }
}
