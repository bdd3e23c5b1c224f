package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit"
	tokens "github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/mcpcore"
)

// maxListPages bounds the pages of the server's own tools/list the catalog
// reads.
const maxListPages = 100

// maxFound bounds the tools a session's finds add to its tools/list.
const maxFound = 64

// catalog is the gateway's tool catalog: what tools/list serves when the
// whole list is over the catalog budget, ctxfit_find_tools and
// ctxfit_call_tool (see [mcpcore.Catalog]).
type catalog struct {
	gw      *Gateway
	g       *ctxfit.Guard
	shaper  *mcpcore.Shaper
	subject func(context.Context, *mcp.CallToolRequest) string
	usage   mcpcore.ToolUsage

	mu    sync.Mutex
	key   string
	cat   *mcpcore.Catalog
	found map[*mcp.ServerSession][]string
}

func newCatalog(gw *Gateway, g *ctxfit.Guard, names mcpcore.Names, subject func(context.Context, *mcp.CallToolRequest) string) *catalog {
	return &catalog{gw: gw, g: g, shaper: &mcpcore.Shaper{Guard: g, Names: names}, subject: subject,
		found: map[*mcp.ServerSession][]string{}}
}

// subjectOf is what mcpfit binds the session's cursors and links to (its
// Options.Subject, or the session ID with the authenticated user), so
// that the links of trimmed definitions read through its resources.
func (c *catalog) subjectOf(ctx context.Context, ss *mcp.ServerSession, extra *mcp.RequestExtra) string {
	if c.subject != nil {
		return c.subject(ctx, &mcp.CallToolRequest{Session: ss, Extra: extra})
	}
	var id string
	if ss != nil {
		id = ss.ID()
	}
	if extra != nil && extra.TokenInfo != nil && extra.TokenInfo.UserID != "" {
		return id + "\x00" + extra.TokenInfo.UserID
	}
	return id
}

// middleware is the outermost receiving middleware: tools/list within the
// catalog budget passes, over it answers the budgeted catalog; calls of
// ctxfit_find_tools are answered here, and a call of ctxfit_call_tool
// goes on as a call of the tool it names.
func (c *catalog) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			if r, ok := req.(*mcp.ListToolsRequest); ok && (r.Params == nil || r.Params.Cursor == "") {
				return c.list(ctx, next, r)
			}
		case "tools/call":
			r, ok := req.(*mcp.CallToolRequest)
			if !ok || r.Params == nil {
				break
			}
			switch r.Params.Name {
			case mcpcore.FindTool:
				return c.find(ctx, next, r)
			case mcpcore.CallTool:
				return c.callThrough(ctx, next, r)
			}
			c.usage.Add(r.Params.Name)
		}
		return next(ctx, method, req)
	}
}

// list answers the first page of tools/list.
func (c *catalog) list(ctx context.Context, next mcp.MethodHandler, r *mcp.ListToolsRequest) (mcp.Result, error) {
	res, err := next(ctx, "tools/list", r)
	first, ok := res.(*mcp.ListToolsResult)
	if err != nil || !ok || first == nil {
		return res, err
	}
	cat, err := c.catalogOf(ctx, next, r, first)
	if err != nil {
		c.gw.logger.Warn("gateway: the whole tool list could not be read; its first page is served", "err", err)
		return first, nil
	}
	if !cat.Budgeted() {
		return first, nil
	}
	c.mu.Lock()
	found := slices.Clone(c.found[r.Session])
	c.mu.Unlock()
	defs, err := cat.List(ctx, c.subjectOf(ctx, r.Session, r.Extra), found)
	if err != nil {
		c.gw.logger.Warn("gateway: the budgeted tool list could not be built; the first page is served", "err", err)
		return first, nil
	}
	tools := make([]*mcp.Tool, 0, len(defs))
	for _, d := range defs {
		var t mcp.Tool
		if json.Unmarshal(d, &t) == nil {
			tools = append(tools, &t)
		}
	}
	// The SDK writes the tools its own way and adds its envelope (the
	// server's name and version in _meta, resultType): the result it
	// sends decides.
	counter, _ := tokens.Exact(c.g.Config().Encoding)
	essentials := len((mcpcore.Names{}).All()) + 2
	for len(tools) > essentials {
		raw, err := json.Marshal(sentList(tools, c.gw.impl, true))
		if err != nil || !tokens.Exceeds(counter, string(raw), cat.Budget()) {
			break
		}
		tools = tools[:len(tools)-1]
	}
	return sentList(tools, c.gw.impl, false), nil
}

// sentList is the tools/list result of tools as the SDK sends it: with
// the server's impl in _meta (the SDK adds it to the results of newer
// protocol versions unless it is there), and, when complete (for
// counting), the resultType the SDK adds too.
func sentList(tools []*mcp.Tool, impl *mcp.Implementation, complete bool) *mcp.ListToolsResult {
	res := &mcp.ListToolsResult{Tools: tools}
	if impl != nil {
		res.Meta = mcp.Meta{mcp.MetaKeyServerInfo: impl}
	}
	if complete {
		_ = json.Unmarshal([]byte(`{"resultType":"complete"}`), res)
	}
	return res
}

