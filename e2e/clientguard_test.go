package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/jsonwire"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/internal/testing/follow"
	"github.com/ctxfit/ctxfit/internal/testing/syncbuf"
	"github.com/ctxfit/ctxfit/mcpclientfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
	"github.com/ctxfit/ctxfit/mcpgoclientfit"
	"github.com/ctxfit/ctxfit/store"
)

// npmServers returns the path of e2e/ts/node_modules/.bin, skipping the
// test without node (failing under CI=true) and failing it when the npm
// servers are not installed.
func npmServers(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is not installed; the end-to-end tests need Node 20 or later")
		}
		t.Skip("node is not installed")
	}
	if testing.Short() {
		t.Skip("runs the npm MCP servers")
	}
	dir, err := filepath.Abs(filepath.Join("ts", "node_modules", ".bin"))
	require.NoError(t, err)
	for _, server := range []string{"mcp-server-filesystem", "mcp-server-memory", "mcp-server-everything"} {
		_, err := os.Stat(filepath.Join(dir, server))
		require.NoError(t, err, "%s is missing: run (cd e2e/ts && npm ci --no-audit --no-fund), as test.sh does", server)
	}
	return dir
}

// npmSession starts an npm MCP server over stdio with env and connects a
// client to it, with cg's middleware when cg is not nil.
func npmSession(t *testing.T, cg *mcpclientfit.Guard, env []string, bin string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent", Version: "1"}, nil)
	if cg != nil {
		cg.Install(c)
	}
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, "stderr: %s", stderr)
	t.Cleanup(func() {
		cs.Close()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", filepath.Base(bin), stderr)
		}
	})
	return cs
}

// sameBytes asserts got == want, and shows where they differ rather than
// both (they may be megabytes).
func sameBytes(t *testing.T, want, got, what string) {
	t.Helper()
	if want == got {
		return
	}
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	t.Errorf("%s: %d bytes, want %d; they differ from byte %d: %q, want %q", what, len(got), len(want), i,
		got[i:min(len(got), i+80)], want[i:min(len(want), i+80)])
}

// firstOf returns the first content block of res of type T, nil if none.
func firstOf[T mcp.Content](res *mcp.CallToolResult) T {
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok && l.Meta[mcpcore.MetaOriginal] == true {
			continue // the link to the original
		}
		if b, ok := c.(T); ok {
			return b
		}
	}
	var zero T
	return zero
}

// agentTokens counts what an agent hands a model of a result: the larger
// of its text blocks (joined by newlines) and its structured content, and
// its other blocks (media as a model reads them, links as their JSON).
func agentTokens(t *testing.T, res *mcp.CallToolResult) int {
	t.Helper()
	wire, err := json.Marshal(res)
	require.NoError(t, err)
	var r result
	require.NoError(t, json.Unmarshal(wire, &r))
	return clientTokens(t, r)
}

