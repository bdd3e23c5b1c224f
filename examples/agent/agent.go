package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sony/gobreaker/v2"
	"golang.org/x/time/rate"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/conversation"
	"github.com/ctxfit/ctxfit/internal/redact"
	"github.com/ctxfit/ctxfit/mcpclientfit"
	"github.com/ctxfit/ctxfit/openaifit"
	"github.com/ctxfit/ctxfit/store"
)

// Headers of the chat endpoint.
const (
	headerSession   = "X-Session-ID"
	headerRequestID = "X-Request-ID"
	headerProvider  = "X-Provider"
)

// Tool invocation statuses, as a tool call's context records them.
const (
	statusSuccess = "success"
	statusFailure = "failure"
	statusTimeout = "timeout"
)

// agent serves an OpenAI-compatible chat endpoint backed by MCP servers.
type agent struct {
	cg        *mcpclientfit.Guard
	servers   []*upstream
	providers *providers
	// requestTimeout bounds a chat request, its retries included; zero
	// means no bound but the client's.
	requestTimeout time.Duration
	sessions       SessionStore
	logger         *slog.Logger
	counter        budget.Counter
	model          string // overrides the request's model when set
	contextTokens  int
	replyTokens    int
	maxSteps       int
	logArguments   bool
	rate           rate.Limit
	rateKey        string // header that keys the rate limit; "" for the client IP
	now            func() time.Time
	tokens         []string // bearer tokens the chat endpoint requires; nil means none

	locks sessionLocks
}

type ctxKey int

const (
	keyRequestID ctxKey = iota
	keySession
)

// routes returns the agent's HTTP handler:
//
//	POST /v1/chat/completions  the chat endpoint (rate-limited, fitted)
//	GET  /v1/models            the model it answers as
//	GET  /healthz              the MCP servers' and the provider's health
func (a *agent) routes() http.Handler {
	key := openaifit.ClientIP
	if a.rateKey != "" {
		key = openaifit.HeaderKey(a.rateKey)
	}
	chat := openaifit.Middleware(&openaifit.Options{
		ContextTokens: func(string) int { return a.contextTokens },
		ReplyTokens:   a.replyTokens,
		Fit:           conversation.Options{Counter: a.counter, Keeper: a.cg},
		Rate:          a.rate,
		ClientKey:     key,
		Now:           a.now,
	})(http.HandlerFunc(a.chat))
	mux := http.NewServeMux()
	var session http.Handler = a.withSession(chat)
	if a.tokens != nil {
		session = requireBearer(a.tokens, session)
	}
	mux.Handle("POST /v1/chat/completions", session)
	mux.HandleFunc("GET /v1/models", a.models)
	mux.HandleFunc("GET /healthz", a.health)
	return a.withRequestID(mux)
}

func randomID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// withRequestID gives each request an id (X-Request-ID, or a new one),
// echoed in the response.
func (a *agent) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(headerRequestID)
		if id == "" || len(id) > 128 {
			id = randomID("req_")
		}
		w.Header().Set(headerRequestID, id)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyRequestID, id)))
	})
}

// sessionRef is the session a request names (X-Session-ID) or the new one
// it starts, and the principal of the request.
type sessionRef struct {
	id    string
	given bool
	owner string
}

// withSession reads the session of a request, or gives it a new one, and
// binds ctxfit's cursors to it and to the request's credential: a
// continuation, a cleared result, a held back resource is served only to
// its session, asked with the credential that made it.
func (a *agent) withSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ref := sessionRef{id: r.Header.Get(headerSession), given: true, owner: principalOf(r)}
		if ref.id == "" {
			ref = sessionRef{id: newSessionID(), owner: ref.owner}
		}
		w.Header().Set(headerSession, ref.id)
		ctx := context.WithValue(r.Context(), keySession, ref)
		ctx = store.WithSubject(ctx, ref.owner+" "+ref.id)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// principalOf names who made r: "sha256:" and the hex SHA-256 of its
