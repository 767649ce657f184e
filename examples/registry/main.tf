# The installation of examples/installation, with its component read from an
# OCM repository instead of from constructor files: the way released,
# immutable (and signed) component versions are deployed.
#
# Publish the component first (see docs/guides/components-from-registries.md):
#   ocm add componentversions --create --file ./ctf ../installation/component-constructor.yaml
#   ocm transfer ctf ./ctf ghcr.io/acme/ocm
# or keep ./ctf and set var.transport to install without a registry.
# Then, once `make install-mirror` has installed the provider: terraform init,
#   terraform apply -var transport=./ctf     (or -var registry=...)
terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
}

variable "registry" {
  description = "OCM repository in an OCI registry, such as ghcr.io/acme/ocm."
  type        = string
  default     = "ghcr.io/acme/ocm"
}

variable "transport" {
  description = "A CTF directory or archive, or a component archive, to install from instead of the registry."
  type        = string
  default     = null
}

variable "registry_password" {
  description = "Password or token for the registry; leave null to use the Docker config."
  type        = string
  default     = null
  sensitive   = true
}

variable "signer_public_key" {
  description = "PEM public key the component version was signed with (ocm sign componentversions); null skips verification."
  type        = string
  default     = null
}

provider "landscaper" {
  repository_context = { type = "OCIRegistry", baseUrl = var.registry }

  registry_credentials = var.registry_password == null ? null : {
    (split("/", var.registry)[0]) = { username = "acme-ci", password = var.registry_password }
  }

  verification_signatures = var.signer_public_key == null ? null : {
    acme = { public_key = var.signer_public_key }
  }
}

resource "landscaper_installation" "app" {
  name = "app"

  blueprint = { ref = "blueprint" }
  component = {
    name       = "github.com/acme/app"
    version    = "v1.0.0"
    repository = var.transport
  }
  verification = var.signer_public_key == null ? null : { signature_name = "acme" }

  imports = {
    environment = "staging"
    replicas    = 3
    scripts     = abspath("${path.module}/../installation/scripts")
  }
}

output "url" {
  value = landscaper_installation.app.exports.url
}
