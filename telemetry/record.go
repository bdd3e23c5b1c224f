package telemetry

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// Strategy is what was done to a response: one of the Strategy constants.
// It is written to JSON, slog and OpenTelemetry as its string.
type Strategy string

// Strategies: the values of [Record.Strategy], what was done to a response.
const (
	// StrategyPassthrough: the response was handed on as it was.
	StrategyPassthrough Strategy = "passthrough"
	// StrategyPagination: a list was cut into pages with a cursor.
	StrategyPagination Strategy = "pagination"
	// StrategySummary: records were projected to their summary fields.
	StrategySummary Strategy = "summary"
	// StrategyChunking: a text was split into chunks with a cursor.
	StrategyChunking Strategy = "chunking"
	// StrategyCut: the last resort, a byte cut at the hard cap.
	StrategyCut Strategy = "cut"
	// StrategySearch: the matches of a search in a shaped response.
	StrategySearch Strategy = "search"
	// StrategyQuery: the results of a jq query over a response.
	StrategyQuery Strategy = "query"
	// StrategyFormat: the compact rendering of an endpoint's output format
	// (ctxfit.OutputFormat), with a cursor to the original.
	StrategyFormat Strategy = "format"
	// StrategyError: shaping failed and an error was returned.
	StrategyError Strategy = "error"
)

// Outcome is how a request ended: one of the Outcome constants. It is
// written to JSON, slog and OpenTelemetry as its string.
type Outcome string

// Outcomes: the values of [Record.Outcome], how the request ended.
const (
	// OutcomePassthrough: under the threshold, not shaped.
	OutcomePassthrough Outcome = "passthrough"
	// OutcomeShaped: over the threshold and shaped within budget.
	OutcomeShaped Outcome = "shaped"
	// OutcomeOversize: an oversized attempt, a response over the hard cap
	// before shaping.
	OutcomeOversize Outcome = "oversize"
	// OutcomeRejected: bad input (a tampered or expired cursor, a bad
	// limit); the client got a 400 or its JSON-RPC equivalent.
	OutcomeRejected Outcome = "rejected"
	// OutcomeFallback: shaping could not run as configured (timeout, parse
	// error) and a cruder limit was applied; [Record.Fallback] says why.
	OutcomeFallback Outcome = "fallback"
	// OutcomeBypass: not shaped by design: not JSON, streamed, or larger
	// than the buffer limit.
	OutcomeBypass Outcome = "bypass"
)

// EstimateTolerance is the relative error within which an estimate counts as
// accurate: the goal is estimates within 20% of the exact count for 90%
// of responses.
const EstimateTolerance = 0.20

// ErrInvalidRecord is wrapped by the errors of [Record.Validate].
var ErrInvalidRecord = errors.New("telemetry: invalid record")

