package mcpcore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/telemetry"
)

// Shaped is what [Shaper.ShapeResult] did.
type Shaped struct {
	// Result is the wire JSON to send: the input itself when nothing was
	// shaped.
	Result json.RawMessage
	// Shaped reports whether Result differs from the input.
	Shaped bool
	// Results are the Guard's results for the shaped bodies, in block
	// order (for telemetry and tests).
	Results []ctxfit.Result
	// Tokens and OriginalTokens are, for a shaped result, what a model
	// reads of Result and of the input by exact count (the JSON of the
	// result, images and audio by [MediaRule]); zero when not shaped.
	Tokens, OriginalTokens int
}

// Blocks of a result that are not one content block, as cursors and
// resource tokens carry them ([ctxfit.Request.Block], [BlockBody]): the
// whole result, its _meta, its content list.
const (
	blockWhole   = 1 << 30
	blockMeta    = blockWhole + 1
	blockContent = blockWhole + 2
)

// MetaHeldMeta is the key of a shaped result's _meta that stands for the
// tool's own _meta when it was too large to send: the ctxfit://r/ URI
// that reads it whole (string).
const MetaHeldMeta = "dev.ctxfit/heldMeta"

// shaping is the state of one [Shaper.ShapeResult] over budget.
type shaping struct {
	s        *Shaper
	ctx      context.Context
	call     Call
	raw      json.RawMessage // the tool's result
	b        budget.Budget
	in       *wire           // the tool's result, parsed
	out      *wire           // the result being built (its _meta is set last)
	toolMeta json.RawMessage // what the tool's _meta becomes
	blocks   []block
	notes    []string        // what the closing guidance block says
	original json.RawMessage // the link to the whole result; nil for none
	tokens   int             // of the tool's result
}

// ShapeResult shapes the wire JSON of a tool call's result, an isError
// result included (see the type's documentation). call names the tool,
// its canonical arguments and the subject. Errors are those of the Guard
// a client should see (an unavailable store, a shaping time-out): the
// caller answers them with [ErrorOf], never with the result over budget.
func (s *Shaper) ShapeResult(ctx context.Context, call Call, raw json.RawMessage) (Shaped, error) {
	w, err := parseWire(raw)
	if err != nil {
		return Shaped{Result: raw}, nil // not ours to judge
	}
	b := s.budgetOf(call.Tool)
	if len(raw) <= b.Threshold {
		return s.unshaped(ctx, call, raw, w, b), nil // n bytes never hold more than n tokens
	}
	blocks := readBlocks(w.get("content"))
	if s.count(raw, blocks, b.Threshold+1) <= b.Threshold {
		return s.unshaped(ctx, call, raw, w, b), nil
	}
	sh := &shaping{s: s, ctx: ctx, call: call, raw: raw, b: b, in: w, blocks: blocks}
	sh.tokens = s.count(raw, blocks, -1)
	out, err := sh.run()
	if sh.tokens <= b.HardCap-sdkSlack && (errors.Is(err, errNoRoom) || err == nil && out.Tokens >= sh.tokens) {
		// Shaped, it would cost the model more than the result as it came
		// (or it has no room shaped), which is within the hard cap: that.
		return Shaped{Result: raw}, nil
	}
	return out, err
}

// readBlocks reads a content list; nil when it is not a list.
func readBlocks(content json.RawMessage) []block {
	var list []json.RawMessage
	if json.Unmarshal(content, &list) != nil {
		return nil
	}
	blocks := make([]block, len(list))
	for i, c := range list {
		blocks[i] = readBlock(c)
	}
	return blocks
}

