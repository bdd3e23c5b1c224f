package ctxfit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/chunk"
	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/pagination"
	"github.com/ctxfit/ctxfit/summary"
	"github.com/ctxfit/ctxfit/telemetry"
)

const jsonType = "application/json"

// finish checks a shaped body against the hard cap, adds the budget
// metadata and fills the record. A body over the hard cap is replaced by
// the byte-bounded cut of data.
func (g *Guard) finish(ctx context.Context, e *engine, r *rules, req Request, out []byte, data []byte, strategy string, rec telemetry.Record) (Result, error) {
	out, tokens := withBudget(out, e.counter, r.budget)
	if tokens > r.budget.HardCap {
		return g.cutAt(ctx, e, r, req, data, 0, 0, "", rec)
	}
	rec = withSizes(rec, string(out), tokens, strategy, telemetry.OutcomeShaped)
	if rec.TokensBefore > r.budget.HardCap {
		rec.Outcome = telemetry.OutcomeOversize
	}
	switch strategy {
	case telemetry.StrategyPagination:
		rec.PaginationUsed = true
	case telemetry.StrategySummary:
		rec.SummarizationUsed = true
	case telemetry.StrategyChunking, telemetry.StrategyCut:
		rec.ChunkingUsed = true
	}
	return Result{Body: out, ContentType: jsonType, Shaped: true, Strategy: strategy, Record: rec}, nil
}

// withBudget adds estimatedTokens, budgetUsed and budgetRemaining to the
// last object of a shaped response (its meta or metadata), and returns the
// response with its exact count. estimatedTokens is that count: the whole
// response's, the three fields included.
func withBudget(out []byte, c budget.Counter, b budget.Budget) ([]byte, int) {
	end := bytes.LastIndexByte(out, '}')
	if end < 0 {
		return out, c.Count(string(out))
	}
	at := end
	if prev := bytes.LastIndexByte(out[:end], '}'); prev >= 0 && len(bytes.TrimSpace(out[prev+1:end])) == 0 {
		at = prev // the response ends with its meta object: add the fields there
	}
	// The fields count themselves: guess the total from the parts, then
	// count the whole; a guess off by the merges at the seam takes another
	// round. budgetUsed has a fixed width, so only a number gaining a digit
	// can move the count again; should no count describe itself, the
	// metadata is off by a token and n is still the response's exact count.
	n := c.Count(string(out))
	n += c.Count(budgetFields(b.Usage(n)))
	res := make([]byte, 0, len(out)+96)
	for range 4 {
		res = append(res[:0], out[:at]...)
		res = append(res, budgetFields(b.Usage(n))...)
		res = append(res, out[at:]...)
		got := c.Count(string(res))
		if got == n {
			break
		}
		n = got
	}
	return res, n
}

func budgetFields(u budget.Usage) string {
	return fmt.Sprintf(`,"estimatedTokens":%d,"budgetUsed":%s,"budgetRemaining":%d`,
		u.EstimatedTokens, strconv.FormatFloat(u.BudgetUsed, 'f', 3, 64), u.BudgetRemaining)
}

