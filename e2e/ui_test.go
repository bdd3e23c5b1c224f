package e2e

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

// browser returns the path of a local Chromium or Chrome, skipping the
// test when there is none (failing it under CI=true: test.sh installs
// Debian's chromium).
func browser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium found: the browser test needs it (apt-get install chromium, as test.sh does)")
	}
	t.Skip("no Chromium found (apt-get install chromium): the browser test of the UI is skipped")
	return ""
}

// uiURLs starts the proxy and returns the URLs of its UI and of its MCP
// endpoint, read from the lines it logs.
func uiURLs(t *testing.T, cmd *exec.Cmd) (ui, mcpURL string) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	uiLine := regexp.MustCompile(`serving the UI","url":"(http://[^"]+)"`)
	mcpLine := regexp.MustCompile(`serving streamable HTTP","url":"(http://[^"]+)"`)
	found := make(chan [2]string, 1)
	go func() {
		var got [2]string
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := uiLine.FindStringSubmatch(sc.Text()); m != nil {
				got[0] = m[1]
			}
			if m := mcpLine.FindStringSubmatch(sc.Text()); m != nil {
				got[1] = m[1]
			}
			if got[0] != "" && got[1] != "" {
				select {
				case found <- got:
				default:
				}
			}
		}
	}()
	select {
	case got := <-found:
		return got[0], got[1]
	case <-time.After(time.Minute):
		t.Fatal("the proxy did not log its UI and MCP URLs within a minute")
		return "", ""
	}
}

