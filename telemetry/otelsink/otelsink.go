// Package otelsink exports ctxfit's telemetry as OpenTelemetry metrics and
// span attributes, named after the OpenTelemetry semantic conventions.
//
// It is separate from package telemetry so that programs that do not use
// OpenTelemetry do not link it. [New] takes a metric.MeterProvider (the one
// of your SDK setup, or the global one) and creates its instruments once;
// [Sink.Record] then adds one response's numbers to them:
//
//	name                         kind       unit        attributes (besides the common ones)
//	ctxfit.responses             counter    {response}  error.type (requests that ended in an error)
//	ctxfit.tokens                counter    {token}     ctxfit.token.type: original, sent or saved
//	ctxfit.response.size         counter    By          ctxfit.token.type: original or sent
//	ctxfit.oversize.attempts     counter    {response}
//	ctxfit.fallbacks             counter    {response}  error.type: why shaping fell back
//	ctxfit.cache.lookups         counter    {lookup}    ctxfit.cache.hit
//	ctxfit.shaping.duration      histogram  s
//	ctxfit.response.tokens       histogram  {token}
//	ctxfit.estimate.error_ratio  histogram  1           (the endpoint's attributes only)
//
// [Sink.RecordGateway] adds the records of an API-to-MCP gateway
// (telemetry.GatewayRecord) to instruments of their own, with the tool as
// gen_ai.tool.name and none of the common attributes:
//
//	name                               kind            unit        attributes
//	ctxfit.gateway.startup.duration    histogram       s
//	ctxfit.gateway.discovery.duration  histogram       s
//	ctxfit.gateway.validations         counter         {call}      ctxfit.validation.result: ok or failed
//	ctxfit.gateway.retries             counter         {call}
//	ctxfit.gateway.cache.requests      counter         {request}   ctxfit.cache.hit
//	ctxfit.gateway.sessions            up-down counter {session}
//	ctxfit.gateway.api.duration        histogram       s           http.request.method, http.response.status_code, error.type
//	ctxfit.gateway.reduction_ratio     histogram       1           ctxfit.strategy
//
// The common attributes name the endpoint and what was done:
//
//	http.request.method, http.route  an HTTP endpoint: the record's Endpoint is a
//	                                 ServeMux pattern, "GET /api/v1/bookings/{id}"
//	gen_ai.tool.name                 an MCP tool: any other Endpoint, "list_bookings"
//	ctxfit.strategy, ctxfit.outcome  the record's Strategy and Outcome
//
// An Endpoint holds a "/" exactly when it is an HTTP route: MCP tool names
// are made of letters, digits, '_', '-' and '.'. The method and the route are
// separate attributes, never one "GET /path" value, so that dashboards can
// group by either. error.type is the record's ErrorType, or on fallbacks
// its Fallback reason when that is a short code (timeout, canceled), else
// "_OTHER", which keeps the attribute's values few.
//
// Through the Prometheus exporter the names become ctxfit_responses_total,
// ctxfit_tokens_total, ctxfit_response_size_bytes_total,
// ctxfit_oversize_attempts_total, ctxfit_fallbacks_total,
// ctxfit_cache_lookups_total, ctxfit_shaping_duration_seconds,
// ctxfit_response_tokens and ctxfit_estimate_error_ratio, with the labels
// http_request_method, http_route, gen_ai_tool_name, ctxfit_strategy,
// ctxfit_outcome, ctxfit_token_type, ctxfit_cache_hit and error_type; the
// repository's monitoring/ dashboard and alert rules use them. The
// gateway's become ctxfit_gateway_startup_duration_seconds,
// ctxfit_gateway_discovery_duration_seconds,
// ctxfit_gateway_validations_total, ctxfit_gateway_retries_total,
// ctxfit_gateway_cache_requests_total, ctxfit_gateway_sessions,
// ctxfit_gateway_api_duration_seconds and ctxfit_gateway_reduction_ratio,
// with the further labels ctxfit_validation_result and
// http_response_status_code.
//
// ctxfit.tokens with ctxfit.token.type=saved adds TokensBefore − TokensAfter
// when it is positive (a counter only goes up). ctxfit.estimate.error_ratio
// records the absolute relative error of the sampled token estimates.
//
// When the context carries a recording span, Record also sets
// ctxfit.strategy, ctxfit.outcome, ctxfit.tokens.original and
// ctxfit.tokens.sent (and error.type) on it.
package otelsink

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ctxfit/ctxfit/telemetry"
)

// ScopeName is the instrumentation scope of the meter the sink uses.
const ScopeName = "github.com/ctxfit/ctxfit/telemetry/otelsink"

// Attribute keys. The first four are OpenTelemetry semantic conventions; the
// others are ctxfit's, in its namespace.
const (
	KeyHTTPMethod = attribute.Key("http.request.method")
	KeyHTTPRoute  = attribute.Key("http.route")
	KeyToolName   = attribute.Key("gen_ai.tool.name")
	KeyErrorType  = attribute.Key("error.type")

	KeyStrategy  = attribute.Key("ctxfit.strategy")
	KeyOutcome   = attribute.Key("ctxfit.outcome")
	KeyTokenType = attribute.Key("ctxfit.token.type")
	KeyCacheHit  = attribute.Key("ctxfit.cache.hit")

	// Span attributes.
	KeyTokensOriginal = attribute.Key("ctxfit.tokens.original")
	KeyTokensSent     = attribute.Key("ctxfit.tokens.sent")
)

