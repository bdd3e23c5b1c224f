package mcpgofit_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpgofit"
)

func TestABlobIsHeldBackAsALinkThatReadsItBack(t *testing.T) {
	blob := make([]byte, 300000)
	r := rand.New(rand.NewPCG(5, 6))
	for i := range blob {
		blob[i] = byte(r.UintN(256))
	}
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode), func(t *testing.T) {
			s := server.NewMCPServer("media", "1", server.WithToolCapabilities(true))
			s.AddTool(mcp.NewTool("read_binary"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{
					mcp.NewTextContent("the file follows"),
					mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "file:///data.bin", MIMEType: "application/octet-stream",
						Blob: base64.StdEncoding.EncodeToString(blob)}),
				}}, nil
			})
			require.NoError(t, mcpgofit.Install(s, newGuard(t, ctxfit.Config{Mode: mode}), nil))
			c := connect(t, s)
			res := call(t, c, "read_binary", nil)
			require.Len(t, res.Content, 3, "the text, the blob's link, the link to the whole result")
			assert.NotNil(t, original(res))
			link, ok := res.Content[1].(mcp.ResourceLink)
			require.True(t, ok, "the blob is a resource_link: %T", res.Content[1])
			assert.True(t, strings.HasPrefix(link.URI, mcpcore.ResourcePrefix))

			read, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: link.URI}})
			require.NoError(t, err)
			require.Len(t, read.Contents, 1)
			got, ok := read.Contents[0].(mcp.BlobResourceContents)
			require.True(t, ok, "%T", read.Contents[0])
			data, err := base64.StdEncoding.DecodeString(got.Blob)
			require.NoError(t, err)
			assert.Equal(t, blob, data, "resources/read gives the bytes back, exactly")
		})
	}
}

func TestAShapedResultLinksItsOriginalWholeOrByRange(t *testing.T) {
	text := strings.Repeat("a line of the report\n", 3000)
	s := server.NewMCPServer("text", "1", server.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("report", mcp.WithReadOnlyHintAnnotation(true)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(text), nil
	})
	require.NoError(t, mcpgofit.Install(s, newGuard(t, ctxfit.Config{}), nil))
	c := connect(t, s)
	res := call(t, c, "report", nil)
	assert.LessOrEqual(t, tokensOf(t, res), ctxfit.DefaultHardCap, "the link counts against the hard cap")
	link := original(res)
	require.NotNil(t, link, "a shaped result links its original")
	assert.Equal(t, "application/json", link.MIMEType, "the original is the whole result")

	var read func(uri string) (string, error)
	read = func(uri string) (string, error) {
		r, err := c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
		if err != nil {
			return "", err
		}
		got, ok := r.Contents[0].(mcp.TextResourceContents)
		require.True(t, ok, "%T", r.Contents[0])
		if len(r.Contents) > 1 {
			// Over the hard cap: the first range, a line on how to read
			// on (mcp-go's resource handlers return no result _meta, so
			// the line is where the next range is), and the rest range
			// after range.
			line, ok := r.Contents[1].(mcp.TextResourceContents)
			require.True(t, ok)
			_, next, _ := strings.Cut(line.Text, "with uri ")
			next, _, _ = strings.Cut(next, " ")
			require.True(t, strings.HasPrefix(next, mcpcore.ResourcePrefix), line.Text)
			rest, err := read(next)
			return got.Text + rest, err
		}
		return got.Text, nil
	}
	whole, err := read(link.URI)
	require.NoError(t, err)
	var result struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	require.NoError(t, json.Unmarshal([]byte(whole), &result), "the whole result")
	require.Len(t, result.Content, 1)
	assert.Equal(t, text, result.Content[0].Text, "its text, byte for byte")
	got, err := read(link.URI + "?bytes=2-5")
	require.NoError(t, err)
	assert.Equal(t, whole[2:6], got)
	_, err = read(link.URI + "?lines=0-3")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "A at least 1")
}
