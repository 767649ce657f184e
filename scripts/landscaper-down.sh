#!/usr/bin/env bash
# Stop what scripts/landscaper-up.sh started (`make landscaper-down`): the
# server ends Landscaper's controllers and the control plane, then exits.
# Logs stay in $LANDSCAPER_UP_DIR until the next start.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec bash "$root/scripts/testenv-down.sh" landscaper-down "${LANDSCAPER_UP_DIR:-$root/bin/landscaper-up}"
