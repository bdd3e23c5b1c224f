#!/usr/bin/env bash
# benchplots.sh: runs the benchmarks behind the figures of docs/benchmarks.md, keeps their
# raw output in docs/bench/, and has scripts/benchplot draw the SVG charts in docs/ and
# rewrite the tables of docs/benchmarks.md between <!-- benchplot:NAME --> and
# <!-- /benchplot --> from it. TestTheCommittedDocsAreWrittenFromTheCommittedOutput
# (scripts/benchplot) fails when a chart or a table disagrees with docs/bench/.
#
#   scripts/benchplots.sh                 # every benchmark (count, chunk, httpfit, startup)
#   scripts/benchplots.sh count           # only these; the others' committed output is reused
#
# The counting run takes about five minutes on two loaded cores. The figures are ratios of
# two sides measured in the same run; rerun after a change that touches a hot path and
# commit docs/bench/*.txt with the SVGs and docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p docs/bench
sections=("$@")
[ ${#sections[@]} -gt 0 ] || sections=(count chunk httpfit startup)

for s in "${sections[@]}"; do
	case "$s" in
	count)
		echo "== exact counting against tiktoken-go on the real corpora (benchmarks module)"
		(cd benchmarks && GOWORK=off go test -timeout 60m -run '^$' -bench '^BenchmarkCount(Linear)?$' -benchtime=3x -count=3) > docs/bench/count.txt
		go test ./internal/bpe -run '^$' -bench '^Benchmark(NewEncoding|BuildBacktracker|FirstCount)$' -benchmem -benchtime=5x -count=3 >> docs/bench/count.txt ;;
	chunk)
		echo "== chunking against langchaingo (benchmarks module)"
		(cd benchmarks && GOWORK=off go test -run '^$' -bench 'SplitProse1MB/(ctxfit|langchaingo)$' -benchmem -benchtime=3x -count=3) > docs/bench/chunk.txt ;;
	startup)
		echo "== start-up: ctxfit count of a tiny file, and a program that imports only budget"
		{ go test ./cmd/ctxfit -run '^$' -bench '^BenchmarkCountStartup$' -count=5
		  go test ./budget -run '^$' -bench '^BenchmarkCountOnlyStartup$' -count=5; } > docs/bench/startup.txt ;;
	httpfit)
		echo "== HTTP middleware, bare against wrapped"
		go test ./httpfit -run '^$' -bench '^Benchmark(PassThroughServed|PassThroughOverhead|Shape)$' -benchmem -count=5 > docs/bench/httpfit.txt ;;
	*)
		echo "benchplots.sh: unknown section $s (count, chunk, httpfit, startup)" >&2
		exit 2 ;;
	esac
done

go run ./scripts/benchplot -o docs -md docs/benchmarks.md docs/bench/count.txt docs/bench/chunk.txt docs/bench/httpfit.txt docs/bench/startup.txt
echo "== wrote docs/bench-speedup.svg, docs/bench-middleware.svg and the tables of docs/benchmarks.md"
