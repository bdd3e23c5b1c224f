// Package settings holds the types of ctxfit's serializable settings:
// [Config], with its per-endpoint overrides ([Endpoint]), the request
// parameter names ([Params]), the output formats ([OutputFormat],
// [WrapperConfig]) and [Duration], and the defaults of every field.
//
// The root package ctxfit uses them under the same names (ctxfit.Config is
// settings.Config); package config loads and watches them from files and
// the environment. This package imports neither, so that reading settings
// does not pull in the engine.
package settings

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/go-playground/validator/v10"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/pagination"
	"github.com/ctxfit/ctxfit/summary"
)

// Defaults of the guard's settings.
const (
	DefaultThreshold      = budget.DefaultThreshold // 4,000 tokens
	DefaultHardCap        = budget.DefaultHardCap   // 12,000 tokens
	DefaultPageSize       = 50
	DefaultMaxPageSize    = pagination.MaxLimit // 200
	DefaultChunkTokens    = 2000
	DefaultCursorTTL      = cursor.DefaultTTL // 10 minutes
	DefaultShapeTimeout   = 2 * time.Second
	DefaultMaxBufferBytes = 8 << 20  // 8 MiB
	DefaultStoreMaxBytes  = 64 << 20 // 64 MiB
	DefaultStoreMaxItems  = 10000
	// DefaultMaxShapingBytes bounds the bytes of the responses being
	// shaped at once, across requests.
	DefaultMaxShapingBytes = 256 << 20 // 256 MiB
	DefaultAdmissionWait   = 2 * time.Second
	// ResultSizeCharsPerToken is the characters a token of the hard cap
	// counts for in the default MaxResultSizeChars.
	ResultSizeCharsPerToken = 8
	// MinHardCap is the smallest hard cap a Config may set: a page with
	// its cursors and budget fields, and an error document, need room.
	MinHardCap = 500
)

