terraform {
  required_providers {
    landscaper = {
      source = "landscaper-tf/landscaper"
    }
  }
}

provider "landscaper" {
  # Deploy items running at once, across all executions of this provider.
  max_parallelism = 10
}
