package openaifit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/conversation"
	"github.com/ctxfit/ctxfit/internal/jsonwire"
)

// Defaults of [Options].
const (
	// DefaultContextTokens is the context window assumed for every model.
	DefaultContextTokens = 128000
	// DefaultReplyTokens is what a request's reply is assumed to take when
	// it sets neither max_completion_tokens nor max_tokens.
	DefaultReplyTokens = 4096
	// DefaultBurst is the capacity of a client's bucket.
	DefaultBurst = 10
	// DefaultRate is how many requests a second refill a client's bucket.
	DefaultRate rate.Limit = 1
	// DefaultMaxBodyBytes bounds the body of a request the middleware
	// reads.
	DefaultMaxBodyBytes = 8 << 20
)

// Options configure [Middleware]. The zero value (or a nil *Options) gives
// the defaults listed with each field; Middleware copies them.
type Options struct {
	// ContextTokens returns the context window of a model, in tokens. Nil
	// means [DefaultContextTokens] for every model.
	ContextTokens func(model string) int
	// ReplyTokens is what the reply is assumed to take when the request sets
	// neither max_completion_tokens nor max_tokens. Zero means
	// [DefaultReplyTokens].
	ReplyTokens int
	// Fit configures the fitting of the messages (counter, message limit,
	// the Keeper that keeps cleared tool results, ClearAbove,
	// ClearAtLeast): zero fields mean conversation's defaults, among them a
	// limit of 20 messages. The Keeper's Keep gets the request's context.
	// The counter also counts the tools.
	Fit conversation.Options
	// Rate is how many requests a second refill a client's bucket. Zero
	// means [DefaultRate] (1); rate.Inf means no rate limit.
	Rate rate.Limit
	// Burst is the capacity of a client's bucket. Zero means
	// [DefaultBurst] (10).
	Burst int
	// ClientKey returns the key of a request's client, whose bucket it
	// draws from. Nil means [ClientIP]; see also [HeaderKey].
	ClientKey func(r *http.Request) string
	// MaxBodyBytes bounds the body read. Zero means [DefaultMaxBodyBytes]
	// (8 MiB).
	MaxBodyBytes int64
	// Now is the clock of the rate limiter. Nil means time.Now.
	Now func() time.Time
}

// ClientIP is the default client key: the host of the request's
// RemoteAddr (the peer; put the middleware behind a proxy that rewrites
// RemoteAddr, or use [HeaderKey], to key by the original client).
func ClientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// HeaderKey returns a client key that reads the header name (an API key,
// a user id), falling back to [ClientIP] when it is absent.
func HeaderKey(name string) func(r *http.Request) string {
	return func(r *http.Request) string {
		if v := r.Header.Get(name); v != "" {
			return name + ":" + v
		}
		return ClientIP(r)
	}
}

// Response headers the middleware adds to a fitted request's response.
const (
	HeaderTokensBefore = "X-Ctxfit-Tokens-Before"
	HeaderTokensAfter  = "X-Ctxfit-Tokens-After"
	HeaderDropped      = "X-Ctxfit-Messages-Dropped"
	HeaderCleared      = "X-Ctxfit-Results-Cleared"
)

type fitKey struct{}

// FitFromContext returns what the middleware did to the messages of the
// request whose context ctx is, and whether it fitted them.
func FitFromContext(ctx context.Context) (conversation.Result, bool) {
	r, ok := ctx.Value(fitKey{}).(conversation.Result)
	return r, ok
}

