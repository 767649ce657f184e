#!/usr/bin/env bash
# Stop what scripts/testenv-up.sh started in DIR: the server ends what it
# runs (Landscaper's controllers, the control plane), then exits. Logs stay
# in DIR until the next start.
#
#   testenv-down.sh NAME DIR
set -euo pipefail

name="$1" dir="$2"

if [ ! -f "$dir/pid" ]; then
	echo "$name: nothing running ($dir/pid missing)"
	exit 0
fi
pid="$(cat "$dir/pid")"
if kill -TERM "$pid" 2>/dev/null; then
	for _ in $(seq 1 120); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.5
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "$name: pid $pid still alive after 60s; killing it" >&2
		kill -KILL "$pid" 2>/dev/null || true
	fi
fi
rm -f "$dir/pid" "$dir/ready"
echo "$name: stopped"
