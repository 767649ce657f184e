#!/usr/bin/env bash
# Start a control plane with Landscaper's own controllers in the background,
# for trying things against a real Landscaper: `make landscaper-up`. Stop it
# with scripts/landscaper-down.sh (`make landscaper-down`).
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
go_cmd="${GO:-go}"

if [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
	if [ -f "$dir/ready" ]; then
		echo "landscaper-up: already running (pid $(cat "$dir/pid")); stop it with make landscaper-down" >&2
		cat "$dir/ready"
		exit 0
	fi
	echo "landscaper-up: pid $(cat "$dir/pid") is starting or stuck; make landscaper-down first" >&2
	exit 1
fi

bash "$root/scripts/testenv-build.sh"
bash "$root/scripts/landscaper-build.sh"
mkdir -p "$dir"
(cd "$root" && "$go_cmd" build -o "$dir/testenv-serve" ./internal/testenv/cmd/testenv-serve)
rm -rf "$dir/cluster" "$dir/landscaper" "$dir/ready" "$dir/kubeconfig"

# setsid: the server outlives this script and make, and gets no terminal
# signals; its children die with it (see internal/testenv). It must not hold
# what this script inherited beyond stdin, stdout and stderr (make's jobserver
# pipe, a caller's pipe), or whoever waits for those to close waits for it.
if [ -d "/proc/$$/fd" ]; then
	for fd in /proc/$$/fd/*; do
		fd="${fd##*/}"
		[ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null || true
	done
fi
setsid "$dir/testenv-serve" -dir "$dir" -landscaper >"$dir/serve.log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$dir/pid"

for _ in $(seq 1 600); do
	[ -f "$dir/ready" ] && break
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "landscaper-up: the server exited before it was ready; $dir/serve.log says:" >&2
		tail -n 40 "$dir/serve.log" >&2
		rm -f "$dir/pid"
		exit 1
	fi
	sleep 0.5
done
if [ ! -f "$dir/ready" ]; then
	echo "landscaper-up: not ready after 5 minutes; stopping it. $dir/serve.log says:" >&2
	tail -n 40 "$dir/serve.log" >&2
	bash "$root/scripts/landscaper-down.sh"
	exit 1
fi
echo "landscaper-up: running (pid $pid). Logs: $dir/cluster/logs, $dir/landscaper/logs. Stop: make landscaper-down"
cat "$dir/ready"
