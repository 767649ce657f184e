#!/usr/bin/env bash
# Build Landscaper's own controllers (landscaper-controller and the manifest,
# helm and mock deployers) from third_party/landscaper/landscaper-src.tar.xz,
# for the tests that run them as the referee (internal/testenv,
# StartLandscaper) and for `make landscaper-up`.
#
# The binaries land in $LANDSCAPER_CONTROLLERS_BIN (default <repo>/bin/landscaper).
# A stamp records the archive's digest and the Go version; when the binaries
# exist and the stamp matches, nothing is built. A cold build takes 4 to 10
# minutes on two cores (plus module downloads from the proxy) and about 3 GiB
# of memory, so concurrent callers are serialised with flock, where it exists,
# and the second one finds the first one's result. The sources are unpacked
# once per archive under the output directory (.src/<digest>); -trimpath keeps
# that path out of the Go build cache's keys, so every checkout shares the
# compiled packages.
#
# Environment:
#   LANDSCAPER_CONTROLLERS_BIN  output directory (default: <repo>/bin/landscaper)
#   GO                          go command to use (default: go)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
archive="$root/third_party/landscaper/landscaper-src.tar.xz"
out="${LANDSCAPER_CONTROLLERS_BIN:-$root/bin/landscaper}"
go_cmd="${GO:-go}"
binaries=(landscaper-controller manifest-deployer-controller helm-deployer-controller mock-deployer-controller)

mkdir -p "$out"
if command -v flock >/dev/null; then
	exec 9>"$out/.lock"
	flock 9
fi

digest="$(sha256sum "$archive" | cut -d' ' -f1)"
want="archive=$digest go=$("$go_cmd" env GOVERSION)"

up_to_date() {
	[ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$want" ] || return 1
	for b in "${binaries[@]}"; do
		[ -x "$out/$b" ] || return 1
	done
}

if up_to_date; then
	exit 0
fi

echo "landscaper: building ${binaries[*]} into $out (a cold build takes several minutes)" >&2
start=$SECONDS

src="$out/.src/${digest:0:16}"
if [ ! -f "$src/landscaper/go.mod" ]; then
	rm -rf "$out/.src"
	mkdir -p "$src.tmp"
	tar -xJf "$archive" -C "$src.tmp"
	mv "$src.tmp" "$src"
fi

# Build into a scratch directory and move the results in afterwards, so an
# interrupted build never leaves binaries that look complete.
tmp="$(mktemp -d "$out/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

pkgs=()
for b in "${binaries[@]}"; do
	pkgs+=("./cmd/$b")
done
# -mod=mod: the archive's go.mod replaces ocm.software/ocm with ../ocm, whose
# requirements go.sum does not list in full; Go adds them from the proxy.
(
	cd "$src/landscaper"
	GOFLAGS=-mod=mod "$go_cmd" build -trimpath -ldflags "-s -w" -o "$tmp/" "${pkgs[@]}"
)

for b in "${binaries[@]}"; do
	mv -f "$tmp/$b" "$out/$b"
done
echo "$want" >"$out/.stamp"
echo "landscaper: built in $((SECONDS - start))s" >&2