// Config is the serializable part of the guard's settings: what an operator
// sets in code, in CTXFIT_* environment variables or in a JSON or YAML file
// (package config loads and watches those). Every zero field means its
// documented default, so the zero Config is the default configuration.
//
// A Config is a plain value; copy it freely. Validate checks it.
type Config struct {
	// Threshold is the token count above which a response is shaped.
	// Zero means 4,000. CTXFIT_THRESHOLD.
	Threshold int `json:"threshold,omitempty" yaml:"threshold,omitempty" validate:"gte=0"`
	// HardCap is the token count no shaped response exceeds. Zero means
	// 12,000 (or Threshold, if larger). CTXFIT_HARD_CAP.
	HardCap int `json:"hardCap,omitempty" yaml:"hardCap,omitempty" validate:"gte=0"`
	// PageSize is the default page limit. Zero means 50. CTXFIT_PAGE_SIZE.
	PageSize int `json:"pageSize,omitempty" yaml:"pageSize,omitempty" validate:"gte=0"`
	// MaxPageSize is the largest limit a client may ask for. Zero means 200.
	// CTXFIT_MAX_PAGE_SIZE.
	MaxPageSize int `json:"maxPageSize,omitempty" yaml:"maxPageSize,omitempty" validate:"gte=0"`
	// ChunkTokens is the token size of a text chunk. Zero means 2,000.
	// CTXFIT_CHUNK_TOKENS.
	ChunkTokens int `json:"chunkTokens,omitempty" yaml:"chunkTokens,omitempty" validate:"gte=0"`
	// Encoding is the tiktoken encoding: "o200k_base" (the default) or
	// "cl100k_base". CTXFIT_ENCODING.
	Encoding string `json:"encoding,omitempty" yaml:"encoding,omitempty" validate:"omitempty,oneof=o200k_base cl100k_base"`
	// CursorTTL is how long a cursor stays valid. Zero means 10 minutes.
	// CTXFIT_CURSOR_TTL (a Go duration such as "10m").
	CursorTTL Duration `json:"cursorTTL,omitempty" yaml:"cursorTTL,omitempty" validate:"gte=0"`
	// Secret signs cursors; at least 32 characters (bytes for ASCII). Empty means a random
	// per-process key (cursors then do not survive a restart nor work across
	// instances, and the guard logs a warning). CTXFIT_SECRET.
	Secret string `json:"secret,omitempty" yaml:"secret,omitempty" validate:"omitempty,min=32"`
	// PreviousSecrets still verify cursors signed before a rotation.
	// CTXFIT_PREVIOUS_SECRETS (comma-separated).
	PreviousSecrets []string `json:"previousSecrets,omitempty" yaml:"previousSecrets,omitempty" validate:"dive,min=32"`
	// Mode is how continuations find their data: "store" (the default; the
	// full response is kept in the store for the cursor's lifetime) or
	// "replay" (stateless; the handler runs again and a data fingerprint is
	// checked). CTXFIT_MODE.
	Mode Mode `json:"mode,omitempty" yaml:"mode,omitempty" validate:"omitempty,oneof=store replay"`
	// ShapeTimeout bounds the time spent counting and shaping one response;
	// past it the work stops and the response is sent as a byte cut from
	// its start (lossless, recorded as a fallback); a query, search, fields
	// or lines request gets a lossless part of its answer the same way (a
	// byte cut, or a search page bounded by bytes), and only a jq query or
	// projection not done in time a retryable 503 (shaping_timeout). Never the
	// response over budget. Zero means 2 s.
	// CTXFIT_SHAPE_TIMEOUT.
	ShapeTimeout Duration `json:"shapeTimeout,omitempty" yaml:"shapeTimeout,omitempty" validate:"gte=0"`
	// MaxBufferBytes is the largest response the HTTP middleware buffers to
	// shape (decoded, when it is compressed); a larger one is not sent,
	// since it would be over the hard cap: the client gets a 502
	// response_too_large problem, unless the handler streams the response
	// (flushing before it ends). Zero means 8 MiB.
	// CTXFIT_MAX_BUFFER_BYTES.
	MaxBufferBytes int `json:"maxBufferBytes,omitempty" yaml:"maxBufferBytes,omitempty" validate:"gte=0"`
	// MaxConcurrentShaping bounds the responses counted and shaped at once
	// (a response no longer than the threshold in bytes, which passes
	// through uncounted, takes no part). Zero means GOMAXPROCS, the CPUs
	// the process may use. CTXFIT_MAX_CONCURRENT_SHAPING.
	MaxConcurrentShaping int `json:"maxConcurrentShaping,omitempty" yaml:"maxConcurrentShaping,omitempty" validate:"gte=0"`
	// MaxShapingBytes bounds the bytes of the responses being counted and
	// shaped at once, across requests. Zero means 256 MiB.
	// CTXFIT_MAX_SHAPING_BYTES.
	MaxShapingBytes int64 `json:"maxShapingBytes,omitempty" yaml:"maxShapingBytes,omitempty" validate:"gte=0"`
	// MaxShapingPerSubject bounds the responses of one subject (a session,
	// a credential: Request.Subject) counted and shaped at once, so that
	// one client's heavy requests leave room under MaxConcurrentShaping for
	// the others: a request beyond it waits for one of its subject's own,
	// up to AdmissionWait, then gets the same retryable 503 (shaping_busy).
	// Requests without a subject are bound by MaxConcurrentShaping only.
	// Zero means half of MaxConcurrentShaping, at least 1.
	// CTXFIT_MAX_SHAPING_PER_SUBJECT.
	MaxShapingPerSubject int `json:"maxShapingPerSubject,omitempty" yaml:"maxShapingPerSubject,omitempty" validate:"gte=0"`
	// AdmissionWait is how long a request waits for room under
	// MaxConcurrentShaping, MaxShapingBytes and MaxShapingPerSubject; past
	// it the request gets a retryable 503 (shaping_busy, Retry-After),
	// never a queue without bound. A request that finds room is admitted at once, however short
	// the wait. Zero means 2 s. CTXFIT_ADMISSION_WAIT.
	AdmissionWait Duration `json:"admissionWait,omitempty" yaml:"admissionWait,omitempty" validate:"gte=0"`
	// StoreMaxBytes and StoreMaxItems bound the in-memory snapshot store.
	// Zero means 64 MiB and 10,000. CTXFIT_STORE_MAX_BYTES,
	// CTXFIT_STORE_MAX_ITEMS.
	StoreMaxBytes int64 `json:"storeMaxBytes,omitempty" yaml:"storeMaxBytes,omitempty" validate:"gte=0"`
	StoreMaxItems int   `json:"storeMaxItems,omitempty" yaml:"storeMaxItems,omitempty" validate:"gte=0"`
	// StoreTimeout bounds each call to the Redis snapshot store: past it the
	// call fails as unavailable, so a stalled Redis costs a request at most
	// this long. Zero means store.DefaultTimeout (500 ms). It is read by the
	// programs that build the store (redisstore.Options.Timeout); a Reload
	// does not change it. CTXFIT_STORE_TIMEOUT.
	StoreTimeout Duration `json:"storeTimeout,omitempty" yaml:"storeTimeout,omitempty" validate:"gte=0"`
	// RedisURL is the Redis that keeps snapshots, shared by every instance
	// (redis://host:port/db); empty means the in-memory store. It is read by
	// the programs that build the Guard (redisstore.FromURL); a Reload does
	// not change the store. CTXFIT_REDIS_URL (redis://host:port/db); empty
	// means the in-memory store.
	RedisURL string `json:"redisURL,omitempty" yaml:"redisURL,omitempty"`
	// EstimateSample is the fraction of responses counted exactly as well
	// when the estimator is in use, to record its error. Zero means 0.01.
	// CTXFIT_ESTIMATE_SAMPLE.
	EstimateSample float64 `json:"estimateSample,omitempty" yaml:"estimateSample,omitempty" validate:"gte=0,lte=1"`
	// ImagePixelsPerToken, ImageMaxEdge and ImageMaxTokens count what a
	// model reads of an image in an MCP result (not its base64): it is
	// scaled down to ImageMaxEdge pixels on its long side, then costs
	// width x height / ImagePixelsPerToken tokens, at most ImageMaxTokens.
	// Zero means Anthropic's rule: 750 pixels a token, 1,568 pixels, 1,600
	// tokens. CTXFIT_IMAGE_PIXELS_PER_TOKEN, CTXFIT_IMAGE_MAX_EDGE,
	// CTXFIT_IMAGE_MAX_TOKENS.
	ImagePixelsPerToken int `json:"imagePixelsPerToken,omitempty" yaml:"imagePixelsPerToken,omitempty" validate:"gte=0"`
	ImageMaxEdge        int `json:"imageMaxEdge,omitempty" yaml:"imageMaxEdge,omitempty" validate:"gte=0"`
	ImageMaxTokens      int `json:"imageMaxTokens,omitempty" yaml:"imageMaxTokens,omitempty" validate:"gte=0"`
	// AudioTokensPerSecond is what a second of audio in an MCP result costs.
	// Zero means Gemini's rule: 32. CTXFIT_AUDIO_TOKENS_PER_SECOND.
	AudioTokensPerSecond int `json:"audioTokensPerSecond,omitempty" yaml:"audioTokensPerSecond,omitempty" validate:"gte=0"`
	// MaxResultSizeChars is what the MCP adapters tell clients of a
	// guarded tool's largest result, as _meta["anthropic/maxResultSizeChars"]
	// in tools/list (Claude Code reads it), so that a client does not
	// truncate or divert results ctxfit already fitted. Zero means
	// ResultSizeCharsPerToken (8) characters a token of the hard cap;
	// negative leaves it out.
	// CTXFIT_MAX_RESULT_SIZE_CHARS.
	MaxResultSizeChars int `json:"maxResultSizeChars,omitempty" yaml:"maxResultSizeChars,omitempty"`
	// CatalogBudget is the token count of the whole tools/list the proxy
	// and the gateway serve a model: over it they serve a budgeted catalog
	// instead (ctxfit's tools, ctxfit_find_tools, ctxfit_call_tool and the
	// most useful tools that fit); within it tools/list passes unchanged.
	// Zero means the hard cap; negative serves every definition whatever
	// the list's size. CTXFIT_CATALOG_BUDGET.
	CatalogBudget int `json:"catalogBudget,omitempty" yaml:"catalogBudget,omitempty"`
	// ToolBudget is the token count of one tool definition in a budgeted
	// catalog or an answer of ctxfit_find_tools: a longer definition is
	// trimmed (its description, then its schemas), with a ctxfit://r/...
	// link to the whole. Zero means an eighth of the catalog budget, at
	// least 300. CTXFIT_TOOL_BUDGET.
	ToolBudget int `json:"toolBudget,omitempty" yaml:"toolBudget,omitempty" validate:"gte=0"`
	// CatalogTools are the tools a budgeted catalog lists first, by name or
	// by tag (an OpenAPI operation's); the tools called most come next.
	// CTXFIT_CATALOG_TOOLS (comma-separated).
	CatalogTools []string `json:"catalogTools,omitempty" yaml:"catalogTools,omitempty"`
	// Params names the request parameters the guard reads.
	Params Params `json:"params,omitempty" yaml:"params,omitempty"`
	// Endpoints override the settings per HTTP route pattern or MCP tool
	// name; the first match wins.
	Endpoints []Endpoint `json:"endpoints,omitempty" yaml:"endpoints,omitempty" validate:"dive"`
	// Wrapper sets how the endpoints' output formats (Endpoint.OutputFormat)
	// are applied, measured and logged. The zero value means its defaults.
	Wrapper WrapperConfig `json:"wrapper,omitzero" yaml:"wrapper,omitempty"`
	// Gateway holds the route maps of ctxfit gateway, read at start-up
	// (a change takes a restart); its flags --include, --exclude,
	// --resource and --name add to them. The zero value serves every
	// operation as a tool named from the document.
	Gateway GatewayRoutes `json:"gateway,omitzero" yaml:"gateway,omitempty"`
}