// catalogOf returns the catalog of the server's whole tools/list (first
// and the pages after it), the one built last while the settings stay.
func (c *catalog) catalogOf(ctx context.Context, next mcp.MethodHandler, r *mcp.ListToolsRequest, first *mcp.ListToolsResult) (*mcpcore.Catalog, error) {
	cfg := c.g.Config()
	all := slices.Clone(first.Tools)
	for cursor, n := first.NextCursor, 0; cursor != ""; n++ {
		if n >= maxListPages {
			return nil, fmt.Errorf("gateway: the tool list has more than %d pages", maxListPages)
		}
		res, err := next(ctx, "tools/list", &mcp.ListToolsRequest{Session: r.Session, Extra: r.Extra, Params: &mcp.ListToolsParams{Cursor: cursor}})
		if err != nil {
			return nil, err
		}
		page, ok := res.(*mcp.ListToolsResult)
		if !ok || page == nil {
			return nil, fmt.Errorf("gateway: a page of the tool list is not a list of tools")
		}
		all = append(all, page.Tools...)
		cursor = page.NextCursor
	}
	// The tools never change after New; what the guard's settings make of
	// their definitions (output schemas, _meta) may.
	key := fmt.Sprintf("%d %d %d %d %d %s %q %d %d", len(all), cfg.HardCap, cfg.Threshold, cfg.CatalogBudget, cfg.ToolBudget,
		cfg.Encoding, cfg.CatalogTools, cfg.MaxResultSizeChars, len(cfg.Endpoints))
	c.mu.Lock()
	if c.cat != nil && c.key == key {
		defer c.mu.Unlock()
		return c.cat, nil
	}
	c.mu.Unlock()
	tools := make([]mcpcore.CatalogTool, 0, len(all))
	for _, t := range all {
		if t == nil {
			continue
		}
		def, err := json.Marshal(t)
		if err != nil {
			continue
		}
		ct := mcpcore.CatalogTool{Definition: def}
		if op := c.gw.byName[t.Name]; op != nil {
			ct.Tags, ct.Path = op.op.Tags, op.op.Method+" "+op.op.Path
		}
		tools = append(tools, ct)
	}
	cat := mcpcore.NewCatalog(c.shaper, tools, &c.usage)
	c.mu.Lock()
	c.cat, c.key = cat, key
	c.mu.Unlock()
	return cat, nil
}

// current returns the catalog, building it from the server's list when
// no tools/list was answered yet.
func (c *catalog) current(ctx context.Context, next mcp.MethodHandler, ss *mcp.ServerSession, extra *mcp.RequestExtra) (*mcpcore.Catalog, error) {
	r := &mcp.ListToolsRequest{Session: ss, Extra: extra, Params: &mcp.ListToolsParams{}}
	res, err := next(ctx, "tools/list", r)
	if err != nil {
		return nil, err
	}
	first, ok := res.(*mcp.ListToolsResult)
	if !ok || first == nil {
		return nil, fmt.Errorf("gateway: the tool list is not a list of tools")
	}
	return c.catalogOf(ctx, next, r, first)
}

// find answers a call of ctxfit_find_tools; when the list is budgeted, the
// tools it found join the session's tools/list, and sessions are told the
// list changed.
func (c *catalog) find(ctx context.Context, next mcp.MethodHandler, r *mcp.CallToolRequest) (mcp.Result, error) {
	subject := c.subjectOf(ctx, r.Session, r.Extra)
	cat, err := c.current(ctx, next, r.Session, r.Extra)
	var raw json.RawMessage
	var shown []string
	if err == nil {
		raw, shown = cat.Find(ctx, subject, r.Params.Arguments)
		raw, err = c.shaper.Gate(ctx, mcpcore.Call{Tool: mcpcore.FindTool, Subject: subject}, raw, nil)
	}
	if err != nil {
		raw = mcpcore.ErrorResult(mcpcore.ErrorOf(err))
	}
	var out mcp.CallToolResult
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	if cat != nil && cat.Budgeted() && r.Session != nil && c.addFound(r.Session, shown) {
		// The SDK tells sessions of a change of its tools only: adding
		// the first found tool again tells every session, and each lists
		// its own found tools.
		if t := c.gw.byName[shown[0]]; t != nil {
			c.gw.server.AddTool(t.op.Tool, t.call)
		}
	}
	return &out, nil
}

// addFound puts names first among the session's found tools, and reports
// whether one of them is new.
func (c *catalog) addFound(ss *mcp.ServerSession, names []string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	found := c.found[ss]
	added := false
	for _, n := range slices.Backward(names) {
		if i := slices.Index(found, n); i >= 0 {
			found = slices.Delete(found, i, i+1)
		} else {
			added = true
		}
		found = slices.Insert(found, 0, n)
	}
	if len(found) > maxFound {
		found = found[:maxFound]
	}
	c.found[ss] = found
	return added
}

// forget drops what the catalog keeps of a session that ended.
func (c *catalog) forget(ss *mcp.ServerSession) {
	c.mu.Lock()
	delete(c.found, ss)
	c.mu.Unlock()
}

// callThrough answers a call of ctxfit_call_tool with a call of the tool
// it names (guarded, validated and measured as such); a name the catalog
// does not have, or arguments that are not an object, answer a tool error
// that says what to pass.
func (c *catalog) callThrough(ctx context.Context, next mcp.MethodHandler, r *mcp.CallToolRequest) (mcp.Result, error) {
	cat, err := c.current(ctx, next, r.Session, r.Extra)
	if err != nil {
		return toolResult(mcpcore.ErrorResult(mcpcore.ErrorOf(err)))
	}
	name, args, bad := cat.CallInput(r.Params.Arguments)
	if bad != nil {
		return toolResult(mcpcore.ErrorResult(*bad))
	}
	c.usage.Add(name)
	call := &mcp.CallToolRequest{Session: r.Session, Extra: r.Extra,
		Params: &mcp.CallToolParamsRaw{Meta: r.Params.Meta, Name: name, Arguments: args,
			InputResponses: r.Params.InputResponses, RequestState: r.Params.RequestState}}
	return next(ctx, "tools/call", call)
}

func toolResult(raw json.RawMessage) (mcp.Result, error) {
	var out mcp.CallToolResult
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
