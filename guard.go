package ctxfit

import (
	"context"
	"github.com/ctxfit/ctxfit/config/settings"

	"cmp"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/store"
	"github.com/ctxfit/ctxfit/summary"
	"github.com/ctxfit/ctxfit/telemetry"
)

// Options configure a [Guard]. The zero value (or a nil *Options) gives the
// defaults: the default [Config], the exact o200k_base counter, an in-memory
// store, no telemetry sink, slog.Default and time.Now.
type Options struct {
	// Config holds the serializable settings. The zero Config means the
	// defaults; [New] validates it.
	Config Config
	// Counter counts tokens. Nil means budget.Exact(Config.Encoding). With
	// an inexact counter such as budget.Estimator, a sample of responses
	// (Config.EstimateSample) is also counted exactly and the estimator's
	// error recorded.
	Counter budget.Counter
	// Store keeps snapshots in store mode. Nil means a [store.Memory]
	// bounded by Config.StoreMaxBytes and Config.StoreMaxItems, which the
	// Guard closes in [Guard.Close]; a Store passed here is not closed.
	Store store.Store
	// Sink receives a [telemetry.Record] per response. Nil means none. The
	// Guard calls it off the request path (through [telemetry.Async]), so a
	// slow or failing sink never delays or fails a response.
	Sink telemetry.Sink
	// Logger logs warnings (for example a missing secret) and reloads. Nil
	// means slog.Default().
	Logger *slog.Logger
	// Now is the clock of cursors and telemetry. Nil means time.Now.
	Now func() time.Time
}

// Guard is ctxfit's transport-neutral engine: it measures a response and,
// when it is over budget, shapes it (pagination, summary, chunking, or a
// last-resort cut), and serves the continuations its cursors lead to.
//
// A Guard is safe for concurrent use. Its settings can be replaced while it
// serves ([Guard.Reload]); requests in flight finish on the settings they
// started with. The zero value is not usable; create one with [New] and
// release it with [Guard.Close].
type Guard struct {
	cur      atomic.Pointer[engine]
	plans    *plans // recent chunk plans, shared by every request
	store    store.Store
	ownStore bool
	sink     *telemetry.Async
	logger   *slog.Logger
	now      func() time.Time
	since    func(time.Time) time.Duration // time.Since on g.now's clock
	counter  budget.Counter                // from Options; nil means exact per Config.Encoding
	lines    jsonLinesFiles                // the metrics and transformation log files of output formats
	randKey  []byte                        // per-process key used when Config.Secret is empty
	// shapeContext, when not nil, makes the context shaping runs in
	// instead of context.WithTimeout: a test's seam, to end shaping at a
	// chosen step rather than at a time.
	shapeContext func(context.Context, time.Duration) (context.Context, context.CancelFunc)
}

// New returns a Guard configured by opts (copied; nil means the defaults).
// It fails when the Config is invalid, with an error that names each field
// and rule.
func New(opts *Options) (*Guard, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	g := &Guard{
		plans:   newPlans(),
		store:   o.Store,
		logger:  cmp.Or(o.Logger, slog.Default()),
		now:     o.Now,
		counter: o.Counter,
	}
	g.since = time.Since // reads only the monotonic clock
	if g.now == nil {
		g.now = time.Now
	} else {
		g.since = func(t time.Time) time.Duration { return g.now().Sub(t) }
	}
	e, err := g.compile(o.Config)
	if err != nil {
		return nil, err
	}
	if g.store == nil {
		g.store = store.NewMemory(&store.MemoryOptions{MaxBytes: e.cfg.StoreMaxBytes, MaxItems: e.cfg.StoreMaxItems, Now: g.now})
		g.ownStore = true
	}
	if o.Sink != nil {
		g.sink = telemetry.NewAsync(o.Sink, nil)
	}
	g.cur.Store(e)
	return g, nil
}

// Reload replaces the Guard's settings with c. New requests use them at
// once; requests in flight finish on the old ones. An invalid c is refused
// with the same error as [New], and the old settings stay. The store and the
// sink are not changed by a reload.
func (g *Guard) Reload(c Config) error {
	e, err := g.compile(c)
	if err != nil {
		return err
	}
	g.cur.Store(e)
	return nil
}

// Config returns the settings in force, with defaults filled in.
func (g *Guard) Config() Config { return g.cur.Load().cfg }

// Close flushes telemetry and closes the store the Guard created. It does
// not close a Store or Sink passed in [Options].
func (g *Guard) Close() error {
	var errs []error
	if g.sink != nil {
		ctx, cancel := contextWithTimeout(5 * time.Second)
		errs = append(errs, g.sink.Close(ctx))
		cancel()
	}
	if g.ownStore {
		errs = append(errs, g.store.Close())
	}
	errs = append(errs, g.lines.close())
	return errors.Join(errs...)
}