// GatewayRoutes select, map and name the operations of an OpenAPI
// document that ctxfit gateway serves. An entry is an operationId, a tag,
// a path pattern ("/items/*") or a method and a path pattern
// ("GET /items/{id}"); an entry that selects no operation is an error at
// start-up.
type GatewayRoutes struct {
	// Include selects the operations served. Empty means all of them.
	Include []string `json:"include,omitempty" yaml:"include,omitempty"`
	// Exclude leaves out the operations it selects, after Include. Empty
	// means none.
	Exclude []string `json:"exclude,omitempty" yaml:"exclude,omitempty"`
	// Resources serves the GET operations it selects (whose only required
	// parameters are path parameters) as MCP resources rather than tools:
	// a resource, or a resource template when the path has parameters.
	// Empty means none.
	Resources []string `json:"resources,omitempty" yaml:"resources,omitempty"`
	// Names renames tools and resources: a key is an operationId, a tool
	// name or "METHOD /path", its value the name. Empty means the names
	// from the document.
	Names map[string]string `json:"names,omitempty" yaml:"names,omitempty"`
}

// WrapperConfig sets how output formats are applied: the MCP-wrapper data
// model's WrapperConfig, whose names it keeps. The zero value means the
// defaults: compact output on, no metrics, failures and slow runs logged to
// the Guard's logger, a slow threshold of 50 ms and a time limit of 100 ms.
// It is a plain value.
type WrapperConfig struct {
	// CompactOutput answers a response that an endpoint's OutputFormat
	// applies to with its compact rendering; false sends the response as
	// the other strategies shape it. Nil means true.
	CompactOutput *bool `json:"compactOutput,omitempty" yaml:"compactOutput,omitempty"`
	// CollectMetrics appends a line of TokenMetrics (summary.Metrics:
	// operation, timestamp, rawBytes, compactBytes, savingsPercent,
	// rawTokens and compactTokens, processingTimeMs, usedFallback) to
	// MetricsFile for every response a format was tried on; when the
	// rendering was not sent (it failed, was not smaller, or did not fit)
	// usedFallback is true and the compact figures are the original's.
	// rawTokens and compactTokens are the data model's
	// estimatedTokensBefore and estimatedTokensAfter, counted exactly
	// rather than estimated as characters/4. False means no metrics.
	CollectMetrics bool `json:"collectMetrics,omitempty" yaml:"collectMetrics,omitempty"`
	// MetricsFile is the JSON Lines file of the metrics, absolute or
	// relative to the working directory; required when CollectMetrics is
	// set. It is opened once, for appending; a failed write is logged and
	// never fails a request.
	MetricsFile string `json:"metricsFile,omitempty" yaml:"metricsFile,omitempty"`
	// LogFile is the JSON Lines file of the transformation log: a line per
	// format that failed or timed out (level "error"), ran slower than
	// SlowThresholdMs (level "warn"), or whose rendering was not sent for
	// its size (level "info", the reason in error). Its operation,
	// timestamp, inputSize (rawBytes), processingTimeMs and usedFallback
	// are those of the same run's metrics line. Empty means the Guard's
	// logger (info entries at debug level).
	LogFile string `json:"logFile,omitempty" yaml:"logFile,omitempty"`
	// SlowThresholdMs is the processing time, in milliseconds, past which
	// a format's run is logged as slow; less than TimeoutMs. Zero means 50.
	SlowThresholdMs int `json:"slowThresholdMs,omitempty" yaml:"slowThresholdMs,omitempty" validate:"gte=0"`
	// TimeoutMs is the time limit, in milliseconds, of one format's run:
	// past it the response is shaped as if it had no format. At most 100.
	// Zero means 100.
	TimeoutMs int `json:"timeoutMs,omitempty" yaml:"timeoutMs,omitempty" validate:"gte=0,lte=100"`
}