// page serves a budget-fitted page of the array at path in data (nil path:
// data is the array).
func (g *Guard) page(ctx context.Context, e *engine, r *rules, req Request, data []byte, path []string, offset int64, sealed string, rec telemetry.Record) (Result, error) {
	if sealed == "" {
		ref, err := g.snapshot(ctx, e, data)
		if err != nil {
			return Result{}, err
		}
		sealed = ref + "|" + strings.Join(path, ".")
	}
	array := data
	b := r.budget
	b.Threshold = max(b.Threshold-budgetMetaTokens, minPageTokens) // room for the budget fields
	if path != nil {
		var err error
		if array, err = lookup(data, path); err != nil {
			return g.cutAt(ctx, e, r, req, data, 0, 0, "", rec)
		}
		rest, err := splice(data, path, []byte("[]"), "")
		if err != nil {
			return g.cutAt(ctx, e, r, req, data, 0, 0, "", rec)
		}
		// The page's share of the budget is what the rest of the object
		// leaves, less room for nextCursor and meta.
		b.Threshold = max(b.Threshold-e.counter.Count(string(rest))-pageExtraTokens, minPageTokens)
		b.HardCap = max(b.HardCap, b.Threshold)
	}
	pager, err := pagination.NewPager(e.codec, &pagination.Options{Counter: e.counter, Budget: b,
		DefaultLimit: r.pageSize, MaxLimit: r.maxPageSize})
	if err != nil {
		return Result{}, err
	}
	pg, err := pager.PaginateJSON(array, pagination.Request{Limit: req.Limit, Cursor: req.Cursor},
		pagination.Query{Scope: req.Endpoint, Subject: req.Subject, Order: req.Order, Filters: req.Filters, Snapshot: sealed})
	if errors.Is(err, pagination.ErrItemTooLarge) || errors.Is(err, pagination.ErrNotArray) {
		return g.cutAt(ctx, e, r, req, data, 0, 0, "", rec)
	}
	if err != nil {
		return Result{}, fmt.Errorf("ctxfit: %w", err)
	}
	var out []byte
	if path == nil {
		if out, err = json.Marshal(pg); err != nil {
			return Result{}, err
		}
	} else {
		items, err := json.Marshal(pg.Items)
		if err != nil {
			return Result{}, err
		}
		meta, err := json.Marshal(pg.Meta)
		if err != nil {
			return Result{}, err
		}
		next := "null"
		if pg.NextCursor != "" {
			next = strconv.Quote(pg.NextCursor)
		}
		if out, err = splice(data, path, items, `"nextCursor":`+next+`,"meta":`+string(meta)); err != nil {
			return g.cutAt(ctx, e, r, req, data, 0, 0, "", rec)
		}
	}
	rec.ItemCount = len(pg.Items)
	rec.OptimizationMetadata = map[string]any{"pageSize": len(pg.Items), "totalCount": pg.Meta.TotalCount, "offset": offset}
	res, err := g.finish(ctx, e, r, req, out, data, telemetry.StrategyPagination, rec)
	if err != nil || res.Strategy != telemetry.StrategyPagination {
		return res, err
	}
	res.Next = pg.NextCursor
	what := "items"
	if len(path) > 0 {
		what = path[len(path)-1]
	}
	switch {
	case len(pg.Items) == 0:
		res.Summary = fmt.Sprintf("No more %s (%d in all).", what, pg.Meta.TotalCount)
	default:
		res.Summary = fmt.Sprintf("Showing %s %d-%d of %d (%s tokens; budget %s).", what, offset+1, offset+int64(len(pg.Items)),
			pg.Meta.TotalCount, thousands(res.Record.TokensAfter), thousands(r.budget.Threshold))
	}
	return res, nil
}

const (
	budgetMetaTokens = 32  // the estimatedTokens, budgetUsed and budgetRemaining fields
	pageExtraTokens  = 120 // nextCursor and meta beside a paged array
	minPageTokens    = 200
)

// summarize serves a summary of a large object with a drill-down link.
func (g *Guard) summarize(ctx context.Context, e *engine, r *rules, req Request, resp Response, rec telemetry.Record) (Result, error) {
	shape := r.shape
	if shape.Endpoint == "" {
		shape.Endpoint = req.Path
	}
	s, err := r.summarizer.Summarize(resp.Body, shape)
	if err != nil {
		return Result{}, err
	}
	if !s.Summarized {
		return passThrough(resp, rec.TokensBefore), nil
	}
	res, err := g.finish(ctx, e, r, req, s.Response, resp.Body, telemetry.StrategySummary, rec)
	if err != nil || res.Strategy != telemetry.StrategySummary {
		return res, err
	}
	res.Summary = fmt.Sprintf("Showing a summary (%s of %s tokens; budget %s).", thousands(res.Record.TokensAfter),
		thousands(rec.TokensBefore), thousands(r.budget.Threshold))
	if d := s.Summary.Meta.DetailsAvailable; d != nil {
		res.Summary += fmt.Sprintf(" For the left-out fields request %s with fields=%s (or fields=all).", d.Endpoint, d.Parameters["fields"])
	}
	return res, nil
}

