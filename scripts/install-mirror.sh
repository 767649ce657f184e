#!/usr/bin/env bash
# Build the provider and install it into Terraform's implied local mirror,
# ~/.terraform.d/plugins/registry.terraform.io/landscaper-tf/landscaper/<version>/<os>_<arch>/,
# where a plain `terraform init` finds it: no CLI config, no environment
# variable, no registry.
#
# The version is VERSION (the next release's) with the build's source as
# semver build metadata: +g<commit> for a clean checkout, plus
# .dirty.<UTC time> for uncommitted changes, whose content has no name.
# Terraform's lock file records the checksum of the package it installed,
# and a rebuilt binary under the same version fails that check even with
# `terraform init -upgrade`; under a new version, `terraform init -upgrade`
# takes it. The provider reports the same version (main.version).
#
# Other versions of this provider in the mirror are removed: each is a
# binary of over 100 MB, and a directory initialised with one of them is
# told by `terraform init -upgrade` to take this one.
#
# Environment:
#   GO  go command to use (default: go)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
go_cmd="${GO:-go}"

base="$(tr -d '[:space:]' <VERSION)"
stamp="$(date -u +%Y%m%d%H%M%S)"
if rev="$(git rev-parse --short=12 HEAD 2>/dev/null)"; then
	meta="g$rev"
	if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
		meta="$meta.dirty.$stamp"
	fi
else
	meta="dev.$stamp"
fi
version="$base+$meta"
platform="$("$go_cmd" env GOOS)_$("$go_cmd" env GOARCH)"
mirror="$HOME/.terraform.d/plugins/registry.terraform.io/landscaper-tf/landscaper"
dir="$mirror/$version/$platform"

mkdir -p bin
tmp="$(mktemp bin/install-mirror.XXXXXX)"
trap 'rm -f "$tmp"' EXIT
"$go_cmd" build -ldflags "-X main.version=$version" -o "$tmp" .

if [ -d "$mirror" ]; then
	find "$mirror" -mindepth 1 -maxdepth 1 ! -name "$version" -exec rm -rf {} +
fi
mkdir -p "$dir"
mv "$tmp" "$dir/terraform-provider-landscaper_v$version"
trap - EXIT

echo "Installed landscaper-tf/landscaper $version into $dir"
echo "A directory initialised with an earlier build takes it with: terraform init -upgrade"
