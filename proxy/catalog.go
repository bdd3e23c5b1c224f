package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/ctxfit/ctxfit/internal/mcpcore"
	"github.com/ctxfit/ctxfit/store"
)

// maxListPages bounds the pages of the upstream's tools/list the proxy
// reads to build the catalog.
const maxListPages = 100

// maxFound bounds the tools a session's finds add to its tools/list.
const maxFound = 64

// listFirst answers the first page of the upstream's tools/list (raw): as
// [Proxy.listTools] rewrites it when the whole list (every page) is within
// the catalog budget, else the budgeted catalog of the session
// ([mcpcore.Catalog.List]), in one page.
func (s *session) listFirst(raw json.RawMessage) json.RawMessage {
	page := s.p.listTools(nil, raw)
	ctx, cancel := context.WithTimeout(s.sessionCtx(), s.p.o.CallTimeout)
	defer cancel()
	cat, err := s.buildCatalog(ctx, raw)
	if err != nil {
		s.p.logger.Warn("proxy: the upstream's whole tool list could not be read; its first page is served", "session", s.subject, "err", err)
		return page
	}
	if !cat.Budgeted() {
		return page
	}
	s.mu.Lock()
	found := slices.Clone(s.found)
	s.mu.Unlock()
	tools, err := cat.List(ctx, s.bound, found)
	if err != nil {
		s.p.logger.Warn("proxy: the budgeted tool list could not be built; the first page is served", "session", s.subject, "err", err)
		return page
	}
	return marshalUnescaped(map[string]any{"tools": tools})
}

// sessionCtx is the context of the session's own work: its cursors and
// links bound to it.
func (s *session) sessionCtx() context.Context {
	return store.WithSubject(context.WithValue(s.ctx, sessionKey{}, s), s.bound)
}

// catalog returns the session's catalog, reading the upstream's tools/list
// when the client has not listed the tools yet.
func (s *session) catalog(ctx context.Context) (*mcpcore.Catalog, error) {
	s.mu.Lock()
	cat := s.cat
	s.mu.Unlock()
	if cat != nil {
		return cat, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.p.o.CallTimeout)
	defer cancel()
	return s.buildCatalog(ctx, nil)
}

// buildCatalog reads the upstream's whole tools/list, starting with first
// (nil: asked here), and makes it the session's catalog.
func (s *session) buildCatalog(ctx context.Context, first json.RawMessage) (*mcpcore.Catalog, error) {
	var all []json.RawMessage
	page := first
	for n := 0; ; n++ {
		if page == nil {
			var err error
			if page, err = s.call(ctx, "tools/list", map[string]any{}); err != nil {
				return nil, err
			}
		}
		_, tools, ok := s.p.rewritePage(page)
		if !ok {
			return nil, fmt.Errorf("proxy: the upstream's tools/list answer is not a list of tools")
		}
		all = append(all, tools...)
		var r struct {
			NextCursor string `json:"nextCursor"`
		}
		_ = json.Unmarshal(page, &r)
		if r.NextCursor == "" {
			break
		}
		if n+1 >= maxListPages {
			return nil, fmt.Errorf("proxy: the upstream's tools/list has more than %d pages", maxListPages)
		}
		var err error
		if page, err = s.call(ctx, "tools/list", map[string]string{"cursor": r.NextCursor}); err != nil {
			return nil, err
		}
	}
	all = append(all, s.p.ownTools()...)
	cat := s.p.catalogOf(all)
	s.mu.Lock()
	s.cat = cat
	s.mu.Unlock()
	return cat, nil
}