// Defaults of [WrapperConfig].
const (
	DefaultSlowThresholdMs = 50
	DefaultFormatTimeoutMs = 100
)

// SlowThreshold is SlowThresholdMs with its default applied.
func (w WrapperConfig) SlowThreshold() time.Duration {
	return time.Duration(cmp.Or(w.SlowThresholdMs, DefaultSlowThresholdMs)) * time.Millisecond
}

// Timeout is TimeoutMs with its default applied.
func (w WrapperConfig) Timeout() time.Duration {
	return time.Duration(cmp.Or(w.TimeoutMs, DefaultFormatTimeoutMs)) * time.Millisecond
}

// OutputFormat is an endpoint's compact rendering of its JSON responses,
// as summary.Format holds it.
// The template is a Go text/template over the response projected on
// ExtractFields, e.g. "Found {{len .nodes}} entities for {{.args.query}}:\n{{range .nodes}}- {{.name}}\n{{end}}"
// (see summary.Format for its functions): .args are the call's arguments
// (an MCP tool call's, or the request's Filters). A field the response
// lacks renders as empty unless listed in RequiredFields. The zero value
// is not valid.
type OutputFormat struct {
	// FormatID names the format (letters, digits and underscores) in the
	// metrics and the log. Empty means the endpoint's match, with every
	// other character replaced by an underscore.
	FormatID string `json:"formatId,omitempty" yaml:"formatId,omitempty"`
	// Template is the text/template source; it must hold at least one
	// placeholder such as {{.name}}.
	Template string `json:"template" yaml:"template" validate:"required"`
	// ExtractFields are the paths of the fields the template sees (dotted,
	// through arrays: "nodes.name"); at least one.
	ExtractFields []string `json:"extractFields" yaml:"extractFields" validate:"min=1,dive,required"`
	// RequiredFields are the ExtractFields the rendering cannot do
	// without: a response that lacks one is shaped as if there were no
	// format, with a transformation log entry naming it. Empty means every
	// field is optional (a missing one renders as empty).
	RequiredFields []string `json:"requiredFields,omitempty" yaml:"requiredFields,omitempty"`
	// Transforms rewrite fields before the template sees them, by path:
	// "relativeTime", "truncateUuid" or "truncateText:N". Empty means none.
	Transforms map[string]string `json:"transforms,omitempty" yaml:"transforms,omitempty"`
	// MaxLength is the largest number of characters of the rendering;
	// longer text is cut at a word boundary. Zero means no limit.
	MaxLength int `json:"maxLength,omitempty" yaml:"maxLength,omitempty" validate:"gte=0"`
}

