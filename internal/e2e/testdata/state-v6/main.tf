# Written for landscaper_installation schema version 6; terraform.tfstate
# is what that provider (main at 0a922ea) and Terraform 1.11.4 wrote
# applying it.
terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
}

resource "landscaper_installation" "app" {
  name              = "app"
  imports           = { user = "admin" }
  sensitive_imports = { password = "v6-passw0rd" }
  blueprint = { filesystem = { "blueprint.yaml" = <<-EOT
    apiVersion: landscaper.gardener.cloud/v1alpha1
    kind: Blueprint
    imports:
      - {name: user, schema: {type: string}}
      - {name: password, schema: {type: string}}
    exports:
      - {name: who, schema: {type: string}}
    deployExecutions:
      - name: default
        type: GoTemplate
        template: |
          deployItems:
            - name: login
              type: landscaper.gardener.cloud/mock
              config: {export: {{ printf "%s:%s" .imports.user .imports.password | b64enc | quote }}}
            - name: plain
              type: landscaper.gardener.cloud/mock
              config: {export: {{ .imports.user | quote }}}
    exportExecutions:
      - name: default
        type: GoTemplate
        template: |
          exports:
            who: {{ .deployitems.plain | quote }}
  EOT
  } }
}
