package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// binDir holds the binaries built for this run; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	if os.Getenv(chatterServerEnv) == "1" {
		runChatterServer()
		return
	}
	if os.Getenv(manyToolsServerEnv) == "1" {
		runManyToolsServer()
		return
	}
	if os.Getenv(graphServerEnv) != "" {
		runGraphServer()
		return
	}
	dir, err := os.MkdirTemp("", "ctxfit-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// programs are the packages the tests run, by binary name.
var programs = map[string]string{
	"ctxfit":      "github.com/ctxfit/ctxfit/cmd/ctxfit",
	"mcpserver":   "github.com/ctxfit/ctxfit/examples/mcpserver",
	"mcpgoserver": "github.com/ctxfit/ctxfit/examples/mcpgoserver",
	"agent":       "github.com/ctxfit/ctxfit/examples/agent",
}

// hasMCPGoServer reports whether the mark3labs/mcp-go example is in the tree.
func hasMCPGoServer() bool {
	_, err := os.Stat(filepath.Join("..", "examples", "mcpgoserver", "main.go"))
	return err == nil
}

var build = sync.OnceValues(func() (map[string]string, error) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []string
	)
	paths := map[string]string{}
	for name, pkg := range programs {
		if name == "mcpgoserver" && !hasMCPGoServer() {
			continue
		}
		bin := filepath.Join(binDir, name)
		paths[name] = bin
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Sprintf("go build %s: %v\n%s", pkg, err, out))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return paths, nil
})

// binaries builds ctxfit and the example servers once per run and returns
// their paths by name.
func binaries(t *testing.T) map[string]string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	paths, err := build()
	require.NoError(t, err)
	return paths
}

const testSecret = "an end-to-end secret of 32 bytes or more"

// cleanEnv is the environment of the subprocesses: no operator settings,
// a fixed secret, and a patient shaping time limit (these tests are about
// what is sent, and a loaded machine must not turn a shape into a 503).
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CTXFIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "CTXFIT_SECRET="+testSecret, "CTXFIT_SHAPE_TIMEOUT=1m", "CTXFIT_ADMISSION_WAIT=1m")
}

// connect runs bin with args as a stdio MCP server and connects to it; its
// standard error is shown when the test fails.
func connect(t *testing.T, bin string, args ...string) (*mcp.ClientSession, *syncbuf.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = cleanEnv()
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).
		Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, "stderr: %s", stderr)
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("%s %v stderr:\n%s", filepath.Base(bin), args, stderr)
		}
	})
	return cs, stderr
}

// startListening starts cmd (its environment cleanEnv unless set) and
// returns the first submatch of pattern in a line of its standard error:
// the URL the program logs once it listens. The test fails if none comes
// within a minute; the program's standard error is drained until it exits,
// and the program is killed when the test ends (the caller may stop it
// sooner).
func startListening(t *testing.T, cmd *exec.Cmd, pattern *regexp.Regexp) string {
	t.Helper()
	if cmd.Env == nil {
		cmd.Env = cleanEnv()
	}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := pattern.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default: // found before; keep draining
				}
			}
		}
	}()
	select {
	case url := <-found:
		return url
	case <-time.After(time.Minute):
		t.Fatalf("%s did not log a line matching %s within a minute", filepath.Base(cmd.Path), pattern)
		return ""
	}
}

// proxyURL matches the URL the proxy logs when it listens.
var proxyURL = regexp.MustCompile(`"url":"(http://[^"]+)"`)
