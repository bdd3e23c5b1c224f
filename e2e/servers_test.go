package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

// TestRealServersBehindTheProxyKeepBothPromises runs e2e/ts/servers.test.mjs:
// the npm MCP servers (filesystem, memory, everything) directly and behind
// ctxfit proxy, through the TypeScript SDK client, with large reads, large
// arguments, a large knowledge graph, a huge environment variable, an image
// and a binary file. The JavaScript side checks that everything is
// reachable and rebuilds character for character; this side counts every
// result the client read through the proxy, as a client would (the larger
// of its text blocks and its structured content, media by what a model
// reads of them), against the hard cap, and the cost of reading
// everything against 1.3x the original plus an envelope per response.
func TestRealServersBehindTheProxyKeepBothPromises(t *testing.T) {
	t.Parallel() // as TestTheClientGuardKeepsBothPromisesWithRealServers
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is not installed; the end-to-end tests need Node 20 or later")
		}
		t.Skip("node is not installed")
	}
	bins := binaries(t)
	dir, err := filepath.Abs("ts")
	require.NoError(t, err)
	for _, server := range []string{"mcp-server-filesystem", "mcp-server-memory", "mcp-server-everything"} {
		_, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", server))
		require.NoError(t, err, "%s is missing: run (cd e2e/ts && npm ci --no-audit --no-fund), as test.sh does", server)
	}
	fixtures := t.TempDir()
	writeFixtures(t, fixtures)
	outFile := filepath.Join(t.TempDir(), "results.jsonl")

	// Generous: on a loaded machine (load 20 on 2 cores) the node run took over the 4 minutes this was.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "servers.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(),
		"CTXFIT_E2E_CTXFIT="+bins["ctxfit"],
		"CTXFIT_E2E_FIXTURES="+fixtures,
		"CTXFIT_E2E_MEMORY="+filepath.Join(t.TempDir(), "memory.jsonl"),
		"CTXFIT_E2E_OUT="+outFile,
	)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "node --test:\n%s", out)

	cases := readResults(t, outFile)
	require.NotEmpty(t, cases)
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			require.NotEmpty(t, c.proxied, "the case read something through the proxy")
			sent := 0
			for i, r := range c.proxied {
				n := clientTokens(t, r)
				assert.LessOrEqual(t, n, ctxfit.DefaultHardCap, "response %d of %d is over the hard cap", i+1, len(c.proxied))
				sent += n
			}
			if c.media {
				return // the original's media are counted as a model reads them, not as text
			}
			original := clientTokens(t, c.direct)
			assert.LessOrEqual(t, sent, original*13/10+400*len(c.proxied),
				"reading everything (%d responses, %d tokens) costs at most 1.3x the original (%d tokens) plus an envelope per response", len(c.proxied), sent, original)
			t.Logf("%d responses, %d tokens read through the proxy, %d tokens directly", len(c.proxied), sent, original)
		})
	}
}

// writeFixtures writes the files the filesystem server reads.
func writeFixtures(t *testing.T, dir string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "app.log"), []byte(corpus.Log(20000)), 0o644))
	many := filepath.Join(dir, "many")
	require.NoError(t, os.Mkdir(many, 0o755))
	for i := range 75 {
		name := fmt.Sprintf("report-of-the-quarter-for-region-%02d-with-a-long-name.txt", i)
		require.NoError(t, os.WriteFile(filepath.Join(many, name), []byte(corpus.Prose(6000+i)), 0o644))
	}
	r := rand.New(rand.NewPCG(40, 40))
	img := image.NewRGBA(image.Rect(0, 0, 400, 300))
	for i := range img.Pix {
		img.Pix[i] = byte(r.UintN(256))
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "picture.png"), b.Bytes(), 0o644))
	blob := make([]byte, 300000)
	for i := range blob {
		blob[i] = byte(r.UintN(256))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "data.bin"), blob, 0o644))
}

// result is a CallToolResult as the TypeScript client read it.
type result struct {
	Content []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Data     string `json:"data"`
		MimeType string `json:"mimeType"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
}

type readCase struct {
	direct  result
	proxied []result
	media   bool
}

func readResults(t *testing.T, file string) map[string]*readCase {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	cases := map[string]*readCase{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var line struct {
			Case   string `json:"case"`
			Kind   string `json:"kind"`
			Result result `json:"result"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		c := cases[line.Case]
		if c == nil {
			c = &readCase{}
			cases[line.Case] = c
		}
		if line.Kind == "direct" {
			c.direct = line.Result
		} else {
			c.proxied = append(c.proxied, line.Result)
		}
		for _, b := range line.Result.Content {
			c.media = c.media || b.Type != "text"
		}
	}
	require.NoError(t, sc.Err())
	return cases
}

var e2eExact = func() budget.Counter {
	c, err := budget.Exact("")
	if err != nil {
		panic(err)
	}
	return c
}()

// clientTokens counts what a client reads of a result: the larger of its
// text blocks (joined by newlines) and its structured content, and its
// other blocks: images and audio by what a model reads of them, links as
// their JSON.
func clientTokens(t *testing.T, r result) int {
	t.Helper()
	var texts []string
	other := 0
	var rule mcpcore.MediaRule
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "image", "audio":
			data, err := base64.StdEncoding.DecodeString(b.Data)
			require.NoError(t, err)
			if b.Type == "audio" {
				other += rule.AudioTokens(data)
			} else if n, ok := rule.ImageTokens(data); ok {
				other += n
			} else {
				other += len(b.Data) / 4
			}
		default:
			j, _ := json.Marshal(b)
			other += e2eExact.Count(string(j))
		}
	}
	n := e2eExact.Count(strings.Join(texts, "\n"))
	if len(r.StructuredContent) > 0 {
		n = max(n, e2eExact.Count(string(r.StructuredContent)))
	}
	return n + other
}
