// Command httpserver serves the demo bookings API behind ctxfit's net/http
// middleware, with its telemetry as Prometheus metrics, a report of what
// ctxfit did and log lines, and a liveness check.
//
//	go run ./examples/httpserver -addr 127.0.0.1:8080
//
//	curl -s 'localhost:8080/api/v1/bookings' | head -c 600        # a page and a nextCursor
//	curl -s 'localhost:8080/api/v1/bookings?cursor=...'           # the next page
//	curl -si 'localhost:8080/api/v1/bookings' | grep -i '^link\|^etag'  # its URL; the page's tag
//	curl -s 'localhost:8080/api/v1/bookings/BK00042'              # a summary
//	curl -s 'localhost:8080/api/v1/bookings/BK00042?fields=all'   # the whole booking
//	curl -s 'localhost:8080/api/v1/logs/app'                      # a chunk of a 10,000-line log
//	curl -s 'localhost:8080/debug/ctxfit'                         # what ctxfit did so far
//	curl -s 'localhost:8080/metrics' | grep ctxfit_               # the same, as metrics
//	curl -s 'localhost:8080/healthz'                              # {"status":"ok"}
//
// Routes:
//
//	/api/v1/...    the API of internal/demodata/bookings, behind httpfit.Middleware
//	/debug/ctxfit  httpfit.HealthHandler over a telemetry.Aggregate: the
//	               status (ok or degraded) and summaries of the traffic
//	/metrics       OpenTelemetry metrics (telemetry/otelsink) through the
//	               Prometheus exporter
//	/healthz       a liveness check: 200 {"status":"ok"} while the process
//	               serves HTTP; it computes nothing, so a probe that calls it
//	               every second costs nothing
//	/openapi.json  the OpenAPI 3.1 description of /api/v1 and /healthz, for
//	               `ctxfit gateway --openapi http://ADDR/openapi.json`
//
// /debug/ctxfit, /metrics and /healthz are outside the middleware: they are
// for operators, scrapers and probes, and a scrape must not come back as
// JSON chunks. /debug/ctxfit tells which endpoints were called and how
// often: serve it to operators only.
//
// Settings come from the CTXFIT_* environment variables and the file named
// by CTXFIT_CONFIG (package config), laid over the example's endpoint
// settings (bookings.Config: the detail endpoint has a threshold of 2,000
// tokens, so a booking of about 3,200 tokens is summarized). Set
// CTXFIT_SECRET to a random string of 32 bytes or more to keep cursors valid
// across restarts, and CTXFIT_REDIS_URL (redis://host:port/db) to share
// snapshots between instances. The server stops gracefully on SIGINT or
// SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/config"
	"github.com/ctxfit/ctxfit/httpfit"
	"github.com/ctxfit/ctxfit/internal/demodata/bookings"
	"github.com/ctxfit/ctxfit/store"
	"github.com/ctxfit/ctxfit/store/redisstore"
	"github.com/ctxfit/ctxfit/telemetry"
	"github.com/ctxfit/ctxfit/telemetry/otelsink"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	flag.BoolVar(&serveRaw, "raw", false, "serve the API without the ctxfit middleware (the bare side of scripts/load.sh)")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, os.Getenv, logger, nil); err != nil {
		logger.Error("httpserver: " + err.Error())
		os.Exit(1)
	}
}

// serveRaw, set by -raw, serves /api/ without the middleware: the bare API, for
// comparing its throughput and latency with the wrapped one.
var serveRaw bool

