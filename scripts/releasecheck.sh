#!/usr/bin/env bash
# releasecheck.sh: proves the release of the modules installs as users install Go tools, offline:
# scripts/release.sh --proxy-dir writes every published module at a throwaway version into a module proxy
# directory, then, from a fresh module outside the checkout and with no other proxy (GOPROXY=file://DIR,off:
# the rest comes from the module cache test.sh has filled), `go install .../cmd/ctxfit@VERSION` must build a
# binary that reports VERSION and `go get` must add each published module.
#
#   scripts/releasecheck.sh
#
# The version is unique to the run (v0.0.0-releasecheck.<seconds>), so a module cache never holds an older
# build under it; the run removes what it put in the module cache.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
version="v0.0.0-releasecheck.$(date +%s)"
tmp=$(mktemp -d)
cache=$(go env GOMODCACHE)
cleanup() {
  find "$cache" "$cache/cache/download" -maxdepth 6 -path '*github.com/ctxfit*' \( -name "*@$version" -o -name "$version.*" \) \
    -exec chmod -R u+w {} + -exec rm -rf {} + 2>/dev/null || true
  chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"
}
trap cleanup EXIT

GOPROXY=off scripts/release.sh --version "$version" --proxy-dir "$tmp/proxy" 2>"$tmp/release.log" || { cat "$tmp/release.log"; exit 1; }
modules=$(cd "$tmp/proxy" && find . -name list | sed 's|^\./||; s|/@v/list$||' | sort)

export GOPROXY="file://$tmp/proxy,off" GOSUMDB=off GOWORK=off GOFLAGS=-modcacherw
mkdir -p "$tmp/try" && cd "$tmp/try"
GOBIN="$tmp/bin" go install "github.com/ctxfit/ctxfit/cmd/ctxfit@$version"
got=$("$tmp/bin/ctxfit" version)
case "$got" in
  "ctxfit $version "*) ;;
  *) echo "releasecheck: the installed ctxfit says \"$got\", want ctxfit $version"; exit 1 ;;
esac
go mod init example.com/try >/dev/null 2>&1
for m in $modules; do
  go get "$m@$version" 2>"$tmp/get.log" || { cat "$tmp/get.log"; echo "releasecheck: go get $m@$version failed"; exit 1; }
done
# The released go.mod files name no local directory.
if grep -rl '=>' "$tmp"/proxy --include='*.mod'; then echo "releasecheck: a released go.mod has a replace directive"; exit 1; fi
echo "releasecheck: go install and go get of $(echo "$modules" | wc -l) modules at $version from the release's module proxy, offline"
