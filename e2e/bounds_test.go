package e2e

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runawayJQ is a query that scans a long string (3 MB) for a pattern it
// does not hold, a million times: each step is cheap and builds nothing
// (what a query builds across steps has its own bound, which would stop it
// first), so it stops only at the shaping time limit, or when its client
// goes.
const runawayJQ = `("1000000000" * 300000) as $s | reduce range(1000000) as $i (0; if ($s | test("12")) then . + 1 else . end)`

// startHTTPServerWith runs examples/httpserver with the CTXFIT_* settings
// env on top of the tests' own, and returns its base URL.
func startHTTPServerWith(t *testing.T, env ...string) string {
	t.Helper()
	bin, err := buildHTTPServer()
	require.NoError(t, err)
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Env = append(cleanEnv(), env...) // the last value of a variable wins
	url := startListening(t, cmd, listening)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	// A first query readies what the server builds on first use (the
	// data, the tokenizer), so that the tests' queries reach the shaping
	// at once.
	status, body, err := jqGet(t, url, "warm-up", "length", time.Minute)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, body)
	return url
}

// jqGet asks the bookings list for the results of the jq query, as the
// client whose credential is token, and returns the status and body; the
// request gives up after wait.
func jqGet(t *testing.T, base, token, query string, wait time.Duration) (int, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/bookings?jq="+url.QueryEscape(query), nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// TestARunawayJQQueryEndsAtTheTimeLimitAndLeavesRoomForOtherClients runs
// examples/httpserver with two shaping slots (one per client) and a time
// limit of two seconds: a ?jq= query that would run for minutes ends with a
// 503 shaping_timeout, and while one client runs two of them another
// client's query is served.
func TestARunawayJQQueryEndsAtTheTimeLimitAndLeavesRoomForOtherClients(t *testing.T) {
	base := startHTTPServerWith(t, "CTXFIT_SHAPE_TIMEOUT=2s", "CTXFIT_MAX_CONCURRENT_SHAPING=2", "CTXFIT_ADMISSION_WAIT=2s")

	t.Run("a runaway query ends with shaping_timeout", func(t *testing.T) {
		status, body, err := jqGet(t, base, "alice", runawayJQ, time.Minute)
		require.NoError(t, err, "the answer comes (within a minute)")
		assert.Equal(t, http.StatusServiceUnavailable, status)
		assert.Contains(t, body, "shaping_timeout")
	})

	t.Run("one client's runaway queries leave room for another client's", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				status, _, err := jqGet(t, base, "alice", runawayJQ, time.Minute)
				assert.NoError(t, err)
				assert.Equal(t, http.StatusServiceUnavailable, status, "each ends at the time limit, or finds alice's share taken")
			})
		}
		time.Sleep(time.Second) // alice's queries are under way (not an assertion: bob is served either way)
		status, body, err := jqGet(t, base, "bob", "length", time.Minute)
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, status, "bob is served beside alice's queries: %s", body)
		assert.Equal(t, "[500]", body)
		wg.Wait()
	})
}

// TestARunawayJQQueryStopsWhenItsClientGoes runs examples/httpserver with
// an hour's time limit and two shaping slots: two clients start a query
// that would run for minutes and go away after three seconds; their queries
// stop and give their slots back, so a third client is served.
func TestARunawayJQQueryStopsWhenItsClientGoes(t *testing.T) {
	base := startHTTPServerWith(t, "CTXFIT_SHAPE_TIMEOUT=1h", "CTXFIT_MAX_CONCURRENT_SHAPING=2", "CTXFIT_ADMISSION_WAIT=2s")
	var wg sync.WaitGroup
	for _, who := range []string{"carol", "dave"} {
		wg.Go(func() {
			_, _, err := jqGet(t, base, who, runawayJQ, 3*time.Second)
			assert.Error(t, err, "%s's client gives up before an answer", who)
		})
	}
	wg.Wait()
	var status int
	var body string
	assert.Eventually(t, func() bool {
		var err error
		status, body, err = jqGet(t, base, "erin", "length", time.Minute)
		return err == nil && status == http.StatusOK
	}, 30*time.Second, 100*time.Millisecond, "erin is served once the queries whose clients went have stopped")
	assert.Equal(t, "[500]", body)
}
