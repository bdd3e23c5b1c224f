package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ctxfit/ctxfit/config/settings"
	"github.com/ctxfit/ctxfit/store"
)

// EnvVar describes one CTXFIT_* environment variable: the table behind
// [FromEnv] and the configuration table of docs/configuration.md.
type EnvVar struct {
	// Name is the variable, e.g. "CTXFIT_HARD_CAP".
	Name string
	// Field is the [settings.Config] field the variable sets, e.g. "HardCap",
	// dotted for a field of a section, e.g. "Wrapper.TimeoutMs"; empty for
	// CTXFIT_CONFIG (the file's path).
	Field string
	// Key is the field's name in JSON and YAML files, e.g. "hardCap" or
	// "wrapper.timeoutMs"; empty when Field is.
	Key string
	// Form is the expected form of the value, e.g. "integer".
	Form string
	// Default is the value used when neither the variable nor the file sets
	// the field.
	Default string
	// Description says what the setting does.
	Description string
	// Secret marks a value that is never echoed in errors or logs.
	Secret bool
}

// Environment variables named by other packages.
const (
	// EnvConfig names the variable holding the settings file's path.
	EnvConfig = "CTXFIT_CONFIG"
	// EnvRedisURL names the Redis snapshot store (settings.Config.RedisURL).
	EnvRedisURL = "CTXFIT_REDIS_URL"
)

// Forms of values, as EnvVar.Form reports them.
const (
	formInt      = "integer"
	formFraction = "number from 0 to 1"
	formDuration = "Go duration"
	formString   = "string"
	formList     = "comma-separated list"
	formPath     = "file path"
	formURL      = "URL"
	formBool     = "true or false"
	formMs       = "milliseconds"
)

