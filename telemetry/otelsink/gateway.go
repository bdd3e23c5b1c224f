package otelsink

import (
	"context"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ctxfit/ctxfit/telemetry"
)

// Attribute keys of the gateway's instruments. http.response.status_code is
// an OpenTelemetry semantic convention; the other is ctxfit's.
const (
	KeyHTTPStatus       = attribute.Key("http.response.status_code")
	KeyValidationResult = attribute.Key("ctxfit.validation.result")
)

// Values of [KeyValidationResult].
const (
	ValidationOK     = "ok"
	ValidationFailed = "failed"
)

// Bucket boundaries of the gateway's histograms. A bucket holds the values
// up to its bound, so the reduction buckets bound at 0.69999 rather than
// 0.7: a reduction of exactly 70% (the target,
// [telemetry.ReductionTarget]) lands above it.
var (
	startupBuckets   = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30}
	discoveryBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	apiBuckets       = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	reductionBuckets = []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.69999, 0.8, 0.9, 1}
)

// gatewayInstruments are the instruments of the gateway's records.
type gatewayInstruments struct {
	startup, discovery, api, reduction metric.Float64Histogram
	validations, retries, cache        metric.Int64Counter
	sessions                           metric.Int64UpDownCounter
}

func newGatewayInstruments(b *builder) gatewayInstruments {
	return gatewayInstruments{
		startup:     b.histogram("ctxfit.gateway.startup.duration", "s", "Time from the gateway's start to its server being ready.", startupBuckets),
		discovery:   b.histogram("ctxfit.gateway.discovery.duration", "s", "Time from a session's first request to its first tools/list.", discoveryBuckets),
		api:         b.histogram("ctxfit.gateway.api.duration", "s", "Duration of the gateway's calls of the API, to the answer's header.", apiBuckets),
		reduction:   b.histogram("ctxfit.gateway.reduction_ratio", "1", "Token reduction of the shaped results of the gateway's tools (1 - sent/original).", reductionBuckets),
		validations: b.counter("ctxfit.gateway.validations", "{call}", "Tool calls whose arguments were checked against the input schema, by result."),
		retries:     b.counter("ctxfit.gateway.retries", "{call}", "Tool calls with valid arguments after a validation failure of the same tool in the same session."),
		cache:       b.counter("ctxfit.gateway.cache.requests", "{request}", "Calls of read-only tools looked up in the response cache, by hit."),
		sessions:    b.upDownCounter("ctxfit.gateway.sessions", "{session}", "MCP sessions open."),
	}
}

// RecordGateway adds a gateway record to the gateway's instruments (the
// ctxfit.gateway.* rows of the package's table), with the tool as
// gen_ai.tool.name. It makes [Sink] a [telemetry.GatewaySink]. It always
// returns nil.
//
// The share of summaries that reached the 70% target is 1 − (the count of
// ctxfit.gateway.reduction_ratio's bucket bounded at 0.69999) / (its count), for
// ctxfit.strategy=summary; API calls that got no answer have error.type
// _OTHER and no status code, those with a 4xx or 5xx answer the status code
// as error.type, as OpenTelemetry's HTTP client conventions have it.
func (s *Sink) RecordGateway(ctx context.Context, r telemetry.GatewayRecord) error {
	g := &s.gw
	tool := func(kv ...attribute.KeyValue) metric.MeasurementOption {
		if r.Tool != "" {
			kv = append(kv, KeyToolName.String(r.Tool))
		}
		return metric.WithAttributeSet(attribute.NewSet(kv...))
	}
	switch r.Event {
	case telemetry.GatewayStartup:
		g.startup.Record(ctx, max(r.Duration, 0).Seconds())
	case telemetry.GatewayDiscovery:
		g.discovery.Record(ctx, max(r.Duration, 0).Seconds())
	case telemetry.GatewayValidationOK:
		g.validations.Add(ctx, 1, tool(KeyValidationResult.String(ValidationOK)))
	case telemetry.GatewayValidationFailed:
		g.validations.Add(ctx, 1, tool(KeyValidationResult.String(ValidationFailed)))
	case telemetry.GatewayRetry:
		g.retries.Add(ctx, 1, tool())
	case telemetry.GatewayCacheHit, telemetry.GatewayCacheMiss:
		g.cache.Add(ctx, 1, tool(KeyCacheHit.Bool(r.Event == telemetry.GatewayCacheHit)))
	case telemetry.GatewaySessionOpened:
		g.sessions.Add(ctx, 1)
	case telemetry.GatewaySessionClosed:
		g.sessions.Add(ctx, -1)
	case telemetry.GatewayAPICall:
		kv := []attribute.KeyValue{KeyHTTPMethod.String(r.Method)}
		switch {
		case r.Status == 0:
			kv = append(kv, KeyErrorType.String(ErrorTypeOther))
		case r.Status >= 400:
			kv = append(kv, KeyHTTPStatus.Int(r.Status), KeyErrorType.String(strconv.Itoa(r.Status)))
		default:
			kv = append(kv, KeyHTTPStatus.Int(r.Status))
		}
		g.api.Record(ctx, max(r.Duration, 0).Seconds(), tool(kv...))
	case telemetry.GatewayShaped:
		g.reduction.Record(ctx, r.Reduction, tool(KeyStrategy.String(r.Strategy)))
	}
	return nil
}