// CredentialSubject returns the subject a request that carried these
// credentials (an Authorization header, cookies) is bound to when the
// adapter is told no other: a keyed digest of them (HMAC-SHA256 under a key
// derived from the cursor secret), so that a cursor issued to one caller is
// refused to another, and no credential is kept or logged. It is "" when
// every value is empty. A rotated token, a changed cookie or a rotated
// cursor secret mean new cursors; bind to a user ID (the adapters' Subject
// options) where that matters.
func (g *Guard) CredentialSubject(credentials ...string) string {
	empty := true
	for _, c := range credentials {
		empty = empty && c == ""
	}
	if empty {
		return ""
	}
	mac := hmac.New(sha256.New, g.cur.Load().subjectKey)
	for _, c := range credentials {
		mac.Write(binary.AppendUvarint(nil, uint64(len(c))))
		mac.Write([]byte(c))
	}
	return "cred:" + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
}

// storeError is what a client learns of a failed store call: that the
// store is unavailable. The backend's own message (a Redis error, say) is
// logged, not sent.
func (g *Guard) storeError(err error) error {
	g.logger.Warn("ctxfit: snapshot store call failed", "err", err)
	return ErrStoreUnavailable
}

// engine is one compiled, immutable set of settings.
type engine struct {
	cfg        Config // defaults filled in
	subjectKey []byte // keys CredentialSubject
	counter    budget.Counter
	codec      *cursor.Codec
	base       *rules
	endpoints  map[string]*rules
	admission  *admission
	sampler    *sampler // responses also counted exactly; nil with an exact counter
}

// rules are the resolved settings of one endpoint.
type rules struct {
	disabled, compare               bool
	pagination, summarize, chunking bool
	budget                          budget.Budget
	chunkTokens                     int
	pageSize, maxPageSize           int
	arrayPath                       string
	format                          string // of pages: "", FormatJSON or FormatTOON
	shape                           summary.Shape
	summarizer                      *summary.Summarizer
	compact                         *compactRules // the output format; nil for none
}

func (e *engine) rulesFor(endpoint string) *rules {
	if r, ok := e.endpoints[endpoint]; ok {
		return r
	}
	return e.base
}

// rulesOf returns the rules of a request: its endpoint's, with the
// request's own budget when it sets one.
func (e *engine) rulesOf(req *Request) (*rules, error) {
	r := e.rulesFor(req.Endpoint)
	if req.Budget == (budget.Budget{}) {
		return r, nil
	}
	if err := req.Budget.Validate(); err != nil || req.Budget.HardCap < MinHardCap {
		return nil, fmt.Errorf("%w: Request.Budget %+v: a hard cap of at least %d and at least the threshold", ErrBadRequest, req.Budget, MinHardCap)
	}
	c := *r
	c.budget = req.Budget
	c.chunkTokens = min(c.chunkTokens, max(c.budget.HardCap-chunkEnvelopeTokens, chunk.MinMaxTokens))
	return &c, nil
}

// resolved returns c with every zero field set to its default.
func resolved(c Config) Config {
	c.Threshold = cmp.Or(c.Threshold, DefaultThreshold)
	c.HardCap = cmp.Or(c.HardCap, max(DefaultHardCap, c.Threshold))
	c.PageSize = cmp.Or(c.PageSize, DefaultPageSize)
	c.MaxPageSize = cmp.Or(c.MaxPageSize, DefaultMaxPageSize)
	c.ChunkTokens = cmp.Or(c.ChunkTokens, DefaultChunkTokens)
	c.Encoding = cmp.Or(c.Encoding, budget.O200KBase)
	c.CursorTTL = cmp.Or(c.CursorTTL, Duration(DefaultCursorTTL))
	c.Mode = cmp.Or(c.Mode, ModeStore)
	c.ShapeTimeout = cmp.Or(c.ShapeTimeout, Duration(DefaultShapeTimeout))
	c.MaxBufferBytes = cmp.Or(c.MaxBufferBytes, DefaultMaxBufferBytes)
	c.MaxConcurrentShaping = cmp.Or(c.MaxConcurrentShaping, runtime.GOMAXPROCS(0))
	c.MaxShapingBytes = cmp.Or(c.MaxShapingBytes, DefaultMaxShapingBytes)
	c.MaxShapingPerSubject = cmp.Or(c.MaxShapingPerSubject, max(1, c.MaxConcurrentShaping/2))
	c.AdmissionWait = cmp.Or(c.AdmissionWait, Duration(DefaultAdmissionWait))
	c.StoreMaxBytes = cmp.Or(c.StoreMaxBytes, DefaultStoreMaxBytes)
	c.StoreMaxItems = cmp.Or(c.StoreMaxItems, DefaultStoreMaxItems)
	c.EstimateSample = cmp.Or(c.EstimateSample, defaultEstimateSample)
	c.Params.Cursor = cmp.Or(c.Params.Cursor, "cursor")
	c.Params.Limit = cmp.Or(c.Params.Limit, "limit")
	c.Params.Fields = cmp.Or(c.Params.Fields, "fields")
	c.Params.StartLine = cmp.Or(c.Params.StartLine, "startLine")
	c.Params.EndLine = cmp.Or(c.Params.EndLine, "endLine")
	c.Params.Part = cmp.Or(c.Params.Part, "part")
	c.Params.Search = cmp.Or(c.Params.Search, "search")
	c.Params.SearchPath = cmp.Or(c.Params.SearchPath, "searchPath")
	c.Params.SearchContext = cmp.Or(c.Params.SearchContext, "searchContext")
	c.Params.Query = cmp.Or(c.Params.Query, "jq")
	c.Params.Format = cmp.Or(c.Params.Format, "format")
	return c
}