var envVars = []EnvVar{
	{Name: "CTXFIT_THRESHOLD", Field: "Threshold", Key: "threshold", Form: formInt,
		Default:     strconv.Itoa(settings.DefaultThreshold),
		Description: "Token count above which a response is shaped."},
	{Name: "CTXFIT_HARD_CAP", Field: "HardCap", Key: "hardCap", Form: formInt,
		Default:     strconv.Itoa(settings.DefaultHardCap) + " (or the threshold, if larger)",
		Description: "Token count no shaped response exceeds; at least the threshold."},
	{Name: "CTXFIT_PAGE_SIZE", Field: "PageSize", Key: "pageSize", Form: formInt,
		Default:     strconv.Itoa(settings.DefaultPageSize),
		Description: "Default page limit; at most the maximum page size."},
	{Name: "CTXFIT_MAX_PAGE_SIZE", Field: "MaxPageSize", Key: "maxPageSize", Form: formInt,
		Default:     strconv.Itoa(settings.DefaultMaxPageSize),
		Description: "Largest page limit a client may ask for."},
	{Name: "CTXFIT_CHUNK_TOKENS", Field: "ChunkTokens", Key: "chunkTokens", Form: formInt,
		Default:     strconv.Itoa(settings.DefaultChunkTokens),
		Description: "Token size of a text chunk."},
	{Name: "CTXFIT_CURSOR_TTL", Field: "CursorTTL", Key: "cursorTTL", Form: formDuration,
		Default:     shortDuration(settings.DefaultCursorTTL),
		Description: "How long a cursor stays valid."},
	{Name: "CTXFIT_SECRET", Field: "Secret", Key: "secret", Form: formString,
		Default: "random per process", Secret: true,
		Description: "Key that signs cursors, at least 32 bytes; set it so cursors survive restarts and work across instances."},
	{Name: "CTXFIT_PREVIOUS_SECRETS", Field: "PreviousSecrets", Key: "previousSecrets", Form: formList,
		Default: "none", Secret: true,
		Description: "Former secrets that still verify cursors after a rotation, each at least 32 bytes."},
	{Name: "CTXFIT_ENCODING", Field: "Encoding", Key: "encoding", Form: formString,
		Default:     "o200k_base",
		Description: "Tokenizer: o200k_base or cl100k_base."},
	{Name: "CTXFIT_MODE", Field: "Mode", Key: "mode", Form: formString,
		Default:     "store",
		Description: "How continuations find their data: store (kept for the cursor's lifetime) or replay (the handler runs again)."},
	{Name: "CTXFIT_SHAPE_TIMEOUT", Field: "ShapeTimeout", Key: "shapeTimeout", Form: formDuration,
		Default:     shortDuration(settings.DefaultShapeTimeout),
		Description: "Time allowed to count and shape one response; past it the response is sent as a byte cut from its start (lossless, a cursor to the rest, recorded as a fallback), never over budget; a query, search, fields or lines request gets the same kind of lossless part of its answer (a byte cut of it, or a search page bounded by bytes); only a jq query or projection whose answer is not made in time gets a retryable 503 (shaping_timeout)."},
	{Name: "CTXFIT_MAX_BUFFER_BYTES", Field: "MaxBufferBytes", Key: "maxBufferBytes", Form: formInt,
		Default:     strconv.Itoa(settings.DefaultMaxBufferBytes) + " (8 MiB)",
		Description: "Largest HTTP response (decoded, when compressed) buffered for shaping; a larger one is not sent (it would be over the hard cap): a 502 response_too_large problem, unless its handler streams it (flushing before it ends)."},
	{Name: "CTXFIT_MAX_CONCURRENT_SHAPING", Field: "MaxConcurrentShaping", Key: "maxConcurrentShaping", Form: formInt,
		Default:     "GOMAXPROCS (the CPUs)",
		Description: "Responses counted and shaped at once; beyond it a request waits up to the admission wait, then gets a retryable 503 (shaping_busy)."},
	{Name: "CTXFIT_MAX_SHAPING_BYTES", Field: "MaxShapingBytes", Key: "maxShapingBytes", Form: formInt,
		Default:     strconv.Itoa(settings.DefaultMaxShapingBytes) + " (256 MiB)",
		Description: "Bytes of the responses being counted and shaped at once, across requests; beyond it as above."},
	{Name: "CTXFIT_MAX_SHAPING_PER_SUBJECT", Field: "MaxShapingPerSubject", Key: "maxShapingPerSubject", Form: formInt,
		Default:     "half of CTXFIT_MAX_CONCURRENT_SHAPING, at least 1",
		Description: "Responses of one subject (session, credential) counted and shaped at once, so one client cannot take every slot; beyond it as above."},
	{Name: "CTXFIT_ADMISSION_WAIT", Field: "AdmissionWait", Key: "admissionWait", Form: formDuration,
		Default:     shortDuration(settings.DefaultAdmissionWait),
		Description: "How long a request waits for room under the bounds above before its 503."},
	{Name: "CTXFIT_STORE_MAX_BYTES", Field: "StoreMaxBytes", Key: "storeMaxBytes", Form: formInt,
		Default:     strconv.Itoa(settings.DefaultStoreMaxBytes) + " (64 MiB)",
		Description: "Memory bound of the in-memory snapshot store."},
	{Name: "CTXFIT_STORE_MAX_ITEMS", Field: "StoreMaxItems", Key: "storeMaxItems", Form: formInt,
		Default:     strconv.Itoa(settings.DefaultStoreMaxItems),
		Description: "Item bound of the in-memory snapshot store."},
	{Name: "CTXFIT_STORE_TIMEOUT", Field: "StoreTimeout", Key: "storeTimeout", Form: formDuration,
		Default:     shortDuration(store.DefaultTimeout),
		Description: "Deadline of each call to the Redis snapshot store; past it the call fails as unavailable instead of waiting."},
	{Name: "CTXFIT_ESTIMATE_SAMPLE", Field: "EstimateSample", Key: "estimateSample", Form: formFraction,
		Default:     "0.01",
		Description: "Fraction of estimated responses also counted exactly, to record the estimator's error."},
	{Name: "CTXFIT_IMAGE_PIXELS_PER_TOKEN", Field: "ImagePixelsPerToken", Key: "imagePixelsPerToken", Form: formInt,
		Default:     "750",
		Description: "Pixels a token of an image in an MCP result covers (width x height / this), after scaling to the maximum edge."},
	{Name: "CTXFIT_IMAGE_MAX_EDGE", Field: "ImageMaxEdge", Key: "imageMaxEdge", Form: formInt,
		Default:     "1568",
		Description: "Longest side, in pixels, an image is scaled down to before it is counted."},
	{Name: "CTXFIT_IMAGE_MAX_TOKENS", Field: "ImageMaxTokens", Key: "imageMaxTokens", Form: formInt,
		Default:     "1600",
		Description: "Most tokens one image costs."},
	{Name: "CTXFIT_AUDIO_TOKENS_PER_SECOND", Field: "AudioTokensPerSecond", Key: "audioTokensPerSecond", Form: formInt,
		Default:     "32",
		Description: "Tokens a second of audio in an MCP result costs."},
	{Name: "CTXFIT_MAX_RESULT_SIZE_CHARS", Field: "MaxResultSizeChars", Key: "maxResultSizeChars", Form: formInt,
		Default:     "8 x the hard cap",
		Description: "Largest result of a guarded MCP tool, in characters, told to clients as _meta anthropic/maxResultSizeChars; negative leaves it out."},
	{Name: "CTXFIT_CATALOG_BUDGET", Field: "CatalogBudget", Key: "catalogBudget", Form: formInt,
		Default:     "the hard cap",
		Description: "Tokens of the whole tools/list the proxy and the gateway serve; over it they serve ctxfit's tools, ctxfit_find_tools, ctxfit_call_tool and the most useful tools that fit; negative serves every definition."},
	{Name: "CTXFIT_TOOL_BUDGET", Field: "ToolBudget", Key: "toolBudget", Form: formInt,
		Default:     "an eighth of the catalog budget, at least 300",
		Description: "Tokens of one tool definition in a budgeted catalog or a ctxfit_find_tools answer; a longer one is trimmed, with a ctxfit://r/... link to the whole."},
	{Name: "CTXFIT_CATALOG_TOOLS", Field: "CatalogTools", Key: "catalogTools", Form: formList,
		Default:     "none",
		Description: "Tools, by name or tag, a budgeted catalog lists first; the tools called most come next."},
	{Name: "CTXFIT_COMPACT_OUTPUT", Field: "Wrapper.CompactOutput", Key: "wrapper.compactOutput", Form: formBool,
		Default:     "true",
		Description: "Answer a JSON response of any size with its endpoint's output format (outputFormat) when that is smaller and fits; false shapes it as if there were none."},
	{Name: "CTXFIT_COLLECT_METRICS", Field: "Wrapper.CollectMetrics", Key: "wrapper.collectMetrics", Form: formBool,
		Default:     "false",
		Description: "Append a JSON line of token metrics per formatted response to the metrics file."},
	{Name: "CTXFIT_METRICS_FILE", Field: "Wrapper.MetricsFile", Key: "wrapper.metricsFile", Form: formPath,
		Default:     "none",
		Description: "JSON Lines file of the output formats' token metrics; required when collecting them."},
	{Name: "CTXFIT_FORMAT_LOG_FILE", Field: "Wrapper.LogFile", Key: "wrapper.logFile", Form: formPath,
		Default:     "none (the Guard's logger)",
		Description: "JSON Lines file of the transformation log: output formats that failed or ran slowly."},
	{Name: "CTXFIT_SLOW_THRESHOLD_MS", Field: "Wrapper.SlowThresholdMs", Key: "wrapper.slowThresholdMs", Form: formMs,
		Default:     strconv.Itoa(settings.DefaultSlowThresholdMs),
		Description: "Processing time past which an output format's run is logged as slow; less than the format time limit."},
	{Name: "CTXFIT_FORMAT_TIMEOUT_MS", Field: "Wrapper.TimeoutMs", Key: "wrapper.timeoutMs", Form: formMs,
		Default:     strconv.Itoa(settings.DefaultFormatTimeoutMs),
		Description: "Time limit of an output format's run, at most 100; past it the response is shaped as if it had no format."},
	{Name: EnvConfig, Form: formPath,
		Default:     "none",
		Description: "JSON or YAML settings file read by Load and Watch; variables override it."},
	{Name: EnvRedisURL, Field: "RedisURL", Key: "redisURL", Form: formURL,
		Default: "none (in-memory store)", Secret: true,
		Description: "Redis that keeps snapshots, shared by every instance: redis://host:port/db; empty means the in-memory store."},
}

