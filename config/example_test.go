package config_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config"
)

func ExampleLoad() {
	// In a program: config.Load("", nil) reads CTXFIT_CONFIG and the
	// process environment.
	getenv := func(name string) string {
		return map[string]string{
			"CTXFIT_CONFIG":    "testdata/example.yaml",
			"CTXFIT_THRESHOLD": "6000", // variables win over the file
			"CTXFIT_HARD_CAP":  "16000",
		}[name]
	}
	c, err := config.Load("", getenv)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("threshold:", c.Threshold, "hardCap:", c.HardCap, "pageSize:", c.PageSize)
	fmt.Println("endpoints:", len(c.Endpoints), "first:", c.Endpoints[0].Match)
	// Output:
	// threshold: 6000 hardCap: 16000 pageSize: 50
	// endpoints: 3 first: GET /api/v1/bookings
}

func ExampleFromEnv() {
	getenv := func(name string) string {
		return map[string]string{"CTXFIT_CURSOR_TTL": "soon"}[name]
	}
	_, err := config.FromEnv(ctxfit.Config{}, getenv)
	fmt.Println(err)
	// Output:
	// config: CTXFIT_CURSOR_TTL="soon" is malformed: want a Go duration such as "10m", "30s" or "1h30m"
}

func ExampleParse() {
	_, err := config.Parse([]byte("threshold: 4000\nhardcap: 3000\n"), config.FormatYAML)
	fmt.Println(err)
	_, err = config.Parse([]byte(`{"threshold": 4000, "hardCap": 3000}`), config.FormatJSON)
	fmt.Println(err)
	// Output:
	// config: line 2: unknown field "hardcap": remove unknown fields or correct their spelling (the keys are the YAML names of ctxfit.Config's fields)
	// config: invalid settings from the JSON document: hardCap 3000 must be >= threshold 4000
}

func ExampleRedacted() {
	c := ctxfit.Config{Threshold: 3000, Secret: "0123456789abcdef0123456789abcdef"}
	fmt.Printf("%s %d\n", config.Redacted(c).Secret, config.Redacted(c).Threshold)
	// Output:
	// [redacted] 3000
}