// Values of [KeyTokenType].
const (
	TokenTypeOriginal = "original" // as the handler or tool produced the response
	TokenTypeSent     = "sent"     // as it was sent
	TokenTypeSaved    = "saved"    // removed by shaping
)

// ErrorTypeOther is error.type for a reason that is not a short code.
const ErrorTypeOther = "_OTHER"

// Bucket boundaries of the histograms.
var (
	durationBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
	tokenBuckets    = []float64{100, 250, 500, 1000, 2000, 4000, 8000, 12000, 16000, 32000, 64000, 128000}
	errorBuckets    = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1}
)

// Sink is a [telemetry.Sink] that records into OpenTelemetry instruments,
// and a [telemetry.GatewaySink] ([Sink.RecordGateway]).
// The OpenTelemetry API does not block nor fail on a measurement, so Record
// always returns nil; wrapping a Sink in [telemetry.NewAsync] is not needed
// (and would lose the span of the request).
//
// A Sink is safe for concurrent use. Its zero value is not usable; call
// [New].
type Sink struct {
	responses, tokens, size           metric.Int64Counter
	oversize, fallbacks, cacheLookups metric.Int64Counter
	duration                          metric.Float64Histogram
	responseTokens                    metric.Int64Histogram
	estimateError                     metric.Float64Histogram
	gw                                gatewayInstruments

	// sets caches the attribute sets of the most common measurements by
	// endpoint, strategy and outcome (building them was most of a record's
	// cost). It holds at most maxSets entries: endpoints named after a
	// client's path are unbounded, and past the bound sets are built anew.
	sets  sync.Map // setKey → *recordSets
	nSets atomic.Int64
}

// maxSets bounds [Sink.sets].
const maxSets = 1024

type setKey struct{ endpoint, strategy, outcome string }

// recordSets are the measurement options of a record without an error type.
type recordSets struct {
	attrs, original, sent, saved metric.MeasurementOption
}

func (s *Sink) recordSets(r telemetry.Record, baseAttrs func() []attribute.KeyValue) *recordSets {
	k := setKey{r.Endpoint, string(r.Strategy), string(r.Outcome)}
	if v, ok := s.sets.Load(k); ok {
		return v.(*recordSets)
	}
	base := baseAttrs()
	with := func(kv attribute.KeyValue) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(append(append([]attribute.KeyValue(nil), base...), kv)...))
	}
	rs := &recordSets{
		attrs:    metric.WithAttributeSet(attribute.NewSet(base...)),
		original: with(KeyTokenType.String(TokenTypeOriginal)),
		sent:     with(KeyTokenType.String(TokenTypeSent)),
		saved:    with(KeyTokenType.String(TokenTypeSaved)),
	}
	if s.nSets.Load() < maxSets {
		if _, loaded := s.sets.LoadOrStore(k, rs); !loaded {
			s.nSets.Add(1)
		}
	}
	return rs
}

// New creates the sink's instruments on a meter of mp named [ScopeName]; nil
// mp means otel.GetMeterProvider(). It returns the errors of instrument
// creation, joined; the sink is then nil.
func New(mp metric.MeterProvider) (*Sink, error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	b := &builder{m: mp.Meter(ScopeName)}
	s := &Sink{
		responses:      b.counter("ctxfit.responses", "{response}", "Responses handled by ctxfit."),
		tokens:         b.counter("ctxfit.tokens", "{token}", "Tokens of the responses as produced (original), as sent (sent), and removed by shaping (saved)."),
		size:           b.counter("ctxfit.response.size", "By", "Bytes of the responses as produced (original) and as sent (sent)."),
		oversize:       b.counter("ctxfit.oversize.attempts", "{response}", "Responses over the hard cap before shaping."),
		fallbacks:      b.counter("ctxfit.fallbacks", "{response}", "Responses for which shaping fell back to a cruder limit."),
		cacheLookups:   b.counter("ctxfit.cache.lookups", "{lookup}", "Response cache lookups, by hit."),
		duration:       b.histogram("ctxfit.shaping.duration", "s", "Time spent counting and shaping a response.", durationBuckets),
		responseTokens: b.intHistogram("ctxfit.response.tokens", "{token}", "Tokens of a response as sent.", tokenBuckets),
		estimateError:  b.histogram("ctxfit.estimate.error_ratio", "1", "Absolute relative error of sampled token estimates.", errorBuckets),
		gw:             newGatewayInstruments(b),
	}
	if err := errors.Join(b.errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// builder creates instruments on a meter and collects the errors.
type builder struct {
	m    metric.Meter
	errs []error
}

func (b *builder) fail(kind, name string, err error) {
	if err != nil {
		b.errs = append(b.errs, fmt.Errorf("otelsink: %s %s: %w", kind, name, err))
	}
}

func (b *builder) counter(name, unit, desc string) metric.Int64Counter {
	c, err := b.m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.fail("counter", name, err)
	return c
}

func (b *builder) upDownCounter(name, unit, desc string) metric.Int64UpDownCounter {
	c, err := b.m.Int64UpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.fail("up-down counter", name, err)
	return c
}

func (b *builder) histogram(name, unit, desc string, buckets []float64) metric.Float64Histogram {
	h, err := b.m.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(buckets...))
	b.fail("histogram", name, err)
	return h
}

func (b *builder) intHistogram(name, unit, desc string, buckets []float64) metric.Int64Histogram {
	h, err := b.m.Int64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc),
		metric.WithExplicitBucketBoundaries(buckets...))
	b.fail("histogram", name, err)
	return h
}

