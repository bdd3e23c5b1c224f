package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeUpstream is the command line that starts the fake upstream of
// TestMain as a server.
func fakeUpstream(t *testing.T) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the fake upstream as a subprocess")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	return []string{"--", "env", "CTXFIT_FAKE_UPSTREAM=1", exe}
}

func TestToolsListsTheServersToolsWithTheirTokens(t *testing.T) {
	code, out, errOut := runCLI(t, "", append([]string{"tools"}, fakeUpstream(t)...)...)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 1+5+1, out)
	assert.Regexp(t, `^TOOL\s+TOKENS\s+DESCRIPTION$`, lines[0])
	assert.Regexp(t, `^items\s+\d+\s+A long list\.$`, lines[1])
	assert.Regexp(t, `^ctxfit_next\s+\d+\s+`, lines[2], "ctxfit's own tools are listed too")
	assert.Regexp(t, `^\(5 tools\)\s+\d+\s+the whole tools/list result$`, lines[6])
}

func TestCallPrintsTheResultAsAModelGetsItAndFollowsItsPages(t *testing.T) {
	args := append([]string{"call", "--threshold", "500", "--hard-cap", "1500", "items", "--next", "-1"}, fakeUpstream(t)...)
	code, out, errOut := runCLI(t, "", args...)
	require.Equal(t, 0, code, errOut)

	figures := regexp.MustCompile(`(?m)^-- strategy pagination, (\d+) tokens before, (\d+) after$`).FindAllStringSubmatch(errOut, -1)
	require.Greater(t, len(figures), 2, "a page per result, each with its figures: %s", errOut)
	for _, f := range figures {
		var before, after int
		_, _ = fmt.Sscan(f[1], &before)
		_, _ = fmt.Sscan(f[2], &after)
		assert.Less(t, after, before)
		assert.LessOrEqual(t, after, 1500, "no page over the hard cap")
	}
	for i := range 300 {
		assert.Contains(t, out, fmt.Sprintf(`{"id":%d,"text":"item number %d of the fake upstream"}`, i, i), "following every page gives back every item")
	}
	assert.NotContains(t, errOut, "more: run again", "--next -1 follows to the end")
}

func TestCallStopsAfterTheFirstResultAndSaysHowToGoOn(t *testing.T) {
	args := append([]string{"call", "--threshold", "500", "--hard-cap", "1500", "items"}, fakeUpstream(t)...)
	code, out, errOut := runCLI(t, "", args...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, `{"id":0,`)
	assert.NotContains(t, out, `{"id":299,`)
	assert.Contains(t, errOut, "more: run again with --next 1")
}

func TestCallUnderTheThresholdPassesThrough(t *testing.T) {
	args := append([]string{"call", "--threshold", "100000", "--hard-cap", "100000", "--json", "items"}, fakeUpstream(t)...)
	code, out, errOut := runCLI(t, "", args...)
	require.Equal(t, 0, code, errOut)
	assert.True(t, strings.HasPrefix(out, `{"content":[{"type":"text","text":"[{\"id\":0,`), out[:min(len(out), 80)])
	assert.Contains(t, errOut, "-- passed through unshaped")
}

func TestTryRefusesBadInvocations(t *testing.T) {
	up := []string{"--", "srv"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a call without a tool", append([]string{"call"}, up...), "needs the tool's name"},
		{"arguments that are not a JSON object", append([]string{"call", "--args", "[1]", "t"}, up...), `want a JSON object, e.g. --args '{"query": "x"}'`},
		{"no server", []string{"tools"}, "needs the upstream's command or --upstream-url"},
		{"--listen", append([]string{"tools", "--listen", "127.0.0.1:0"}, up...), "runs the proxy itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is a usage error", func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tt.args...)
			assert.Equal(t, 2, code)
			assert.Contains(t, errOut, tt.want)
		})
	}
}

func TestCallOfAnUnknownToolSaysSo(t *testing.T) {
	args := append([]string{"call", "nosuch"}, fakeUpstream(t)...)
	code, out, errOut := runCLI(t, "", args...)
	assert.Equal(t, 1, code, out)
	assert.Contains(t, errOut, "nosuch")
}