// count is what a model reads of a result's wire JSON, by exact count of
// its JSON but for images and audio, counted by the media rule; blocks
// are its content blocks. With limit >= 0 it stops past limit.
func (s *Shaper) count(raw json.RawMessage, blocks []block, limit int) int {
	media, view := 0, raw
	if slices.ContainsFunc(blocks, isMedia) {
		w, err := parseWire(raw)
		if err == nil {
			list := make([]json.RawMessage, len(blocks))
			for i, bl := range blocks {
				list[i] = bl.raw
				if isMedia(bl) {
					media += s.mediaTokens(bl)
					list[i] = withoutData(bl.raw)
				}
			}
			c, _ := marshal(list)
			w.set("content", c)
			view = w.marshal()
		}
	}
	view = clientView(view)
	if limit < 0 {
		return s.exact().Count(string(view)) + media
	}
	return budget.CountUpTo(s.exact(), string(view), max(limit-media, 0)) + media
}

// clientView is raw as the SDKs write it on the wire and a client reads
// it: compact, with <, > and & escaped as encoding/json escapes them
// (\u003c), which costs more tokens than the raw characters. Counting
// this form holds the hard cap whichever way a result is written.
func clientView(raw json.RawMessage) json.RawMessage {
	if !bytes.ContainsAny(raw, "<>&\u2028\u2029") {
		return raw
	}
	out, err := json.Marshal(raw) // a RawMessage is compacted with HTML escaping
	if err != nil {
		return raw
	}
	return out
}

func isMedia(b block) bool { return b.kind == "image" || b.kind == "audio" }

// withoutData is a media block without its data, which the media rule
// counts.
func withoutData(raw json.RawMessage) json.RawMessage {
	w, err := parseWire(raw)
	if err != nil {
		return raw
	}
	w.set("data", json.RawMessage(`""`))
	return w.marshal()
}

// tokens counts a result's wire JSON as [Shaper.count] does.
func (s *Shaper) tokens(raw json.RawMessage) int {
	w, err := parseWire(raw)
	if err != nil {
		return s.exact().Count(string(raw))
	}
	return s.count(raw, readBlocks(w.get("content")), -1)
}

// metaRoom is what the tool's _meta, and each other member of a result
// ctxfit does not read, may take of a shaped result; larger ones are held
// back.
func (sh *shaping) metaRoom() int { return min(sh.b.HardCap/10, 1000) }

func (sh *shaping) run() (Shaped, error) {
	s := sh.s
	sh.out = &wire{}
	for _, m := range sh.in.members {
		if m.key != "_meta" {
			sh.out.members = append(sh.out.members, m)
		}
	}
	if !sh.call.read {
		// Best effort: without it the cursors and links still lead to
		// everything (a tool that must not run again, with no room in the
		// store, has none).
		if token, err := s.keep(sh.ctx, sh.call, blockWhole, sh.raw, "application/json"); err == nil {
			sh.original = OriginalLink(sh.call.Tool, 0, token, "application/json", len(sh.raw))
		}
	}
	if err := sh.holdMembers(); err != nil {
		return Shaped{}, err
	}
	if sh.blocks == nil && len(sh.in.get("content")) > 0 {
		return sh.paged() // content that is not a list: the engine shapes it
	}
	structured := sh.out.get("structuredContent")
	if len(structured) == 0 || string(structured) == "null" {
		structured = nil
	}
	if structured != nil && budget.CountUpTo(s.exact(), string(structured), sh.b.Threshold/2+1) > sh.b.Threshold/2 {
		if out, ok, err := sh.structured(structured); ok || err != nil {
			return out, err
		}
		// No room for it twice: its text form is shaped in its place.
		if err := sh.holdStructured(); err != nil {
			return Shaped{}, err
		}
	}
	if out, ok, err := sh.inPlace(); ok || err != nil {
		return out, err
	}
	if err := sh.holdStructured(); err != nil {
		return Shaped{}, err
	}
	return sh.paged()
}

// holdStructured holds back the structured content, when larger than
// metaRoom, behind a link.
func (sh *shaping) holdStructured() error {
	st := sh.out.get("structuredContent")
	if len(st) == 0 || string(st) == "null" {
		return nil
	}
	if room := sh.metaRoom(); budget.CountUpTo(sh.s.exact(), string(st), room+1) <= room {
		return nil
	}
	token, err := sh.s.keep(sh.ctx, sh.call, 0, st, "application/json")
	if err != nil {
		return err
	}
	sh.out.set("structuredContent", heldStructuredContent)
	sh.notes = append(sh.notes, fmt.Sprintf("The structured content (%d bytes) is held back: read it with resources/read %s%s.", len(st), ResourcePrefix, token))
	return nil
}