// details serves an explicit drill-down: fields=all or named sections.
func (g *Guard) details(ctx context.Context, e *engine, r *rules, req Request, resp Response, tokens int, rec telemetry.Record) (Result, error) {
	out := resp.Body
	if req.Fields != summary.FieldsAll {
		var err error
		if out, err = summary.ServeDetails(resp.Body, req.Fields); err != nil {
			return Result{}, fmt.Errorf("ctxfit: %w", err)
		}
		tokens = e.counter.Count(string(out))
	}
	if tokens <= r.budget.HardCap {
		rec = withSizes(rec, string(out), tokens, telemetry.StrategyPassthrough, telemetry.OutcomePassthrough)
		return Result{Body: out, ContentType: jsonType, Shaped: req.Fields != summary.FieldsAll, Strategy: telemetry.StrategyPassthrough, Record: rec}, nil
	}
	// Asked for explicitly, but over the hard cap: continue in cuts.
	if req.Fields == summary.FieldsAll {
		return g.cutAt(ctx, e, r, req, out, 0, 0, "", rec)
	}
	ref, err := g.snapshot(ctx, e, resp.Body)
	if err != nil {
		return Result{}, err
	}
	return g.cutView(ctx, e, r, req, out, 0, 0, ref, ":fields="+req.Fields, rec)
}

// lines serves a line range of a text.
func (g *Guard) lines(ctx context.Context, e *engine, r *rules, req Request, resp Response) (Result, error) {
	text := string(resp.Body)
	rec := telemetry.Record{BytesBefore: len(text), TokensBefore: e.counter.Count(text)}
	start, end := req.StartLine, req.EndLine
	if start == 0 {
		start = 1
	}
	if end == 0 {
		end = chunk.TotalLines(text)
	}
	ch, err := chunk.Lines(text, start, end)
	if err != nil {
		return Result{}, fmt.Errorf("ctxfit: %w", err)
	}
	out, err := json.Marshal(ch)
	if err != nil {
		return Result{}, err
	}
	_, tokens := withBudget(out, e.counter, r.budget)
	if tokens > r.budget.HardCap {
		ref, err := g.snapshot(ctx, e, resp.Body)
		if err != nil {
			return Result{}, err
		}
		return g.cutView(ctx, e, r, req, []byte(ch.Content), 0, 0, ref, fmt.Sprintf(":lines=%d-%d", start, end), rec)
	}
	res, err := g.finish(ctx, e, r, req, out, []byte(ch.Content), telemetry.StrategyChunking, rec)
	if err == nil && res.Strategy == telemetry.StrategyChunking {
		res.Summary = fmt.Sprintf("Showing lines %d-%d of %d.", ch.Metadata.StartLine, ch.Metadata.EndLine, ch.Metadata.TotalLines)
	}
	return res, err
}