// Authorization header and its TLS client certificate, or "anonymous" when
// it has neither. A session belongs to the principal that made it; the
// digest, never the credential, is what the session keeps.
func principalOf(r *http.Request) string {
	h := sha256.New()
	found := false
	for _, v := range r.Header.Values("Authorization") {
		found = true
		fmt.Fprintf(h, "authorization\x00%s\x00", v)
	}
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		found = true
		fp := sha256.Sum256(r.TLS.PeerCertificates[0].Raw)
		fmt.Fprintf(h, "certificate\x00%x\x00", fp)
	}
	if !found {
		return "anonymous"
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// requireBearer lets through only the requests with Authorization: Bearer
// and one of tokens (compared in constant time); any other is answered 401
// and never reaches next. It fails closed: with no tokens it refuses all.
func requireBearer(tokens []string, next http.Handler) http.Handler {
	digests := make([][32]byte, len(tokens))
	for i, t := range tokens {
		digests[i] = sha256.Sum256([]byte(t))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		got := sha256.Sum256([]byte(strings.TrimSpace(token)))
		match := 0
		for _, d := range digests {
			match |= subtle.ConstantTimeCompare(got[:], d[:])
		}
		if match != 1 || !strings.EqualFold(scheme, "Bearer") || len(r.Header.Values("Authorization")) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agent"`)
			openaifit.WriteError(w, http.StatusUnauthorized, openaifit.ErrorDetail{Type: openaifit.TypeInvalidRequest, Code: "invalid_api_key",
				Message: "Send Authorization: Bearer TOKEN with one of the tokens this agent was started with (-auth-tokens-env)."})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func requestIDOf(ctx context.Context) string {
	id, _ := ctx.Value(keyRequestID).(string)
	return id
}

func sessionOf(ctx context.Context) sessionRef {
	ref, _ := ctx.Value(keySession).(sessionRef)
	return ref
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func invalid(w http.ResponseWriter, status int, code, param, msg string) {
	openaifit.WriteError(w, status, openaifit.ErrorDetail{Type: openaifit.TypeInvalidRequest, Code: code, Param: param, Message: msg})
}

// chatBody is what the agent reads of a chat-completions request.
type chatBody struct {
	Model         string          `json:"model"`
	Messages      json.RawMessage `json:"messages"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	// Provider is the provider the request prefers (seed 001's
	// Query.provider); the X-Provider header says the same and wins.
	Provider string `json:"provider"`
}

// chatResponse is the agent's answer: a chat completion with the fields of
// seed 001's AIResponse, tool_calls (the tool invocations of the turn),
// provider_used and duration_ms.
type chatResponse struct {
	openaifit.ChatResponse
	ToolCalls    []toolInvocation `json:"tool_calls"`
	ProviderUsed string           `json:"provider_used"`
	DurationMS   int64            `json:"duration_ms"`
}

// toolInvocation is the record of one tool call (seed 001's
// ToolInvocation, seed 002's tool call context): the model's tool_call id,
// the tool, the server, its arguments (secrets redacted), how it ended and
// when.
type toolInvocation struct {
	ID           string          `json:"id"`
	ToolName     string          `json:"tool_name"`
	Server       string          `json:"server"`
	Arguments    json.RawMessage `json:"arguments"`
	Status       string          `json:"status"`
	Error        string          `json:"error,omitempty"`
	StartedAt    time.Time       `json:"started_at"`
	CompletedAt  time.Time       `json:"completed_at"`
	DurationMS   int64           `json:"duration_ms"`
	TokensBefore int             `json:"tokens_before"`
	TokensAfter  int             `json:"tokens_after"`
}

// chat answers a chat completion: the session's messages and the
// request's, run through the agent loop, as one JSON answer or, with
// "stream": true, as server-sent events, turn by turn.
func (a *agent) chat(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	start := a.now()
	var req chatBody
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		invalid(w, http.StatusBadRequest, "invalid_json", "", "The body is not a chat-completions request: "+err.Error())
		return
	}
	msgs, err := openaifit.DecodeMessages(req.Messages)
	if err != nil || len(msgs) == 0 {
		invalid(w, http.StatusBadRequest, "invalid_query", "messages", "The request needs messages: an array of chat messages.")
		return
	}
	model := a.model
	if model == "" {
		model = req.Model
	}
	if model == "" {
		invalid(w, http.StatusBadRequest, "invalid_query", "model", "The request needs a model.")
		return
	}
	preferred := cmpOr(r.Header.Get(headerProvider), req.Provider)
	if _, ok := a.providers.byName(preferred); !ok && preferred != "" {
		invalid(w, http.StatusBadRequest, "invalid_provider", "provider",
			fmt.Sprintf("No provider %q: this agent knows %s. Name one of them in X-Provider or \"provider\", or leave both out for the default (%s).",
				redact.Bound(preferred, 64), strings.Join(a.providers.names(), ", "), a.providers.def))
		return
	}

	ref := sessionOf(ctx)
	defer a.locks.lock(ref.owner + " " + ref.id)() // another credential naming the session never waits for it
	sess, ok, err := a.sessions.Get(ctx, ref.id)
	if err != nil {
		openaifit.WriteError(w, http.StatusServiceUnavailable, openaifit.ErrorDetail{Type: openaifit.TypeServer, Code: "session_store_unavailable", Message: err.Error()})
		return
	}
	if ok && sess.Owner != ref.owner {
		// Another credential's session is answered as one that does not
		// exist: the caller learns nothing of it.
		ok = false
	}
	if !ok && ref.given {
		invalid(w, http.StatusNotFound, "session_not_found", "X-Session-ID",
			fmt.Sprintf("No session %q: it expired (sessions live %s after their last message) or never existed. Leave X-Session-ID out to start a new one.", ref.id, sessionTTL))
		return
	}
	if !ok {
		sess = &Session{ID: ref.id, Owner: ref.owner, CreatedAt: start}
	}
	if preferred != "" {
		sess.ProviderPreference = preferred
	}
	if a.requestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, a.requestTimeout)
		defer cancel()
	}
	id := "chatcmpl-" + strings.TrimPrefix(requestIDOf(ctx), "req_")
	var st *streamer
	if req.Stream {
		st = &streamer{w: w, id: id, model: model, created: start.Unix(), usage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage}
	}
	out, err := a.run(ctx, model, sess.ProviderPreference, appendNew(sess.Messages, msgs), st)
	if err != nil {
		if st != nil && st.started {
			st.fail(a.errorOf(err))
			return
		}
		a.fail(w, err)
		return
	}
	sess.Messages, sess.UpdatedAt = out.kept, a.now()
	if err := a.sessions.Put(ctx, sess); err != nil {
		a.logger.Warn("agent: saving the session failed", "session_id", sess.ID, "err", err)
	}
	resp := chatResponse{
		ChatResponse: openaifit.ChatResponse{ID: id, Object: "chat.completion", Created: start.Unix(), Model: model,
			Choices: []openaifit.Choice{{Message: out.answer, FinishReason: "stop"}}, Usage: &out.usage},
		ToolCalls: out.invocations, ProviderUsed: out.provider, DurationMS: a.now().Sub(start).Milliseconds(),
	}
	if st != nil {
		st.finish(resp)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// apiError is an error of the agent loop as the client gets it.
type apiError struct {
	status     int
	detail     openaifit.ErrorDetail
	retryAfter string // seconds; "" for none
}

// errorOf maps an error of the agent loop to the client's error: a
// context too long is 400; a provider's 4xx is passed on as it is, a 429
// with its Retry-After; an open breaker is 503; anything else 502.
func (a *agent) errorOf(err error) apiError {
	var pe *providerError
	var me *conversation.MandatoryError
	switch {
	case errors.As(err, &me):
		return apiError{status: http.StatusBadRequest, detail: openaifit.ErrorDetail{Type: openaifit.TypeInvalidRequest, Code: openaifit.CodeContextLengthExceeded, Param: "messages", Message: err.Error()}}
	case errors.As(err, &pe) && pe.status == http.StatusTooManyRequests:
		e := apiError{status: http.StatusTooManyRequests, detail: openaifit.ErrorDetail{Type: openaifit.TypeRateLimit, Code: "provider_rate_limited",
			Message: fmt.Sprintf("The model provider %s limits our requests (429): %s Retry after the time Retry-After gives.", pe.provider, pe.detail.Message)}}
		if pe.retryAfter > 0 {
			e.retryAfter = strconv.Itoa(int(math.Ceil(pe.retryAfter.Seconds())))
		}
		return e
	case errors.As(err, &pe) && pe.status < 500:
		return apiError{status: pe.status, detail: pe.detail}
	case errors.Is(err, gobreaker.ErrOpenState), errors.Is(err, gobreaker.ErrTooManyRequests):
		return apiError{status: http.StatusServiceUnavailable, retryAfter: strconv.Itoa(int(providerBreakerOpen.Seconds())),
			detail: openaifit.ErrorDetail{Type: openaifit.TypeServer, Code: "provider_unavailable",
				Message: "The model providers failed repeatedly; the agent stopped calling them for a while (circuit breaker). Retry later."}}
	}
	return apiError{status: http.StatusBadGateway, detail: openaifit.ErrorDetail{Type: openaifit.TypeServer, Code: "provider_unavailable", Message: err.Error()}}
}

// fail answers an error of the agent loop.
func (a *agent) fail(w http.ResponseWriter, err error) {
	e := a.errorOf(err)
	if e.retryAfter != "" {
		w.Header().Set("Retry-After", e.retryAfter)
	}
	openaifit.WriteError(w, e.status, e.detail)
}

// tools returns the tools the model gets (every server's, then the
// guard's continuation and drill-down tools) and which server serves each.
// A tool name two servers have is the first server's.
func (a *agent) tools() (*openaifit.Toolset, map[string]*upstream, error) {
	route := map[string]*upstream{}
	var all []*mcp.Tool
	for _, u := range a.servers {
		for _, t := range u.toolList() {
			if _, dup := route[t.Name]; dup || a.cg.Owns(t.Name) {
				a.logger.Warn("agent: a tool name is taken; the tool is left out", "tool", t.Name, "server", u.spec.name)
				continue
			}
			route[t.Name] = u
			all = append(all, t)
		}
	}
	defs, err := openaifit.MCPTools(append(all, a.cg.Tools()...))
	if err != nil {
		return nil, nil, err
	}
	ts, err := openaifit.NewToolset(defs)
	return ts, route, err
}

// runResult is what the agent loop gives back.
type runResult struct {
	answer      conversation.Message
	usage       openaifit.Usage
	kept        []conversation.Message // the conversation to keep, answer included, fitted
	provider    string                 // the provider of the last answer
	invocations []toolInvocation
}

// run is the agent loop: it fits the conversation to the model's window
// (clearing old tool results behind placeholders, then dropping old turns
// behind one placeholder too), sends it and the tools to the providers
// (preferred first), runs the tool calls the model asks for through the
// client-side guard, and repeats until the model answers. st, when not
// nil, streams each turn of the model as the provider streams it.
func (a *agent) run(ctx context.Context, model, preferred string, msgs []conversation.Message, st *streamer) (runResult, error) {
	var out runResult
	ts, route, err := a.tools()
	if err != nil {
		return out, err
	}
	functions := ts.Functions()
	defs, _ := json.Marshal(functions)
	limit := a.contextTokens - a.replyTokens - a.counter.Count(string(defs))
	fit := func() (err error) {
		msgs, err = a.fit(ctx, msgs, max(limit, 1))
		return err
	}
	for step := 0; ; step++ {
		if err := fit(); err != nil {
			return out, err
		}
		if step == a.maxSteps {
			out.answer = conversation.Message{Role: conversation.RoleAssistant,
				Content: fmt.Sprintf("I stopped after %d rounds of tool calls without an answer; ask again to let me go on.", a.maxSteps)}
			st.turn().message(out.answer)
			msgs = append(msgs, out.answer)
			err := fit() // the session keeps the fitted conversation
			out.kept = msgs
			return out, err
		}
		resp, used, err := a.providers.chat(ctx, preferred, openaifit.ChatRequest{Model: model, Messages: msgs, Tools: functions}, st.turn())
		if err != nil {
			return out, err
		}
		out.provider = used
		if resp.Usage != nil {
			out.usage.PromptTokens += resp.Usage.PromptTokens
			out.usage.CompletionTokens += resp.Usage.CompletionTokens
			out.usage.TotalTokens += resp.Usage.TotalTokens
		}
		m := resp.Choices[0].Message
		m.Role = conversation.RoleAssistant
		msgs = append(msgs, m)
		if len(m.ToolCalls) == 0 {
			out.answer = m
			err := fit() // the session keeps the fitted conversation, its answer included
			out.kept = msgs
			return out, err
		}
		results := make([]conversation.Message, len(m.ToolCalls))
		records := make([]toolInvocation, len(m.ToolCalls))
		var wg sync.WaitGroup
		for i, tc := range m.ToolCalls {
			wg.Go(func() {
				content, rec := a.invoke(ctx, ts, route, tc)
				results[i] = conversation.Message{Role: conversation.RoleTool, ToolCallID: tc.ID, Content: content}
				records[i] = rec
			})
		}
		wg.Wait()
		out.invocations = append(out.invocations, records...)
		msgs = append(msgs, results...)
	}
}

// invoke runs one tool call the model asked for, through the client-side
// guard, after checking its arguments against the tool's input schema,
// and logs it; it returns what the model reads of the result and the
// call's record.
func (a *agent) invoke(ctx context.Context, ts *openaifit.Toolset, route map[string]*upstream, tc conversation.ToolCall) (string, toolInvocation) {
	start := a.now()
	tool, args, err := ts.Call(tc)
	server := "ctxfit"
	var res *mcp.CallToolResult
	switch {
	case err != nil:
		tool = tc.Function.Name
	case a.cg.Owns(tool):
		res, err = a.cg.CallTool(ctx, tool, args)
	default:
		u := route[tool]
		server = u.spec.name
		if err = u.checkArguments(tool, args); err == nil {
			res, err = u.call(ctx, tool, args)
		}
	}
	status := statusSuccess
	var content string
	var ie *invalidArgumentsError
	switch {
	case errors.As(err, &ie):
		status, content = statusFailure, "Error: "+err.Error()
	case errors.Is(err, context.DeadlineExceeded):
		status, content = statusTimeout, fmt.Sprintf("Error: the tool %s did not answer in time.", tool)
	case errors.Is(err, gobreaker.ErrOpenState), errors.Is(err, gobreaker.ErrTooManyRequests):
		status, content = statusFailure, fmt.Sprintf("Error: the MCP server of %s is failing; the agent stopped calling it for %s. Try another way, or later.", tool, breakerOpen)
	case err != nil:
		status, content = statusFailure, "Error: "+err.Error()
	default:
		content = textOf(res)
		if res.IsError {
			status = statusFailure
		}
	}
	after := a.counter.Count(content)
	before := after
	if res != nil {
		if n, ok := res.Meta["dev.ctxfit/originalTokens"].(float64); ok {
			before = int(n)
		}
	}
	done := a.now()
	rec := toolInvocation{ID: tc.ID, ToolName: tool, Server: server, Arguments: redact.JSON(json.RawMessage(tc.Function.Arguments), maxLoggedString),
		Status: status, StartedAt: start, CompletedAt: done, DurationMS: done.Sub(start).Milliseconds(), TokensBefore: before, TokensAfter: after}
	attrs := []slog.Attr{
		slog.String("request_id", requestIDOf(ctx)),
		slog.String("session_id", sessionOf(ctx).id),
		slog.String("tool_call_id", redact.Bound(tc.ID, 128)),
		slog.String("tool", redact.Bound(tool, 128)),
		slog.String("server", server),
		slog.Time("started_at", start),
		slog.Int64("duration_ms", rec.DurationMS),
		slog.String("status", status),
		slog.Int("tokens_before", before),
		slog.Int("tokens_after", after),
	}
	if a.logArguments {
		attrs = append(attrs, slog.String("arguments", string(rec.Arguments)))
	}
	if err != nil {
		rec.Error = redact.Bound(redact.String(err.Error()), maxLoggedString)
		attrs = append(attrs, slog.String("error", rec.Error))
	}
	a.logger.LogAttrs(ctx, slog.LevelInfo, "tool call", attrs...)
	return content, rec
}

// maxLoggedString is the longest string of a tool call's arguments or
// error that a log line or a record holds.
const maxLoggedString = 1024

// textOf is what the model reads of a tool result: its text blocks, the
// text of embedded text resources, and one line for what is not text.
func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[a binary resource %s (%s, %d bytes)]", c.Resource.URI, c.Resource.MIMEType, len(c.Resource.Blob)))
			}
		case *mcp.ResourceLink:
			if c.Meta["dev.ctxfit/original"] == true {
				continue // the model reads on with the cursors; it cannot read resources
			}
			parts = append(parts, fmt.Sprintf("[resource %s (%s): %s]", c.URI, c.MIMEType, c.Description))
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[an image (%s, %d bytes)]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio (%s, %d bytes)]", c.MIMEType, len(c.Data)))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		parts = append(parts, string(b))
	}
	return strings.Join(parts, "\n")
}

func rawArgs(args []byte) json.RawMessage { return json.RawMessage(args) }

// models answers GET /v1/models: the model the agent asks (-model), when
// set, and the providers it knows, each as a model whose id is its name
// (the name to give in X-Provider or "provider"), the default first.
func (a *agent) models(w http.ResponseWriter, _ *http.Request) {
	data := []map[string]any{}
	if a.model != "" {
		data = append(data, map[string]any{"id": a.model, "object": "model", "created": 0, "owned_by": "ctxfit-agent"})
	}
	for _, p := range a.providers.order("") {
		data = append(data, map[string]any{"id": p.name, "object": "model", "created": 0, "owned_by": "ctxfit-agent",
			"provider": p.name, "default": p.name == a.providers.def, "breaker": p.breaker.State().String()})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// health answers GET /healthz: 200 when every MCP server is connected and
// the default provider's breaker is closed, 503 otherwise.
func (a *agent) health(w http.ResponseWriter, _ *http.Request) {
	status, code := "ok", http.StatusOK
	servers := make([]serverHealth, 0, len(a.servers))
	for _, u := range a.servers {
		h := u.health()
		if h.State != stateConnected || h.Breaker != gobreaker.StateClosed.String() {
			status, code = "degraded", http.StatusServiceUnavailable
		}
		servers = append(servers, h)
	}
	breakers := map[string]string{}
	for _, p := range a.providers.list {
		breakers[p.name] = p.breaker.State().String()
	}
	def, _ := a.providers.byName(a.providers.def)
	pb := def.breaker.State().String()
	if pb != gobreaker.StateClosed.String() {
		status, code = "degraded", http.StatusServiceUnavailable
	}
	writeJSON(w, code, map[string]any{"status": status, "servers": servers, "provider_breaker": pb, "provider_breakers": breakers})
}
