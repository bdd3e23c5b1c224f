package main

import (
	_ "embed"
	"net/http"
	"strconv"
)

// openAPIDocument is the OpenAPI 3.1 description of the routes this server
// serves: the API of package bookings as ctxfit shapes it, and /healthz. It
// is written by hand; openapi_test.go checks it against the routes.
//
//go:embed openapi.json
var openAPIDocument []byte

// serveOpenAPI answers GET /openapi.json with the description, so that
// `ctxfit gateway --openapi http://ADDR/openapi.json` turns the API into
// MCP tools.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(openAPIDocument)))
	_, _ = w.Write(openAPIDocument)
}
