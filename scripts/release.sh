#!/usr/bin/env bash
# release.sh: release binaries of cmd/ctxfit for the platforms MCP users run,
# with checksums, for people who have no Go toolchain.
#
#   scripts/release.sh [--version vX.Y.Z] [--out DIR]
#   scripts/release.sh --version vX.Y.Z --proxy-dir DIR
#
# Builds ctxfit for linux, darwin and windows on amd64 and arm64 with
# CGO_ENABLED=0 and -trimpath into DIR (default dist/, which git ignores):
#
#   ctxfit_<version>_<os>_<arch>[.exe]   the binaries
#   SHA256SUMS                          their SHA-256 checksums (sha256sum -c SHA256SUMS)
#
# The version defaults to `git describe --tags --always --dirty` (the tag on a
# tagged commit, else the short revision, "-dirty" for a modified tree). It,
# the revision and whether the tree was modified are stamped into the binary
# with the linker (internal/buildinfo), so `ctxfit version` reports them even
# where the go command cannot read the VCS itself (a git worktree, a source
# archive). Modules come from the Go module proxy; nothing else is fetched.
#
# With --proxy-dir DIR it writes no binaries but the release of the modules:
# every module of go.work but the examples and the end-to-end tests, at the
# version, as a Go module proxy directory (scripts/modproxy): go.mod without
# replace directives, the ctxfit modules required at the version, go.sum as
# go mod tidy writes it. Try it before tagging, offline:
#
#   GOPROXY=file://DIR,off GOSUMDB=off go install github.com/ctxfit/ctxfit/cmd/ctxfit@vX.Y.Z
#
# test.sh does that (and go get of each module) on every run. To publish,
# commit those go.mod and go.sum files and tag the commit vX.Y.Z,
# mcpfit/vX.Y.Z, ... (one tag per module directory).
set -euo pipefail
cd "$(dirname "$0")/.."

version=""
out=dist
proxydir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --version) version="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --proxy-dir) proxydir="$2"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; exit 0 ;;
    *) echo "release.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

if [ -n "$proxydir" ]; then
  if [ -z "$version" ]; then echo "release.sh: --proxy-dir needs --version vX.Y.Z" >&2; exit 2; fi
  exec go run ./scripts/modproxy -version "$version" -o "$proxydir"
fi

revision=""
modified=""
if git rev-parse --git-dir >/dev/null 2>&1; then
  revision=$(git rev-parse HEAD)
  modified=false
  if [ -n "$(git status --porcelain --untracked-files=no)" ]; then modified=true; fi
  if [ -z "$version" ]; then version=$(git describe --tags --always --dirty); fi
fi
if [ -z "$version" ]; then
  echo "release.sh: not in a git checkout: give --version" >&2
  exit 2
fi

pkg=github.com/ctxfit/ctxfit/internal/buildinfo
ldflags="-s -w -X $pkg.version=$version -X $pkg.revision=$revision -X $pkg.modified=$modified"

rm -rf "$out"
mkdir -p "$out"
for os in linux darwin windows; do
  for arch in amd64 arm64; do
    bin="ctxfit_${version}_${os}_${arch}"
    if [ "$os" = windows ]; then bin="$bin.exe"; fi
    echo "== $bin"
    CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags "$ldflags" -o "$out/$bin" ./cmd/ctxfit
  done
done

(cd "$out" && sha256sum ctxfit_* > SHA256SUMS)
echo "== $out/SHA256SUMS"
cat "$out/SHA256SUMS"
