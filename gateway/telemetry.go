package gateway

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit/telemetry"
)

// closeTimeout bounds the flush of the gateway's telemetry in Close.
const closeTimeout = 5 * time.Second

// emit gives r, stamped with the gateway's clock, to the sink of
// [Options.Sink], if any. It never blocks: the sink runs behind a
// telemetry.Async.
func (gw *Gateway) emit(ctx context.Context, r telemetry.GatewayRecord) {
	if gw.sink == nil {
		return
	}
	if r.Time.IsZero() {
		r.Time = gw.now()
	}
	_ = gw.sink.RecordGateway(ctx, r) // an error means closed, or a full buffer: counted by the Async
}

// retryKey is a tool of a session whose last call had invalid arguments.
type retryKey struct {
	ss   *mcp.ServerSession
	tool string
}

// validated records a call's validation: ok or not, and for a valid call
// that follows an invalid one of the same tool in the same session, a
// retry.
func (gw *Gateway) validated(ctx context.Context, ss *mcp.ServerSession, tool, parameter string, ok bool) {
	if !ok {
		gw.invalid.Add(1)
		if ss != nil {
			gw.mu.Lock()
			gw.failed[retryKey{ss, tool}] = struct{}{}
			gw.mu.Unlock()
		}
		gw.emit(ctx, telemetry.GatewayRecord{Event: telemetry.GatewayValidationFailed, Tool: tool, Parameter: parameter})
		return
	}
	gw.valid.Add(1)
	gw.emit(ctx, telemetry.GatewayRecord{Event: telemetry.GatewayValidationOK, Tool: tool})
	if ss == nil {
		return
	}
	k := retryKey{ss, tool}
	gw.mu.Lock()
	_, retry := gw.failed[k]
	delete(gw.failed, k)
	gw.mu.Unlock()
	if retry {
		gw.retries.Add(1)
		gw.emit(ctx, telemetry.GatewayRecord{Event: telemetry.GatewayRetry, Tool: tool})
	}
}

// forgetLocked drops what the gateway kept about a session that ended; gw.mu is
// held.
func (gw *Gateway) forgetLocked(ss *mcp.ServerSession) {
	delete(gw.connectedAt, ss)
	if gw.catalog != nil {
		gw.catalog.forget(ss)
	}
	for k := range gw.failed {
		if k.ss == ss {
			delete(gw.failed, k)
		}
	}
}