// Middleware fits the messages of OpenAI-compatible chat-completions
// requests (POST requests whose path ends in /chat/completions; others
// pass untouched) to the model's context window before they reach next,
// and limits each client's requests with a token bucket.
//
// It reads the client key ([Options.ClientKey]) and the JSON body: model,
// messages, tools, max_completion_tokens or max_tokens. Each client has a
// bucket of [Options.Burst] requests refilled at [Options.Rate]; a request
// over it is answered 429 with Retry-After (whole seconds until a request
// is allowed) and {"error":{"type":"requests","code":"rate_limit_exceeded",...}}.
//
// The messages get the model's context window ([Options.ContextTokens])
// less the reply's reserve and the tools' tokens, and are fitted by
// [conversation.FitContext] with [Options.Fit]: the oldest large tool
// results cleared behind a placeholder that leads back to them (with a
// Keeper), then the oldest turns dropped, system messages, the latest user
// message and the latest tool calls kept. A request that needs no change
// goes on byte for byte; a fitted one goes on with only its messages
// replaced (every other member kept), a new Content-Length, its fit in the
// context ([FitFromContext]), and the response headers
// X-Ctxfit-Tokens-Before, X-Ctxfit-Tokens-After, X-Ctxfit-Messages-Dropped
// and X-Ctxfit-Results-Cleared. When the messages that must stay do not
// fit, it answers 400 with code context_length_exceeded; a body over
// [Options.MaxBodyBytes], 413.
//
// It fails open on what it cannot read: a body that is not JSON, or whose
// messages are not chat messages, goes on untouched for next to reject.
// It never modifies the caller's *http.Request.
func Middleware(opts *Options) func(http.Handler) http.Handler {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.ContextTokens == nil {
		o.ContextTokens = func(string) int { return DefaultContextTokens }
	}
	if o.ReplyTokens == 0 {
		o.ReplyTokens = DefaultReplyTokens
	}
	if o.Rate == 0 {
		o.Rate = DefaultRate
	}
	if o.Burst == 0 {
		o.Burst = DefaultBurst
	}
	if o.ClientKey == nil {
		o.ClientKey = ClientIP
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	counter := o.Fit.Counter
	if counter == nil {
		counter, _ = budget.Exact(budget.O200KBase)
		o.Fit.Counter = counter
	}
	lim := &limiter{rate: o.Rate, burst: o.Burst, buckets: map[string]*bucket{}}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
				next.ServeHTTP(w, r)
				return
			}
			key := o.ClientKey(r)
			if wait, ok := lim.allow(key, o.Now()); !ok {
				secs := int(math.Ceil(wait.Seconds()))
				w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
				WriteError(w, http.StatusTooManyRequests, ErrorDetail{Type: TypeRateLimit, Code: CodeRateLimitExceeded,
					Message: fmt.Sprintf("Rate limit reached for this client: %d requests at once, refilled at %g a second. Retry in %d s.", o.Burst, float64(o.Rate), max(secs, 1))})
				return
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, o.MaxBodyBytes+1))
			if err != nil {
				WriteError(w, http.StatusBadRequest, ErrorDetail{Type: TypeInvalidRequest, Message: "Could not read the request body: " + err.Error()})
				return
			}
			if int64(len(body)) > o.MaxBodyBytes {
				WriteError(w, http.StatusRequestEntityTooLarge, ErrorDetail{Type: TypeInvalidRequest, Code: CodeRequestTooLarge,
					Message: fmt.Sprintf("The request body is over %d bytes.", o.MaxBodyBytes)})
				return
			}
			fitted, res, status, e := fitBody(r.Context(), body, &o, counter)
			if status != 0 {
				WriteError(w, status, e)
				return
			}
			ctx := r.Context()
			if res != nil {
				ctx = context.WithValue(ctx, fitKey{}, *res)
			}
			r2 := r.WithContext(ctx) // a shallow copy: r stays as it was
			r2.Body = io.NopCloser(bytes.NewReader(body))
			if fitted != nil {
				r2.Header = r.Header.Clone()
				r2.Body = io.NopCloser(bytes.NewReader(fitted))
				r2.ContentLength = int64(len(fitted))
				r2.Header.Set("Content-Length", strconv.Itoa(len(fitted)))
				h := w.Header()
				h.Set(HeaderTokensBefore, strconv.Itoa(res.TokensBefore))
				h.Set(HeaderTokensAfter, strconv.Itoa(res.TokensAfter))
				h.Set(HeaderDropped, strconv.Itoa(len(res.Dropped)))
				h.Set(HeaderCleared, strconv.Itoa(len(res.Cleared)))
			}
			next.ServeHTTP(w, r2)
		})
	}
}