// holdMembers holds back the tool's _meta, and drops any other member
// ctxfit does not read (the whole result keeps it), when larger than
// metaRoom.
func (sh *shaping) holdMembers() error {
	s := sh.s
	room := sh.metaRoom()
	if m := sh.in.get("_meta"); len(m) > 0 {
		sh.toolMeta = m
		if n := budget.CountUpTo(s.exact(), string(m), room+1); n > room {
			token, err := s.keep(sh.ctx, sh.call, blockMeta, m, "application/json")
			if err != nil {
				return err
			}
			uri := ResourcePrefix + token
			sh.toolMeta, _ = marshal(map[string]string{MetaHeldMeta: uri})
			sh.notes = append(sh.notes, fmt.Sprintf("The tool's _meta (%d bytes) is held back: read it with resources/read %s.", len(m), uri))
		}
	}
	for _, m := range slices.Clone(sh.out.members) {
		switch m.key {
		case "content", "structuredContent":
			continue
		}
		if budget.CountUpTo(s.exact(), string(m.val), room+1) > room {
			sh.out.del(m.key)
			sh.notes = append(sh.notes, fmt.Sprintf("The result's member %q (%d bytes) is left out; the whole result is behind the link to the original.", m.key, len(m.val)))
		}
	}
	return nil
}

// keep keeps data (part blk of the result) with the Guard, for a
// ctxfit://r/ link.
func (s *Shaper) keep(ctx context.Context, call Call, blk int, data []byte, mime string) (string, error) {
	req := ctxfit.Request{Endpoint: call.Tool, Path: call.Tool, Subject: call.Subject, Filters: call.Arguments, Unrepeatable: call.Unrepeatable, Block: blk}
	return s.Guard.Resource(ctx, req, data, mime)
}

// fixedCost is what the result costs without its text blocks (and without
// its shaped structured content when skipStructured): its other members,
// its media (held or not), the closing blocks, and room for ctxfit's
// _meta keys.
func (sh *shaping) fixedCost(blocks []block, skipStructured bool) int {
	w := &wire{members: slices.Clone(sh.out.members)}
	if skipStructured {
		w.del("structuredContent")
	}
	var list []json.RawMessage
	media := 0
	for _, bl := range blocks {
		switch {
		case bl.kind == "text":
		case isMedia(bl):
			media += sh.s.mediaTokens(bl)
			list = append(list, withoutData(bl.raw))
		default:
			list = append(list, bl.raw)
		}
	}
	list = append(list, sh.closing()...)
	c, _ := marshal(list)
	w.set("content", c)
	if len(sh.toolMeta) > 0 {
		w.set("_meta", sh.toolMeta)
	}
	return sh.s.exact().Count(string(w.marshal())) + media + metaReserve
}

// metaReserve is the room ctxfit's own _meta keys take.
const metaReserve = 160

// closing is what follows the blocks of a shaped result: the notes, and
// the link to the whole result.
func (sh *shaping) closing() []json.RawMessage {
	var out []json.RawMessage
	if len(sh.notes) > 0 {
		line := sh.notes[0]
		for _, n := range sh.notes[1:] {
			line += " " + n
		}
		out = append(out, guidanceBlock(line))
	}
	if sh.original != nil {
		out = append(out, sh.original)
	}
	return out
}

// guidanceBlock is a text block ctxfit adds (a guidance line, or what was
// held back), marked with [MetaGuidance].
func guidanceBlock(text string) json.RawMessage {
	out, _ := marshal(map[string]any{"type": "text", "text": text, "_meta": map[string]bool{MetaGuidance: true}})
	return out
}

