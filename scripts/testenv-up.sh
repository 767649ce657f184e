#!/usr/bin/env bash
# Start internal/testenv's control plane (etcd, kube-apiserver,
# kube-controller-manager) in the background through
# internal/testenv/cmd/testenv-serve, with its data, logs and kubeconfig in
# DIR; each start begins with a fresh cluster. Stop it with
# scripts/testenv-down.sh DIR. `make cluster` and `make landscaper-up` use it.
#
#   testenv-up.sh NAME DOWN DIR [testenv-serve flags...]
#
# NAME prefixes the messages, DOWN is the command that stops it, for them.
# The last line printed is KUBECONFIG=<file>, so `export $(make -s cluster |
# tail -1)` points kubectl and terraform -var at it.
#
# Environment:
#   LANDSCAPER_TESTENV_BIN  the control plane's binaries (default: <repo>/bin/testenv)
#   GO                      go command to use (default: go)
set -euo pipefail

name="$1" down="$2" dir="$3"
shift 3
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
go_cmd="${GO:-go}"

if [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
	if [ -f "$dir/ready" ]; then
		echo "$name: already running (pid $(cat "$dir/pid")); stop it with $down" >&2
		cat "$dir/ready"
		exit 0
	fi
	echo "$name: pid $(cat "$dir/pid") is starting or stuck; $down first" >&2
	exit 1
fi

bash "$root/scripts/testenv-build.sh"
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
setsid "$dir/testenv-serve" -dir "$dir" "$@" >"$dir/serve.log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$dir/pid"

for _ in $(seq 1 600); do
	[ -f "$dir/ready" ] && break
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "$name: the server exited before it was ready; $dir/serve.log says:" >&2
		tail -n 40 "$dir/serve.log" >&2
		rm -f "$dir/pid"
		exit 1
	fi
	sleep 0.5
done
if [ ! -f "$dir/ready" ]; then
	echo "$name: not ready after 5 minutes; stopping it. $dir/serve.log says:" >&2
	tail -n 40 "$dir/serve.log" >&2
	bash "$root/scripts/testenv-down.sh" "$name" "$dir"
	exit 1
fi
logs="$dir/cluster/logs"
[ ! -d "$dir/landscaper" ] || logs="$logs, $dir/landscaper/logs"
echo "$name: running (pid $pid). Logs: $logs. Stop: $down"
cat "$dir/ready"