func ExampleWatch() {
	dir, err := os.MkdirTemp("", "ctxfit")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ctxfit.yaml")
	if err := os.WriteFile(path, []byte("threshold: 4000\n"), 0o600); err != nil {
		log.Fatal(err)
	}

	changed := make(chan struct{})
	w, err := config.Watch(context.Background(), path, &config.WatchOptions{
		OnChange: func(old, new ctxfit.Config) {
			// An engine swaps its settings here; requests in flight
			// finish on the old ones.
			fmt.Println("threshold:", old.Threshold, "->", new.Threshold)
			close(changed)
		},
		Logger: slog.New(slog.DiscardHandler),
		Getenv: func(string) string { return "" },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	// Save the way editors do: write a new file, rename it over the old.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte("threshold: 3000\n"), 0o600); err != nil {
		log.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		log.Fatal(err)
	}
	<-changed
	fmt.Println("current:", w.Current().Threshold)
	// Output:
	// threshold: 4000 -> 3000
	// current: 3000
}

func ExampleEnvMarkdown() {
	fmt.Print(config.EnvMarkdown())
	// Output:
	// | Variable | File key | Form | Default | Description |
	// |---|---|---|---|---|
	// | `CTXFIT_THRESHOLD` | `threshold` | integer | 4000 | Token count above which a response is shaped. |
	// | `CTXFIT_HARD_CAP` | `hardCap` | integer | 12000 (or the threshold, if larger) | Token count no shaped response exceeds; at least the threshold. |
	// | `CTXFIT_PAGE_SIZE` | `pageSize` | integer | 50 | Default page limit; at most the maximum page size. |
	// | `CTXFIT_MAX_PAGE_SIZE` | `maxPageSize` | integer | 200 | Largest page limit a client may ask for. |
	// | `CTXFIT_CHUNK_TOKENS` | `chunkTokens` | integer | 2000 | Token size of a text chunk. |
	// | `CTXFIT_CURSOR_TTL` | `cursorTTL` | Go duration | 10m | How long a cursor stays valid. |
	// | `CTXFIT_SECRET` | `secret` | string | random per process | Key that signs cursors, at least 32 bytes; set it so cursors survive restarts and work across instances. |
	// | `CTXFIT_PREVIOUS_SECRETS` | `previousSecrets` | comma-separated list | none | Former secrets that still verify cursors after a rotation, each at least 32 bytes. |
	// | `CTXFIT_ENCODING` | `encoding` | string | o200k_base | Tokenizer: o200k_base or cl100k_base. |
	// | `CTXFIT_MODE` | `mode` | string | store | How continuations find their data: store (kept for the cursor's lifetime) or replay (the handler runs again). |
	// | `CTXFIT_SHAPE_TIMEOUT` | `shapeTimeout` | Go duration | 2s | Time allowed to count and shape one response; past it the response is sent as a byte cut from its start (lossless, a cursor to the rest, recorded as a fallback), never over budget; a query, search, fields or lines request gets the same kind of lossless part of its answer (a byte cut of it, or a search page bounded by bytes); only a jq query or projection whose answer is not made in time gets a retryable 503 (shaping_timeout). |
	// | `CTXFIT_MAX_BUFFER_BYTES` | `maxBufferBytes` | integer | 8388608 (8 MiB) | Largest HTTP response (decoded, when compressed) buffered for shaping; a larger one is not sent (it would be over the hard cap): a 502 response_too_large problem, unless its handler streams it (flushing before it ends). |
	// | `CTXFIT_MAX_CONCURRENT_SHAPING` | `maxConcurrentShaping` | integer | GOMAXPROCS (the CPUs) | Responses counted and shaped at once; beyond it a request waits up to the admission wait, then gets a retryable 503 (shaping_busy). |
	// | `CTXFIT_MAX_SHAPING_BYTES` | `maxShapingBytes` | integer | 268435456 (256 MiB) | Bytes of the responses being counted and shaped at once, across requests; beyond it as above. |
	// | `CTXFIT_MAX_SHAPING_PER_SUBJECT` | `maxShapingPerSubject` | integer | half of CTXFIT_MAX_CONCURRENT_SHAPING, at least 1 | Responses of one subject (session, credential) counted and shaped at once, so one client cannot take every slot; beyond it as above. |
	// | `CTXFIT_ADMISSION_WAIT` | `admissionWait` | Go duration | 2s | How long a request waits for room under the bounds above before its 503. |
	// | `CTXFIT_STORE_MAX_BYTES` | `storeMaxBytes` | integer | 67108864 (64 MiB) | Memory bound of the in-memory snapshot store. |
	// | `CTXFIT_STORE_MAX_ITEMS` | `storeMaxItems` | integer | 10000 | Item bound of the in-memory snapshot store. |
	// | `CTXFIT_STORE_TIMEOUT` | `storeTimeout` | Go duration | 500ms | Deadline of each call to the Redis snapshot store; past it the call fails as unavailable instead of waiting. |
	// | `CTXFIT_ESTIMATE_SAMPLE` | `estimateSample` | number from 0 to 1 | 0.01 | Fraction of estimated responses also counted exactly, to record the estimator's error. |
	// | `CTXFIT_IMAGE_PIXELS_PER_TOKEN` | `imagePixelsPerToken` | integer | 750 | Pixels a token of an image in an MCP result covers (width x height / this), after scaling to the maximum edge. |
	// | `CTXFIT_IMAGE_MAX_EDGE` | `imageMaxEdge` | integer | 1568 | Longest side, in pixels, an image is scaled down to before it is counted. |
	// | `CTXFIT_IMAGE_MAX_TOKENS` | `imageMaxTokens` | integer | 1600 | Most tokens one image costs. |
	// | `CTXFIT_AUDIO_TOKENS_PER_SECOND` | `audioTokensPerSecond` | integer | 32 | Tokens a second of audio in an MCP result costs. |
	// | `CTXFIT_MAX_RESULT_SIZE_CHARS` | `maxResultSizeChars` | integer | 8 x the hard cap | Largest result of a guarded MCP tool, in characters, told to clients as _meta anthropic/maxResultSizeChars; negative leaves it out. |
	// | `CTXFIT_CATALOG_BUDGET` | `catalogBudget` | integer | the hard cap | Tokens of the whole tools/list the proxy and the gateway serve; over it they serve ctxfit's tools, ctxfit_find_tools, ctxfit_call_tool and the most useful tools that fit; negative serves every definition. |
	// | `CTXFIT_TOOL_BUDGET` | `toolBudget` | integer | an eighth of the catalog budget, at least 300 | Tokens of one tool definition in a budgeted catalog or a ctxfit_find_tools answer; a longer one is trimmed, with a ctxfit://r/... link to the whole. |
	// | `CTXFIT_CATALOG_TOOLS` | `catalogTools` | comma-separated list | none | Tools, by name or tag, a budgeted catalog lists first; the tools called most come next. |
	// | `CTXFIT_COMPACT_OUTPUT` | `wrapper.compactOutput` | true or false | true | Answer a JSON response of any size with its endpoint's output format (outputFormat) when that is smaller and fits; false shapes it as if there were none. |
	// | `CTXFIT_COLLECT_METRICS` | `wrapper.collectMetrics` | true or false | false | Append a JSON line of token metrics per formatted response to the metrics file. |
	// | `CTXFIT_METRICS_FILE` | `wrapper.metricsFile` | file path | none | JSON Lines file of the output formats' token metrics; required when collecting them. |
	// | `CTXFIT_FORMAT_LOG_FILE` | `wrapper.logFile` | file path | none (the Guard's logger) | JSON Lines file of the transformation log: output formats that failed or ran slowly. |
	// | `CTXFIT_SLOW_THRESHOLD_MS` | `wrapper.slowThresholdMs` | milliseconds | 50 | Processing time past which an output format's run is logged as slow; less than the format time limit. |
	// | `CTXFIT_FORMAT_TIMEOUT_MS` | `wrapper.timeoutMs` | milliseconds | 100 | Time limit of an output format's run, at most 100; past it the response is shaped as if it had no format. |
	// | `CTXFIT_CONFIG` | — | file path | none | JSON or YAML settings file read by Load and Watch; variables override it. |
	// | `CTXFIT_REDIS_URL` | `redisURL` | URL | none (in-memory store) | Redis that keeps snapshots, shared by every instance: redis://host:port/db; empty means the in-memory store. |
}
