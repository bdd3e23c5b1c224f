package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sample = `goos: linux
BenchmarkCount/o200k_base/json/ctxfit-2         	      20	    950000 ns/op	 105.26 MB/s	       0 B/op	       0 allocs/op
BenchmarkCount/o200k_base/json/ctxfit-2         	      20	   1050000 ns/op	 105.26 MB/s	       0 B/op	       0 allocs/op
BenchmarkCount/o200k_base/json/ctxfit-2         	      20	    900000 ns/op	 105.26 MB/s	       0 B/op	       0 allocs/op
BenchmarkCount/o200k_base/json/tiktoken-go-2    	      20	  35800000 ns/op
BenchmarkPassThroughServed-2   	   30000	     71000 ns/op	  34900 bare-ns/req	  36100 wrapped-ns/req	 3.4 overhead-%
PASS
`

func TestReadTakesTheMedianOfEachBenchmarksRuns(t *testing.T) {
	res := results{}
	require.NoError(t, res.read(strings.NewReader(sample)))
	m, err := res.median("BenchmarkCount/o200k_base/json/ctxfit", "ns/op")
	require.NoError(t, err)
	assert.Equal(t, 950000.0, m, "the -2 suffix is dropped and the middle run taken")
	m, err = res.median("BenchmarkPassThroughServed", "wrapped-ns/req")
	require.NoError(t, err)
	assert.Equal(t, 36100.0, m, "custom metrics are read too")
	_, err = res.median("BenchmarkShape/100KB/wrapped", "ns/op")
	assert.ErrorContains(t, err, "no ns/op of BenchmarkShape/100KB/wrapped")
}

func TestRenderFailsOnAMissingBenchmark(t *testing.T) {
	res := results{}
	require.NoError(t, res.read(strings.NewReader(sample)))
	_, err := render(res, []string{"sample"})
	assert.ErrorContains(t, err, "BenchmarkSplitProse1MB/langchaingo")
}

func TestRewriteReplacesEachBlockWithItsTable(t *testing.T) {
	doc := "# Doc\n<!-- benchplot:count -->\nold figures\n<!-- /benchplot -->\ntext\n"
	t.Run("a named block gets its table", func(t *testing.T) {
		got, err := rewrite(doc, map[string]string{"count": "| new |\n"})
		require.NoError(t, err)
		assert.Equal(t, "# Doc\n<!-- benchplot:count -->\n| new |\n<!-- /benchplot -->\ntext\n", got)
	})
	t.Run("a block with no table is an error", func(t *testing.T) {
		_, err := rewrite(doc, map[string]string{"linear": "x"})
		assert.ErrorContains(t, err, `no table named "count"`)
	})
}

func TestTheCommittedChartsAreDrawnFromTheCommittedOutput(t *testing.T) {
	root := filepath.Join("..", "..")
	res := results{}
	var inputs []string
	for _, name := range []string{"count.txt", "chunk.txt", "httpfit.txt", "startup.txt"} {
		f, err := os.Open(filepath.Join(root, "docs", "bench", name))
		require.NoError(t, err)
		require.NoError(t, res.read(f))
		f.Close()
		inputs = append(inputs, "docs/bench/"+name)
	}
	files, err := render(res, inputs)
	require.NoError(t, err)
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(root, "docs", name))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), "docs/%s is stale: run go run ./scripts/benchplot -o docs docs/bench/*.txt (scripts/benchplots.sh)", name)
	}
	assert.Contains(t, string(files["bench-speedup.svg"]), "count JSON vs tiktoken-go")

	t.Run("the tables of docs/benchmarks.md are written from the committed output", func(t *testing.T) {
		tabs, err := tables(res)
		require.NoError(t, err)
		doc, err := os.ReadFile(filepath.Join(root, "docs", "benchmarks.md"))
		require.NoError(t, err)
		want, err := rewrite(string(doc), tabs)
		require.NoError(t, err)
		assert.Equal(t, want, string(doc), "docs/benchmarks.md is stale: run go run ./scripts/benchplot -o docs -md docs/benchmarks.md docs/bench/*.txt (scripts/benchplots.sh)")
		for name := range tabs {
			assert.Contains(t, string(doc), "<!-- benchplot:"+name+" -->", "docs/benchmarks.md shows every table")
		}
	})
}
