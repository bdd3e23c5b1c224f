// Package bookingtools is demo data for ctxfit's examples: the data behind
// the example MCP servers' tools (examples/mcpserver for the official Go SDK
// and examples/mcpgoserver for mark3labs/mcp-go), plain functions over the
// deterministic corpus, so both examples serve the same bytes and their
// tests can compare them; and [Endpoints], the per-tool settings both
// examples install. It is internal, not part of ctxfit's API.
//
// The data functions are pure; everything is safe for concurrent use.
package bookingtools

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ctxfit/ctxfit/internal/demodata/corpus"
)

// BookingCount is the number of bookings [ListBookings] knows.
const BookingCount = 500

// LogName is the one log [ReadLog] serves; LogLines is its length.
const (
	LogName  = "app.log"
	LogLines = 10000
)

// Statuses are the booking statuses, for a tool's input schema.
var Statuses = []string{"confirmed", "pending", "cancelled", "checked_in", "completed"}

// ListBookings returns the bookings with the given status, or all
// [BookingCount] of them for "". An unknown status gives none.
func ListBookings(status string) []corpus.Item {
	all := corpus.Items(BookingCount)
	if status == "" {
		return all
	}
	out := make([]corpus.Item, 0, len(all)/4)
	for _, it := range all {
		if it.Status == status {
			out = append(out, it)
		}
	}
	return out
}

// GetBooking returns the verbose booking (3,000+ tokens: guest, price
// breakdown, property details, amenities, policies, a long description)
// under the given id. An empty id is an error.
func GetBooking(id string) (map[string]any, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return nil, fmt.Errorf("bookingtools: booking id is empty: pass an id such as %q", "BK00001")
	}
	b := corpus.Booking()
	b["id"] = id
	return b, nil
}

// ReadLog returns the log named name: [LogName] is a generated application
// log of [LogLines] lines with stack traces; "" means LogName. Other names
// are an error.
func ReadLog(name string) (string, error) {
	if name == "" {
		name = LogName
	}
	if name != LogName {
		return "", fmt.Errorf("bookingtools: no log named %q: the only log is %q", name, LogName)
	}
	return corpus.Log(LogLines), nil
}

// SearchResult is the typed result of [SearchBookings], for a tool's
// output schema.
type SearchResult struct {
	// Query is the query as given.
	Query string `json:"query" jsonschema:"the query as given"`
	// Total is the number of matches.
	Total int `json:"total" jsonschema:"the number of matching bookings"`
	// Results are the matches in booking order, at most the limit.
	Results []corpus.Item `json:"results" jsonschema:"the matching bookings"`
}

// SearchBookings returns the bookings whose id, status, guest name, email,
// notes or tags contain query (case-insensitive; "" matches all), at most
// limit of them (0 or less means all).
func SearchBookings(query string, limit int) SearchResult {
	q := strings.ToLower(strings.TrimSpace(query))
	res := SearchResult{Query: query, Results: []corpus.Item{}}
	for _, it := range corpus.Items(BookingCount) {
		if q != "" && !matches(it, q) {
			continue
		}
		res.Total++
		if limit <= 0 || len(res.Results) < limit {
			res.Results = append(res.Results, it)
		}
	}
	return res
}

func matches(it corpus.Item, q string) bool {
	for _, s := range []string{it.ID, it.Status, it.GuestName, it.Email, it.Notes} {
		if strings.Contains(strings.ToLower(s), q) {
			return true
		}
	}
	return slices.ContainsFunc(it.Tags, func(t string) bool { return strings.Contains(strings.ToLower(t), q) })
}
