// Package conversation fits a chat conversation (the OpenAI chat-completions
// message format) into a token budget and a message limit, the
// OpenAI-compatible middleware's Session with max_messages, made to count
// tokens and to keep what it clears.
//
// [FitContext] first replaces the oldest large tool results with a
// one-line placeholder that carries the call that reads the result back
// (a [Keeper], such as mcpclientfit.Guard, keeps it as a snapshot behind
// ctxfit_next), then drops the oldest turns. It always keeps the system
// messages, the latest user message and the latest tool calls with their
// results, never separates an assistant message that calls tools from the
// results that answer it, and reports what it cleared and dropped. [Fit]
// is FitContext without a Keeper: it only drops.
//
// # Counting
//
// A message costs [MessageOverhead] (3) tokens, plus the counter's count of
// its role, content and name (and 1 more when it has a name), plus for each
// tool call the count of its id, type, function name and arguments and
// [ToolCallOverhead] (3) more, plus the count of its tool_call_id. A
// conversation costs the sum of its messages plus [ReplyOverhead] (3), the
// tokens that prime the assistant's reply. This follows OpenAI's published
// accounting for chat messages; the exact overhead of a provider differs by
// a few tokens per message, so leave some room in the limit.
package conversation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/ctxfit/ctxfit/budget"
)

// Token overheads added to the counter's count of the text of messages.
const (
	MessageOverhead  = 3 // per message
	NameOverhead     = 1 // per message with a name
	ToolCallOverhead = 3 // per tool call
	ReplyOverhead    = 3 // per conversation: the priming of the reply
)

// Role is the author of a message. The zero Role is empty, which no API
// accepts; Fit treats it like an assistant message.
type Role string

// Roles of the OpenAI chat API.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one message of a conversation, with the JSON names of the
// OpenAI chat API.
//
// The zero value is an empty message with no role. A Message is a plain
// value, safe to copy and share.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
	// Name optionally names the author.
	Name string `json:"name,omitempty"`
	// ToolCalls are the tools an assistant message calls.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is, on a tool message, the ID of the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
}

// ToolCall is one tool call of an assistant message.
//
// The zero value is a call with no ID. A ToolCall is a plain value.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall is the function a [ToolCall] calls. The zero value names no
// function. It is a plain value.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON text
}

// Sentinel errors. Test with [errors.Is].
var (
	// ErrMandatoryOverBudget: the messages that must stay (the system
	// messages, the latest user message, and the latest tool calls with
	// their results, with any tool exchange tied to them) are over the token
	// limit or the message limit on their own, after clearing what could be
	// cleared. The error is a [*MandatoryError].
	ErrMandatoryOverBudget = errors.New("conversation: mandatory messages over the budget")
	// ErrInvalidOptions: an [Options] field is out of range.
	ErrInvalidOptions = errors.New("conversation: invalid options")
)

// MandatoryError reports that the messages that must stay do not fit. It
// wraps [ErrMandatoryOverBudget].
type MandatoryError struct {
	Tokens      int // tokens of the mandatory messages, reply overhead included
	MaxTokens   int // the token limit
	Messages    int // number of mandatory messages
	MaxMessages int // the message limit; 0 when there is none
}

// Error gives the numbers and the way out.
func (e *MandatoryError) Error() string {
	if e.MaxMessages > 0 && e.Messages > e.MaxMessages {
		return fmt.Sprintf("conversation: the %d messages that must stay (system messages, the latest user message, the latest tool calls and their results) exceed the limit of %d messages; raise MaxMessages or merge system messages",
			e.Messages, e.MaxMessages)
	}
	return fmt.Sprintf("conversation: the messages that must stay (system messages, the latest user message, the latest tool calls and their results) take %d tokens, more than the limit of %d; shorten them, summarize the latest tool results, or raise the limit",
		e.Tokens, e.MaxTokens)
}

// Unwrap returns [ErrMandatoryOverBudget].
func (e *MandatoryError) Unwrap() error { return ErrMandatoryOverBudget }

// Defaults of [Options].
const (
	// DefaultMaxMessages is how many messages a conversation keeps.
	DefaultMaxMessages = 20
	// DefaultClearAbove is the token count over which a tool result may be
	// cleared.
	DefaultClearAbove = 500
)

// A Keeper keeps the content of a tool result that [FitContext] clears, and
// says how the model reads it back.
//
// Keep is called with the context of FitContext, the name of the tool
// whose result it is ("" when no tool call of the conversation names it)
// and the content, in the order the results are cleared. It returns the
// call that gives the content back, or an error: the result is then not
// cleared, and FitContext goes on. Implementations must be safe for
// concurrent use when FitContext runs concurrently.
type Keeper interface {
	Keep(ctx context.Context, tool, content string) (Recall, error)
}

