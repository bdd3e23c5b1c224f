// Command mcpserver is an MCP server, built with the official Go SDK, whose
// tools return more than fits a model's context window, guarded by ctxfit:
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
//	mcpserver                       # stdio
//	mcpserver -http 127.0.0.1:8080  # streamable HTTP at http://127.0.0.1:8080/mcp
//	mcpserver -raw                  # the same tools without ctxfit
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
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config"
	"github.com/ctxfit/ctxfit/internal/demodata/bookingtools"
	"github.com/ctxfit/ctxfit/mcpfit"
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
		logger.Error("mcpserver", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, httpAddr string, raw bool, logger *slog.Logger) error {
	server, closeGuard, err := newServer(raw, os.Getenv, logger)
	if err != nil {
		return err
	}
	defer closeGuard()
	if httpAddr == "" {
		return server.Run(ctx, &mcp.StdioTransport{})
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	ln, err := net.Listen("tcp", httpAddr)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	logger.Info("mcpserver: serving streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "raw", raw)
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
func newServer(raw bool, getenv func(string) string, logger *slog.Logger) (*mcp.Server, func() error, error) {
	server := mcp.NewServer(&mcp.Implementation{Name: "ctxfit-example", Version: "1.0.0"}, &mcp.ServerOptions{Logger: logger})
	addTools(server)
	if raw {
		return server, func() error { return nil }, nil
	}
	g, closeGuard, err := newGuard(getenv, logger)
	if err != nil {
		return nil, nil, err
	}
	if err := mcpfit.Install(server, g, nil); err != nil {
		_ = closeGuard()
		return nil, nil, err
	}
	return server, closeGuard, nil
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
	Status string `json:"status,omitempty" jsonschema:"only bookings with this status: confirmed, pending, cancelled, checked_in or completed; empty for all"`
}

type getInput struct {
	ID string `json:"id" jsonschema:"the booking id, e.g. BK00001"`
}

type logInput struct {
	Name string `json:"name,omitempty" jsonschema:"the log to read; empty means app.log"`
}

type searchInput struct {
	Query string `json:"query" jsonschema:"text to find in the id, status, guest name, email, notes or tags; empty matches all"`
	Limit int    `json:"limit,omitempty" jsonschema:"the most results to return; 0 means all"`
}

func addTools(s *mcp.Server) {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}
	mcp.AddTool(s, &mcp.Tool{Name: "list_bookings", Description: "List the bookings (500 of them), optionally by status.", Annotations: readOnly},
		func(_ context.Context, _ *mcp.CallToolRequest, in listInput) (*mcp.CallToolResult, any, error) {
			return jsonResult(bookingtools.ListBookings(in.Status))
		})
	mcp.AddTool(s, &mcp.Tool{Name: "get_booking", Description: "Get every detail of one booking by id.", Annotations: readOnly},
		func(_ context.Context, _ *mcp.CallToolRequest, in getInput) (*mcp.CallToolResult, any, error) {
			b, err := bookingtools.GetBooking(in.ID)
			if err != nil {
				return nil, nil, err
			}
			return jsonResult(b)
		})
	mcp.AddTool(s, &mcp.Tool{Name: "read_log", Description: "Read the application log (app.log).", Annotations: readOnly},
		func(_ context.Context, _ *mcp.CallToolRequest, in logInput) (*mcp.CallToolResult, any, error) {
			text, err := bookingtools.ReadLog(in.Name)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "search_bookings", Description: "Search the bookings; the result has an output schema.", Annotations: readOnly},
		func(_ context.Context, _ *mcp.CallToolRequest, in searchInput) (*mcp.CallToolResult, bookingtools.SearchResult, error) {
			return nil, bookingtools.SearchBookings(in.Query, in.Limit), nil
		})
}

// jsonResult is a tool result with v as JSON text.
func jsonResult(v any) (*mcp.CallToolResult, any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, nil, fmt.Errorf("mcpserver: encoding the result: %w", err)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
}