// SummaryFormat is f as the summary.Format of the endpoint match: its
// FormatID, or else match with every character other than a letter, a
// digit or an underscore replaced by an underscore.
func (f *OutputFormat) SummaryFormat(match string) summary.Format {
	id := f.FormatID
	if id == "" {
		id = nonID.ReplaceAllString(match, "_")
	}
	return summary.Format{ID: id, Template: f.Template, Fields: f.ExtractFields, Required: f.RequiredFields, MaxLength: f.MaxLength, FieldTransforms: f.Transforms}
}

var nonID = regexp.MustCompile(`[^A-Za-z0-9_]`)

// compile compiles f alone, under the operation match, counting with an
// estimate: what validation needs.
func (f *OutputFormat) compile(match string) (*summary.Formatter, error) {
	return summary.NewFormatter(map[string]summary.Format{match: f.SummaryFormat(match)}, &summary.FormatOptions{Counter: budget.Estimator{}})
}

// Params names the request parameters the guard reads. Empty names mean the
// defaults: cursor, limit, fields, startLine, endLine, part, search,
// searchPath, searchContext, jq.
type Params struct {
	Cursor    string `json:"cursor,omitempty" yaml:"cursor,omitempty"`
	Limit     string `json:"limit,omitempty" yaml:"limit,omitempty"`
	Fields    string `json:"fields,omitempty" yaml:"fields,omitempty"`
	StartLine string `json:"startLine,omitempty" yaml:"startLine,omitempty"`
	EndLine   string `json:"endLine,omitempty" yaml:"endLine,omitempty"`
	Part      string `json:"part,omitempty" yaml:"part,omitempty"`
	// Search, SearchPath and SearchContext find what matches in a
	// response (see [Search]): the RE2 pattern (inline flags such as (?i)
	// and \Q...\E work), the dotted path of the field of each item to
	// match, and the lines of context. Query is a jq expression (see
	// Request.Query).
	Search        string `json:"search,omitempty" yaml:"search,omitempty"`
	SearchPath    string `json:"searchPath,omitempty" yaml:"searchPath,omitempty"`
	SearchContext string `json:"searchContext,omitempty" yaml:"searchContext,omitempty"`
	Query         string `json:"query,omitempty" yaml:"query,omitempty"`
	// Format asks for a page format (see [FormatTOON]).
	Format string `json:"format,omitempty" yaml:"format,omitempty"`
}

