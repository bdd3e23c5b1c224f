package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctxfit/ctxfit/conversation"
)

// The history of a session (X-Session-ID), by this rule:
//
// The provider gets the session's stored history and then the request's
// new messages. A chat client often sends the whole conversation again
// with each request; what it sends that the session already has is not
// added twice. The request's messages are compared with the history's
// visible messages (system, user, and assistant messages that call no
// tool: those the client saw; the tool calls and results the agent ran
// and ctxfit's placeholders are not compared), by role, name and content:
// when the request starts with messages whose visible ones end as the
// history's visible ones end (the longest such start, and never the whole
// request), that start is the history the client holds, and only the
// messages after it are new. Otherwise every message of the request is
// new.

// appendNew returns the session's stored history with the request's new
// messages appended, by the rule above.
func appendNew(stored, req []conversation.Message) []conversation.Message {
	vis := visible(stored)
	out := append([]conversation.Message(nil), stored...)
	if len(vis) == 0 {
		return append(out, req...)
	}
	for k := len(req) - 1; k >= 1; k-- {
		if !isVisible(req[k-1]) {
			continue
		}
		rv := visible(req[:k])
		j := min(len(rv), len(vis))
		if j > 0 && sameMessages(rv[len(rv)-j:], vis[len(vis)-j:]) {
			return append(out, req[k:]...)
		}
	}
	return append(out, req...)
}

func isVisible(m conversation.Message) bool {
	switch m.Role {
	case conversation.RoleSystem:
		return !strings.HasPrefix(m.Content, droppedPrefix)
	case conversation.RoleUser:
		return true
	case conversation.RoleAssistant:
		return len(m.ToolCalls) == 0
	}
	return false
}

func visible(msgs []conversation.Message) []conversation.Message {
	var out []conversation.Message
	for _, m := range msgs {
		if isVisible(m) {
			out = append(out, m)
		}
	}
	return out
}

func sameMessages(a, b []conversation.Message) bool {
	for i := range a {
		if a[i].Role != b[i].Role || a[i].Name != b[i].Name || a[i].Content != b[i].Content {
			return false
		}
	}
	return true
}

// droppedPrefix starts the placeholder of the turns a fit dropped.
const droppedPrefix = "[ctxfit] Earlier messages of this conversation"

// droppedReserve is the room, in tokens, kept for that placeholder when
// turns must be dropped (its cursor included); a longer one is fitted
// again with its own cost.
const droppedReserve = 160

// fit fits msgs to limit tokens and the session's 20 messages
// (conversation.FitContext: old tool results cleared behind placeholders,
// then old turns dropped). Nothing is dropped silently: the turns a fit
// drops are kept by the client guard as one transcript, and one system
// message, after the leading system messages, says how many were dropped
// and how to read them back (ctxfit_next); the transcript starts with the
// placeholder of the turns dropped before, so that every dropped turn
// stays reachable.
func (a *agent) fit(ctx context.Context, msgs []conversation.Message, limit int) ([]conversation.Message, error) {
	opts := &conversation.Options{Counter: a.counter, Keeper: a.cg, MaxMessages: sessionMaxMessages}
	r, err := conversation.FitContext(ctx, msgs, limit, opts)
	if err == nil && len(r.Dropped) == 0 {
		return r.Messages, nil
	}
	// Turns must go: fit again without the old placeholder, with room for
	// the new one.
	var prev string
	rest := make([]conversation.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role == conversation.RoleSystem && strings.HasPrefix(m.Content, droppedPrefix) {
			prev = m.Content
			continue
		}
		rest = append(rest, m)
	}
	opts.MaxMessages = sessionMaxMessages - 1
	reserve := droppedReserve
	for range 2 {
		r, err = conversation.FitContext(ctx, rest, max(limit-reserve, 1), opts)
		if err != nil {
			return nil, err
		}
		if len(r.Dropped) == 0 {
			return r.Messages, nil // with the old placeholder gone, the rest fits
		}
		var transcript strings.Builder
		if prev != "" {
			transcript.WriteString(prev + "\n\n")
		}
		for _, i := range r.Dropped {
			writeTranscript(&transcript, rest[i])
		}
		line := conversation.Message{Role: conversation.RoleSystem}
		what := fmt.Sprintf("%s (%d messages, %d tokens) were dropped to fit the context window.", droppedPrefix, len(r.Dropped), a.counter.Count(transcript.String()))
		if recall, err := a.cg.Keep(ctx, "", transcript.String()); err == nil {
			line.Content = fmt.Sprintf("%s To read them again call %s with %s.", what, recall.Tool, recall.Arguments)
		} else {
			// The guard keeps no snapshot (replay mode, a full store): the
			// model still learns that turns went.
			a.logger.Warn("agent: the dropped turns could not be kept", "err", err)
			line.Content = what + " They cannot be read back."
		}
		cost := conversation.MessageTokens(a.counter, &line)
		if cost > reserve {
			reserve = cost
			continue
		}
		at := 0
		for at < len(r.Messages) && r.Messages[at].Role == conversation.RoleSystem {
			at++
		}
		return append(r.Messages[:at:at], append([]conversation.Message{line}, r.Messages[at:]...)...), nil
	}
	return nil, fmt.Errorf("agent: the placeholder of the dropped turns does not fit in %d tokens", limit)
}

// writeTranscript writes one message of a transcript of dropped turns.
func writeTranscript(b *strings.Builder, m conversation.Message) {
	fmt.Fprintf(b, "%s", m.Role)
	if m.ToolCallID != "" {
		fmt.Fprintf(b, " (answer to %s)", m.ToolCallID)
	}
	b.WriteString(": " + m.Content)
	for _, tc := range m.ToolCalls {
		fmt.Fprintf(b, "\n[called %s (%s) with %s]", tc.Function.Name, tc.ID, tc.Function.Arguments)
	}
	b.WriteString("\n\n")
}
