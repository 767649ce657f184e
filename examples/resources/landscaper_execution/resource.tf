# Runs anywhere, no cluster needed: once `make install-mirror` has installed
# the provider, terraform init, then terraform apply.
terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
}

resource "landscaper_execution" "app" {
  name = "app"

  deploy_items = {
    # A local command following Landscaper's container-deployer contract.
    database = {
      type = "exec"
      config = jsonencode({
        command      = ["sh", "-c", "echo '{\"host\": \"db.local\", \"port\": 5432}' > \"$EXPORTS_PATH\""]
        importValues = { size = "small" }
      })
      timeout = "5m"
    }

    # Landscaper's mock deployer: reports a phase and an export.
    cache = {
      type   = "landscaper.gardener.cloud/mock"
      config = jsonencode({ export = { endpoint = "cache.local:6379" } })
    }

    # Starts only after database and cache succeeded; deleted before them.
    web = {
      type       = "mock"
      depends_on = ["database", "cache"]
      config = yamlencode({
        providerStatus = { replicas = 2 }
        export         = { url = "https://web.local" }
      })
    }

    # Its export goes to sensitive_exports and is masked in logs.
    credentials = {
      type             = "exec"
      sensitive_export = true
      config = jsonencode({
        command = ["sh", "-c", "echo \"{\\\"password\\\": \\\"$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \\n')\\\"}\" > \"$EXPORTS_PATH\""]
      })
    }
  }

  timeouts = {
    create = "30m"
    update = "30m"
    delete = "30m"
  }
}

output "database_host" {
  value = landscaper_execution.app.exports.database.host
}

output "password" {
  value     = landscaper_execution.app.sensitive_exports.credentials.password
  sensitive = true
}
