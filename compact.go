package ctxfit

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/internal/rawjson"
	"github.com/ctxfit/ctxfit/summary"
	"github.com/ctxfit/ctxfit/telemetry"
)

// An endpoint's OutputFormat is a strategy tried first on every JSON
// response, whatever its size: the compact rendering, with a details
// cursor that leads back to the original, when the whole answer
// (rendering, cursor and budget fields) has fewer tokens than the response
// and is within the hard cap. The cursor costs about a hundred tokens, so
// that a very small response is sent as it is rather than grow. A
// rendering smaller than the response but over the threshold is shaped as
// any text is, in chunks (shaper.compactChunks), the first with the
// details cursor. When the format fails, times out or is not smaller,
// the response is shaped as if there were no format (passed through under
// the threshold, shaped over it): the original over the hard cap is never
// sent.

// compactRules are an endpoint's compiled output format.
type compactRules struct {
	op        string // the endpoint's match: the operation of metrics and logs
	formatter *summary.Formatter
	slow      time.Duration
	metrics   *jsonLines // nil without CollectMetrics
	log       *jsonLines // nil: the Guard's logger
}

// maxLoggedError bounds the error of a transformation log entry: a
// projection's error may list every field of the response.
const maxLoggedError = 500

// compactRules compiles ep's output format; nil when it has none or
// compact output is off.
func (g *Guard) compactRules(e *engine, ep Endpoint) (*compactRules, error) {
	w := e.cfg.Wrapper
	if ep.OutputFormat == nil || !on(w.CompactOutput) {
		return nil, nil
	}
	f, err := summary.NewFormatter(map[string]summary.Format{ep.Match: ep.OutputFormat.SummaryFormat(ep.Match)}, &summary.FormatOptions{
		Counter: e.counter,
		Timeout: w.Timeout(),
		Now:     g.now,
	})
	if err != nil {
		return nil, err
	}
	cr := &compactRules{op: ep.Match, formatter: f, slow: w.SlowThreshold()}
	if w.CollectMetrics {
		cr.metrics = g.lines.open(w.MetricsFile)
	}
	if w.LogFile != "" {
		cr.log = g.lines.open(w.LogFile)
	}
	return cr, nil
}