// shortDuration writes d without zero trailing units: "10m", not "10m0s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// EnvVars returns the CTXFIT_* environment variables in the order of docs/configuration.md's table. The
// slice is a copy; changing it changes nothing.
func EnvVars() []EnvVar { return slices.Clone(envVars) }

// EnvMarkdown renders [EnvVars] as the Markdown configuration table of docs/configuration.md.
func EnvMarkdown() string {
	var b strings.Builder
	b.WriteString("| Variable | File key | Form | Default | Description |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, v := range envVars {
		key := "—"
		if v.Key != "" {
			key = "`" + v.Key + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", v.Name, key, v.Form, v.Default, v.Description)
	}
	return b.String()
}

// FromEnv returns base with the settings that CTXFIT_* variables set laid
// over it, validated. getenv looks a variable up (nil means [os.Getenv]); an
// empty value leaves the setting as base has it. Spaces around a value, and
// around each entry of CTXFIT_PREVIOUS_SECRETS, are removed.
//
// Every malformed variable is reported, joined in one error that names the
// variable, the value (except for secrets) and the expected form.
// CTXFIT_CONFIG is not read here; [Load] reads it.
func FromEnv(base settings.Config, getenv func(string) string) (settings.Config, error) {
	c, set, err := overlayEnv(base, getenv)
	if err != nil {
		return base, err
	}
	if err := c.Validate(); err != nil {
		src := "the base settings"
		if len(set) > 0 {
			src = strings.Join(set, ", ")
		}
		return base, &invalidError{source: src, err: err}
	}
	return c, nil
}

// overlayEnv applies the variables to c without validating; set lists the
// variables that were applied.
func overlayEnv(c settings.Config, getenv func(string) string) (_ settings.Config, set []string, _ error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c = clone(c)
	var errs []error
	rv := reflect.ValueOf(&c).Elem()
	for _, v := range envVars {
		raw := getenv(v.Name)
		if v.Field == "" || raw == "" {
			continue
		}
		if err := setField(fieldOf(rv, v.Field), v, raw); err != nil {
			errs = append(errs, err)
			continue
		}
		set = append(set, v.Name)
	}
	if len(errs) > 0 {
		return c, nil, errors.Join(errs...)
	}
	return c, set, nil
}

var durationType = reflect.TypeFor[settings.Duration]()

// fieldOf returns the field of the struct value rv that a dotted
// EnvVar.Field names.
func fieldOf(rv reflect.Value, field string) reflect.Value {
	for name := range strings.SplitSeq(field, ".") {
		rv = rv.FieldByName(name)
	}
	return rv
}

// setField parses raw into f, which has the type of v's field.
func setField(f reflect.Value, v EnvVar, raw string) error {
	s := strings.TrimSpace(raw)
	bad := func(want string) error {
		if v.Secret {
			return fmt.Errorf("config: %s (value not shown) is malformed: want %s", v.Name, want)
		}
		return fmt.Errorf("config: %s=%q is malformed: want %s", v.Name, raw, want)
	}
	switch {
	case f.Type() == durationType:
		d, err := time.ParseDuration(s)
		if err != nil {
			return bad(`a Go duration such as "10m", "30s" or "1h30m"`)
		}
		f.SetInt(int64(d))
	case f.Kind() == reflect.String:
		f.SetString(s)
	case f.Kind() == reflect.Bool || f.Type() == reflect.TypeFor[*bool]():
		b, err := strconv.ParseBool(s)
		if err != nil {
			return bad("true or false")
		}
		if f.Kind() == reflect.Pointer {
			f.Set(reflect.ValueOf(&b))
		} else {
			f.SetBool(b)
		}
	case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
		n, err := strconv.ParseInt(s, 10, f.Type().Bits())
		if err != nil {
			return bad("a whole number such as " + strings.Fields(v.Default)[0])
		}
		f.SetInt(n)
	case f.Kind() == reflect.Float64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return bad("a number from 0 to 1 such as " + v.Default)
		}
		f.SetFloat(x)
	case f.Type() == reflect.TypeFor[[]string]():
		parts := strings.Split(s, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
			if parts[i] == "" {
				return bad(fmt.Sprintf("comma-separated values without empty entries (entry %d of %d is empty)", i+1, len(parts)))
			}
		}
		f.Set(reflect.ValueOf(parts))
	default:
		// Unreachable while TestEnvVars passes: every field in the table
		// has one of the types above.
		panic(fmt.Sprintf("config: no parser for %s of type %s", v.Name, f.Type()))
	}
	return nil
}