// chunkText serves a chunk of a text response.
func (g *Guard) chunkText(ctx context.Context, e *engine, r *rules, req Request, data []byte, text string, part, ref string, rec telemetry.Record) (Result, error) {
	if ref == "" {
		var err error
		if ref, err = g.snapshot(ctx, e, data); err != nil {
			return Result{}, err
		}
	}
	ch, err := r.chunker.Chunk(text, req.Cursor, chunk.Binding{Scope: req.Endpoint, Subject: req.Subject,
		Order: req.Order, Filters: req.Filters, Snapshot: ref + "|" + part})
	if err != nil {
		if errors.Is(err, chunk.ErrUnsplittable) {
			return g.cutAt(ctx, e, r, req, data, 0, 0, "", rec)
		}
		return Result{}, fmt.Errorf("ctxfit: %w", err)
	}
	out, err := json.Marshal(ch)
	if err != nil {
		return Result{}, err
	}
	rec.OptimizationMetadata = map[string]any{"chunkIndex": ch.ChunkIndex, "totalChunks": ch.TotalChunks}
	res, err := g.finish(ctx, e, r, req, out, data, telemetry.StrategyChunking, rec)
	if err != nil || res.Strategy != telemetry.StrategyChunking {
		return res, err
	}
	res.Next = ch.NextCursor
	res.Summary = fmt.Sprintf("Showing chunk %d of %d (lines %d-%d of %d; %s tokens; budget %s).", ch.ChunkIndex+1, ch.TotalChunks,
		ch.Metadata.StartLine, ch.Metadata.EndLine, ch.Metadata.TotalLines, thousands(res.Record.TokensAfter), thousands(r.budget.Threshold))
	return res, nil
}