// Endpoint overrides the settings for one route pattern or tool. Zero
// numbers and nil switches inherit from the Config.
type Endpoint struct {
	// Match is an HTTP route pattern in net/http ServeMux syntax
	// ("GET /api/v1/bookings/{id}") or an MCP tool name ("list_bookings").
	Match string `json:"match" yaml:"match" validate:"required"`
	// Disabled turns the guard off for this endpoint: responses pass through.
	Disabled bool `json:"disabled,omitempty" yaml:"disabled,omitempty"`
	// Compare is the A/B switch: when set, responses pass through unshaped
	// (and are recorded as they would have been shaped), for comparison.
	Compare     bool `json:"compare,omitempty" yaml:"compare,omitempty"`
	Threshold   int  `json:"threshold,omitempty" yaml:"threshold,omitempty" validate:"gte=0"`
	HardCap     int  `json:"hardCap,omitempty" yaml:"hardCap,omitempty" validate:"gte=0"`
	PageSize    int  `json:"pageSize,omitempty" yaml:"pageSize,omitempty" validate:"gte=0"`
	MaxPageSize int  `json:"maxPageSize,omitempty" yaml:"maxPageSize,omitempty" validate:"gte=0"`
	ChunkTokens int  `json:"chunkTokens,omitempty" yaml:"chunkTokens,omitempty" validate:"gte=0"`
	// Pagination, Summary and Chunking switch each strategy (feature flags
	// for gradual rollout); nil inherits (all on).
	Pagination *bool `json:"pagination,omitempty" yaml:"pagination,omitempty"`
	Summary    *bool `json:"summary,omitempty" yaml:"summary,omitempty"`
	Chunking   *bool `json:"chunking,omitempty" yaml:"chunking,omitempty"`
	// ArrayPath names the array to page in an object response (dotted path,
	// e.g. "data.items"); empty means detected.
	ArrayPath string `json:"arrayPath,omitempty" yaml:"arrayPath,omitempty"`
	// SummaryFields are the projection paths of a summary; empty means
	// automatic selection.
	SummaryFields []string `json:"summaryFields,omitempty" yaml:"summaryFields,omitempty"`
	// SummaryTopN cut arrays to their best elements before a summary
	// projects or selects its fields (summary.TopN): for example the three
	// highest-accuracy traits of each animal, each at least 50. Empty
	// means none.
	SummaryTopN []TopN `json:"summaryTopN,omitempty" yaml:"summaryTopN,omitempty" validate:"dive"`
	// DetailsEndpoint is the drill-down template, e.g. "/api/v1/bookings/{id}";
	// empty means the request path.
	DetailsEndpoint string `json:"detailsEndpoint,omitempty" yaml:"detailsEndpoint,omitempty"`
	// Format is how pages of a list are written: "json" (the default: the
	// items as the server wrote them) or "toon" (FormatTOON).
	Format string `json:"format,omitempty" yaml:"format,omitempty" validate:"omitempty,oneof=json toon"`
	// OutputFormat, when set and Wrapper.CompactOutput is on, answers a
	// JSON response of any size with its compact rendering, with a details
	// cursor that leads to the original, when the answer is smaller than
	// the response and within the hard cap (a rendering over the threshold
	// in chunks, the first with the details cursor); nil means none.
	OutputFormat *OutputFormat `json:"outputFormat,omitempty" yaml:"outputFormat,omitempty"`
}