// wholeOf is what the guard shapes of a raw result, byte for byte: its
// structured content as the SDK's client decoded it, marshalled as the
// guard marshals it, else its text blocks joined by newlines.
func wholeOf(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.StructuredContent != nil {
		b, err := jsonwire.MarshalUnescaped(res.StructuredContent)
		require.NoError(t, err)
		return strings.TrimSuffix(string(b), "\n")
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// TestTheClientGuardKeepsBothPromisesWithRealServers puts the client-side
// guard (mcpclientfit) on a Go agent's sessions to the npm MCP servers
// (filesystem, memory, everything), with the large results of the proxy's
// suite (TestRealServersBehindTheProxyKeepBothPromises): every result the
// agent reads, continuations included, is within the hard cap by exact
// count, ctxfit_next rebuilds each result byte for byte from what the
// server sent, a blob held back reads back whole, an image stays, and
// reading everything costs at most 1.3x the original plus an envelope per
// response. The continuations never reach the servers: they have no
// ctxfit_next tool.
func TestTheClientGuardKeepsBothPromisesWithRealServers(t *testing.T) {
	// Parallel: it waits on node and its subprocesses most of its time; the other heavy tests that drive npm
	// servers run beside it (test.sh's e2e section, 2 at a time on 2 cores).
	t.Parallel()
	bin := npmServers(t)
	fixtures := t.TempDir()
	writeFixtures(t, fixtures)
	env := append(cleanEnv(),
		"MEMORY_FILE_PATH="+filepath.Join(t.TempDir(), "memory.jsonl"),
		"CTXFIT_E2E_HUGE="+strings.Repeat("x", 120000)+"\nan end of the huge variable")

	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: testSecret}})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	cg, err := mcpclientfit.New(g, nil)
	require.NoError(t, err)
	ctx := store.WithSubject(context.Background(), "agent-session-1")
	hardCap := g.Config().HardCap

	// check calls tool directly and through the guard, follows every
	// cursor and part of the shaped result through the guard, and checks
	// both promises. It returns the raw and the guarded first results.
	check := func(t *testing.T, raw, guarded *mcp.ClientSession, tool string, args map[string]any, wantStrategy string) (*mcp.CallToolResult, *mcp.CallToolResult) {
		t.Helper()
		want, err := raw.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		require.NoError(t, err)
		require.False(t, want.IsError)
		got, err := guarded.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		require.NoError(t, err)
		require.False(t, got.IsError, "%v", got.Content)
		sent := agentTokens(t, got)
		assert.LessOrEqual(t, sent, hardCap, "the first result is within the hard cap")
		responses := 1
		if wantStrategy == "" {
			return want, got
		}
		require.Equal(t, wantStrategy, got.Meta[mcpcore.MetaStrategy])
		first := mcpfittest.Body(t, got)
		rebuilt, _, err := follow.Rebuild([]byte(first), func(cursor string, part int64) ([]byte, error) {
			in := map[string]any{"cursor": cursor}
			if part != 0 {
				in["part"] = part
			}
			// Half of the continuations go through a session, half
			// through the guard alone: both are answered locally.
			var res *mcp.CallToolResult
			if responses%2 == 0 {
				res, err = guarded.CallTool(ctx, &mcp.CallToolParams{Name: "ctxfit_next", Arguments: in})
			} else {
				args, _ := json.Marshal(in)
				res, err = cg.CallTool(ctx, "ctxfit_next", args)
			}
			if err != nil {
				return nil, err
			}
			if res.IsError {
				return nil, fmt.Errorf("ctxfit_next: %v", res.Content[0].(*mcp.TextContent).Text)
			}
			n := agentTokens(t, res)
			assert.LessOrEqual(t, n, hardCap, "continuation %d is within the hard cap", responses)
			sent += n
			responses++
			return []byte(mcpfittest.Body(t, res)), nil
		})
		require.NoError(t, err)
		sameBytes(t, wholeOf(t, want), string(rebuilt), "the result rebuilds byte for byte")
		original := agentTokens(t, want)
		assert.LessOrEqual(t, sent, original*13/10+400*responses,
			"reading everything (%d responses, %d tokens) costs at most 1.3x the original (%d tokens) plus an envelope per response", responses, sent, original)
		t.Logf("%s: %d responses, %d tokens through the guard, %d directly", tool, responses, sent, original)
		return want, got
	}

	t.Run("server-filesystem", func(t *testing.T) {
		fs := filepath.Join(bin, "mcp-server-filesystem")
		raw, guarded := npmSession(t, nil, env, fs, fixtures), npmSession(t, cg, env, fs, fixtures)
		t.Run("a 2 MB log comes back in chunks that are the file", func(t *testing.T) {
			check(t, raw, guarded, "read_text_file", map[string]any{"path": filepath.Join(fixtures, "app.log")}, "chunking")
		})
		t.Run("75 files read at once: within the cap, nothing lost", func(t *testing.T) {
			entries, err := os.ReadDir(filepath.Join(fixtures, "many"))
			require.NoError(t, err)
			var paths []string
			for _, e := range entries {
				paths = append(paths, filepath.Join(fixtures, "many", e.Name()))
			}
			sort.Strings(paths)
			want, got := check(t, raw, guarded, "read_multiple_files", map[string]any{"paths": paths}, "")
			if got.Meta[mcpcore.MetaStrategy] != nil {
				check(t, raw, guarded, "read_multiple_files", map[string]any{"paths": paths}, got.Meta[mcpcore.MetaStrategy].(string))
			} else {
				assert.Equal(t, want, got)
			}
		})
		t.Run("an image stays an image, byte for byte", func(t *testing.T) {
			want, got := check(t, raw, guarded, "read_media_file", map[string]any{"path": filepath.Join(fixtures, "picture.png")}, "")
			img := firstOf[*mcp.ImageContent](got)
			require.NotNil(t, img, "the image block stays")
			assert.Equal(t, want.Content[0].(*mcp.ImageContent).Data, img.Data)
		})
		t.Run("a binary file is held back behind a link that reads it back locally", func(t *testing.T) {
			want, got := check(t, raw, guarded, "read_media_file", map[string]any{"path": filepath.Join(fixtures, "data.bin")}, "")
			link := firstOf[*mcp.ResourceLink](got)
			require.NotNil(t, link, "a resource_link")
			back, err := guarded.ReadResource(ctx, &mcp.ReadResourceParams{URI: link.URI})
			require.NoError(t, err)
			wantBlob := want.Content[0].(*mcp.EmbeddedResource).Resource.Blob
			assert.Equal(t, base64.StdEncoding.EncodeToString(wantBlob), base64.StdEncoding.EncodeToString(back.Contents[0].Blob))
		})
	})

	t.Run("server-memory", func(t *testing.T) {
		mem := filepath.Join(bin, "mcp-server-memory")
		raw, guarded := npmSession(t, nil, env, mem), npmSession(t, cg, env, mem)
		for b := 0; b < 2000; b += 500 {
			var entities []map[string]any
			for i := b; i < b+500; i++ {
				kind := "person"
				if i%3 == 0 {
					kind = "place"
				}
				entities = append(entities, map[string]any{"name": fmt.Sprintf("entity-%d", i), "entityType": kind,
					"observations": []string{fmt.Sprintf("observed <%d> & noted", i), fmt.Sprintf("met %d others", i%97)}})
			}
			res, err := raw.CallTool(ctx, &mcp.CallToolParams{Name: "create_entities", Arguments: map[string]any{"entities": entities}})
			require.NoError(t, err)
			require.False(t, res.IsError)
		}
		var relations []map[string]any
		for i := range 400 {
			relations = append(relations, map[string]any{"from": fmt.Sprintf("entity-%d", i), "to": fmt.Sprintf("entity-%d", i+1), "relationType": "knows"})
		}
		res, err := raw.CallTool(ctx, &mcp.CallToolParams{Name: "create_relations", Arguments: map[string]any{"relations": relations}})
		require.NoError(t, err)
		require.False(t, res.IsError)
		t.Run("a graph of 2,000 entities and 400 relations comes back in pages", func(t *testing.T) {
			check(t, raw, guarded, "read_graph", map[string]any{}, "pagination")
		})
	})

	t.Run("server-everything", func(t *testing.T) {
		ev := filepath.Join(bin, "mcp-server-everything")
		raw, guarded := npmSession(t, nil, env, ev), npmSession(t, cg, env, ev)
		t.Run("get-env with one huge variable: all of it back", func(t *testing.T) {
			_, got := check(t, raw, guarded, "get-env", map[string]any{}, "")
			strategy, _ := got.Meta[mcpcore.MetaStrategy].(string)
			require.NotEmpty(t, strategy, "shaped")
			check(t, raw, guarded, "get-env", map[string]any{}, strategy)
		})
	})
}

