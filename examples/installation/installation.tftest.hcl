# `terraform test` for the example: with command = plan, nothing runs; the
# landscaper_blueprint data source in ./render renders the blueprint as the
# installation in main.tf would, and the assertions check what its deploy
# items and sub-installations would get. Runs offline, once `make install-mirror`
# has installed the provider: terraform init (which also installs ./render), then
# terraform test.

run "staging" {
  command = plan

  module {
    source = "./render"
  }

  assert {
    condition     = output.configs["app"].export.url == "https://app.staging.example.com"
    error_message = "the app item's export does not name the environment"
  }

  assert {
    condition     = output.configs["database"].env.ENVIRONMENT == "staging"
    error_message = "the database script does not get the environment"
  }

  assert {
    condition     = output.configs["app"].providerStatus.replicas == 3
    error_message = "the app item does not get the replicas"
  }

  assert {
    condition     = jsondecode(data.landscaper_blueprint.app.installations["monitoring"].imports).environment == "staging"
    error_message = "the monitoring sub-installation does not import the environment"
  }

  assert {
    condition     = output.configs["monitoring/dashboard"].export.url == "https://grafana.staging.example.com"
    error_message = "the dashboard item does not name the environment"
  }

  assert {
    condition     = [for d in data.landscaper_blueprint.app.import_declarations : d.name if d.required] == ["environment", "replicas", "scripts"]
    error_message = "the blueprint's required imports changed"
  }
}

run "production" {
  command = plan

  module {
    source = "./render"
  }

  variables {
    environment = "production"
  }

  assert {
    condition     = output.configs["app"].export.url == "https://app.production.example.com"
    error_message = "the app item's export does not follow the environment"
  }
}

# The module itself plans: the installation's plan carries the same
# rendered items in deploy_items, before anything runs.
run "plan" {
  command = plan

  variables {
    environment = "production"
  }

  assert {
    condition     = jsondecode(landscaper_installation.app.deploy_items["database"].config).env.ENVIRONMENT == "production"
    error_message = "the planned database item does not get the environment"
  }

  assert {
    condition     = landscaper_installation.app.deploy_items["monitoring/dashboard"].type == "landscaper.gardener.cloud/mock"
    error_message = "the planned dashboard item is not a mock item"
  }
}
