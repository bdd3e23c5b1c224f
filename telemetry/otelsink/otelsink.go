// Package otelsink exports ctxfit's telemetry as OpenTelemetry metrics.
//
// It is separate from package telemetry so that programs that do not use
// OpenTelemetry do not link it. [New] takes a metric.MeterProvider (the one
// of your SDK setup, or the global one) and creates its instruments once;
// [Sink.Record] then adds one response's numbers to them:
//
//	name                        kind            unit        attributes
//	ctxfit.responses            counter         {response}  endpoint, strategy, outcome
//	ctxfit.tokens.before        counter         {token}     endpoint, strategy, outcome
//	ctxfit.tokens.after         counter         {token}     endpoint, strategy, outcome
//	ctxfit.tokens.saved         counter         {token}     endpoint, strategy, outcome
//	ctxfit.bytes.before         counter         By          endpoint, strategy, outcome
//	ctxfit.bytes.after          counter         By          endpoint, strategy, outcome
//	ctxfit.oversize.attempts    counter         {response}  endpoint, strategy, outcome
//	ctxfit.fallbacks            counter         {response}  endpoint, strategy, outcome, reason
//	ctxfit.cache.lookups        counter         {lookup}    endpoint, strategy, outcome, hit
//	ctxfit.response.latency     histogram       s           endpoint, strategy, outcome
//	ctxfit.response.tokens      histogram       {token}     endpoint, strategy, outcome
//	ctxfit.estimate.error       histogram       1           endpoint
//
// ctxfit.tokens.saved adds TokensBefore − TokensAfter when it is positive
// (a counter only goes up). ctxfit.estimate.error records the absolute
// relative error of the sampled token estimates. The attribute values are
// the record's Endpoint, Strategy and Outcome, which have few distinct
// values: Endpoint is a route pattern or tool name, not a raw path.
package otelsink

import (
	"context"
	"errors"
	"fmt"
	"math"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ctxfit/ctxfit/telemetry"
)

// ScopeName is the instrumentation scope of the meter the sink uses.
const ScopeName = "github.com/ctxfit/ctxfit/telemetry/otelsink"

// Attribute keys.
const (
	KeyEndpoint = attribute.Key("endpoint")
	KeyStrategy = attribute.Key("strategy")
	KeyOutcome  = attribute.Key("outcome")
	KeyReason   = attribute.Key("reason")
	KeyHit      = attribute.Key("hit")
)

// Bucket boundaries of the histograms.
var (
	latencyBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}
	tokenBuckets   = []float64{100, 250, 500, 1000, 2000, 4000, 8000, 12000, 16000, 32000, 64000, 128000}
	errorBuckets   = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1}
)

// Sink is a [telemetry.Sink] that records into OpenTelemetry instruments.
// The OpenTelemetry API does not block nor fail on a measurement, so Record
// always returns nil; wrapping a Sink in [telemetry.NewAsync] is not needed.
//
// A Sink is safe for concurrent use. Its zero value is not usable; call
// [New].
type Sink struct {
	responses, tokensBefore, tokensAfter, tokensSaved metric.Int64Counter
	bytesBefore, bytesAfter                           metric.Int64Counter
	oversize, fallbacks, cacheLookups                 metric.Int64Counter
	latency                                           metric.Float64Histogram
	tokens                                            metric.Int64Histogram
	estimateError                                     metric.Float64Histogram
}