// holdMedia holds back blobs and media over the hard cap, then the
// largest media while the rest (extra more) has no room beside them, and
// returns the result's fixedCost (skipStructured as there). It holds no
// more when even without media there is no room: the content list is
// paged then.
func (sh *shaping) holdMedia(blocks []block, skipStructured bool, extra int) (int, error) {
	s := sh.s
	for i := range blocks {
		bl := &blocks[i]
		if bl.kind == "blob" || isMedia(*bl) && s.mediaTokens(*bl) > sh.b.HardCap-MinHardCapShare {
			if err := s.hold(sh.ctx, sh.call, i, bl); err != nil {
				return 0, err
			}
		}
	}
	fixed := sh.fixedCost(blocks, skipStructured)
	if fixed+extra <= sh.b.HardCap {
		return fixed, nil
	}
	type medium struct{ i, cost int }
	var media []medium
	total := 0
	for i, bl := range blocks {
		if isMedia(bl) {
			media = append(media, medium{i, s.mediaTokens(bl)})
			total += media[len(media)-1].cost
		}
	}
	if len(media) == 0 || fixed-total+extra > sh.b.HardCap {
		return fixed, nil
	}
	slices.SortStableFunc(media, func(a, b medium) int { return cmp.Compare(b.cost, a.cost) })
	for _, m := range media {
		if fixed+extra <= sh.b.HardCap {
			break
		}
		bl := &blocks[m.i]
		was := m.cost + s.exact().Count(string(withoutData(bl.raw)))
		if err := s.hold(sh.ctx, sh.call, m.i, bl); err != nil {
			return 0, err
		}
		fixed += s.exact().Count(string(bl.raw)) - was
	}
	return sh.fixedCost(blocks, skipStructured), nil
}

// inPlace shapes the large text blocks of the result each in its place,
// with its share of the budget, and keeps every other block where it is.
// It reports false when the blocks have no room that way (too many
// blocks, or too many large ones): the content list is paged instead.
func (sh *shaping) inPlace() (Shaped, bool, error) {
	s := sh.s
	blocks := slices.Clone(sh.blocks)
	cost := make([]int, len(blocks))
	texts := 0
	for i, bl := range blocks {
		if bl.kind == "text" {
			cost[i] = s.exact().Count(string(bl.raw))
			texts++
		}
	}
	extra := 0
	if texts > 0 {
		extra = ctxfit.MinHardCap + guidanceReserve
	}
	fixed, err := sh.holdMedia(blocks, false, extra)
	if err != nil {
		return Shaped{}, false, err
	}
	// The large text blocks: the largest, one by one, while the rest does
	// not fit under the threshold.
	order := make([]int, 0, texts)
	small := 0
	for i, bl := range blocks {
		if bl.kind == "text" {
			order = append(order, i)
			small += cost[i]
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(cost[b], cost[a]) })
	big := map[int]bool{}
	for _, i := range order {
		if fixed+small <= sh.b.Threshold {
			break
		}
		big[i] = true
		small -= cost[i]
	}
	n := len(big)
	if n == 0 {
		if fixed+small > sh.b.HardCap {
			return Shaped{}, false, nil
		}
		return sh.finish(blocks, nil, nil)
	}
	// The threshold is shared with the other blocks, not with what
	// ctxfit adds.
	others := fixed - sh.fixedCost(nil, false)
	room := sh.b.HardCap - fixed - small - guidanceReserve*n
	for try := 0; try < 4; try++ {
		hc := room / n
		if hc < ctxfit.MinHardCap {
			return Shaped{}, false, nil
		}
		th := min(max((sh.b.Threshold-others-small)/n, minShare), hc)
		bud := budget.Budget{Threshold: th, HardCap: hc}
		list := make([]json.RawMessage, 0, len(blocks)+n)
		var results []ctxfit.Result
		for i, bl := range blocks {
			if !big[i] {
				list = append(list, bl.raw)
				continue
			}
			res, err := s.handle(sh.ctx, sh.call, i+1, bud, []byte(bl.text), "")
			if err != nil {
				return Shaped{}, false, err
			}
			if !res.Shaped {
				list = append(list, bl.raw)
				continue
			}
			results = append(results, res)
			if text, chunk, ok := textChunk(res); ok {
				list = append(list, bl.setText(text, chunk))
			} else {
				list = append(list, bl.setText(string(res.Body), nil))
			}
			list = append(list, s.guidance(res, true)...)
		}
		out, ok, err := sh.finish(blocks, list, results)
		if ok || err != nil {
			return out, ok, err
		}
		room = sh.shrink(room, out.Tokens) // the shaped bodies cost more as text blocks
	}
	return Shaped{}, false, nil
}

