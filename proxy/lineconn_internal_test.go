package proxy

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An upstream's answer over the message limit is reported for the request
// it answered, with what happened, and the connection reads on: the
// upstream is kept.
func TestALineOverTheLimitIsReportedWithItsIDAndTheConnectionReadsOn(t *testing.T) {
	huge := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", MaxMessageSize) + `"}]}}`
	input := huge + "\n" + "not JSON-RPC at all\n" + `{"jsonrpc":"2.0","id":8,"result":{}}` + "\n"
	var mu sync.Mutex
	type bad struct {
		id  jsonrpc.ID
		err error
	}
	var bads []bad
	c := newLineConn(strings.NewReader(input), &strings.Builder{}, func() error { return nil }, func(id jsonrpc.ID, err error) {
		mu.Lock()
		defer mu.Unlock()
		bads = append(bads, bad{id, err})
	})
	go c.readLoop()
	msg, err := c.Read(context.Background())
	require.NoError(t, err)
	resp, ok := msg.(*jsonrpc.Response)
	require.True(t, ok, "%T", msg)
	assert.Equal(t, int64(8), resp.ID.Raw(), "the message after the bad ones")

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, bads, 2)
	assert.Equal(t, int64(7), bads[0].id.Raw(), "the request the oversized answer was for")
	assert.ErrorIs(t, bads[0].err, errTooLarge)
	assert.Contains(t, bads[0].err.Error(), "more than 16 MiB")
	assert.False(t, bads[1].id.IsValid(), "no ID in a line that is not JSON")
	assert.Contains(t, bads[1].err.Error(), "not JSON-RPC")
}
