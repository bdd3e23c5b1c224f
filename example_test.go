package ctxfit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/cursor"
)

// exampleSecret signs cursors; a real one comes from the environment
// (CTXFIT_SECRET), at least 32 bytes.
const exampleSecret = "an example secret of at least thirty-two bytes"

// orders is a handler's response: 300 orders, about 16,000 tokens.
func orders(context.Context) (ctxfit.Response, error) {
	list := make([]map[string]any, 300)
	for i := range list {
		list[i] = map[string]any{"id": fmt.Sprintf("ORD-%04d", i+1), "status": "shipped",
			"note": strings.Repeat("handle with care ", 3)}
	}
	body, err := json.Marshal(list)
	return ctxfit.Response{Body: body, ContentType: "application/json"}, err
}

func ExampleNew() {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{
		Threshold: 2000,
		HardCap:   6000,
		Secret:    exampleSecret,
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	fmt.Println(g.Config().Threshold, g.Config().HardCap, time.Duration(g.Config().CursorTTL))
	// Output: 2000 6000 10m0s
}

// A response over the threshold comes back as its first page, with a
// cursor; following the cursors gives every item back, exactly once.
func ExampleGuard_Handle() {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Threshold: 2000, Secret: exampleSecret}})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	ctx := context.Background()
	req := ctxfit.Request{Endpoint: "GET /orders", Method: "GET", Path: "/orders", Subject: "alice"}

	res, err := g.Handle(ctx, req, orders)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Strategy, res.Shaped, res.Record.TokensAfter <= 2000)
	items, pages := 0, 0
	for {
		var page struct {
			Items      []json.RawMessage `json:"items"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(res.Body, &page); err != nil {
			log.Fatal(err)
		}
		items += len(page.Items)
		pages++
		if res.Next == "" {
			break
		}
		req.Cursor = res.Next // the same cursor as page.NextCursor
		if res, err = g.Handle(ctx, req, orders); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(items, "items in", pages, "pages")
	// Output:
	// pagination true true
	// 300 items in 6 pages
}

// Resume tells an adapter what request a cursor continues: the endpoint,
// path and filters it was issued for.
func ExampleGuard_Resume() {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: exampleSecret}})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "list_orders", Path: "list_orders", Subject: "session-1"}, orders)
	if err != nil {
		log.Fatal(err)
	}
	req, err := g.Resume(res.Next, "session-1")
	fmt.Println(req.Endpoint, err)
	_, err = g.Resume(res.Next, "session-2")
	fmt.Println(errors.Is(err, cursor.ErrMismatch))
	// Output:
	// list_orders <nil>
	// true
}

// ProblemOf turns a Guard's error into what a client is told: a status, a
// stable code, and what to do next.
func ExampleProblemOf() {
	g, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: exampleSecret}})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	_, err = g.Handle(context.Background(), ctxfit.Request{Endpoint: "GET /orders", Cursor: "not-a-cursor"}, orders)
	p := ctxfit.ProblemOf(err, ctxfit.Params{})
	fmt.Println(p.Status, p.Code, p.Parameter)
	fmt.Println(p.Suggestion != "")
	// Output:
	// 400 cursor_invalid cursor
	// true
}
