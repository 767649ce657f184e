# Quickstart: four deploy items, exec and mock, applied without a cluster.
# Run it from the repository root with `make demo`, or here, once
# `make install-mirror` has installed the provider: terraform init, terraform apply.

terraform {
  required_providers {
    landscaper = {
      source = "landscaper-tf/landscaper"
    }
  }
}

provider "landscaper" {
  max_parallelism = 4
}

resource "landscaper_execution" "shop" {
  name = "shop"

  deploy_items = {
    # Keeps its data in $STATE_PATH, which survives between runs.
    database = {
      type = "exec"
      config = jsonencode({
        command      = ["sh", "${path.module}/scripts/database.sh"]
        importValues = { name = "orders", size = "small" }
      })
    }

    cache = {
      type   = "mock"
      config = jsonencode({ duration = "500ms", export = { endpoint = "cache.local:6379" } })
    }

    # Runs after database, reads its import values from $IMPORTS_PATH.
    schema = {
      type       = "exec"
      depends_on = ["database"]
      config = jsonencode({
        command      = ["sh", "${path.module}/scripts/schema.sh"]
        importValues = { tables = ["orders", "customers"] }
      })
    }

    # Starts when schema and cache have succeeded.
    web = {
      type       = "landscaper.gardener.cloud/mock"
      depends_on = ["schema", "cache"]
      config = yamlencode({
        apiVersion     = "mock.deployer.landscaper.gardener.cloud/v1alpha1"
        kind           = "ProviderConfiguration"
        duration       = "300ms"
        providerStatus = { replicas = 3 }
        export         = { url = "https://shop.local" }
      })
    }
  }
}

output "database" {
  value = landscaper_execution.shop.exports.database
}

output "url" {
  value = landscaper_execution.shop.exports.web.url
}

output "phases" {
  value = { for name, item in landscaper_execution.shop.status.deploy_items : name => item.phase }
}