// run serves on addr until ctx is done, then shuts down gracefully. ready,
// if not nil, is called with the address once the server listens.
func run(ctx context.Context, addr string, getenv func(string) string, logger *slog.Logger, ready func(addr string)) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	s, err := newServer(cfg, logger)
	if err != nil {
		return err
	}
	defer s.Close()
	if path := getenv(config.EnvConfig); path != "" {
		// Hot reload: a valid change of the file applies to new requests;
		// an invalid one is logged and the running settings stay.
		w, err := config.Watch(ctx, path, &config.WatchOptions{Getenv: getenv, Logger: logger,
			OnChange: func(_, next ctxfit.Config) {
				if err := s.guard.Reload(withExampleEndpoints(next)); err != nil {
					logger.Error("httpserver: reload refused", "err", err)
				}
			}})
		if err != nil {
			return err
		}
		defer w.Close()
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Info("httpserver: listening", "addr", "http://"+ln.Addr().String(),
		"try", "http://"+ln.Addr().String()+"/api/v1/bookings")
	if ready != nil {
		ready(ln.Addr().String())
	}

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("httpserver: shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loadConfig returns the settings of the environment (and CTXFIT_CONFIG's
// file) with the example's endpoint settings for the endpoints they do not
// name.
func loadConfig(getenv func(string) string) (ctxfit.Config, error) {
	cfg, err := config.Load("", getenv)
	if err != nil {
		return ctxfit.Config{}, err
	}
	return withExampleEndpoints(cfg), nil
}

func withExampleEndpoints(cfg ctxfit.Config) ctxfit.Config {
	cfg.Endpoints = slices.Clone(cfg.Endpoints)
	for _, ep := range bookings.Config().Endpoints {
		if !slices.ContainsFunc(cfg.Endpoints, func(e ctxfit.Endpoint) bool { return e.Match == ep.Match }) {
			cfg.Endpoints = append(cfg.Endpoints, ep)
		}
	}
	return cfg
}

// server is the example's wiring: the API behind the middleware, the health
// report and the metrics.
type server struct {
	http.Handler
	guard     *ctxfit.Guard
	aggregate *telemetry.Aggregate
	provider  *sdkmetric.MeterProvider
	store     store.Store // nil: the Guard's in-memory store
}

// newServer wires the example: a Guard configured by cfg whose telemetry
// goes to an Aggregate (for /debug/ctxfit), OpenTelemetry metrics (for
// /metrics) and logger; the API behind httpfit.Middleware; and /healthz.
func newServer(cfg ctxfit.Config, logger *slog.Logger) (*server, error) {
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry))
	if err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	metrics, err := otelsink.New(provider)
	if err != nil {
		_ = provider.Shutdown(context.Background())
		return nil, err
	}
	aggregate := telemetry.NewAggregate(nil)
	st, err := redisstore.FromURL(cfg.RedisURL, &redisstore.Options{Timeout: time.Duration(cfg.StoreTimeout)})
	if err != nil {
		_ = provider.Shutdown(context.Background())
		return nil, err
	}
	guard, err := ctxfit.New(&ctxfit.Options{
		Config: cfg,
		Store:  st,
		Sink:   telemetry.Multi(aggregate, metrics, telemetry.NewSlogSink(logger)),
		Logger: logger,
	})
	if err != nil {
		if st != nil {
			_ = st.Close()
		}
		_ = provider.Shutdown(context.Background())
		return nil, err
	}

	mux := http.NewServeMux()
	if serveRaw {
		mux.Handle("/api/", bookings.Handler())
	} else {
		mux.Handle("/api/", httpfit.Middleware(guard, nil)(bookings.Handler()))
	}
	mux.Handle("GET /debug/ctxfit", httpfit.HealthHandler(aggregate))
	mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", alive)
	mux.HandleFunc("GET /openapi.json", serveOpenAPI)
	return &server{Handler: mux, guard: guard, aggregate: aggregate, provider: provider, store: st}, nil
}

// alive answers a liveness probe: the process serves HTTP. It reads
// nothing and computes nothing (the report of what ctxfit did is
// /debug/ctxfit).
func alive(w http.ResponseWriter, _ *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, "{\"status\":\"ok\"}\n")
}

// Close flushes the telemetry and releases the Guard, the Redis store if
// any and the meter provider.
func (s *server) Close() error {
	err := errors.Join(s.guard.Close(), s.provider.Shutdown(context.Background()))
	if s.store != nil {
		err = errors.Join(err, s.store.Close())
	}
	return err
}