// TopN keeps the best elements of an array of a summarized response: the
// N that score highest in the Score field, none below Min.
type TopN struct {
	// Path is the dotted path of the array ("animals.traits" applies to
	// the traits of every animal).
	Path string `json:"path" yaml:"path" validate:"required"`
	// Score is the field of each element that holds its score.
	Score string `json:"score" yaml:"score" validate:"required"`
	// N is the largest number of elements kept; it must be > 0.
	N int `json:"n" yaml:"n" validate:"gt=0"`
	// Min is the lowest score kept; zero keeps every non-negative score.
	Min float64 `json:"min,omitempty" yaml:"min,omitempty"`
}

// Formats of pages (Endpoint.Format, Request.Format).
const (
	// FormatJSON writes a page's items as the server wrote them.
	FormatJSON = "json"
	// FormatTOON writes a page of a list of uniform objects as TOON
	// (package toon): a header of field names and a row per item, about a
	// third fewer tokens, so that a page holds more items. The page is
	// {"toon":"...","nextCursor":...,"meta":{...,"format":"toon"}}; decoding
	// its toon text gives the items' values exactly (not their bytes:
	// white space and escapes are TOON's). A page that TOON cannot write
	// exactly, or would not make smaller, is written as JSON.
	FormatTOON = "toon"
)

// Duration is a time.Duration that reads and writes as a Go duration string
// ("10m", "1.5s") in JSON and YAML; JSON numbers are read as seconds.
type Duration time.Duration

// MarshalText writes d as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("ctxfit: duration %q: want a Go duration such as \"10m\" or \"30s\"", b)
	}
	*d = Duration(v)
	return nil
}

// maxDurationSeconds bounds durations read as numbers (about 290 years).
const maxDurationSeconds = float64(1<<63-1) / float64(time.Second)

// UnmarshalJSON reads a duration string, or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var secs float64
	if err := json.Unmarshal(b, &secs); err == nil {
		if secs < 0 || secs > maxDurationSeconds {
			return fmt.Errorf("ctxfit: duration %s seconds is out of range: want 0 to %.0f seconds", b, maxDurationSeconds)
		}
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("ctxfit: duration %s: want a string such as \"10m\" or a number of seconds", b)
	}
	return d.UnmarshalText([]byte(s))
}

var validate = validator.New(validator.WithRequiredStructEnabled())

