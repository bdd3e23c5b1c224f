package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// proxyConfig is the proxy's settings file: the examples' own endpoint
// setting (a booking of about 3,200 tokens is summarized at 2,000), which
// their -raw mode leaves out.
const proxyConfig = `endpoints:
  - match: get_booking
    threshold: 2000
`

func writeProxyConfig(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "ctxfit.yaml")
	require.NoError(t, os.WriteFile(file, []byte(proxyConfig), 0o600))
	return file
}

func upstreams(t *testing.T, bins map[string]string) []string {
	names := []string{"mcpserver"}
	if _, ok := bins["mcpgoserver"]; ok {
		names = append(names, "mcpgoserver")
	} else {
		t.Log("examples/mcpgoserver is not in the tree: testing the proxy in front of examples/mcpserver only")
	}
	return names
}

func TestTheProxyInFrontOfTheExamplesLosesNothingAndStaysUnderTheHardCap(t *testing.T) {
	bins := binaries(t)
	cfg := writeProxyConfig(t)
	for _, upstream := range upstreams(t, bins) {
		for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
			t.Run(upstream+" -raw in "+string(mode)+" mode", func(t *testing.T) {
				t.Parallel()
				pcs, stderr := connect(t, bins["ctxfit"], "proxy", "--config", cfg, "--mode", string(mode), "--", bins[upstream], "-raw")
				rcs, _ := connect(t, bins[upstream], "-raw")

				skipLog := ""
				if mode == ctxfit.ModeReplay && upstream != "mcpserver" {
					// Each replayed chunk re-reads and re-chunks the 10,000-line
					// log (about 20 s in all); one upstream is enough.
					skipLog = "read_log is followed in replay mode in front of mcpserver only"
				}
				bookingToolsLoseNothing(t, pcs, rcs, skipLog)
				t.Run("every call is one JSON log line on standard error", func(t *testing.T) {
					var calls int
					for _, line := range strings.Split(stderr.String(), "\n") {
						if !strings.Contains(line, `"msg":"tool call"`) {
							continue
						}
						calls++
						var rec map[string]any
						require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
						assert.Contains(t, rec, "tokens_before")
						assert.Contains(t, rec, "tokens_after")
					}
					assert.Greater(t, calls, 10)
				})
			})
		}
	}
}

func TestTheProxyServesStreamableHTTP(t *testing.T) {
	bins := binaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url := startListening(t, exec.CommandContext(ctx, bins["ctxfit"], "proxy", "--listen", "127.0.0.1:0", "--", bins["mcpserver"], "-raw"), proxyURL)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	require.NoError(t, err)
	defer cs.Close()
	s := mcpfittest.Session{T: t, CS: cs}
	bodies := s.Follow("list_bookings", map[string]any{"status": "cancelled"}, ctxfit.DefaultHardCap)
	assert.Greater(t, len(bodies), 1)
}
