package ctxfit

import (
	"context"
	"fmt"

	"github.com/ctxfit/ctxfit/cursor"
)

// Resource keeps data (an image, audio or binary blob an MCP result held
// back) for as long as a cursor lives, and returns the token that reads it
// back with [Guard.ReadResource]: in store mode the data is kept in the
// store; in replay mode (or when the store has no room) the token carries
// a fingerprint, and reading runs the tool again. The token is bound to
// req's subject, as cursors are; req.Block says which block of the result
// data is.
func (g *Guard) Resource(ctx context.Context, req Request, data []byte, mime string) (string, error) {
	e := g.cur.Load()
	rl := e.rulesFor(req.Endpoint)
	s := g.shaper(ctx, e, rl, &req, data)
	defer s.cancel()
	// Keeping counts and shapes nothing: the shaping time limit does not
	// bound it (the gate keeps an original under it when shaping timed out).
	s.ctx = ctx
	return s.cursorFor(ref{kind: contResource, end: int64(len(data)), mime: mime})
}

// ReadResource returns the data and media type a token from
// [Guard.Resource] leads to, provided it verifies, is unexpired and was
// issued for subject. In replay mode it calls fetch, which returns the
// block's data again (the Request from [Guard.ResumeContext] says which
// tool, arguments and block), and checks its fingerprint.
func (g *Guard) ReadResource(ctx context.Context, token, subject string, fetch Fetch) ([]byte, string, error) {
	e := g.cur.Load()
	p, err := e.codec.OpenFor(token, subject)
	if err != nil {
		return nil, "", fmt.Errorf("ctxfit: %w", err)
	}
	r, err := refOf(p)
	if err != nil || r.kind != contResource {
		return nil, "", fmt.Errorf("ctxfit: %w (not a resource)", cursor.ErrInvalid)
	}
	data, err := g.load(ctx, e, r, fetch)
	if err != nil {
		err = g.expiredIfGone(p, err)
		var fe fetchError
		if ok := asFetchError(err, &fe); ok {
			return nil, "", fe.err
		}
		return nil, "", err
	}
	return data, r.mime, nil
}