// EndpointAttributes returns the attributes that name an endpoint: for an
// HTTP route pattern ("GET /api/v1/bookings/{id}", "/healthz",
// "example.com/x") http.route and, when the pattern has one,
// http.request.method; for anything else (an MCP tool name)
// gen_ai.tool.name.
func EndpointAttributes(endpoint string) []attribute.KeyValue {
	if !strings.Contains(endpoint, "/") {
		return []attribute.KeyValue{KeyToolName.String(endpoint)}
	}
	method, route, ok := strings.Cut(endpoint, " ")
	if !ok || !isMethod(method) {
		return []attribute.KeyValue{KeyHTTPRoute.String(endpoint)}
	}
	return []attribute.KeyValue{KeyHTTPMethod.String(method), KeyHTTPRoute.String(strings.TrimLeft(route, " \t"))}
}

// isMethod reports whether s is an HTTP method token as ServeMux patterns
// write them (upper-case letters).
func isMethod(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// errorType returns error.type for r, or "" when r is not an error nor a
// fallback.
func errorType(r telemetry.Record) string {
	switch {
	case r.ErrorType != "":
		return shortCode(r.ErrorType)
	case r.Fallback != "":
		return shortCode(r.Fallback)
	case r.Outcome == telemetry.OutcomeFallback || r.Strategy == telemetry.StrategyError:
		return ErrorTypeOther
	}
	return ""
}

// shortCode returns s when it is a short snake_case code, else
// [ErrorTypeOther]: a fallback's reason may be an error message, which
// would give the attribute unbounded values.
func shortCode(s string) string {
	if len(s) > 40 {
		return ErrorTypeOther
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			return ErrorTypeOther
		}
	}
	return s
}

// Record adds r's numbers to the instruments, and sets the span attributes
// on the recording span of ctx, if any. It always returns nil.
func (s *Sink) Record(ctx context.Context, r telemetry.Record) error {
	var endpoint, base []attribute.KeyValue // built when needed
	baseAttrs := func() []attribute.KeyValue {
		if base == nil {
			endpoint = EndpointAttributes(r.Endpoint)
			base = append(endpoint, KeyStrategy.String(string(r.Strategy)), KeyOutcome.String(string(r.Outcome)))
		}
		return base
	}
	rs := s.recordSets(r, baseAttrs)
	attrs := rs.attrs
	with := func(kv ...attribute.KeyValue) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(append(append([]attribute.KeyValue(nil), baseAttrs()...), kv...)...))
	}
	et := errorType(r)

	if et != "" && r.Outcome != telemetry.OutcomeFallback {
		s.responses.Add(ctx, 1, with(KeyErrorType.String(et)))
	} else {
		s.responses.Add(ctx, 1, attrs)
	}
	s.tokens.Add(ctx, int64(max(r.TokensBefore, 0)), rs.original)
	s.tokens.Add(ctx, int64(max(r.TokensAfter, 0)), rs.sent)
	s.tokens.Add(ctx, int64(max(r.TokensSaved(), 0)), rs.saved)
	s.size.Add(ctx, int64(max(r.BytesBefore, 0)), rs.original)
	s.size.Add(ctx, int64(max(r.BytesAfter, 0)), rs.sent)
	s.duration.Record(ctx, max(r.Latency, 0).Seconds(), attrs)
	s.responseTokens.Record(ctx, int64(max(r.TokensAfter, 0)), attrs)
	if r.Oversize() {
		s.oversize.Add(ctx, 1, attrs)
	}
	if r.Outcome == telemetry.OutcomeFallback || r.Fallback != "" {
		s.fallbacks.Add(ctx, 1, with(KeyErrorType.String(et)))
	}
	if r.CacheHit != nil {
		s.cacheLookups.Add(ctx, 1, with(KeyCacheHit.Bool(*r.CacheHit)))
	}
	if e := r.EstimateError; e != nil && !math.IsNaN(*e) {
		s.estimateError.Record(ctx, math.Abs(*e), metric.WithAttributeSet(attribute.NewSet(EndpointAttributes(r.Endpoint)...)))
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(KeyStrategy.String(string(r.Strategy)), KeyOutcome.String(string(r.Outcome)),
			KeyTokensOriginal.Int(r.TokensBefore), KeyTokensSent.Int(r.TokensAfter))
		if et != "" {
			span.SetAttributes(KeyErrorType.String(et))
		}
	}
	return nil
}
