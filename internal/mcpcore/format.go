package mcpcore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/telemetry"
)

// unshaped is what [Shaper.ShapeResult] sends of a result at most the
// threshold: the result as it is, or, for a tool with an output format
// ([ctxfit.Endpoint.OutputFormat]), its compact rendering when the Guard
// sends one and the whole result is then smaller than the tool's. The
// rendering is the structured content and the text block in place of the
// text blocks that carried it (or of the one text block that is JSON),
// with its guidance line and the details cursor in _meta
// ([MetaDetailsCursor]), which the details tool follows to the original.
// A failure of the Guard sends the result as it is: it is within budget.
func (s *Shaper) unshaped(ctx context.Context, call Call, raw json.RawMessage, w *wire, b budget.Budget) Shaped {
	if call.read || !s.hasFormat(call.Tool) {
		return Shaped{Result: raw}
	}
	blocks := readBlocks(w.get("content"))
	texts := 0
	for _, bl := range blocks {
		if bl.kind != "text" {
			return Shaped{Result: raw} // media, links: the format renders JSON
		}
		texts++
	}
	body, blk, what := w.get("structuredContent"), 0, "structured"
	if len(body) == 0 || string(body) == "null" || !IsObject(body) {
		if texts != 1 || !json.Valid([]byte(blocks[0].text)) {
			return Shaped{Result: raw}
		}
		body, blk, what = json.RawMessage(blocks[0].text), 1, "block"
	}
	res, err := s.handle(ctx, call, blk, b, body, "application/json")
	if err != nil || res.Strategy != telemetry.StrategyFormat {
		return Shaped{Result: raw}
	}
	sh := &shaping{s: s, ctx: ctx, call: call, raw: raw, b: b, in: w, blocks: blocks, toolMeta: w.get("_meta")}
	sh.tokens = s.count(raw, blocks, -1)
	sh.out = &wire{}
	for _, m := range w.members {
		if m.key != "_meta" {
			sh.out.members = append(sh.out.members, m)
		}
	}
	list, _ := marshal(append([]json.RawMessage{shapedBlock(res.Body, what)}, s.guidance(res, true)...))
	sh.out.set("content", list)
	if blk == 0 {
		sh.out.set("structuredContent", res.Body)
	}
	out, ok, err := sh.seal([]ctxfit.Result{res})
	if err != nil || !ok || out.Tokens >= sh.tokens {
		return Shaped{Result: raw} // the rendering with its envelope would not be smaller
	}
	return out
}

// hasFormat reports whether the Guard renders tool's results with an output
// format.
func (s *Shaper) hasFormat(tool string) bool {
	cfg := s.Guard.Config()
	if cfg.Wrapper.CompactOutput != nil && !*cfg.Wrapper.CompactOutput {
		return false
	}
	for _, ep := range cfg.Endpoints {
		if ep.Match == tool {
			return ep.OutputFormat != nil && !ep.Disabled
		}
	}
	return false
}

// renderingGuidance rewrites the guidance line of a compact rendering (the
// rendering whole, or a chunk of it): the engine's sentence names the HTTP
// way to the original; the line names the details tool instead.
func renderingGuidance(line string, res ctxfit.Result, names Names) string {
	i := strings.Index(line, " The original JSON:")
	if i < 0 || res.Details == "" {
		return line
	}
	in, _ := marshal(DetailsInput{Cursor: res.Details, Fields: "all"})
	return line[:i] + fmt.Sprintf(" For the original JSON call %s with %s.", names.details(), in)
}