// textOf returns the text to chunk for a snapshot part: the body itself
// ("text"), the JSON string it is ("string"), or the string value of a
// top-level field ("field:NAME").
func textOf(data []byte, part string) (string, error) {
	switch {
	case part == "text":
		return string(data), nil
	case part == "string":
		var s string
		err := json.Unmarshal(data, &s)
		return s, err
	case strings.HasPrefix(part, "field:"):
		ms, err := members(data)
		if err != nil {
			return "", err
		}
		for _, m := range ms {
			if m.key == part[len("field:"):] {
				var s string
				err := json.Unmarshal(m.val, &s)
				return s, err
			}
		}
		return "", fmt.Errorf("%w (field %q not found)", cursor.ErrInvalid, part[len("field:"):])
	}
	return "", fmt.Errorf("%w (unknown text reference)", cursor.ErrInvalid)
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// cutAt is the last resort: a byte-bounded slice of data from offset on,
// with a continuation cursor. It counts no tokens: a tiktoken token is at
// least one byte, so a response of at most HardCap bytes (content measured
// as JSON-escaped) holds at most HardCap tokens.
func (g *Guard) cutAt(ctx context.Context, e *engine, r *rules, req Request, data []byte, offset, index int64, ref string, rec telemetry.Record) (Result, error) {
	return g.cutView(ctx, e, r, req, data, offset, index, ref, "", rec)
}

// cutView is cutAt over a view of the snapshot: data is the view (a
// drill-down projection "fields=a,b" or a line range "lines=a-b") and ref
// the snapshot of the whole response, so a continuation can rebuild the view.
func (g *Guard) cutView(ctx context.Context, e *engine, r *rules, req Request, data []byte, offset, index int64, ref, view string, rec telemetry.Record) (Result, error) {
	if ref == "" {
		var err error
		if ref, err = g.snapshot(ctx, e, data); err != nil {
			return Result{}, err
		}
	}
	size := max(r.budget.HardCap-cutEnvelopeBytes, 16)
	if offset < 0 || offset > int64(len(data)) || (offset == int64(len(data)) && offset > 0) {
		return Result{}, fmt.Errorf("ctxfit: %w (offset out of range)", cursor.ErrInvalid)
	}
	start := int(offset)
	end := cutEnd(data, start, size)
	total := int(index)
	for at := start; at < len(data) || total == 0; at = cutEnd(data, at, size) {
		total++
		if at >= len(data) {
			break
		}
	}
	ch := chunk.ContentChunk{
		Content: string(data[start:end]), ChunkIndex: int(index), TotalChunks: max(total, int(index)+1),
		Metadata: chunk.Metadata{
			StartLine: 1 + bytes.Count(data[:start], []byte{'\n'}), TotalLines: chunk.TotalLines(string(data)),
			BytesInChunk: end - start,
		},
	}
	ch.Metadata.EndLine = ch.Metadata.StartLine + bytes.Count(bytes.TrimSuffix(data[start:end], []byte{'\n'}), []byte{'\n'})
	if end < len(data) {
		next, err := e.codec.Encode(cursor.Payload{Kind: cursor.KindChunk, Offset: int64(end), Index: index + 1,
			Scope: req.Endpoint, Subject: req.Subject, Order: req.Order, Filters: req.Filters, Snapshot: ref + "|cut" + view})
		if err != nil {
			return Result{}, fmt.Errorf("ctxfit: issuing the next cursor: %w", err)
		}
		ch.NextCursor = next
		ch.TotalChunks = max(ch.TotalChunks, ch.ChunkIndex+2)
	} else {
		ch.TotalChunks = ch.ChunkIndex + 1
	}
	out, err := json.Marshal(ch)
	if err != nil {
		return Result{}, err
	}
	out, tokens := withBudget(out, e.counter, r.budget)
	rec = withSizes(rec, string(out), min(len(out), tokens), telemetry.StrategyCut, telemetry.OutcomeShaped)
	if rec.TokensBefore > r.budget.HardCap {
		rec.Outcome = telemetry.OutcomeOversize
	}
	rec.ChunkingUsed = true
	rec.OptimizationMetadata = map[string]any{"chunkIndex": ch.ChunkIndex, "offset": start}
	return Result{Body: out, ContentType: jsonType, Shaped: true, Strategy: telemetry.StrategyCut, Next: ch.NextCursor, Record: rec,
		Summary: fmt.Sprintf("Showing bytes %d-%d of %d (part %d of %d; cut by size, budget %s tokens).",
			start+1, end, len(data), ch.ChunkIndex+1, ch.TotalChunks, thousands(r.budget.Threshold))}, nil
}

// cutEnvelopeBytes bounds the bytes a cut's ContentChunk adds to its
// content: field names, numbers, the cursor and the budget metadata.
const cutEnvelopeBytes = 600

// cutEnd returns where a cut from start ends: the content, escaped as a JSON
// string, takes at most size bytes; the cut ends at a newline in its last
// quarter if there is one, else at a rune boundary.
func cutEnd(data []byte, start, size int) int {
	end, n, lastNL := start, 0, -1
	for end < len(data) {
		r, w := utf8.DecodeRune(data[end:])
		n += escapedLen(r, w)
		if n > size {
			break
		}
		end += w
		if r == '\n' {
			lastNL = end
		}
	}
	if end == len(data) {
		return end
	}
	if lastNL > start && lastNL-start >= (end-start)*3/4 {
		return lastNL
	}
	if end == start { // a single rune larger than size: take it anyway
		_, w := utf8.DecodeRune(data[start:])
		end = start + w
	}
	return end
}

// escapedLen is the length of a rune of w bytes in a JSON string as
// encoding/json writes it (HTML-escaped, invalid bytes as \ufffd).
func escapedLen(r rune, w int) int {
	switch {
	case r == utf8.RuneError && w == 1:
		return 6
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029:
		return 6
	}
	return w
}

// view rebuilds the part of a snapshot a cut continues: the whole of it, a
// drill-down projection or a line range.
func view(data []byte, v string) ([]byte, error) {
	switch {
	case v == "":
		return data, nil
	case strings.HasPrefix(v, ":fields="):
		return summary.ServeDetails(data, v[len(":fields="):])
	case strings.HasPrefix(v, ":lines="):
		var a, b int
		if _, err := fmt.Sscanf(v[len(":lines="):], "%d-%d", &a, &b); err != nil {
			return nil, err
		}
		ch, err := chunk.Lines(string(data), a, b)
		if err != nil {
			return nil, err
		}
		return []byte(ch.Content), nil
	}
	return nil, fmt.Errorf("unknown view %q", v)
}