// New creates the sink's instruments on a meter of mp named [ScopeName]; nil
// mp means otel.GetMeterProvider(). It returns the errors of instrument
// creation, joined; the sink is then nil.
func New(mp metric.MeterProvider) (*Sink, error) {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(ScopeName)
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if err != nil {
			errs = append(errs, fmt.Errorf("otelsink: counter %s: %w", name, err))
		}
		return c
	}
	s := &Sink{
		responses:    counter("ctxfit.responses", "{response}", "Responses handled by ctxfit."),
		tokensBefore: counter("ctxfit.tokens.before", "{token}", "Tokens of the responses as the handlers produced them."),
		tokensAfter:  counter("ctxfit.tokens.after", "{token}", "Tokens of the responses as sent."),
		tokensSaved:  counter("ctxfit.tokens.saved", "{token}", "Tokens removed by shaping."),
		bytesBefore:  counter("ctxfit.bytes.before", "By", "Bytes of the responses as the handlers produced them."),
		bytesAfter:   counter("ctxfit.bytes.after", "By", "Bytes of the responses as sent."),
		oversize:     counter("ctxfit.oversize.attempts", "{response}", "Responses over the hard cap before shaping."),
		fallbacks:    counter("ctxfit.fallbacks", "{response}", "Responses for which shaping fell back to a cruder limit."),
		cacheLookups: counter("ctxfit.cache.lookups", "{lookup}", "Cache lookups, by hit."),
	}
	var err error
	s.latency, err = m.Float64Histogram("ctxfit.response.latency",
		metric.WithUnit("s"), metric.WithDescription("Time spent counting and shaping a response."),
		metric.WithExplicitBucketBoundaries(latencyBuckets...))
	if err != nil {
		errs = append(errs, fmt.Errorf("otelsink: histogram ctxfit.response.latency: %w", err))
	}
	s.tokens, err = m.Int64Histogram("ctxfit.response.tokens",
		metric.WithUnit("{token}"), metric.WithDescription("Tokens of a response as sent."),
		metric.WithExplicitBucketBoundaries(tokenBuckets...))
	if err != nil {
		errs = append(errs, fmt.Errorf("otelsink: histogram ctxfit.response.tokens: %w", err))
	}
	s.estimateError, err = m.Float64Histogram("ctxfit.estimate.error",
		metric.WithUnit("1"), metric.WithDescription("Absolute relative error of sampled token estimates."),
		metric.WithExplicitBucketBoundaries(errorBuckets...))
	if err != nil {
		errs = append(errs, fmt.Errorf("otelsink: histogram ctxfit.estimate.error: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// Record adds r's numbers to the instruments. It always returns nil.
func (s *Sink) Record(ctx context.Context, r telemetry.Record) error {
	base := []attribute.KeyValue{
		KeyEndpoint.String(r.Endpoint),
		KeyStrategy.String(r.Strategy),
		KeyOutcome.String(r.Outcome),
	}
	attrs := metric.WithAttributeSet(attribute.NewSet(base...))

	s.responses.Add(ctx, 1, attrs)
	s.tokensBefore.Add(ctx, int64(max(r.TokensBefore, 0)), attrs)
	s.tokensAfter.Add(ctx, int64(max(r.TokensAfter, 0)), attrs)
	s.tokensSaved.Add(ctx, int64(max(r.TokensSaved(), 0)), attrs)
	s.bytesBefore.Add(ctx, int64(max(r.BytesBefore, 0)), attrs)
	s.bytesAfter.Add(ctx, int64(max(r.BytesAfter, 0)), attrs)
	s.latency.Record(ctx, max(r.Latency, 0).Seconds(), attrs)
	s.tokens.Record(ctx, int64(max(r.TokensAfter, 0)), attrs)
	if r.Oversize() {
		s.oversize.Add(ctx, 1, attrs)
	}
	if r.Outcome == telemetry.OutcomeFallback || r.Fallback != "" {
		s.fallbacks.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(append(base, KeyReason.String(r.Fallback))...)))
	}
	if r.CacheHit != nil {
		s.cacheLookups.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(append(base, KeyHit.Bool(*r.CacheHit))...)))
	}
	if e := r.EstimateError; e != nil && !math.IsNaN(*e) {
		s.estimateError.Record(ctx, math.Abs(*e), metric.WithAttributeSet(attribute.NewSet(KeyEndpoint.String(r.Endpoint))))
	}
	return nil
}
