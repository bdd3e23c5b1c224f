package proxy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sony/gobreaker/v2"
)

type jsonrpcError = jsonrpc.Error

// Statuses of a tool call, as logged.
const (
	StatusSuccess         = "success"          // the tool answered
	StatusToolError       = "tool_error"       // the tool answered with isError
	StatusError           = "error"            // a JSON-RPC error (from the upstream or ctxfit)
	StatusTimeout         = "timeout"          // the upstream did not answer in time
	StatusUpstreamFailure = "upstream_failure" // the upstream's connection broke during the call
	StatusRestarting      = "restarting"       // no upstream connection: it is restarting
	StatusCircuitOpen     = "circuit_open"     // the breaker is open
	StatusRateLimited     = "rate_limited"     // the client is over its rate
	StatusCanceled        = "canceled"         // the client canceled the call
)

// Codes of the proxy's tool errors, in their _meta under MetaError.
const (
	// MetaError is the _meta key of a proxy error's code (the status).
	MetaError = "ctxfit/proxyError"
	// MetaRetryAfter is the _meta key of the seconds to wait before a retry.
	MetaRetryAfter = "ctxfit/retryAfter"
)

// forward is the handler of every mirrored tool: it calls the upstream
// through the breaker, within the call timeout.
func (p *Proxy) forward(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	res, err := p.breaker.Execute(func() (*mcp.CallToolResult, error) {
		l, err := p.sup.current()
		if err != nil {
			return nil, err
		}
		cctx, cancel := context.WithTimeout(ctx, p.o.CallTimeout)
		defer cancel()
		res, err := l.call(cctx, name, req.Params.Arguments)
		if err != nil && cctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			return nil, errTimeout
		}
		if err != nil && ctx.Err() != nil {
			return nil, context.Canceled // the client's own doing; excluded from the breaker
		}
		return res, err
	})
	rec := recordOf(ctx)
	var wire *jsonrpc.Error
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &wire):
		rec.set(StatusError)
		return nil, err // the upstream's own protocol error, as it sent it
	case errors.Is(err, errRestarting), errors.Is(err, errClosed):
		rec.set(StatusRestarting)
		return p.errorResult(StatusRestarting, "The upstream server is restarting; retry in a few seconds.", 3), nil
	case errors.Is(err, gobreaker.ErrOpenState), errors.Is(err, gobreaker.ErrTooManyRequests):
		rec.set(StatusCircuitOpen)
		wait := p.breakerWait()
		return p.errorResult(StatusCircuitOpen, fmt.Sprintf(
			"The upstream server failed %d times in a row, so ctxfit stopped forwarding calls to it for %s; retry in %d seconds.",
			p.o.BreakerFailures, p.o.BreakerOpen, wait), wait), nil
	case errors.Is(err, errTimeout):
		rec.set(StatusTimeout)
		return p.errorResult(StatusTimeout, fmt.Sprintf(
			"The upstream server did not answer the call of %s within %s; retry later, or call it with arguments that ask for less.",
			name, p.o.CallTimeout), 0), nil
	case errors.Is(err, context.Canceled):
		rec.set(StatusCanceled)
		return nil, ctx.Err()
	default:
		rec.set(StatusUpstreamFailure)
		return p.errorResult(StatusUpstreamFailure, fmt.Sprintf(
			"The upstream server's connection broke during the call of %s (%v); ctxfit is restarting it; retry in a few seconds.",
			name, err), 3), nil
	}
}

var errTimeout = errors.New("proxy: the upstream did not answer in time")

// breakerWait is the number of seconds until the open breaker lets a call
// through, at least 1.
func (p *Proxy) breakerWait() int {
	p.bmu.Lock()
	opened := p.openedAt
	p.bmu.Unlock()
	left := p.o.BreakerOpen - time.Since(opened)
	return max(1, int(math.Ceil(left.Seconds())))
}

// errorResult is a tool error: text only, with no structured content, so
// that clients that validate structured content against the tool's output
// schema accept it.
func (p *Proxy) errorResult(code, msg string, retryAfter int) *mcp.CallToolResult {
	meta := mcp.Meta{MetaError: code}
	if retryAfter > 0 {
		meta[MetaRetryAfter] = retryAfter
	}
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: "Error " + code + ": " + msg}},
		Meta:    meta,
	}
}
