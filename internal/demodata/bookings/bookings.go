// Package bookings is demo data for ctxfit's examples: the bookings API that
// examples/httpserver serves and the demo command and ctxfit's tests share, a
// small net/http API over generated, deterministic data (package corpus)
// whose responses are too large for an LLM's context window as they are. It
// is internal, not part of ctxfit's API.
//
// Routes of [Handler]:
//
//	GET /api/v1/bookings         500 bookings as a JSON array (about 30,000 tokens);
//	                             filters: status (one of the Statuses), order
//	                             (created_asc, the default, or created_desc)
//	GET /api/v1/bookings/{id}    one verbose booking (about 3,200 tokens)
//	GET /api/v1/logs/{name}      a 10,000-line application log with stack
//	                             traces, text/plain (name: one of LogNames)
//
// The handlers know nothing of ctxfit: they answer with the whole data, as
// an ordinary API does. [Config] holds the ctxfit settings the examples use
// for these routes.
package bookings

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ctxfit/ctxfit"
	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

// Route patterns of [Handler], in net/http ServeMux syntax. They are also the
// Match of the endpoints in [Config] and the Endpoint of ctxfit's telemetry.
const (
	ListPattern   = "GET /api/v1/bookings"
	DetailPattern = "GET /api/v1/bookings/{id}"
	LogPattern    = "GET /api/v1/logs/{name}"
)

// Sizes of the generated data.
const (
	BookingCount = 500
	LogLines     = 10000
)

// DetailThreshold is the token threshold of [DetailPattern] in [Config]. A
// booking is about 3,200 tokens, under ctxfit's default threshold of 4,000,
// so with the defaults it would pass through; 2,000 makes ctxfit summarize it.
const DetailThreshold = 2000

// Orders of the list, for its order parameter.
const (
	OrderCreatedAsc  = "created_asc"
	OrderCreatedDesc = "created_desc"
)

// Statuses are the values of a booking's status, for the list's status filter.
var Statuses = []string{"confirmed", "pending", "cancelled", "checked_in", "completed"}

// LogNames are the logs [LogPattern] serves.
var LogNames = []string{"app"}

// Booking is one entry of the list: a generated record with its creation
// time. Bookings are created in ID order.
type Booking struct {
	corpus.Item
	CreatedAt string `json:"createdAt"`
}

// Bookings returns the 500 bookings of the list, in creation order. The
// result is the caller's to modify.
func Bookings() []Booking { return slices.Clone(bookings()) }

var bookings = sync.OnceValue(func() []Booking {
	items := corpus.Items(BookingCount)
	start := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	out := make([]Booking, len(items))
	for i, it := range items {
		out[i] = Booking{Item: it, CreatedAt: start.Add(time.Duration(i) * 37 * time.Minute).Format(time.RFC3339)}
	}
	return out
})

// Detail returns the verbose record of the booking with the given id, and
// whether there is one: the fields of corpus.Booking with the id, status,
// guest name and email of the list entry.
func Detail(id string) (map[string]any, bool) {
	i := slices.IndexFunc(bookings(), func(b Booking) bool { return b.ID == id })
	if i < 0 {
		return nil, false
	}
	b := bookings()[i]
	d := corpus.Booking()
	d["id"] = b.ID
	d["status"] = b.Status
	d["guestName"] = b.GuestName
	d["guestEmail"] = b.Email
	d["createdAt"] = b.CreatedAt
	return d, true
}

// Log returns the log named name, and whether there is one.
func Log(name string) (string, bool) {
	if !slices.Contains(LogNames, name) {
		return "", false
	}
	return logText(), true
}

var logText = sync.OnceValue(func() string { return corpus.Log(LogLines) })

// Handler returns the API's routes on a new ServeMux, without ctxfit: wrap
// it with the middleware of package httpfit to keep its responses in budget.
// The handler is safe for concurrent use; its data never changes.
func Handler() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc(ListPattern, list)
	mux.HandleFunc(DetailPattern, detail)
	mux.HandleFunc(LogPattern, logFile)
	return mux
}

// Config returns the ctxfit settings of the example for these routes: the
// detail endpoint has a threshold of [DetailThreshold] tokens so that a
// booking is summarized; everything else keeps the defaults. Callers lay
// their own settings (a secret, environment variables, a file) over it.
func Config() ctxfit.Config {
	return ctxfit.Config{
		Endpoints: []ctxfit.Endpoint{
			{Match: DetailPattern, Threshold: DetailThreshold},
		},
	}
}

// Filter returns the bookings the list serves for a status filter ("" for
// all) and an order ("" for created_asc), and false for an unknown order.
func Filter(status, order string) ([]Booking, bool) {
	all := bookings()
	out := make([]Booking, 0, len(all))
	for _, b := range all {
		if status == "" || b.Status == status {
			out = append(out, b)
		}
	}
	switch order {
	case "", OrderCreatedAsc:
	case OrderCreatedDesc:
		slices.Reverse(out)
	default:
		return nil, false
	}
	return out, true
}

func list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	out, ok := Filter(q.Get("status"), q.Get("order"))
	if !ok {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("order %q is not one of %s, %s", q.Get("order"), OrderCreatedAsc, OrderCreatedDesc))
		return
	}
	writeJSON(w, out)
}

func detail(w http.ResponseWriter, r *http.Request) {
	d, ok := Detail(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no booking %q", r.PathValue("id")))
		return
	}
	writeJSON(w, d)
}

func logFile(w http.ResponseWriter, r *http.Request) {
	text, ok := Log(r.PathValue("name"))
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no log %q; logs: %v", r.PathValue("name"), LogNames))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(text)))
	_, _ = w.Write([]byte(text))
}

func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(map[string]any{"status": status, "error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