// catalogOf returns the catalog of a whole list, the last one built when
// the list and the settings are the same.
func (p *Proxy) catalogOf(defs []json.RawMessage) *mcpcore.Catalog {
	h := sha256.New()
	cfg := p.guard.Config()
	fmt.Fprintf(h, "%d %d %d %d %s %q\n", cfg.HardCap, cfg.Threshold, cfg.CatalogBudget, cfg.ToolBudget, cfg.Encoding, cfg.CatalogTools)
	for _, d := range defs {
		h.Write(d)
		h.Write([]byte{0})
	}
	key := string(h.Sum(nil))
	p.catMu.Lock()
	defer p.catMu.Unlock()
	if p.catKey == key && p.cat != nil {
		return p.cat
	}
	tools := make([]mcpcore.CatalogTool, len(defs))
	for i, d := range defs {
		tools[i] = mcpcore.CatalogTool{Definition: d}
	}
	p.cat, p.catKey = mcpcore.NewCatalog(p.core.Shaper, tools, &p.usage), key
	return p.cat
}

// findTools answers a call of ctxfit_find_tools; when the session's list
// is budgeted, the tools it found join the session's tools/list and the
// client is told the list changed.
func (s *session) findTools(m *jsonrpc.Request, pd *pending, args json.RawMessage) {
	s.localRequest(m, func(ctx context.Context) {
		var res json.RawMessage
		var shown []string
		cat, err := s.catalog(ctx)
		if err == nil {
			res, shown = cat.Find(ctx, s.bound, args)
			res, err = s.p.core.Shaper.Gate(ctx, mcpcore.Call{Tool: mcpcore.FindTool, Subject: s.bound}, res, nil)
		}
		if err != nil {
			res = mcpcore.ErrorResult(mcpcore.ErrorOf(err))
		}
		if ctx.Err() != nil && s.ctx.Err() == nil {
			s.p.logCall(s, pd, StatusCanceled, nil, ctx.Err())
			return
		}
		s.p.logCall(s, pd, "", res, nil)
		s.toClient(&jsonrpc.Response{ID: m.ID, Result: res})
		if cat != nil && cat.Budgeted() && s.addFound(shown) {
			s.toClient(&jsonrpc.Request{Method: "notifications/tools/list_changed", Params: json.RawMessage(`{}`)})
		}
	})
}

// addFound puts names first among the session's found tools, and reports
// whether one of them is new.
func (s *session) addFound(names []string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	added := false
	for _, n := range slices.Backward(names) {
		if i := slices.Index(s.found, n); i >= 0 {
			s.found = slices.Delete(s.found, i, i+1)
		} else {
			added = true
		}
		s.found = slices.Insert(s.found, 0, n)
	}
	if len(s.found) > maxFound {
		s.found = s.found[:maxFound]
	}
	return added
}

// callThrough answers a call of ctxfit_call_tool: the tool it names goes
// upstream as the client's own call of it (shaped, logged and limited as
// such); a name the catalog does not have, or arguments that are not an
// object, answer a tool error that says what to pass.
func (s *session) callThrough(m *jsonrpc.Request, pd *pending, args json.RawMessage) {
	go func() {
		cat, err := s.catalog(s.sessionCtx())
		if err != nil {
			res := mcpcore.ErrorResult(mcpcore.ErrorOf(err))
			s.p.logCall(s, pd, "", res, nil)
			s.toClient(&jsonrpc.Response{ID: m.ID, Result: res})
			return
		}
		name, arguments, bad := cat.CallInput(args)
		if bad != nil {
			res := mcpcore.ErrorResult(*bad)
			s.p.logCall(s, pd, "", res, nil)
			s.toClient(&jsonrpc.Response{ID: m.ID, Result: res})
			return
		}
		params, ok := parseObject(m.Params)
		if !ok {
			params = &object{vals: map[string]json.RawMessage{}}
		}
		delete(params.vals, "arguments")
		params.keys = slices.DeleteFunc(params.keys, func(k string) bool { return k == "arguments" })
		params.set("name", marshalUnescaped(name))
		params.set("arguments", arguments)
		s.p.usage.Add(name)
		s.forward(&jsonrpc.Request{ID: m.ID, Method: m.Method, Params: params.marshal()}, &pending{tool: name, start: pd.start})
	}()
}