// finish builds the result of blocks (or list, their shaped form) and
// reports false when it is over the hard cap.
func (sh *shaping) finish(blocks []block, list []json.RawMessage, results []ctxfit.Result) (Shaped, bool, error) {
	if list == nil {
		for _, bl := range blocks {
			list = append(list, bl.raw)
		}
	}
	list = append(list, sh.closing()...)
	c, _ := marshal(list)
	sh.out.set("content", c)
	return sh.seal(results)
}

// seal sets the result's _meta and reports whether it is within the hard
// cap by exact count.
func (sh *shaping) seal(results []ctxfit.Result) (Shaped, bool, error) {
	var first *ctxfit.Result
	if len(results) > 0 {
		first = &results[0]
	}
	tokens := 0
	var raw json.RawMessage
	for try := 0; try < 4; try++ {
		// The count goes into the result it counts: again until it holds.
		sh.out.set("_meta", sh.s.resultMeta(sh.toolMeta, results, first, sh.b.HardCap, tokens, sh.tokens))
		raw = sh.out.marshal()
		n := sh.s.tokens(raw)
		if n == tokens {
			break
		}
		tokens = n
	}
	if tokens > sh.b.HardCap-sdkSlack {
		return Shaped{Tokens: tokens}, false, nil
	}
	return Shaped{Result: raw, Shaped: true, Results: results, Tokens: tokens, OriginalTokens: sh.tokens}, true, nil
}

// structured shapes the structured content of a result: its shaped body is
// the structured content (when an object) and the text block in place of
// the first text block (the others, by convention its text form, go; the
// whole result keeps them); the other blocks stay in order.
func (sh *shaping) structured(structured json.RawMessage) (Shaped, bool, error) {
	s := sh.s
	blocks := slices.Clone(sh.blocks)
	fixed, err := sh.holdMedia(blocks, true, ctxfit.MinHardCap+guidanceReserve)
	if err != nil {
		return Shaped{}, false, err
	}
	// The shaped body goes twice: as the structured content and as the
	// text of a block.
	others := fixed - sh.fixedCost(nil, true)
	room := (sh.b.HardCap - fixed - guidanceReserve) / 2
	for try := 0; try < 4; try++ {
		if room < ctxfit.MinHardCap {
			return Shaped{}, false, nil
		}
		bud := budget.Budget{Threshold: min(max(sh.b.Threshold-others, minShare), room), HardCap: room}
		res, err := s.handle(sh.ctx, sh.call, 0, bud, structured, "application/json")
		if err != nil {
			return Shaped{}, false, err
		}
		shaped := append([]json.RawMessage{shapedBlock(res.Body, "structured")}, s.guidance(res, true)...)
		var list []json.RawMessage
		placed := !res.Shaped // under its room: the blocks as they are
		for _, bl := range blocks {
			switch {
			case bl.kind != "text":
				list = append(list, bl.raw)
			case !placed:
				list = append(list, shaped...)
				placed = true
			}
		}
		if !placed {
			list = append(shaped, list...)
		}
		if !res.Shaped {
			list = nil
		}
		if IsObject(res.Body) {
			sh.out.set("structuredContent", res.Body)
		} else {
			// A strict client wants structured content where the tool
			// has an output schema: a pointer to the content blocks,
			// which the rewritten schema accepts.
			sh.out.set("structuredContent", heldStructuredContent)
		}
		var results []ctxfit.Result
		if res.Shaped {
			results = append(results, res)
		}
		out, ok, err := sh.finish(blocks, list, results)
		if ok || err != nil {
			return out, ok, err
		}
		room = sh.shrink(room, out.Tokens)
	}
	return Shaped{}, false, nil
}