// Record describes one response ctxfit handled. The first block of fields is
// what a response is (its sizes and the strategies used); the rest is what
// the engine adds: sizes before and after shaping and how it went.
//
// TokensAfter and BytesAfter are the sizes of what was sent, so the engine
// sets EstimatedTokens to TokensAfter and ResponseBytes to BytesAfter; both
// names stay in the record's JSON, and [Aggregate] reads the After fields.
//
// The zero Record is valid and describes an empty response. A Record is a
// value; copying it shares OptimizationMetadata, which nobody may modify
// once the record has been handed to a [Sink].
//
// In JSON, Latency is written as latencyMs, a number of milliseconds with a
// fractional part, and the optional fields are omitted when unset.
type Record struct {
	// RequestID correlates the record with traces and logs.
	RequestID string `json:"requestId"`
	// Endpoint is the route pattern or MCP tool name, not the raw path, so
	// that it has few distinct values.
	Endpoint string `json:"endpoint"`
	// Timestamp is when the request arrived. Zero means unknown; the
	// [Aggregate] then uses the time it received the record.
	Timestamp time.Time `json:"timestamp"`
	// EstimatedTokens is the token count of the response sent.
	EstimatedTokens int `json:"estimatedTokens"`
	// ResponseBytes is the size of the response sent.
	ResponseBytes int `json:"responseBytes"`
	// ItemCount is the number of items returned, for lists.
	ItemCount int `json:"itemCount"`
	// Latency is the time spent counting and shaping.
	Latency time.Duration `json:"-"`
	// PaginationUsed, SummarizationUsed and ChunkingUsed say which
	// strategies shaped the response. Pagination and chunking exclude each
	// other; a summary may be paginated.
	PaginationUsed    bool `json:"paginationUsed"`
	SummarizationUsed bool `json:"summarizationUsed"`
	ChunkingUsed      bool `json:"chunkingUsed"`
	// OptimizationMetadata holds further details (page size, chunk index,
	// projected fields). Nil means none.
	OptimizationMetadata map[string]any `json:"optimizationMetadata,omitempty"`

	// TokensBefore and TokensAfter are the token counts of the response as
	// the handler produced it and as it was sent.
	TokensBefore int `json:"tokensBefore"`
	TokensAfter  int `json:"tokensAfter"`
	// TokensBeforeEstimated says TokensBefore is an estimate: the engine
	// counts a response exactly up to its hard cap only, and estimates
	// the rest from an exact count of a prefix, so that no request counts
	// a large response whole.
	TokensBeforeEstimated bool `json:"tokensBeforeEstimated,omitempty"`
	// BytesBefore and BytesAfter are the same sizes in bytes.
	BytesBefore int `json:"bytesBefore"`
	BytesAfter  int `json:"bytesAfter"`
	// ReductionPercent is 100·(TokensBefore−TokensAfter)/TokensBefore, as
	// [ReductionPercent] computes it; 0 when nothing was saved.
	ReductionPercent float64 `json:"reductionPercent"`
	// HardCap is the hard cap in force for the request; 0 means unknown.
	// With it a record tells an oversized attempt by its sizes alone (see
	// [Record.Oversize]).
	HardCap int `json:"hardCap,omitempty"`
	// Strategy is what was done: one of the Strategy constants.
	Strategy Strategy `json:"strategy"`
	// Outcome is how the request ended: one of the Outcome constants.
	Outcome Outcome `json:"outcome"`
	// Fallback is the reason a fallback was taken ("timeout",
	// "invalid_json", ...); empty means none.
	Fallback string `json:"fallback,omitempty"`
	// ErrorType is the problem code of a request that ended in an error
	// ("cursor_expired", "store_unavailable": the Code of ctxfit.Problem); empty
	// means none. Sinks report it as OpenTelemetry's error.type, so that
	// store outages can be told from clients' bad cursors.
	ErrorType string `json:"errorType,omitempty"`
	// Compare marks an A/B comparison: the response was passed through
	// unshaped and the After fields record what shaping would have sent.
	Compare bool `json:"compare,omitempty"`
	// EstimateError is the relative error of the token estimator against an
	// exact count ([RelativeError]), for the sampled responses; nil means
	// not sampled.
	EstimateError *float64 `json:"estimateError,omitempty"`
	// CacheHit says whether the response came from a cache; nil means no
	// cache was consulted.
	CacheHit *bool `json:"cacheHit,omitempty"`
}

// Validate checks a record's rules: latency, byte sizes, token counts
// and item count are not negative, and at most one of pagination and
// chunking was used. Its errors wrap [ErrInvalidRecord]; all the broken rules
// are reported, joined.
func (r Record) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidRecord}, args...)...))
	}
	if r.Latency < 0 {
		bad("latency %v is negative", r.Latency)
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"responseBytes", r.ResponseBytes},
		{"bytesBefore", r.BytesBefore},
		{"bytesAfter", r.BytesAfter},
		{"itemCount", r.ItemCount},
		{"estimatedTokens", r.EstimatedTokens},
		{"tokensBefore", r.TokensBefore},
		{"tokensAfter", r.TokensAfter},
		{"hardCap", r.HardCap},
	} {
		if f.v < 0 {
			bad("%s %d is negative", f.name, f.v)
		}
	}
	if r.PaginationUsed && r.ChunkingUsed {
		bad("pagination and chunking both used")
	}
	return errors.Join(errs...)
}

// Oversize reports whether r is an oversized attempt: its outcome is
// [OutcomeOversize], or the response was over its hard cap before shaping.
func (r Record) Oversize() bool {
	return r.Outcome == OutcomeOversize || (r.HardCap > 0 && r.TokensBefore > r.HardCap)
}

// TokensSaved returns TokensBefore − TokensAfter; it is negative when shaping
// added more (envelope, cursor) than it removed.
func (r Record) TokensSaved() int { return r.TokensBefore - r.TokensAfter }

// ReductionPercent returns 100·(before−after)/before, the share of tokens
// shaping removed; 0 when before is not positive or nothing was removed.
func ReductionPercent(before, after int) float64 {
	if before <= 0 || after >= before {
		return 0
	}
	return 100 * float64(before-after) / float64(before)
}

// recordAlias has Record's fields without its methods, so that the JSON
// methods can use the default encoding for everything but latency.
type recordAlias Record

type recordJSON struct {
	recordAlias
	LatencyMs float64 `json:"latencyMs"`
}

// MarshalJSON writes r with camelCase names and Latency as latencyMs.
func (r Record) MarshalJSON() ([]byte, error) {
	return json.Marshal(recordJSON{recordAlias(r), durationMs(r.Latency)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *Record) UnmarshalJSON(b []byte) error {
	var v recordJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("telemetry: record: %w", err)
	}
	*r = Record(v.recordAlias)
	r.Latency = time.Duration(math.Round(v.LatencyMs * float64(time.Millisecond)))
	return nil
}

func durationMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
