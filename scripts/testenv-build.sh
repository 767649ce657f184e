#!/usr/bin/env bash
# Build the test environment's control plane (etcd, kube-apiserver,
# kube-controller-manager) from the Go modules pinned in tools/testenv/go.mod.
#
# The binaries land in $LANDSCAPER_TESTENV_BIN (default <repo>/bin/testenv).
# A stamp file records the hash of tools/testenv's go.mod, go.sum and
# cmd/etcd/main.go; when the binaries exist and the stamp matches, nothing is
# built. A cold build takes minutes on two cores, so concurrent callers (test
# packages that `go test ./...` runs in parallel) are serialised with flock and
# the second one finds the first one's result.
#
# Environment:
#   LANDSCAPER_TESTENV_BIN  output directory (default: <repo>/bin/testenv)
#   GO                      go command to use (default: go)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$root/tools/testenv"
out="${LANDSCAPER_TESTENV_BIN:-$root/bin/testenv}"
go_cmd="${GO:-go}"
binaries=(etcd kube-apiserver kube-controller-manager)

mkdir -p "$out"
exec 9>"$out/.lock"
flock 9

want="$(cat "$src/go.mod" "$src/go.sum" "$src/cmd/etcd/main.go" | sha256sum | cut -d' ' -f1)"

up_to_date() {
	[ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$want" ] || return 1
	for b in "${binaries[@]}"; do
		[ -x "$out/$b" ] || return 1
	done
}

if up_to_date; then
	exit 0
fi

echo "testenv: building ${binaries[*]} into $out (a cold build takes several minutes)" >&2
start=$SECONDS

# Build into a scratch directory and move the results in afterwards, so an
# interrupted build never leaves binaries that look complete.
tmp="$(mktemp -d "$out/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

k8s_version="$(cd "$src" && "$go_cmd" list -m -f '{{.Version}}' k8s.io/kubernetes)"
minor="${k8s_version#v1.}"
minor="${minor%%.*}"
ldflags="-s -w"
for var in "gitVersion=$k8s_version" "gitMajor=1" "gitMinor=$minor" "gitTreeState=clean"; do
	ldflags+=" -X k8s.io/component-base/version.$var"
done

(
	cd "$src"
	CGO_ENABLED=0 "$go_cmd" build -trimpath -ldflags "$ldflags" -o "$tmp/" \
		./cmd/etcd \
		k8s.io/kubernetes/cmd/kube-apiserver \
		k8s.io/kubernetes/cmd/kube-controller-manager
)

for b in "${binaries[@]}"; do
	mv -f "$tmp/$b" "$out/$b"
done
echo "$want" >"$out/.stamp"
echo "testenv: built in $((SECONDS - start))s" >&2