// compact serves the compact rendering of the response; ok is false when
// the response is to be shaped as if there were no format.
func (s *shaper) compact() (res Result, ok bool, err error) {
	cr := s.rl.compact
	start := s.g.now()
	text, rerr := cr.formatter.RenderArgs(s.ctx, cr.op, s.data, s.req.Filters)
	elapsed := max(s.g.since(start), 0)
	if rerr != nil && s.ctx.Err() != nil {
		return Result{}, true, errTimeout
	}
	m := summary.Metrics{
		Operation: cr.op, Timestamp: start, RawBytes: len(s.data), CompactBytes: len(s.data),
		RawTokens: s.rec.TokensBefore, CompactTokens: s.rec.TokensBefore,
		ProcessingTimeMs: float64(elapsed.Microseconds()) / 1000, UsedFallback: true,
	}
	if s.rec.TokensBeforeEstimated && cr.metrics != nil {
		// The metrics count exact tokens: a response over the hard cap is
		// counted whole only for them.
		m.RawTokens = s.e.counter.Count(string(s.data))
		m.CompactTokens = m.RawTokens
	}
	var why string // why a rendering was not sent, when it did not fail
	defer func() {
		if m.RawTokens > 0 {
			m.SavingsPercent = 100 * float64(m.RawTokens-m.CompactTokens) / float64(m.RawTokens)
		}
		if cr.metrics != nil {
			cr.metrics.write(s.g.logger, m)
		}
		s.logTransformation(cr, m, rerr, why, elapsed)
	}()
	if rerr != nil {
		return Result{}, false, nil
	}
	tokens := budget.CountUpTo(s.e.counter, text, max(s.rec.TokensBefore-1, 0))
	if tokens >= s.rec.TokensBefore {
		why = fmt.Sprintf("the rendering (%d tokens or more) is not smaller than the response (%d tokens)", tokens, s.rec.TokensBefore)
		return Result{}, false, nil
	}
	tok, err := s.cursorFor(ref{kind: contDetails, end: int64(len(s.data))})
	if errors.Is(err, errNoContinuation) {
		why = "no details cursor can lead back to the original now"
		return Result{}, false, nil // without a way back, the original would be lost
	}
	if err != nil {
		return Result{}, true, err
	}
	if tokens > s.rl.budget.Threshold {
		// Smaller than the response but over the threshold: the rendering
		// is shaped as any text is, in chunks.
		res, err = s.compactChunks(text, tok)
		if err != nil {
			return Result{}, true, err
		}
		m.CompactBytes, m.CompactTokens, m.UsedFallback = len(text), tokens, false
		return res, true, nil
	}
	out := append(make([]byte, 0, len(text)+len(tok)+128), `{"text":"`...)
	out, _ = rawjson.Escape(out, []byte(text))
	out = append(out, `","meta":{"format":"`...)
	out, _ = rawjson.Escape(out, []byte(cr.formatter.ID(cr.op)))
	out = append(out, `","originalTokens":`...)
	out = strconv.AppendInt(out, int64(s.rec.TokensBefore), 10)
	out = append(out, `,"detailsCursor":"`...)
	out = append(out, tok...)
	out = append(out, `"}}`...)
	res, err = s.finish(out, telemetry.StrategyFormat)
	if err == errOverCap {
		why = fmt.Sprintf("the rendering with its details cursor is over the hard cap (%d tokens)", s.rl.budget.HardCap)
		return Result{}, false, nil
	}
	if err != nil {
		return Result{}, true, err
	}
	if res.Record.TokensAfter >= s.rec.TokensBefore {
		why = fmt.Sprintf("the rendering with its details cursor (%d tokens) is not smaller than the response (%d tokens)", res.Record.TokensAfter, s.rec.TokensBefore)
		return Result{}, false, nil // a small response would grow
	}
	m.CompactBytes, m.CompactTokens, m.UsedFallback = len(text), tokens, false
	res.Details = tok
	about := ""
	if s.rec.TokensBeforeEstimated {
		about = "about "
	}
	res.Guidance = fmt.Sprintf("Showing a compact rendering (%s of %s%s tokens; budget %s). The original JSON: its details cursor (meta.detailsCursor) with fields=all.",
		thousands(res.Record.TokensAfter), about, thousands(s.rec.TokensBefore), thousands(s.rl.budget.Threshold))
	return res, true, nil
}

// viewFormat is the view of a snapshot that is the compact rendering of the
// response (in replay mode, a continuation renders the response again).
const viewFormat = "format"

// compactChunks serves the first chunk of text, the compact rendering of
// the response, which is over the threshold: the rendering becomes the
// snapshot its chunks' cursors continue (kept in the store, or rendered
// again in replay mode), and the first chunk carries details, the cursor
// that leads back to the original.
func (s *shaper) compactChunks(text, details string) (Result, error) {
	cr := s.rl.compact
	s.data, s.view, s.snap, s.id = []byte(text), viewFormat, nil, ""
	res, err := s.serveText(ref{kind: contChunk, end: int64(len(s.data)), form: chunk.FormEscaped}, layout{details: details})
	if err != nil {
		return Result{}, err
	}
	res.Details = details
	about := ""
	if s.rec.TokensBeforeEstimated {
		about = "about "
	}
	res.Guidance = strings.Replace(res.Guidance, "Showing chunk", "Showing a compact rendering's chunk", 1) +
		fmt.Sprintf(" The rendering (format %s) stands for %s%s tokens of JSON. The original JSON: its details cursor (detailsCursor) with fields=all.",
			cr.formatter.ID(cr.op), about, thousands(s.rec.TokensBefore))
	return res, nil
}