// Recall is the tool call that reads a cleared result back, as the
// placeholder tells the model to make it: for mcpclientfit.Guard,
// ctxfit_next with {"cursor":"...","part":1}.
//
// The zero value names no tool. A Recall is a plain value.
type Recall struct {
	Tool      string // the tool to call
	Arguments string // its arguments, a JSON object
}

// Placeholder returns the one line that replaces a cleared tool result:
//
//	[ctxfit] This result of read_file (12,345 tokens) was cleared to fit the context window. To read it again call ctxfit_next with {"cursor":"...","part":1}.
//
// tool is the name of the tool ("" for an unknown tool), tokens the cost
// of the result's content.
func Placeholder(tool string, tokens int, r Recall) string {
	what := "This tool result"
	if tool != "" {
		what = "This result of " + tool
	}
	return fmt.Sprintf("[ctxfit] %s (%s tokens) was cleared to fit the context window. To read it again call %s with %s.",
		what, thousands(tokens), r.Tool, r.Arguments)
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Options configure [Fit] and [FitContext]. The zero value (or a nil
// *Options) gives the defaults listed with each field.
type Options struct {
	// Counter counts the tokens of the text of messages. Nil means
	// budget.Exact("o200k_base"). It must be safe for concurrent use.
	Counter budget.Counter
	// MaxMessages is the largest number of messages kept, as the
	// middleware's Session.max_messages. Zero means [DefaultMaxMessages]
	// (20); negative means no limit.
	MaxMessages int
	// Keeper keeps the tool results FitContext clears. Nil means none:
	// nothing is cleared, old turns are dropped.
	Keeper Keeper
	// ClearAbove is the token count of its content over which a tool
	// result may be cleared. Zero means [DefaultClearAbove] (500); must be
	// >= 0.
	ClearAbove int
	// ClearAtLeast makes clearing, once it starts, go on until it saved at
	// least this many tokens, even when the conversation already fits, and
	// then stop. Clearing in batches changes the start of the conversation
	// less often, which keeps a provider's prompt cache warm. Zero means
	// clear only until the conversation fits; must be >= 0.
	ClearAtLeast int
}

// Cleared is a tool result [FitContext] replaced with a placeholder.
//
// The zero value is no result. A Cleared is a plain value.
type Cleared struct {
	// Index is the index of the message in the input.
	Index int
	// Tool is the name of the tool whose result it is, "" when unknown.
	Tool string
	// Tokens is the cost of its content before clearing.
	Tokens int
	// Recall is the call that reads the content back.
	Recall Recall
}

// Result is a fitted conversation and what was cleared and dropped to fit
// it.
//
// The zero value is an empty conversation. A Result is a plain value.
type Result struct {
	// Messages are the messages kept, in their original order, cleared
	// tool results with their placeholder as content. Messages that were
	// not cleared share memory with the input.
	Messages []Message
	// Kept and Dropped are the indices in the input of the messages kept
	// and dropped, ascending.
	Kept, Dropped []int
	// Cleared are the tool results replaced with a placeholder, in the
	// order they were cleared. They are among the kept messages.
	Cleared []Cleared
	// TokensBefore and TokensAfter are the costs of the conversation before
	// and after fitting, overheads included (see the package documentation).
	TokensBefore, TokensAfter int
}

// Tokens returns the cost of msgs by c: the sum of [MessageTokens] and
// [ReplyOverhead].
func Tokens(c budget.Counter, msgs []Message) int {
	n := ReplyOverhead
	for i := range msgs {
		n += MessageTokens(c, &msgs[i])
	}
	return n
}

// MessageTokens returns the cost of one message by c, overheads included
// (see the package documentation).
func MessageTokens(c budget.Counter, m *Message) int {
	n := MessageOverhead + c.Count(string(m.Role)) + c.Count(m.Content)
	if m.Name != "" {
		n += NameOverhead + c.Count(m.Name)
	}
	for _, tc := range m.ToolCalls {
		n += ToolCallOverhead + c.Count(tc.ID) + c.Count(tc.Type) + c.Count(tc.Function.Name) + c.Count(tc.Function.Arguments)
	}
	if m.ToolCallID != "" {
		n += c.Count(m.ToolCallID)
	}
	return n
}

// Fit is [FitContext] without a Keeper (opts.Keeper is ignored): it drops
// old turns and clears nothing.
func Fit(msgs []Message, maxTokens int, opts *Options) (Result, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Keeper = nil
	return FitContext(context.Background(), msgs, maxTokens, &o)
}

// FitContext returns the messages of msgs that fit in maxTokens tokens and
// opts.MaxMessages messages, by these rules:
//
//   - System messages, the latest user message and the latest tool calls
//     (the last assistant message, when it calls tools) with their results
//     always stay.
//   - Messages are dropped by units, oldest first: before the latest user
//     message a unit is a turn (a user message and the messages that follow
//     it up to the next user message; the messages before the first user
//     message form a turn too); after it, a unit is a message, except that
//   - an assistant message with tool calls and the tool messages that
//     answer them (by tool_call_id) are one unit, wherever they are: they
//     stay or go together. A unit that holds a message that always stays,
//     stays.
//
// It fits in four steps, each only as far as needed:
//
//  1. Over the message limit, the oldest units are dropped until the rest
//     is within it.
//  2. Over the token limit, and with a Keeper, the oldest tool results
//     whose content costs more than opts.ClearAbove tokens are cleared: the
//     Keeper keeps the content and the message keeps its role and
//     tool_call_id with the one line of [Placeholder] as content. The latest
//     tool results (those the model has not read yet) are not cleared in
//     this step.
//  3. Still over it, the oldest units are dropped.
//  4. Still over it, with a Keeper, the latest tool results are cleared
//     too, oldest first.
//
// The kept messages keep their order. When the messages that must stay do
// not fit even so, FitContext returns a [*MandatoryError]. msgs is not
// modified. maxTokens must be > 0. FitContext is safe for concurrent use
// when the counter and the Keeper are.
func FitContext(ctx context.Context, msgs []Message, maxTokens int, opts *Options) (Result, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if maxTokens <= 0 {
		return Result{}, fmt.Errorf("%w: maxTokens %d must be > 0", ErrInvalidOptions, maxTokens)
	}
	if o.ClearAbove < 0 || o.ClearAtLeast < 0 {
		return Result{}, fmt.Errorf("%w: ClearAbove %d and ClearAtLeast %d must be >= 0", ErrInvalidOptions, o.ClearAbove, o.ClearAtLeast)
	}
	switch {
	case o.MaxMessages == 0:
		o.MaxMessages = DefaultMaxMessages
	case o.MaxMessages < 0:
		o.MaxMessages = 0 // no limit
	}
	if o.ClearAbove == 0 {
		o.ClearAbove = DefaultClearAbove
	}
	if o.Counter == nil {
		c, err := budget.Exact(budget.O200KBase)
		if err != nil {
			return Result{}, fmt.Errorf("conversation: default counter: %w", err)
		}
		o.Counter = c
	}

	f := fitter{msgs: msgs, o: o, maxTokens: maxTokens, cost: make([]int, len(msgs)), keep: make([]bool, len(msgs)),
		content: map[int]string{}}
	f.tokens = ReplyOverhead
	for i := range msgs {
		f.cost[i] = MessageTokens(o.Counter, &msgs[i])
		f.tokens += f.cost[i]
		f.keep[i] = true
	}
	total := f.tokens
	f.count = len(msgs)
	var latest map[int]bool
	f.units, f.mandatory, latest = groupUnits(msgs)

	f.drop(func() bool { return f.withinCount() })                       // 1
	f.clear(ctx, func(i int) bool { return !latest[i] }, o.ClearAtLeast) // 2
	f.drop(f.fits)                                                       // 3
	f.clear(ctx, func(i int) bool { return latest[i] }, 0)               // 4
	if !f.fits() {
		return Result{}, &MandatoryError{Tokens: f.tokens, MaxTokens: maxTokens, Messages: f.count, MaxMessages: o.MaxMessages}
	}
	r := Result{TokensBefore: total, TokensAfter: f.tokens, Kept: []int{}, Dropped: []int{}, Messages: []Message{}, Cleared: f.cleared}
	for i, k := range f.keep {
		if !k {
			r.Dropped = append(r.Dropped, i)
			continue
		}
		r.Kept = append(r.Kept, i)
		m := msgs[i]
		if c, ok := f.content[i]; ok {
			m.Content = c
		}
		r.Messages = append(r.Messages, m)
	}
	if r.Cleared == nil {
		r.Cleared = []Cleared{}
	}
	return r, nil
}

// fitter is the state of one FitContext.
type fitter struct {
	msgs      []Message
	o         Options
	maxTokens int
	cost      []int
	keep      []bool
	tokens    int
	count     int
	units     [][]int
	mandatory []bool
	content   map[int]string // cleared message -> its placeholder
	cleared   []Cleared
}

func (f *fitter) withinCount() bool { return f.o.MaxMessages == 0 || f.count <= f.o.MaxMessages }

func (f *fitter) fits() bool { return f.tokens <= f.maxTokens && f.withinCount() }

// drop drops the oldest units that may go until done.
func (f *fitter) drop(done func() bool) {
	// units are ordered by their first message: oldest first.
	for u, members := range f.units {
		if done() {
			return
		}
		if f.mandatory[u] || !f.keep[members[0]] {
			continue
		}
		for _, i := range members {
			f.keep[i] = false
			f.tokens -= f.cost[i]
			f.count--
		}
	}
}

// clear clears the oldest kept tool results that eligible accepts, while
// over the token limit or until atLeast tokens were saved.
func (f *fitter) clear(ctx context.Context, eligible func(int) bool, atLeast int) {
	if f.o.Keeper == nil || f.tokens <= f.maxTokens {
		return
	}
	saved := 0
	for i := range f.msgs {
		if f.tokens <= f.maxTokens && saved >= atLeast {
			return
		}
		m := &f.msgs[i]
		if !f.keep[i] || m.Role != RoleTool || !eligible(i) {
			continue
		}
		if _, done := f.content[i]; done {
			continue
		}
		tokens := f.o.Counter.Count(m.Content)
		if tokens <= f.o.ClearAbove {
			continue
		}
		tool := f.toolOf(m.ToolCallID)
		recall, err := f.o.Keeper.Keep(ctx, tool, m.Content)
		if err != nil {
			continue
		}
		line := Placeholder(tool, tokens, recall)
		cleared := *m
		cleared.Content = line
		cost := MessageTokens(f.o.Counter, &cleared)
		if cost >= f.cost[i] {
			continue
		}
		f.content[i] = line
		f.tokens -= f.cost[i] - cost
		saved += f.cost[i] - cost
		f.cost[i] = cost
		f.cleared = append(f.cleared, Cleared{Index: i, Tool: tool, Tokens: tokens, Recall: recall})
	}
}

// toolOf returns the name of the function of the tool call id, "" when no
// assistant message makes it.
func (f *fitter) toolOf(id string) string {
	if id == "" {
		return ""
	}
	for i := range f.msgs {
		for _, tc := range f.msgs[i].ToolCalls {
			if tc.ID == id {
				return tc.Function.Name
			}
		}
	}
	return ""
}

// groupUnits partitions the indices of msgs into the units that are kept or
// dropped together, ordered by their first index, reports which units must
// stay, and which messages are the latest tool calls and their results.
func groupUnits(msgs []Message) ([][]int, []bool, map[int]bool) {
	parent := make([]int, len(msgs))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(a, b int) {
		ra, rb := find(a), find(b)
		if ra < rb {
			parent[rb] = ra
		} else if rb < ra {
			parent[ra] = rb
		}
	}

	lastUser := -1
	for i := range msgs {
		if msgs[i].Role == RoleUser {
			lastUser = i
		}
	}
	// Turns before the latest user message.
	turnStart := -1
	for i := 0; i < lastUser; i++ {
		switch {
		case msgs[i].Role == RoleSystem:
			continue
		case msgs[i].Role == RoleUser || turnStart < 0:
			turnStart = i
		default:
			union(turnStart, i)
		}
	}
	// Tool calls and their results.
	caller := map[string]int{}
	for i := range msgs {
		if msgs[i].Role != RoleAssistant {
			continue
		}
		for _, tc := range msgs[i].ToolCalls {
			if tc.ID != "" {
				if _, seen := caller[tc.ID]; !seen {
					caller[tc.ID] = i
				}
			}
		}
	}
	for i := range msgs {
		if msgs[i].Role == RoleTool && msgs[i].ToolCallID != "" {
			if a, ok := caller[msgs[i].ToolCallID]; ok {
				union(a, i)
			}
		}
	}

	index := map[int]int{} // root -> unit
	var units [][]int
	for i := range msgs {
		r := find(i)
		u, ok := index[r]
		if !ok {
			u = len(units)
			index[r] = u
			units = append(units, nil)
		}
		units[u] = append(units[u], i)
	}
	// The latest tool calls: the last assistant message, when it calls
	// tools after the latest user message, and the results that answer it.
	latest := map[int]bool{}
	for i := len(msgs) - 1; i > lastUser; i-- {
		if msgs[i].Role != RoleAssistant {
			continue
		}
		if len(msgs[i].ToolCalls) > 0 {
			latest[i] = true
			for j := i + 1; j < len(msgs); j++ {
				if msgs[j].Role == RoleTool && slices.ContainsFunc(msgs[i].ToolCalls, func(tc ToolCall) bool { return tc.ID == msgs[j].ToolCallID }) {
					latest[j] = true
				}
			}
		}
		break
	}
	mandatory := make([]bool, len(units))
	for u, members := range units {
		mandatory[u] = slices.ContainsFunc(members, func(i int) bool {
			return msgs[i].Role == RoleSystem || i == lastUser || latest[i]
		})
	}
	return units, mandatory, latest
}