// Mode is how continuations find their data: the type of [Config.Mode]
// (see [settings.Mode]).
type Mode = settings.Mode

// Modes of [Config.Mode].
const (
	ModeStore  = settings.ModeStore
	ModeReplay = settings.ModeReplay
)

func (g *Guard) compile(c Config) (*engine, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = resolved(c)
	counter := g.counter
	if counter == nil {
		ec, err := budget.Exact(c.Encoding)
		if err != nil {
			return nil, fmt.Errorf("ctxfit: %w", err)
		}
		counter = ec
	}
	secrets := make([][]byte, 0, 1+len(c.PreviousSecrets))
	if c.Secret == "" {
		if g.randKey == nil {
			g.randKey = make([]byte, 32)
			if _, err := rand.Read(g.randKey); err != nil {
				return nil, fmt.Errorf("ctxfit: generating a cursor key: %w", err)
			}
			g.logger.Warn("ctxfit: no cursor secret configured (CTXFIT_SECRET); using a random per-process key: cursors will not survive a restart or work across instances")
		}
		secrets = append(secrets, g.randKey)
	} else {
		secrets = append(secrets, []byte(c.Secret))
	}
	for _, s := range c.PreviousSecrets {
		secrets = append(secrets, []byte(s))
	}
	codec, err := cursor.NewCodec(secrets, &cursor.Options{TTL: time.Duration(c.CursorTTL), Now: g.now})
	if err != nil {
		return nil, fmt.Errorf("ctxfit: %w", err)
	}
	subjectKey, err := hkdf.Key(sha256.New, secrets[0], []byte("ctxfit/subject"), "ctxfit credential subject v1", 32)
	if err != nil {
		return nil, fmt.Errorf("ctxfit: deriving the subject key: %w", err)
	}
	e := &engine{cfg: c, counter: counter, codec: codec, subjectKey: subjectKey, endpoints: make(map[string]*rules, len(c.Endpoints))}
	if !budget.IsExact(counter) {
		e.sampler = newSampler(c.EstimateSample, nil)
	}
	if prev := g.cur.Load(); prev != nil && prev.admission.same(c) {
		e.admission = prev.admission // the requests in flight stay counted
	} else {
		e.admission = newAdmission(c)
	}
	if e.base, err = e.rules(Endpoint{}); err != nil {
		return nil, err
	}
	for _, ep := range c.Endpoints {
		r, err := e.rules(ep)
		if err == nil {
			r.compact, err = g.compactRules(e, ep)
		}
		if err != nil {
			return nil, fmt.Errorf("ctxfit: endpoint %q: %w", ep.Match, err)
		}
		e.endpoints[ep.Match] = r
	}
	return e, nil
}

func (e *engine) rules(ep Endpoint) (*rules, error) {
	c := e.cfg
	th := cmp.Or(ep.Threshold, c.Threshold)
	r := &rules{
		disabled:    ep.Disabled,
		compare:     ep.Compare,
		pagination:  on(ep.Pagination),
		summarize:   on(ep.Summary),
		chunking:    on(ep.Chunking),
		budget:      budget.Budget{Threshold: th, HardCap: cmp.Or(ep.HardCap, max(c.HardCap, th))},
		chunkTokens: cmp.Or(ep.ChunkTokens, c.ChunkTokens),
		pageSize:    cmp.Or(ep.PageSize, c.PageSize),
		maxPageSize: cmp.Or(ep.MaxPageSize, c.MaxPageSize),
		arrayPath:   ep.ArrayPath,
		format:      ep.Format,
		shape:       summary.Shape{Endpoint: ep.DetailsEndpoint, Fields: ep.SummaryFields},
	}
	for _, t := range ep.SummaryTopN {
		r.shape.TopN = append(r.shape.TopN, summary.TopN{Path: t.Path, Score: t.Score, N: t.N, Min: t.Min})
	}
	// A chunk and its envelope must fit under the hard cap.
	r.chunkTokens = min(r.chunkTokens, max(r.budget.HardCap-chunkEnvelopeTokens, chunk.MinMaxTokens))
	var err error
	if r.summarizer, err = summary.New(&summary.Options{Counter: e.counter, Budget: r.budget}); err != nil {
		return nil, err
	}
	return r, nil
}

// chunkEnvelopeTokens is what a ContentChunk's fields, cursor and budget
// metadata add to its content, with room to spare.
const chunkEnvelopeTokens = 400

func on(b *bool) bool { return b == nil || *b }