// TestTheUIShowsCallsLiveInABrowser puts the proxy with --ui in front of
// the npm filesystem server and drives its page in headless Chromium:
// calls appear as they are made, a shaped call opens beside its original,
// the keyboard moves between calls and opens one, the filters narrow the
// list, and a request without a token, or with another client's, sees
// nothing of them.
func TestTheUIShowsCallsLiveInABrowser(t *testing.T) {
	chrome := browser(t)
	npm := npmServers(t)
	bins := binaries(t)
	fixtures := t.TempDir()
	log := corpus.Log(20000)
	require.NoError(t, os.WriteFile(filepath.Join(fixtures, "app.log"), []byte(log), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(fixtures, "note.txt"), []byte("<img src=x onerror=alert(1)> a short note"), 0o644))

	cmd := exec.Command(bins["ctxfit"], "proxy", "--listen", "127.0.0.1:0", "--auth-tokens-env", "E2E_UI_TOKENS",
		"--ui", "--ui-listen", "127.0.0.1:0", "--", filepath.Join(npm, "mcp-server-filesystem"), fixtures)
	cmd.Env = append(cleanEnv(), "E2E_UI_TOKENS=alice-token,bob-token")
	uiURL, mcpURL := uiURLs(t, cmd)

	t.Run("a request without a token is refused", func(t *testing.T) {
		resp, err := http.Get(uiURL + "/api/calls")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	})

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.WindowSize(1280, 1100))...)
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()
	wait := func(expr string) {
		t.Helper()
		_, err := chromedp.Run(tab, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(90*time.Second)))
		require.NoError(t, err, "waiting for %s", expr)
	}
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(tab, chromedp.Evaluate[string](expr))
		require.NoError(t, err, expr)
		return v
	}

	require.NoError(t, chromedp.Do(tab, chromedp.Navigate(uiURL)))
	wait(`document.getElementById('live').textContent.includes('Unauthorized')`)
	require.NoError(t, chromedp.Do(tab,
		chromedp.SetValue(chromedp.CSS("#token"), "alice-token"),
		chromedp.Click(chromedp.CSS("#access button")),
	))
	wait(`document.getElementById('live').textContent.startsWith('Live')`)

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpURL, HTTPClient: &http.Client{Transport: bearer("alice-token")}}, nil)
	require.NoError(t, err)
	defer cs.Close()
	for _, name := range []string{"note.txt", "app.log"} {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(fixtures, name)}})
		require.NoError(t, err)
	}

	t.Run("calls appear live", func(t *testing.T) {
		wait(`document.querySelectorAll('#calls tbody tr').length === 2`)
		rows := eval(`[...document.querySelectorAll('#calls tbody tr')].map(r => r.textContent).join('\n')`)
		assert.Contains(t, rows, "read_text_file")
		assert.Contains(t, rows, "chunking", "the big file was shaped")
		assert.Equal(t, "0", eval(`String(document.querySelectorAll('#calls img').length)`), "what a call carries is text, never markup")
	})

	t.Run("every field has a label and Tab reaches the token, the filters and the calls in order", func(t *testing.T) {
		assert.Empty(t, eval(`[...document.querySelectorAll('input, select, textarea')]
			.filter(e => e.labels.length === 0 && !e.getAttribute('aria-label')).map(e => e.id || e.outerHTML).join(', ')`))
		assert.Empty(t, eval(`[...document.querySelectorAll('button')]
			.filter(b => b.textContent.trim() === '' && !b.getAttribute('aria-label')).map(b => b.outerHTML).join(', ')`))
		require.NoError(t, chromedp.Do(tab, chromedp.Focus(chromedp.CSS("a.skip"))))
		var order []string
		for range 30 {
			require.NoError(t, chromedp.Do(tab, chromedp.KeyEvent(kb.Tab)))
			at := eval(`document.activeElement.closest('#calls tbody') ? 'call' : (document.activeElement.id || document.activeElement.tagName)`)
			order = append(order, at)
			if at == "call" {
				break
			}
		}
		last := -1
		for _, want := range []string{"token", "f-tool", "f-strategy", "f-status", "f-session", "call"} {
			i := slices.Index(order, want)
			require.Greater(t, i, last, "Tab reaches %s after the fields before it: %v", want, order)
			last = i
		}
	})

	t.Run("the sessions are listed with their calls, the upstream by its program's name", func(t *testing.T) {
		wait(`document.getElementById('sessions').textContent.includes('2 calls')`)
		assert.Regexp(t, `^s-[0-9a-f]{8}: connected, 2 calls \(1 shaped, \d+ tokens saved\)$`, eval(`document.getElementById('sessions').textContent`))
		health := eval(`document.getElementById('health').textContent`)
		assert.Contains(t, health, "stdio: mcp-server-filesystem: ok")
		assert.NotContains(t, health, npm, "no local path")
	})

	t.Run("the keyboard moves between calls and opens one beside its original", func(t *testing.T) {
		require.NoError(t, chromedp.Do(tab, chromedp.Focus(chromedp.CSS("#calls tbody tr:last-child"))))
		first := eval(`document.activeElement.dataset.id`)
		require.NoError(t, chromedp.Do(tab, chromedp.KeyEvent(kb.ArrowUp)))
		shaped := eval(`document.activeElement.dataset.id`)
		assert.NotEqual(t, first, shaped, "the arrow key moved to the newer call")
		require.NoError(t, chromedp.Do(tab, chromedp.KeyEvent(kb.Enter)))
		wait(`!document.getElementById('detail').hidden && document.getElementById('original').textContent.length > 0`)
		received := eval(`document.getElementById('received').textContent`)
		original := eval(`document.getElementById('original').textContent`)
		assert.Contains(t, received, "[cursor]", "cursors are hidden without --ui-show-arguments")
		firstLine, _, _ := strings.Cut(log, "\n")
		assert.Contains(t, original, firstLine, "the original's first page holds the file's beginning")
		assert.Less(t, len(received), len(log), "the model received less than the original")
		info := eval(`document.getElementById('orig-info').textContent`)
		m := regexp.MustCompile(`of (\d+)`).FindStringSubmatch(info)
		require.NotNil(t, m, info)
		total, _ := strconv.Atoi(m[1])
		assert.Greater(t, total, len(log), "the original is the whole result, the file and its envelope")
		page := eval(`document.body.innerText`)
		for _, local := range []string{fixtures, npm} {
			assert.NotContains(t, page, local, "the page (and the screenshot of docs/) shows no local path")
		}
		if path := os.Getenv("CTXFIT_E2E_SCREENSHOT"); path != "" {
			png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, png, 0o644))
		}
		require.NoError(t, chromedp.Do(tab, chromedp.Click(chromedp.CSS("#orig-next"))))
		wait(`document.getElementById('orig-info').textContent.startsWith('Bytes 32768')`)
		require.NoError(t, chromedp.Do(tab, chromedp.KeyEvent(kb.Escape)))
		wait(`document.getElementById('detail').hidden && document.activeElement.dataset.id === '` + shaped + `'`)
	})

	t.Run("the filters narrow the list", func(t *testing.T) {
		require.NoError(t, chromedp.Do(tab,
			chromedp.SetValue(chromedp.CSS("#f-strategy"), "passthrough"),
			chromedp.Click(chromedp.CSS("#filters button[type=submit]")),
		))
		wait(`document.querySelectorAll('#calls tbody tr').length === 1`)
		assert.Contains(t, eval(`document.querySelector('#calls tbody tr').textContent`), "passthrough")
	})

	t.Run("another client's token sees none of the calls", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, uiURL+"/api/calls", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer bob-token")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, string(body), `"calls":[]`)
	})

	t.Run("a page reached through another host name is refused", func(t *testing.T) {
		req, err := http.NewRequest(http.MethodGet, uiURL, nil)
		require.NoError(t, err)
		req.Host = "attacker.example"
		req.Header.Set("Authorization", "Bearer alice-token")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode)
	})
}