// fitBody fits the messages of a chat-completions body. It returns the new
// body (nil when the body goes on as it is) and the fit (nil when the
// messages could not be read), or the status and error to answer.
func fitBody(ctx context.Context, body []byte, o *Options, counter budget.Counter) ([]byte, *conversation.Result, int, ErrorDetail) {
	obj, err := jsonwire.ParseObject(body)
	if err != nil {
		return nil, nil, 0, ErrorDetail{} // not ours to judge
	}
	var req struct {
		Model               string `json:"model"`
		MaxTokens           int    `json:"max_tokens"`
		MaxCompletionTokens int    `json:"max_completion_tokens"`
	}
	_ = json.Unmarshal(body, &req)
	msgs, raws, err := readMessages(obj.Get("messages"))
	if err != nil {
		return nil, nil, 0, ErrorDetail{}
	}
	reply := o.ReplyTokens
	if req.MaxCompletionTokens > 0 {
		reply = req.MaxCompletionTokens
	} else if req.MaxTokens > 0 {
		reply = req.MaxTokens
	}
	tools := 0
	for _, k := range []string{"tools", "functions"} {
		if t := obj.Get(k); len(t) > 0 {
			tools += counter.Count(string(t))
		}
	}
	window := o.ContextTokens(req.Model)
	limit := window - reply - tools
	if limit <= 0 {
		return nil, nil, http.StatusBadRequest, ErrorDetail{Type: TypeInvalidRequest, Param: "messages", Code: CodeContextLengthExceeded,
			Message: fmt.Sprintf("This model's context window is %d tokens: the reply (%d) and the tools (%d) leave no room for messages.", window, reply, tools)}
	}
	res, err := conversation.FitContext(ctx, msgs, limit, &o.Fit)
	if err != nil {
		var me *conversation.MandatoryError
		if errors.As(err, &me) {
			return nil, nil, http.StatusBadRequest, ErrorDetail{Type: TypeInvalidRequest, Param: "messages", Code: CodeContextLengthExceeded,
				Message: fmt.Sprintf("This model's context window is %d tokens, %d for the messages after the reply and the tools: %s", window, limit, err)}
		}
		return nil, nil, http.StatusInternalServerError, ErrorDetail{Type: TypeServer, Message: err.Error()}
	}
	if len(res.Dropped) == 0 && len(res.Cleared) == 0 {
		return nil, &res, 0, ErrorDetail{}
	}
	cleared := map[int]string{}
	for _, c := range res.Cleared {
		for j, i := range res.Kept {
			if i == c.Index {
				cleared[i] = res.Messages[j].Content
			}
		}
	}
	kept := make([]json.RawMessage, 0, len(res.Kept))
	for _, i := range res.Kept {
		m := raws[i]
		if text, ok := cleared[i]; ok {
			mo, err := jsonwire.ParseObject(m)
			if err != nil {
				return nil, nil, http.StatusInternalServerError, ErrorDetail{Type: TypeServer, Message: err.Error()}
			}
			s, _ := json.Marshal(text)
			mo.Set("content", s)
			m = mo.Marshal()
		}
		kept = append(kept, m)
	}
	ms, _ := json.Marshal(kept)
	obj.Set("messages", ms)
	return obj.Marshal(), &res, 0, ErrorDetail{}
}

// limiter holds a token bucket per client.
type limiter struct {
	rate  rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	last time.Time
}

// maxIdleBuckets is how many buckets the limiter keeps before it drops
// those that are full again (a full bucket is a new one).
const maxIdleBuckets = 4096

// allow takes a request from key's bucket at now, or says how long until
// one is there.
func (l *limiter) allow(key string, now time.Time) (time.Duration, bool) {
	if l.rate == rate.Inf {
		return 0, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= maxIdleBuckets {
			l.sweep(now)
		}
		b = &bucket{lim: rate.NewLimiter(l.rate, l.burst)}
		l.buckets[key] = b
	}
	b.last = now
	if b.lim.AllowN(now, 1) {
		return 0, true
	}
	missing := 1 - b.lim.TokensAt(now)
	return time.Duration(missing / float64(l.rate) * float64(time.Second)), false
}

// sweep drops the buckets that have refilled since they were last used.
func (l *limiter) sweep(now time.Time) {
	full := time.Duration(float64(l.burst) / float64(l.rate) * float64(time.Second))
	for k, b := range l.buckets {
		if now.Sub(b.last) >= full {
			delete(l.buckets, k)
		}
	}
}
