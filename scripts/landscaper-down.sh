#!/usr/bin/env bash
# Stop what scripts/landscaper-up.sh started (`make landscaper-down`): the
# server ends Landscaper's controllers and the control plane, then exits.
# Logs stay in $LANDSCAPER_UP_DIR until the next start.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${LANDSCAPER_UP_DIR:-$root/bin/landscaper-up}"

if [ ! -f "$dir/pid" ]; then
	echo "landscaper-down: nothing running ($dir/pid missing)"
	exit 0
fi
pid="$(cat "$dir/pid")"
if kill -TERM "$pid" 2>/dev/null; then
	for _ in $(seq 1 120); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "landscaper-down: pid $pid still alive after 60s; killing it" >&2
		kill -KILL "$pid" 2>/dev/null || true
	fi
fi
rm -f "$dir/pid" "$dir/ready"
echo "landscaper-down: stopped"
