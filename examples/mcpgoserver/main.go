// Command mcpgoserver is an MCP server, built with mark3labs/mcp-go, whose
// tools return more than fits a model's context window, guarded by ctxfit
// (package mcpgofit). It serves the same tools as examples/mcpserver (the
// official Go SDK):
//
//   - list_bookings: 500 bookings (filter by status), paged;
//   - get_booking: one verbose booking of about 3,200 tokens, summarized
//     (the example sets its threshold to 2,000), with ctxfit_details for
//     the rest;
//   - read_log: a 10,000-line log with stack traces, chunked at line
//     boundaries;
//   - search_bookings: a search with a typed output schema, paged inside
//     its structured content.
//
// Usage:
//
//	mcpgoserver                       # stdio
//	mcpgoserver -http 127.0.0.1:8080  # streamable HTTP at http://127.0.0.1:8080/mcp
//	mcpgoserver -raw                  # the same tools without ctxfit
//
// Settings come from CTXFIT_* environment variables or the file named by
// CTXFIT_CONFIG (see package config), merged with the example's per-tool
// endpoints (an operator's endpoint of the same name wins).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/mcpgofit"
	"github.com/ctxfit/ctxfit/store/redisstore"
)

func main() {
	httpAddr := flag.String("http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of stdio")
	raw := flag.Bool("raw", false, "serve the tools without ctxfit")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil)) // stdout belongs to the stdio transport
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *httpAddr, *raw, logger); err != nil {
		logger.Error("mcpgoserver", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, httpAddr string, raw bool, logger *slog.Logger) error {
	s, closeGuard, err := newServer(raw, os.Getenv, logger)
	if err != nil {
		return err
	}
	defer closeGuard()
	if httpAddr == "" {
		stdio := server.NewStdioServer(s)
		stdio.SetErrorLogger(log.New(os.Stderr, "mcpgoserver: ", 0))
		return stdio.Listen(ctx, os.Stdin, os.Stdout)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(s, server.WithEndpointPath("/mcp")))
	hs := &http.Server{Addr: httpAddr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.ListenAndServe() }()
	logger.Info("mcpgoserver: serving streamable HTTP", "url", "http://"+httpAddr+"/mcp", "raw", raw)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

// newServer returns the example server, guarded by ctxfit unless raw, and
// a function that releases the guard.
func newServer(raw bool, getenv func(string) string, logger *slog.Logger) (*server.MCPServer, func() error, error) {
	s := server.NewMCPServer("ctxfit-example", "1.0.0", server.WithToolCapabilities(false), server.WithOutputSchemaValidation())
	addTools(s)
	if raw {
		return s, func() error { return nil }, nil
	}
	g, closeGuard, err := newGuard(getenv, logger)
	if err != nil {
		return nil, nil, err
	}
	// Install after the tools are registered: it rewrites their output
	// schemas so that shaped results validate.
	if err := mcpgofit.Install(s, g, nil); err != nil {
		_ = closeGuard()
		return nil, nil, err
	}
	return s, closeGuard, nil
}

// newGuard returns the example's guard: settings from config.Load (CTXFIT_*
// variables and the CTXFIT_CONFIG file) with the example's endpoints, and the
// Redis store when CTXFIT_REDIS_URL is set. The returned function closes the
// guard, then the store.
func newGuard(getenv func(string) string, logger *slog.Logger) (*ctxfit.Guard, func() error, error) {
	cfg, err := config.Load("", getenv)
	if err != nil {
		return nil, nil, err
	}
	cfg.Endpoints = bookingtools.WithEndpoints(cfg.Endpoints)
	st, err := redisstore.FromURL(cfg.RedisURL, &redisstore.Options{Timeout: time.Duration(cfg.StoreTimeout)}) // nil unless CTXFIT_REDIS_URL is set
	if err != nil {
		return nil, nil, err
	}
	closeStore := func() error {
		if st == nil {
			return nil
		}
		return st.Close()
	}
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Store: st, Logger: logger})
	if err != nil {
		return nil, nil, errors.Join(err, closeStore())
	}
	return g, func() error { return errors.Join(g.Close(), closeStore()) }, nil
}

type listInput struct {
	Status string `json:"status,omitempty"`
}

type getInput struct {
	ID string `json:"id"`
}

type logInput struct {
	Name string `json:"name,omitempty"`
}

type searchInput struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty"`
}

func addTools(s *server.MCPServer) {
	readOnly := mcp.WithReadOnlyHintAnnotation(true)
	s.AddTool(mcp.NewTool("list_bookings", mcp.WithDescription("List the bookings (500 of them), optionally by status."), readOnly,
		mcp.WithString("status", mcp.Description("only bookings with this status: "+strings.Join(bookingtools.Statuses, ", ")+"; empty for all"))),
		mcp.NewTypedToolHandler(func(_ context.Context, _ mcp.CallToolRequest, in listInput) (*mcp.CallToolResult, error) {
			return jsonResult(bookingtools.ListBookings(in.Status))
		}))
	s.AddTool(mcp.NewTool("get_booking", mcp.WithDescription("Get every detail of one booking by id."), readOnly,
		mcp.WithString("id", mcp.Required(), mcp.Description("the booking id, e.g. BK00001"))),
		mcp.NewTypedToolHandler(func(_ context.Context, _ mcp.CallToolRequest, in getInput) (*mcp.CallToolResult, error) {
			b, err := bookingtools.GetBooking(in.ID)
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return jsonResult(b)
		}))
	s.AddTool(mcp.NewTool("read_log", mcp.WithDescription("Read the application log (app.log)."), readOnly,
		mcp.WithString("name", mcp.Description("the log to read; empty means app.log"))),
		mcp.NewTypedToolHandler(func(_ context.Context, _ mcp.CallToolRequest, in logInput) (*mcp.CallToolResult, error) {
			text, err := bookingtools.ReadLog(in.Name)
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(text), nil
		}))
	s.AddTool(mcp.NewTool("search_bookings", mcp.WithDescription("Search the bookings; the result has an output schema."), readOnly,
		mcp.WithString("query", mcp.Required(), mcp.Description("text to find in the id, status, guest name, email, notes or tags; empty matches all")),
		mcp.WithNumber("limit", mcp.Description("the most results to return; 0 means all")),
		mcp.WithOutputSchema[bookingtools.SearchResult]()),
		mcp.NewStructuredToolHandler(func(_ context.Context, _ mcp.CallToolRequest, in searchInput) (bookingtools.SearchResult, error) {
			return bookingtools.SearchBookings(in.Query, in.Limit), nil
		}))
}

// jsonResult is a tool result with v as JSON text.
func jsonResult(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("mcpgoserver: encoding the result: %w", err)
	}
	return mcp.NewToolResultText(string(b)), nil
}
