package telemetry

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// GatewayEvent is what a [GatewayRecord] reports: one of the Gateway
// constants. Its values are snake_case, as they appear in logs and metric
// attributes.
type GatewayEvent string

// Gateway events: the values of [GatewayRecord.Event], the gateway's
// metrics as they happen.
const (
	// GatewayStartup: the gateway is ready; Duration is its start-up time
	// and Tools the number of tools it serves. Once per gateway.
	GatewayStartup GatewayEvent = "startup"
	// GatewayDiscovery: a session listed the tools for the first time;
	// Duration is the time from its first request (initialize) to that
	// tools/list.
	GatewayDiscovery GatewayEvent = "discovery"
	// GatewayValidationOK: a call's arguments matched the tool's input
	// schema. A call served from the cache is not validated again.
	GatewayValidationOK GatewayEvent = "validation_ok"
	// GatewayValidationFailed: a call's arguments did not match; Parameter
	// names the one at fault ("" for the arguments as a whole).
	GatewayValidationFailed GatewayEvent = "validation_failed"
	// GatewayRetry: a call with valid arguments after a validation failure
	// of the same tool in the same session, the model's successful retry.
	// It follows the call's GatewayValidationOK.
	GatewayRetry GatewayEvent = "retry"
	// GatewayCacheHit: a call of a read-only tool was answered from the
	// response cache (or shared a concurrent call's answer); the API was
	// not called.
	GatewayCacheHit GatewayEvent = "cache_hit"
	// GatewayCacheMiss: a call of a read-only tool found nothing in the
	// cache and ran.
	GatewayCacheMiss GatewayEvent = "cache_miss"
	// GatewaySessionOpened and GatewaySessionClosed: an MCP session sent
	// its first request, and ended.
	GatewaySessionOpened GatewayEvent = "session_opened"
	GatewaySessionClosed GatewayEvent = "session_closed"
	// GatewayAPICall: the gateway called the API; Method is the HTTP
	// method, Status the answer's status code (0 when there was no
	// answer) and Duration the time to the answer's header.
	GatewayAPICall GatewayEvent = "api_call"
	// GatewayShaped: ctxfit shaped the result of one of the gateway's
	// tools; Strategy says how and Reduction by how much.
	GatewayShaped GatewayEvent = "shaped"
)

// ReductionTarget is the token reduction (a fraction) a summary aims for:
// 70% or more. [GatewaySummary.SummariesAtTarget] is the share of
// summaries that reached it.
const ReductionTarget = 0.7

// GatewayRecord is one event of an API-to-MCP gateway (package gateway):
// start-up, discovery, validation, a cache lookup, a session, an API call,
// a shaped result. Only the fields its [GatewayEvent] names are set; the
// others are zero.
//
// The zero GatewayRecord has no Event and is invalid ([GatewayRecord.Validate]).
// A GatewayRecord is a plain value and safe to copy; it has no JSON form
// of its own.
type GatewayRecord struct {
	// Event is what happened.
	Event GatewayEvent
	// Time is when it happened. Zero means unknown; sinks that need a time
	// use the time they received the record.
	Time time.Time
	// Tool is the tool (one per operation) the event concerns; empty for
	// start-up, discovery and sessions.
	Tool string
	// Method is the HTTP method of an API call.
	Method string
	// Status is the HTTP status code of an API call's answer; 0 means the
	// API did not answer (a network error or the time limit).
	Status int
	// Duration is the start-up time, the discovery time or the API call's
	// duration; 0 for the other events.
	Duration time.Duration
	// Parameter is the argument a validation failure is about.
	Parameter string
	// Strategy is what was done to a shaped result ("summary",
	// "pagination", ...).
	Strategy string
	// Reduction is the token reduction of a shaped result, 1 − tokens
	// sent / tokens of the original: at most 1, negative when shaping
	// added tokens.
	Reduction float64
	// Tools is the number of tools at start-up.
	Tools int
}

// Validate checks that r has an Event, no negative Duration or Tools, a
// Status of 0 or of three digits, and a Reduction of at most 1. Its
// errors wrap [ErrInvalidRecord]; all the broken rules are reported,
// joined.
func (r GatewayRecord) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: gateway "+format, append([]any{ErrInvalidRecord}, args...)...))
	}
	if r.Event == "" {
		bad("record without an event")
	}
	if r.Duration < 0 {
		bad("duration %v is negative", r.Duration)
	}
	if r.Tools < 0 {
		bad("tools %d is negative", r.Tools)
	}
	if r.Status != 0 && (r.Status < 100 || r.Status > 999) {
		bad("status %d is not an HTTP status", r.Status)
	}
	if r.Reduction > 1 {
		bad("reduction %v is over 1", r.Reduction)
	}
	return errors.Join(errs...)
}

// APIError reports whether r is an API call that got no answer or one
// outside 2xx.
func (r GatewayRecord) APIError() bool {
	return r.Event == GatewayAPICall && (r.Status < 200 || r.Status > 299)
}

// A GatewaySink receives the records of a gateway. It is optional: a
// [Sink] that also implements GatewaySink gets them; the others do not, and
// keep working unchanged. [Multi], [Async], [SlogSink], [Aggregate] and
// package otelsink's Sink implement it.
//
// RecordGateway is called concurrently, like [Sink.Record], and must be
// safe for concurrent use. It is called once per event, in the order of the
// events of one goroutine; records of different sessions may interleave. Its
// errors are for the caller to count or log, as those of Record; they never
// fail a call.
type GatewaySink interface {
	RecordGateway(ctx context.Context, r GatewayRecord) error
}

// RecordGateway gives r to s if s is a [GatewaySink], turning a panic into
// an error; it returns nil without doing anything when s is nil or not a
// GatewaySink.
func RecordGateway(ctx context.Context, s Sink, r GatewayRecord) error {
	gs, ok := s.(GatewaySink)
	if !ok {
		return nil
	}
	return safeRecordGateway(ctx, gs, r)
}

func safeRecordGateway(ctx context.Context, s GatewaySink, r GatewayRecord) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("telemetry: sink %T panicked: %v", s, v)
		}
	}()
	return s.RecordGateway(ctx, r)
}

// RecordGateway sends r to every sink that is a [GatewaySink], in order;
// like Record, a sink that fails or panics does not stop the others.
func (m multi) RecordGateway(ctx context.Context, r GatewayRecord) error {
	var errs []error
	for _, s := range m {
		if err := RecordGateway(ctx, s, r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
