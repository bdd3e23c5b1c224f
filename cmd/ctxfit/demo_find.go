package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

// addFindTools adds the tools demoFind asks questions of: read_log serves
// a generated 10,000-line log.
func addFindTools(server *mcp.Server, log string) {
	mcp.AddTool(server, &mcp.Tool{Name: "read_log", Description: "Read the application log.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: log}}}, nil, nil
		})
}

// cost is what answering a question took: calls and the tokens the model
// read.
type cost struct{ calls, tokens int }

// demoFind answers two questions twice, by reading page after page and by
// one ctxfit_search or ctxfit_query call, and shows the costs side by side.
func demoFind(ctx context.Context, w io.Writer, counter budget.Counter, cs *mcp.ClientSession, log string) error {
	fmt.Fprintf(w, "\n== Find, don't page: a search and a query instead of reading on\n\n")
	read := func(res *mcp.CallToolResult) (string, int) {
		var texts []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				texts = append(texts, tc.Text)
			}
		}
		all := strings.Join(texts, "\n")
		return all, counter.Count(all)
	}
	call := func(name string, args map[string]any) (*mcp.CallToolResult, error) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err == nil && res.IsError {
			text, _ := read(res)
			err = fmt.Errorf("%s: %s", name, text)
		}
		return res, err
	}
	// page calls tool, then ctxfit_next until done(text) or the end.
	page := func(tool string, done func(string) bool) (cost, *mcp.CallToolResult, error) {
		var c cost
		res, err := call(tool, nil)
		first := res
		for err == nil {
			text, tokens := read(res)
			c.calls++
			c.tokens += tokens
			next, _ := res.Meta["dev.ctxfit/nextCursor"].(string)
			if done(text) || next == "" {
				return c, first, nil
			}
			res, err = call("ctxfit_next", map[string]any{"cursor": next})
		}
		return c, nil, err
	}

	// Question 1: on which line of the log is the last entry about a
	// locked booking? Paging reads until it passes the end.
	locked := regexp.MustCompile(`booking (BK\d+) is locked`)
	all := locked.FindAllStringSubmatch(log, -1)
	if len(all) == 0 {
		return fmt.Errorf("the generated log has no locked booking")
	}
	id := all[len(all)-1][1]
	wantLine := 0
	for i, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "booking "+id+" is locked") {
			wantLine = i + 1
		}
	}
	paged, first, err := page("read_log", func(text string) bool { return false }) // the last one: read to the end
	if err != nil {
		return err
	}
	cursor, _ := first.Meta["dev.ctxfit/nextCursor"].(string)
	res, err := call("ctxfit_search", map[string]any{"cursor": cursor, "pattern": "booking " + id + " is locked", "literal": true})
	if err != nil {
		return err
	}
	text, tokens := read(res)
	var found struct {
		Matches []struct {
			Line int `json:"line"`
		} `json:"matches"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(text, "\n", 2)[0]), &found); err != nil || len(found.Matches) == 0 {
		return fmt.Errorf("ctxfit_search found nothing: %.200s", text)
	}
	searched := cost{calls: 2, tokens: counterOf(counter, first) + tokens} // the first chunk, then the search
	gotLine := found.Matches[len(found.Matches)-1].Line

	// Question 2: how many bookings are confirmed? Paging reads every
	// page and counts.
	confirmed := 0
	for _, b := range bookingtools.ListBookings("") {
		if b.Status == "confirmed" {
			confirmed++
		}
	}
	pagedList, firstPage, err := page("list_bookings", func(string) bool { return false })
	if err != nil {
		return err
	}
	cursor, _ = firstPage.Meta["dev.ctxfit/nextCursor"].(string)
	res, err = call("ctxfit_query", map[string]any{"cursor": cursor, "expression": `[.[] | select(.status == "confirmed")] | length`})
	if err != nil {
		return err
	}
	text, tokens = read(res)
	queried := cost{calls: 2, tokens: counterOf(counter, firstPage) + tokens}

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "question\treading on: calls\ttokens\tfinding: calls\ttokens\tanswer (checked)\n")
	fmt.Fprintf(tw, "last line about a locked booking (%d-line log)\t%d\t%d\t%d\t%d\tline %d (%v)\n",
		len(strings.Split(strings.TrimSuffix(log, "\n"), "\n")), paged.calls, paged.tokens, searched.calls, searched.tokens, gotLine, gotLine == wantLine)
	fmt.Fprintf(tw, "how many of the 500 bookings are confirmed\t%d\t%d\t%d\t%d\t%s (%v)\n",
		pagedList.calls, pagedList.tokens, queried.calls, queried.tokens, answerOf(text), answerOf(text) == fmt.Sprint(confirmed))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "Finding is the first call plus one ctxfit_search or ctxfit_query; the answers are checked against the data.\n")
	return nil
}

// counterOf counts the text blocks of a result.
func counterOf(counter budget.Counter, res *mcp.CallToolResult) int {
	n := 0
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			n += counter.Count(tc.Text)
		}
	}
	return n
}

// answerOf is a query's answer: the one value of its results (the first
// text block, a JSON array of the expression's outputs).
func answerOf(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	var out []json.RawMessage
	if json.Unmarshal([]byte(line), &out) == nil && len(out) == 1 {
		return string(out[0])
	}
	return strings.TrimSpace(line)
}

// demoLog is the log demoFind reads: the chunk demo's.
func demoLog() string { return corpus.Log(10000) }
