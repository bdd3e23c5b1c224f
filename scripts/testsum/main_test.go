package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSummarizeShowsFailuresOnlyAndCountsEveryTest(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestOK"}`,
		`{"Action":"output","Package":"p","Test":"TestOK","Output":"a log of a passing test\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestOK"}`,
		`{"Action":"output","Package":"p","Test":"TestBad","Output":"    bad_test.go:9: want 1, got 2\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestBad"}`,
		`{"Action":"skip","Package":"p","Test":"TestLater"}`,
		`{"Action":"output","Package":"p","Output":"-test.shuffle 42\n"}`,
		`{"Action":"output","Package":"q","Output":"-test.shuffle 7\n"}`,
		`{"Action":"output","Package":"q","Output":"ok  \tq\t0.1s\n"}`,
		`{"Action":"output","Package":"p","Output":"PASS\n"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}`,
		`{"Action":"fail","Package":"p"}`,
		`go: downloading example.com/m v1.0.0`,
	}, "\n")
	var out strings.Builder
	c, failed, err := summarize(strings.NewReader(in), &out)
	require.NoError(t, err)
	assert.True(t, failed)
	assert.Equal(t, counts{Passed: 1, Failed: 1, Skipped: 1}, c)
	assert.Equal(t, "    bad_test.go:9: want 1, got 2\nok  \tq\t0.1s\n-test.shuffle 42\nFAIL\tp\t0.1s\ngo: downloading example.com/m v1.0.0\n== 1 failed:\n   p.TestBad\n", out.String())
}

func TestABuildFailureFails(t *testing.T) {
	in := `{"ImportPath":"p [p.test]","Action":"build-output","Output":"x.go:1: syntax error\n"}
{"ImportPath":"p [p.test]","Action":"build-fail"}`
	var out strings.Builder
	_, failed, err := summarize(strings.NewReader(in), &out)
	require.NoError(t, err)
	assert.True(t, failed)
	assert.Equal(t, "x.go:1: syntax error\n", out.String())
}

func TestABenchmarkOfAPackageThatPassedIsNotShown(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"output","Package":"p","Output":"goos: linux\n"}`,
		`{"Action":"run","Package":"p","Test":"BenchmarkX"}`,
		`{"Action":"output","Package":"p","Test":"BenchmarkX","Output":"BenchmarkX-2 \t 1\t 5 ns/op\n"}`,
		`{"Action":"run","Package":"q","Test":"BenchmarkY"}`,
		`{"Action":"output","Package":"q","Test":"BenchmarkY","Output":"panic: boom\n"}`,
		`{"Action":"output","Package":"p","Output":"ok  \tp\t0.1s\n"}`,
		`{"Action":"pass","Package":"p"}`,
		`{"Action":"output","Package":"q","Output":"FAIL\tq\t0.1s\n"}`,
		`{"Action":"fail","Package":"q"}`,
	}, "\n")
	var out strings.Builder
	_, failed, err := summarize(strings.NewReader(in), &out)
	require.NoError(t, err)
	assert.True(t, failed)
	assert.Equal(t, "ok  \tp\t0.1s\nFAIL\tq\t0.1s\n== output of q BenchmarkY, running when its test binary ended:\npanic: boom\n", out.String())
}
