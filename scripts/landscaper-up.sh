#!/usr/bin/env bash
# Start a control plane with Landscaper's own controllers in the background,
# for trying things against a real Landscaper: `make landscaper-up`. Stop it
# with scripts/landscaper-down.sh (`make landscaper-down`). See
# scripts/testenv-up.sh, which does the work.
#
# Data, logs and the kubeconfig go to $LANDSCAPER_UP_DIR (default
# <repo>/bin/landscaper-up); each start begins with a fresh cluster. The last
# line printed is KUBECONFIG=<file>, so `eval "$(make -s landscaper-up | tail -1)"`
# or `export $(make -s landscaper-up | tail -1)` points kubectl at it.
#
# Environment:
#   LANDSCAPER_UP_DIR            where everything goes (default: <repo>/bin/landscaper-up)
#   LANDSCAPER_TESTENV_BIN       the control plane's binaries (default: <repo>/bin/testenv)
#   LANDSCAPER_CONTROLLERS_BIN   Landscaper's binaries (default: <repo>/bin/landscaper)
#   GO                           go command to use (default: go)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${LANDSCAPER_UP_DIR:-$root/bin/landscaper-up}"

bash "$root/scripts/landscaper-build.sh"
exec bash "$root/scripts/testenv-up.sh" landscaper-up "make landscaper-down" "$dir" -landscaper
