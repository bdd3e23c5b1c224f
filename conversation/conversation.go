// Package conversation fits a chat conversation into a token budget: the
// OpenAI-compatible middleware's Session with max_messages, made to count
// tokens.
//
// [Fit] keeps the system messages and the latest user message, drops the
// oldest turns first, never separates an assistant message that calls tools
// from the tool results that answer it, and reports what it dropped.
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
	"errors"
	"fmt"
	"slices"

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
	// messages and the latest user message, with any tool exchange tied to
	// them) are over the token limit or the message limit on their own. The
	// error is a [*MandatoryError].
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
		return fmt.Sprintf("conversation: the %d messages that must stay (system messages and the latest user message) exceed the limit of %d messages; raise MaxMessages or merge system messages",
			e.Messages, e.MaxMessages)
	}
	return fmt.Sprintf("conversation: the messages that must stay (system messages and the latest user message) take %d tokens, more than the limit of %d; shorten them, summarize the latest tool results, or raise the limit",
		e.Tokens, e.MaxTokens)
}

// Unwrap returns [ErrMandatoryOverBudget].
func (e *MandatoryError) Unwrap() error { return ErrMandatoryOverBudget }

// Options configure [Fit]. The zero value (or a nil *Options) gives the
// defaults listed with each field.
type Options struct {
	// Counter counts the tokens of the text of messages. Nil means
	// budget.Exact("o200k_base"). It must be safe for concurrent use.
	Counter budget.Counter
	// MaxMessages is the largest number of messages kept, as the
	// middleware's Session.max_messages (whose default is 20). Zero means no
	// limit; must be >= 0.
	MaxMessages int
}

// Result is a fitted conversation and what was dropped to fit it.
//
// The zero value is an empty conversation. A Result is a plain value.
type Result struct {
	// Messages are the messages kept, in their original order. They share
	// memory with the input.
	Messages []Message
	// Kept and Dropped are the indices in the input of the messages kept
	// and dropped, ascending.
	Kept, Dropped []int
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

// Fit returns the messages of msgs that fit in maxTokens tokens (and
// opts.MaxMessages messages), by these rules:
//
//   - System messages and the latest user message always stay.
//   - Messages are dropped by units, oldest first: before the latest user
//     message a unit is a turn (a user message and the messages that follow
//     it up to the next user message; the messages before the first user
//     message form a turn too); after it, a unit is a message, except that
//   - an assistant message with tool calls and the tool messages that
//     answer them (by tool_call_id) are one unit, wherever they are: they
//     stay or go together. A unit that holds a system message or the latest
//     user message stays.
//   - Units are dropped until the rest fits both limits; the kept messages
//     keep their order.
//
// When the messages that must stay do not fit on their own, Fit returns a
// [*MandatoryError]. msgs is not modified. maxTokens must be > 0. Fit is
// safe for concurrent use when the counter is.
func Fit(msgs []Message, maxTokens int, opts *Options) (Result, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if maxTokens <= 0 {
		return Result{}, fmt.Errorf("%w: maxTokens %d must be > 0", ErrInvalidOptions, maxTokens)
	}
	if o.MaxMessages < 0 {
		return Result{}, fmt.Errorf("%w: MaxMessages %d must be >= 0 (0 for no limit)", ErrInvalidOptions, o.MaxMessages)
	}
	if o.Counter == nil {
		c, err := budget.Exact(budget.O200KBase)
		if err != nil {
			return Result{}, fmt.Errorf("conversation: default counter: %w", err)
		}
		o.Counter = c
	}

	cost := make([]int, len(msgs))
	total := ReplyOverhead
	for i := range msgs {
		cost[i] = MessageTokens(o.Counter, &msgs[i])
		total += cost[i]
	}
	units, mandatory := groupUnits(msgs)

	keep := make([]bool, len(msgs))
	for i := range keep {
		keep[i] = true
	}
	tokens, count := total, len(msgs)
	fits := func() bool {
		return tokens <= maxTokens && (o.MaxMessages == 0 || count <= o.MaxMessages)
	}
	// units are ordered by their first message: oldest first.
	for u, members := range units {
		if fits() {
			break
		}
		if mandatory[u] {
			continue
		}
		for _, i := range members {
			keep[i] = false
			tokens -= cost[i]
			count--
		}
	}
	if !fits() {
		return Result{}, &MandatoryError{Tokens: tokens, MaxTokens: maxTokens, Messages: count, MaxMessages: o.MaxMessages}
	}
	r := Result{TokensBefore: total, TokensAfter: tokens, Kept: []int{}, Dropped: []int{}, Messages: []Message{}}
	for i, k := range keep {
		if k {
			r.Kept = append(r.Kept, i)
			r.Messages = append(r.Messages, msgs[i])
		} else {
			r.Dropped = append(r.Dropped, i)
		}
	}
	return r, nil
}

// groupUnits partitions the indices of msgs into the units that are kept or
// dropped together, ordered by their first index, and reports which units
// must stay.
func groupUnits(msgs []Message) ([][]int, []bool) {
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
	mandatory := make([]bool, len(units))
	for u, members := range units {
		mandatory[u] = slices.ContainsFunc(members, func(i int) bool {
			return msgs[i].Role == RoleSystem || i == lastUser
		})
	}
	return units, mandatory
}