// TestTheMCPGoClientGuardKeepsBothPromisesWithARealServer is the same
// check for mark3labs/mcp-go's client, whose transport mcpgoclientfit
// wraps: the npm filesystem server's 2 MB log comes back in chunks within
// the hard cap that rebuild the server's structured content byte for byte
// (as the server wrote it: the wrapper shapes the JSON-RPC message), and a
// binary file is held back behind a link read back locally.
func TestTheMCPGoClientGuardKeepsBothPromisesWithARealServer(t *testing.T) {
	t.Parallel() // as TestTheClientGuardKeepsBothPromisesWithRealServers
	bin := npmServers(t)
	fixtures := t.TempDir()
	writeFixtures(t, fixtures)
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: testSecret}})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	cg, err := mcpgoclientfit.New(g, nil)
	require.NoError(t, err)
	hardCap := g.Config().HardCap
	ctx := context.Background()

	connectGo := func(guarded bool) *mcpgoclient.Client {
		var tr mcpgotransport.Interface = mcpgotransport.NewStdio(filepath.Join(bin, "mcp-server-filesystem"), cleanEnv(), fixtures)
		if guarded {
			tr = cg.Wrap(tr)
		}
		c := mcpgoclient.NewClient(tr)
		require.NoError(t, c.Start(ctx))
		t.Cleanup(func() { _ = c.Close() })
		_, err := c.Initialize(ctx, mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{ClientInfo: mcpgo.Implementation{Name: "e2e-agent", Version: "1"}}})
		require.NoError(t, err)
		return c
	}
	raw, guarded := connectGo(false), connectGo(true)
	text := func(res *mcpgo.CallToolResult, i int) string { return res.Content[i].(mcpgo.TextContent).Text }
	call := func(c *mcpgoclient.Client, name string, args map[string]any) *mcpgo.CallToolResult {
		res, err := c.CallTool(ctx, mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: name, Arguments: args}})
		require.NoError(t, err)
		require.False(t, res.IsError)
		return res
	}
	tokens := func(res *mcpgo.CallToolResult) int {
		wire, err := json.Marshal(res)
		require.NoError(t, err)
		var r result
		require.NoError(t, json.Unmarshal(wire, &r))
		return clientTokens(t, r)
	}

	args := map[string]any{"path": filepath.Join(fixtures, "app.log")}
	want := call(raw, "read_text_file", args)
	first := call(guarded, "read_text_file", args)
	require.Equal(t, "chunking", first.Meta.AdditionalFields[mcpcore.MetaStrategy])
	assert.LessOrEqual(t, tokens(first), hardCap)
	responses := 1
	rebuilt, _, err := follow.Rebuild([]byte(text(first, 0)), func(cursor string, part int64) ([]byte, error) {
		in := map[string]any{"cursor": cursor}
		if part != 0 {
			in["part"] = part
		}
		res := call(guarded, "ctxfit_next", in)
		assert.LessOrEqual(t, tokens(res), hardCap, "continuation %d", responses)
		responses++
		return []byte(text(res, 0)), nil
	})
	require.NoError(t, err)
	sameBytes(t, string(want.RawStructuredContent), string(rebuilt), "the log rebuilds byte for byte")
	t.Logf("read_text_file: %d responses through mcp-go and the guard", responses)

	got := call(guarded, "read_media_file", map[string]any{"path": filepath.Join(fixtures, "data.bin")})
	var link mcpgo.ResourceLink
	for _, c := range got.Content {
		if l, ok := c.(mcpgo.ResourceLink); ok && link.URI == "" {
			link = l // the blob's; the link to the whole result comes last
		}
	}
	require.NotEmpty(t, link.URI, "a resource_link")
	back, err := guarded.ReadResource(ctx, mcpgo.ReadResourceRequest{Params: mcpgo.ReadResourceParams{URI: link.URI}})
	require.NoError(t, err)
	wantBlob := call(raw, "read_media_file", map[string]any{"path": filepath.Join(fixtures, "data.bin")}).Content[0].(mcpgo.EmbeddedResource).Resource.(mcpgo.BlobResourceContents).Blob
	assert.Equal(t, wantBlob, back.Contents[0].(mcpgo.BlobResourceContents).Blob)
}
