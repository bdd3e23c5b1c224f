#!/usr/bin/env bash
# benchplots.sh: runs the benchmarks behind the ratios of docs/benchmarks.md and draws them
# as SVG bar charts in docs/ (scripts/benchplot), keeping the raw output in
# docs/bench/ so that the charts can be checked against it.
#
#   scripts/benchplots.sh
#
# About two minutes on two cores. The figures are ratios of two sides
# measured in the same run, as the tables of docs/benchmarks.md are; rerun after a change
# that touches a hot path and commit docs/bench/*.txt with the SVGs.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p docs/bench

echo "== exact counting against tiktoken-go"
go test ./budget -run '^$' -bench '^BenchmarkCount$' -benchmem -benchtime=20x -count=3 > docs/bench/count.txt
echo "== chunking against langchaingo (benchmarks module)"
(cd benchmarks && GOWORK=off go test -run '^$' -bench 'SplitProse1MB/(ctxfit|langchaingo)$' -benchmem -benchtime=3x -count=3) > docs/bench/chunk.txt
echo "== HTTP middleware, bare against wrapped"
go test ./httpfit -run '^$' -bench '^Benchmark(PassThroughServed|PassThroughOverhead|Shape)$' -benchmem -count=5 > docs/bench/httpfit.txt

go run ./scripts/benchplot -o docs docs/bench/count.txt docs/bench/chunk.txt docs/bench/httpfit.txt
echo "== wrote docs/bench-speedup.svg and docs/bench-middleware.svg"
