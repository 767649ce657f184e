#!/usr/bin/env bash
# Generate docs/ with tfplugindocs (pinned in tools/go.mod), offline.
#
# How tfplugindocs gets the provider schema (terraform-plugin-docs v0.25.0,
# internal/provider/generate.go, terraformProviderSchemaFromTerraform):
#   1. `go build` the provider into <tmp>/plugins/registry.terraform.io/
#      hashicorp/landscaper/0.0.1/<os>_<arch>/;
#   2. find terraform with hc-install: fs.AnyVersion (a lookup on $PATH) first,
#      and only if that fails checkpoint.LatestVersion, i.e. a DOWNLOAD of the
#      latest release (so does passing --tf-version, which we never do);
#   3. `terraform init -get=false -plugin-dir=./plugins` then
#      `terraform providers schema -json` in <tmp>. -plugin-dir makes init
#      install only from that local directory: no registry access.
# This script therefore refuses to run unless terraform is on PATH, and
# isolates terraform from the user's CLI configuration.
#
# Environment:
#   TERRAFORM  terraform binary to use (default: `terraform` from PATH)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

tf="${TERRAFORM:-terraform}"
if ! tf_path="$(command -v "$tf")"; then
	echo "generate-docs: terraform ('$tf') not found on PATH." >&2
	echo "generate-docs: refusing to run tfplugindocs, which would try to download Terraform." >&2
	echo "generate-docs: put terraform on PATH or set TERRAFORM=/path/to/terraform." >&2
	exit 1
fi
# hc-install only looks terraform up on PATH, so put the chosen one first.
export PATH="$(dirname "$tf_path"):$PATH"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# An empty CLI config: no dev_overrides, mirrors, credentials or plugin cache
# from the caller's environment can change what `terraform init` does.
: >"$tmp/terraformrc"
export TF_CLI_CONFIG_FILE="$tmp/terraformrc"
unset TF_PLUGIN_CACHE_DIR TF_CLI_ARGS TF_CLI_ARGS_init TF_DATA_DIR
export CHECKPOINT_DISABLE=1 # no version check against checkpoint.hashicorp.com
export TF_IN_AUTOMATION=1

echo "generate-docs: using $("$tf_path" version | head -n1) at $tf_path"

cd "$root/tools"
go tool tfplugindocs generate \
	--provider-dir .. \
	--provider-name landscaper \
	--rendered-provider-name Landscaper

go tool tfplugindocs validate \
	--provider-dir .. \
	--provider-name landscaper
