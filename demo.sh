#!/usr/bin/env bash
# demo.sh: runs `ctxfit demo` from this checkout (see ctxfit demo -h). The
# first run compiles ctxfit, which takes a minute or two on a small machine;
# later runs start at once from the build cache.
set -euo pipefail
cd "$(dirname "$0")"
echo "demo.sh: compiling ctxfit (the first time takes a minute or two; later runs start at once)..." >&2
go build -o "${TMPDIR:-/tmp}/ctxfit-demo" ./cmd/ctxfit
exec "${TMPDIR:-/tmp}/ctxfit-demo" demo "$@"
