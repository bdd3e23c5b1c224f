#!/usr/bin/env bash
# test.sh: ctxfit's test command. On a fresh machine with Go it needs nothing
# else: modules come from the Go module proxy. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")"

echo "== gofmt"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test"
go test -race -shuffle=on -count=1 ./...

echo "== benchmarks module (comparison with langchaingo; its tests check the ratio's inputs)"
(cd benchmarks && go vet ./... && go test -count=1 ./...)