// rerender is, in replay mode, the view of a continuation of a compact
// rendering's chunks: the rendering of the response again, with the
// arguments args.
func (cr *compactRules) rerender(ctx context.Context, data, args []byte) ([]byte, error) {
	text, err := cr.formatter.RenderArgs(ctx, cr.op, data, args)
	if err != nil {
		return nil, err
	}
	return []byte(text), nil
}

// logTransformation writes the transformation log's entry of a format's
// run, if any: a failure (level error), a slow run (level warn), or a
// rendering that was not sent for another reason why (level info). The
// entry agrees with the run's metrics m: the same operation, timestamp,
// size (inputSize is rawBytes), processing time and usedFallback.
func (s *shaper) logTransformation(cr *compactRules, m summary.Metrics, rerr error, why string, elapsed time.Duration) {
	entry := summary.TransformationLog{Timestamp: m.Timestamp, Operation: cr.op, InputSize: m.RawBytes,
		ProcessingTimeMs: m.ProcessingTimeMs, UsedFallback: m.UsedFallback}
	switch {
	case rerr != nil:
		entry.Level, entry.Error = summary.LogError, shorten(rerr.Error(), maxLoggedError)
	case elapsed > cr.slow:
		entry.Level, entry.Error = summary.LogWarn, why
	case why != "":
		entry.Level, entry.Error = summary.LogInfo, why
	default:
		return
	}
	entry.ID = newUUID()
	if cr.log != nil {
		cr.log.write(s.g.logger, entry)
		return
	}
	level, msg := slog.LevelDebug, "ctxfit: output format's rendering not sent; the response is shaped as if it had none"
	switch entry.Level {
	case summary.LogError:
		level, msg = slog.LevelError, "ctxfit: output format failed; the response is shaped as if it had none"
	case summary.LogWarn:
		level, msg = slog.LevelWarn, "ctxfit: output format ran slowly"
	}
	attrs := []any{"operation", entry.Operation, "inputSize", entry.InputSize,
		"processingTimeMs", entry.ProcessingTimeMs, "usedFallback", entry.UsedFallback}
	if entry.Error != "" {
		attrs = append(attrs, "err", entry.Error)
	}
	s.g.logger.Log(s.ctx, level, msg, attrs...)
}

// jsonLinesFiles are the JSON Lines files of a Guard (metrics, logs), each
// opened once, on its first line, and closed by [Guard.Close]. It is safe
// for concurrent use.
type jsonLinesFiles struct {
	mu    sync.Mutex
	files map[string]*jsonLines
}

// open returns the file at path, the same one on every call.
func (fs *jsonLinesFiles) open(path string) *jsonLines {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.files == nil {
		fs.files = map[string]*jsonLines{}
	}
	f := fs.files[path]
	if f == nil {
		f = &jsonLines{path: path}
		fs.files[path] = f
	}
	return f
}

func (fs *jsonLinesFiles) close() error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var errs []error
	for _, f := range fs.files {
		errs = append(errs, f.close())
	}
	return errors.Join(errs...)
}

// jsonLines appends JSON values, one a line, to a file.
type jsonLines struct {
	path string
	mu   sync.Mutex
	f    *os.File
	err  error // of opening: reported once
	done bool  // opened (or failed to)
}

// write appends v as one line; a failure is logged, never returned.
func (l *jsonLines) write(logger *slog.Logger, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		logger.Warn("ctxfit: encoding a line of "+l.path, "err", err)
		return
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.done = true
		l.f, l.err = os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if l.err != nil {
			logger.Warn("ctxfit: cannot open "+l.path+"; its lines are dropped", "err", l.err)
		}
	}
	if l.f == nil {
		return
	}
	if _, err := l.f.Write(b); err != nil {
		logger.Warn("ctxfit: writing a line of "+l.path, "err", err)
	}
}

func (l *jsonLines) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done = true // no reopening after Close
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
