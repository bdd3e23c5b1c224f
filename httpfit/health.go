package httpfit

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/ctxfit/ctxfit/telemetry"
)

// HealthHandler returns a handler that serves a's [telemetry.HealthReport]
// as JSON: the status ("ok" or "degraded", when the oversize rate of the
// retained window is above its threshold), and the summaries of the window,
// of each endpoint and of the running totals.
//
// It reads nothing from the request but its method. It answers GET and HEAD
// with 200, application/json and Cache-Control: no-store, whatever the
// status in the report (a degraded report is a reason to look, not to take
// the instance out of service); other methods get 405 with Allow. It is safe
// for concurrent use. It panics if a is nil.
//
// Mount it outside [Middleware], at a path of its own (examples/httpserver
// serves it at /debug/ctxfit), not as a liveness probe: it summarizes the
// retained window on every request, and it tells which endpoints were
// called and how often, which is for operators and monitors only. A
// liveness check needs none of it.
func HealthHandler(a *telemetry.Aggregate) http.Handler {
	if a == nil {
		panic("httpfit: HealthHandler needs a *telemetry.Aggregate; create one with telemetry.NewAggregate")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "httpfit: the health report answers GET and HEAD only", http.StatusMethodNotAllowed)
			return
		}
		body, err := json.Marshal(a.Health())
		if err != nil {
			http.Error(w, "httpfit: encoding the health report: "+err.Error(), http.StatusInternalServerError)
			return
		}
		body = append(body, '\n')
		hdr := w.Header()
		hdr.Set("Content-Type", "application/json")
		hdr.Set("Cache-Control", "no-store")
		hdr.Set("Content-Length", strconv.Itoa(len(body)))
		if r.Method == http.MethodHead {
			w.WriteHeader(http.StatusOK)
			return
		}
		_, _ = w.Write(body)
	})
}