// Validate reports every invalid field of c, naming the field and the rule,
// for example `ctxfit: config: hardCap 100 must be >= threshold 4000`.
func (c Config) Validate() error {
	var msgs []string
	if err := validate.Struct(c); err != nil {
		var verrs validator.ValidationErrors
		if !errors.As(err, &verrs) {
			return fmt.Errorf("ctxfit: config: %w", err)
		}
		for _, fe := range verrs {
			msgs = append(msgs, fieldMessage(fe))
		}
	}
	if c.HardCap != 0 && c.HardCap < c.threshold() {
		msgs = append(msgs, fmt.Sprintf("hardCap %d must be >= threshold %d", c.HardCap, c.threshold()))
	}
	if hc := c.hardCap(); hc < MinHardCap && hc >= c.threshold() {
		msgs = append(msgs, fmt.Sprintf("hardCap %d must be >= %d (a page's cursors and budget fields, and an error document, need room)", hc, MinHardCap))
	}
	if c.PageSize > c.maxPageSize() {
		msgs = append(msgs, fmt.Sprintf("pageSize %d must be <= maxPageSize %d", c.PageSize, c.maxPageSize()))
	}
	for i, e := range c.Endpoints {
		th := cmp.Or(e.Threshold, c.threshold())
		if ps, mx := cmp.Or(e.PageSize, c.PageSize), cmp.Or(e.MaxPageSize, c.maxPageSize()); ps > mx {
			msgs = append(msgs, fmt.Sprintf("endpoints[%d] (%s): pageSize %d must be <= maxPageSize %d", i, e.Match, ps, mx))
		}
		if e.HardCap != 0 && e.HardCap < th {
			msgs = append(msgs, fmt.Sprintf("endpoints[%d] (%s): hardCap %d must be >= threshold %d", i, e.Match, e.HardCap, th))
		}
		if e.HardCap != 0 && e.HardCap < MinHardCap {
			msgs = append(msgs, fmt.Sprintf("endpoints[%d] (%s): hardCap %d must be >= %d", i, e.Match, e.HardCap, MinHardCap))
		}
		if e.OutputFormat != nil {
			if _, err := e.OutputFormat.compile(e.Match); err != nil {
				msgs = append(msgs, fmt.Sprintf("endpoints[%d] (%s): outputFormat: %v", i, e.Match, err))
			}
		}
		for j := range i {
			if c.Endpoints[j].Match == e.Match {
				msgs = append(msgs, fmt.Sprintf("endpoints[%d]: match %q repeats endpoints[%d]", i, e.Match, j))
			}
		}
	}
	if w := c.Wrapper; w.SlowThreshold() >= w.Timeout() {
		msgs = append(msgs, fmt.Sprintf("wrapper.slowThresholdMs %d must be < wrapper.timeoutMs %d (a run is logged as slow before it times out)",
			w.SlowThreshold().Milliseconds(), w.Timeout().Milliseconds()))
	}
	if w := c.Wrapper; w.CollectMetrics && w.MetricsFile == "" {
		msgs = append(msgs, "wrapper.metricsFile is required when wrapper.collectMetrics is true: name the JSON Lines file of the metrics")
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("ctxfit: config: %s", strings.Join(msgs, "; "))
}

func (c Config) threshold() int   { return cmp.Or(c.Threshold, DefaultThreshold) }
func (c Config) hardCap() int     { return cmp.Or(c.HardCap, max(DefaultHardCap, c.threshold())) }
func (c Config) maxPageSize() int { return cmp.Or(c.MaxPageSize, DefaultMaxPageSize) }

// fieldMessage turns a validator error into "<jsonName> <value> must be ...".
func fieldMessage(fe validator.FieldError) string {
	name := fe.Namespace()
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[i+1:] // drop "Config."
	}
	name = jsonName(name)
	switch fe.Tag() {
	case "gte":
		return fmt.Sprintf("%s %v must be >= %s", name, fe.Value(), fe.Param())
	case "lte":
		return fmt.Sprintf("%s %v must be <= %s", name, fe.Value(), fe.Param())
	case "min":
		if fe.Kind() == reflect.Slice {
			return fmt.Sprintf("%s must list at least %s entries", name, fe.Param())
		}
		return fmt.Sprintf("%s must be at least %s bytes long (use a random secret of 32 bytes or more)", name, fe.Param())
	case "oneof":
		return fmt.Sprintf("%s %q must be one of: %s", name, fe.Value(), fe.Param())
	case "required":
		return fmt.Sprintf("%s is required", name)
	default:
		return fmt.Sprintf("%s fails rule %q", name, fe.Tag())
	}
}

// jsonName lower-cases the first letter of each path element:
// "Endpoints[0].HardCap" -> "endpoints[0].hardCap".
func jsonName(path string) string {
	parts := strings.Split(path, ".")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToLower(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, ".")
}

// Mode is how continuations find their data: the type of [Config.Mode].
type Mode string

// Modes of [Config.Mode].
const (
	ModeStore  Mode = "store"
	ModeReplay Mode = "replay"
)