// paged sends the content list in pages (JSON pages of its blocks, as
// they are, with a cursor): for a result of more blocks than fit, or of
// more large text blocks than can each have a page.
func (sh *shaping) paged() (Shaped, error) {
	s := sh.s
	content := sh.in.get("content")
	if len(content) == 0 {
		content = json.RawMessage("[]")
	}
	fixed := sh.fixedCost(nil, false)
	room := sh.b.HardCap - fixed - guidanceReserve
	for try := 0; try < 4; try++ {
		if room < ctxfit.MinHardCap {
			break
		}
		bud := budget.Budget{Threshold: min(sh.b.Threshold, room), HardCap: room}
		res, err := s.handle(sh.ctx, sh.call, blockContent, bud, content, "application/json")
		if err != nil {
			return Shaped{}, err
		}
		var list []json.RawMessage
		var results []ctxfit.Result
		if res.Shaped {
			list = append([]json.RawMessage{shapedBlock(res.Body, "content")}, s.guidance(res, true)...)
			results = append(results, res)
		}
		out, ok, err := sh.finish(sh.blocks, list, results)
		if ok || err != nil {
			return out, err
		}
		room = sh.shrink(room, out.Tokens)
	}
	return Shaped{}, errNoRoom
}

// MinHardCapShare is the room a link and the text around it keep from a
// media block's share of the hard cap.
const MinHardCapShare = 64

// hold replaces media block i by a link to its bytes.
func (s *Shaper) hold(ctx context.Context, call Call, i int, bl *block) error {
	link, err := s.link(ctx, call, i+1, *bl, s.mediaTokens(*bl))
	if err != nil {
		return err
	}
	bl.raw, bl.kind = link, "link"
	return nil
}

// shrink is the room a shaped body gets on the next try, when with room
// the result came to tokens, over the hard cap.
func (sh *shaping) shrink(room, tokens int) int {
	return min(room-1, int(float64(room)*float64(sh.b.HardCap-sdkSlack)/float64(max(tokens, 1))*0.95))
}

// minShare is the smallest threshold a shaped body of a result gets, when
// the rest of the result takes (nearly) all of the threshold.
const minShare = ctxfit.MinHardCap / 2

// guidanceReserve is what a guidance line may take beside a shaped block.
const guidanceReserve = 200

// errNoRoom: even with everything it can hold back, a result has no room
// within the hard cap (a hard cap too small for what must stay).
var errNoRoom = errors.New("mcpcore: the result has no room within the hard cap beside what must stay in it")

// handle shapes one body of a result with the Guard.
func (s *Shaper) handle(ctx context.Context, call Call, blk int, bud budget.Budget, body []byte, contentType string) (ctxfit.Result, error) {
	req := ctxfit.Request{Endpoint: call.Tool, Path: call.Tool, Subject: call.Subject, Filters: call.Arguments, Unrepeatable: call.Unrepeatable,
		RequestID: call.RequestID, Block: blk, Budget: bud}
	res, err := s.Guard.Handle(ctx, req, func(context.Context) (ctxfit.Response, error) {
		return ctxfit.Response{Body: body, ContentType: contentType, CacheHit: call.CacheHit}, nil
	})
	if err != nil {
		return res, err
	}
	if !res.Shaped {
		// Under its share: the block as it is, without guidance.
		res.Body = body
	}
	return res, nil
}

// guidance is the text block that says what a shaped body holds and how to
// get more, or nothing.
func (s *Shaper) guidance(res ctxfit.Result, first bool) []json.RawMessage {
	if line := s.guidanceLine(res, first); line != "" {
		return []json.RawMessage{guidanceBlock(line)}
	}
	return nil
}

