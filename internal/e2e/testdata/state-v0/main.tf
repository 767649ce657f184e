terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
}
resource "landscaper_execution" "app" {
  name = "app"
  deploy_items = {
    db = {
      type   = "exec"
      config = jsonencode({ command = ["sh", "-c", "echo kept > $STATE_PATH/counter; printf '{\"url\":\"db:5432\"}' > $EXPORTS_PATH"] })
    }
    api = {
      type       = "mock"
      config     = jsonencode({ export = { replicas = 3 }, providerStatus = { ok = true } })
      depends_on = ["db"]
      timeout    = "5m"
    }
    secret = {
      type             = "mock"
      config           = jsonencode({ export = "s3cr3t-value" })
      sensitive_export = true
    }
  }
}
