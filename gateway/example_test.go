package gateway_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/gateway"
)

// The gateway in front of a small API: one tool per operation, guarded by
// ctxfit, with the arguments checked before the call.
func ExampleNew() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"`+r.PathValue("id")+`","name":"Ada"}`)
	})
	api := httptest.NewServer(mux)
	defer api.Close()
	doc, err := gateway.Parse(context.Background(), []byte(`{
		"openapi": "3.1.0",
		"info": {"title": "Users", "version": "1"},
		"paths": {"/users/{id}": {"get": {
			"operationId": "getUser", "summary": "Get a user",
			"parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^u[0-9]+$"}}],
			"responses": {"200": {"description": "The user.", "content": {"application/json": {"schema": {"type": "object"}}}}}
		}}}
	}`))
	if err != nil {
		panic(err)
	}
	guard, err := ctxfit.New(&ctxfit.Options{Config: ctxfit.Config{Secret: "an example secret of 32 bytes or more"}})
	if err != nil {
		panic(err)
	}
	defer guard.Close()
	gw, err := gateway.New(doc, guard, &gateway.Options{BaseURL: api.URL})
	if err != nil {
		panic(err)
	}
	defer gw.Close()

	ct, st := mcp.NewInMemoryTransports()
	if _, err := gw.Server().Connect(context.Background(), st, nil); err != nil {
		panic(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()

	for _, id := range []string{"u7", "7"} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "getUser", Arguments: map[string]any{"id": id}})
		if err != nil {
			panic(err)
		}
		fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// false {"id":"u7","name":"Ada"}
	// true Error parameter_invalid: '7' does not match pattern '^u[0-9]+$'. Argument "id" (got "7") should be a string that matches the pattern ^u[0-9]+$. Send a value of the form the pattern describes (see the parameter's description for an example).
}