// guidanceLine is the text of [Shaper.guidance], "" for none.
func (s *Shaper) guidanceLine(res ctxfit.Result, first bool) string {
	if !res.Shaped {
		return ""
	}
	line := Guidance(res, s.Names)
	if line == "" {
		return ""
	}
	if first && res.Record.HardCap > 0 {
		// A block of a first result was shaped within its share of the
		// hard cap, less guidanceReserve for this line.
		res.Record.HardCap += guidanceReserve
	}
	if first && res.Next != "" && (res.Strategy == telemetry.StrategyPagination || res.Strategy == telemetry.StrategyChunking) {
		// A first page of many: finding beats reading on.
		with := line + findHint(res, s.Names)
		if s.fit.Fits(res, s.Guard.Config().Encoding, with) {
			return with
		}
	}
	if !s.fit.Fits(res, s.Guard.Config().Encoding, line) {
		return ""
	}
	return line
}

// resultMeta merges ctxfit's _meta keys into the tool's own (or what
// stands for it): those of the first shaped body, the cursors of the
// others, and the token figures of the whole result.
func (s *Shaper) resultMeta(tool json.RawMessage, results []ctxfit.Result, first *ctxfit.Result, hardCap, tokens, original int) json.RawMessage {
	var m map[string]any
	if len(tool) > 0 {
		_ = json.Unmarshal(tool, &m)
	}
	if m == nil {
		m = map[string]any{}
	}
	raw := s.meta(nil, results, first, hardCap)
	var own map[string]any
	_ = json.Unmarshal(raw, &own)
	for k, v := range own {
		m[k] = v
	}
	m[MetaHardCap] = hardCap
	m[MetaTokens] = tokens
	m[MetaOriginalTokens] = original
	out, _ := marshal(m)
	return out
}

// sdkSlack is what an SDK's encoding of a result may add to ctxfit's
// count of it (mcp-go's and the official SDK's own members, such as a
// result type, their order and number formatting): a shaped result
// leaves it free under the hard cap.
const sdkSlack = 48

// continuationReserve is the room a continuation's guidance line and
// _meta take beside its shaped body.
const continuationReserve = guidanceReserve + metaReserve

// continued answers a continuation, drill-down, search or query (req)
// with the Guard, in a result within the tool's hard cap as a client
// counts it: the shaped body gets the room its guidance line and _meta
// leave, and less again when, as the text of a block, it costs more than
// the Guard counted (JSON in a JSON string).
func (s *Shaper) continued(ctx context.Context, req ctxfit.Request, fetch ctxfit.Fetch) (json.RawMessage, error) {
	b := s.budgetOf(req.Endpoint)
	room := b.HardCap - continuationReserve
	for {
		if room < ctxfit.MinHardCap {
			return nil, errNoRoom
		}
		req.Budget = budget.Budget{Threshold: min(b.Threshold, room), HardCap: room}
		res, err := s.Guard.Handle(ctx, req, fetch)
		if err != nil {
			return nil, err
		}
		content := []json.RawMessage{textBlock(string(res.Body))}
		if text, chunk, ok := textChunk(res); ok && req.Block > 0 && req.Block < blockWhole {
			// A chunk of a block's text: the text as it is.
			content[0] = block{raw: textBlock("")}.setText(text, chunk)
		}
		// The room of the guidance line is kept out of the body's budget
		// (continuationReserve), as for a first result's block.
		withLine := res
		if withLine.Record.HardCap > 0 {
			withLine.Record.HardCap += guidanceReserve
		}
		content = append(content, s.guidance(withLine, false)...)
		c, _ := marshal(content)
		// The continuation tools have no output schema: the shaped body is
		// the text block, with no structured content to validate or to
		// decode.
		sh := &shaping{s: s, b: b, out: &wire{members: []member{{"content", c}}}, tokens: res.Record.TokensBefore}
		out, ok, _ := sh.seal([]ctxfit.Result{res})
		if ok {
			return out.Result, nil
		}
		room = min(room-1, room*(b.HardCap-continuationReserve)/max(out.Tokens, 1))
	}
}
