package mcpfit_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/mcpfit"
	"github.com/ctxfit/ctxfit/mcpfit/mcpfittest"
)

// noisyPNG is a PNG of w x h random pixels: large as base64, small as
// what a model reads of it.
func noisyPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(r.UintN(256))
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// mediaServer serves tools that return media, guarded in mode.
func mediaServer(t *testing.T, mode ctxfit.Mode, picture, blob []byte) *mcp.ClientSession {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "media", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "read_media_file"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: picture, MIMEType: "image/png"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "read_binary"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "the file follows"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///data.bin", MIMEType: "application/octet-stream", Blob: blob}},
		}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "text_and_picture"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: strings.Repeat("a long line of the report\n", 40000)},
			&mcp.ImageContent{Data: picture[:min(len(picture), 64)], MIMEType: "image/png"},
			&mcp.TextContent{Text: "a short closing note"},
		}}, nil, nil
	})
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: testSecret, Mode: mode}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	require.NoError(t, mcpfit.Install(s, g, nil))
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestAnImageCountsWhatTheModelSeesNotItsBase64(t *testing.T) {
	picture := noisyPNG(t, 400, 300) // ~480 KB of base64; 160 tokens to see
	cs := mediaServer(t, ctxfit.ModeStore, picture, nil)
	res := mcpfittest.Call(t, cs, "read_media_file", nil)
	require.Len(t, res.Content, 1)
	img, ok := res.Content[0].(*mcp.ImageContent)
	require.True(t, ok, "the image passes: 400x300/750 = 160 tokens, far under the threshold")
	assert.Equal(t, picture, img.Data)
	assert.NotContains(t, res.Meta, mcpcore.MetaStrategy)
}

func TestABlobIsHeldBackAsALinkThatReadsItBack(t *testing.T) {
	blob := make([]byte, 300000)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range blob {
		blob[i] = byte(r.UintN(256))
	}
	for _, mode := range []ctxfit.Mode{ctxfit.ModeStore, ctxfit.ModeReplay} {
		t.Run(string(mode), func(t *testing.T) {
			cs := mediaServer(t, mode, nil, blob)
			res := mcpfittest.Call(t, cs, "read_binary", nil)
			require.Len(t, res.Content, 3, "the text, the blob's link, the link to the whole result")
			assert.Equal(t, mcpfittest.Original(res), res.Content[2])
			assert.Equal(t, "the file follows", res.Content[0].(*mcp.TextContent).Text, "the text keeps its place")
			link, ok := res.Content[1].(*mcp.ResourceLink)
			require.True(t, ok, "the blob is a resource_link: %T", res.Content[1])
			assert.True(t, strings.HasPrefix(link.URI, mcpcore.ResourcePrefix))
			assert.Equal(t, "application/octet-stream", link.MIMEType)
			require.NotNil(t, link.Size)
			assert.EqualValues(t, len(blob), *link.Size)
			assert.LessOrEqual(t, mcpfittest.TokensWithMedia(t, res), ctxfit.DefaultHardCap)

			read, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: link.URI})
			require.NoError(t, err)
			require.Len(t, read.Contents, 1)
			assert.Equal(t, blob, read.Contents[0].Blob, "resources/read gives the bytes back, exactly")

			_, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: link.URI + "x"})
			assert.Error(t, err, "a tampered link reads nothing")
		})
	}
}

func TestTextBesideAnImageIsChunkedInItsPlace(t *testing.T) {
	picture := noisyPNG(t, 40, 30)
	cs := mediaServer(t, ctxfit.ModeStore, picture, nil)
	res := mcpfittest.Call(t, cs, "text_and_picture", nil)
	assert.LessOrEqual(t, mcpfittest.TokensWithMedia(t, res), ctxfit.DefaultHardCap)
	kinds := make([]string, len(res.Content))
	for i, c := range res.Content {
		switch c.(type) {
		case *mcp.TextContent:
			kinds[i] = "text"
		case *mcp.ImageContent:
			kinds[i] = "image"
		case *mcp.ResourceLink:
			kinds[i] = "link"
		}
	}
	assert.Equal(t, []string{"text", "text", "image", "text", "link"}, kinds, "the chunk, its guidance line, the other blocks in order, then the link to the whole result")
	assert.Equal(t, "a short closing note", res.Content[3].(*mcp.TextContent).Text)
}
