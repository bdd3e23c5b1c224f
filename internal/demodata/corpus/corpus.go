// Package corpus is demo data for ctxfit's examples: it generates
// deterministic text of a requested size (JSON, prose, code, an application
// log) and the records the examples serve (bookings, an animal record). The
// same arguments always give the same bytes, so ctxfit's tests, benchmarks
// and demo use it too.
//
// It is internal, not part of ctxfit's API: product code and tests import
// it from here, never from examples/ (layering_test.go holds the rule). Its
// functions are safe for concurrent use.
package corpus

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

var words = strings.Fields(`the a of and to in is that for it as was with be by on not he this are or his
from at which but have an they you were her she there one all we their has been if more when will would
who so no out up into than them can only other new some could time these two may then first any like now
my such make over our even most me state after also made many did must before back see through way where
get much go well your know should down work year because come people just say each those take day good how
long right still own too find here thing give many server request response token budget context window
model agent cursor page chunk summary field record booking guest property price policy amenity review
latency throughput memory network protocol message session history tool result error retry timeout
international configuration documentation implementation responsibility approximately`)

// Prose returns English-like prose of about n bytes: sentences of common
// words in paragraphs separated by blank lines.
func Prose(n int) string {
	r := rand.New(rand.NewPCG(1, 1))
	var b strings.Builder
	for b.Len() < n {
		for s := 3 + r.IntN(5); s > 0; s-- {
			k := 6 + r.IntN(14)
			for w := 0; w < k; w++ {
				word := words[r.IntN(len(words))]
				if w == 0 {
					word = strings.ToUpper(word[:1]) + word[1:]
				}
				b.WriteString(word)
				switch {
				case w == k-1:
					b.WriteString([]string{". ", ". ", "? ", "! "}[r.IntN(4)])
				case r.IntN(9) == 0:
					b.WriteString(", ")
				default:
					b.WriteByte(' ')
				}
			}
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

// Code returns Go-like source code of about n bytes, with indentation,
// blank lines (some indented), comments and string literals.
func Code(n int) string {
	r := rand.New(rand.NewPCG(2, 2))
	var b strings.Builder
	b.WriteString("package example\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\n")
	for f := 0; b.Len() < n; f++ {
		name := words[r.IntN(len(words))]
		fmt.Fprintf(&b, "// %sHandler handles the %s %s.\n", name, words[r.IntN(len(words))], words[r.IntN(len(words))])
		fmt.Fprintf(&b, "func %sHandler%d(ctx context.Context, req *Request) (*Response, error) {\n", name, f)
		for s := 2 + r.IntN(6); s > 0; s-- {
			v := words[r.IntN(len(words))]
			switch r.IntN(5) {
			case 0:
				fmt.Fprintf(&b, "\tif err := req.Validate(%q); err != nil {\n\t\treturn nil, fmt.Errorf(\"%s: %%w\", err)\n\t}\n", v, name)
			case 1:
				fmt.Fprintf(&b, "\tfor i := 0; i < len(req.Items); i++ {\n\t\t%s += req.Items[i].Count * %d\n\t}\n", v, r.IntN(1000))
			case 2:
				fmt.Fprintf(&b, "\t%s := strings.TrimSpace(req.Get(%q))\n", v, v)
			case 3:
				b.WriteString("\t\n")
			default:
				fmt.Fprintf(&b, "\tlog.Printf(\"%s %%d items in %%s\", len(%s), time.Since(start))\n", name, v)
			}
		}
		b.WriteString("\treturn &Response{OK: true}, nil\n}\n\n")
	}
	return b.String()
}

// Item is one record of the generated JSON list: a booking as a list
// shows it.
type Item struct {
	// ID is "BK" and the record's 1-based index in five digits: BK00001.
	ID string `json:"id"`
	// Status is one of confirmed, pending, cancelled, checked_in, completed.
	Status string `json:"status"`
	// GuestName is a first and a last name.
	GuestName string `json:"guestName"`
	// Email is the guest's address at example.com.
	Email string `json:"email"`
	// CheckIn is a date in 2026, YYYY-MM-DD.
	CheckIn string `json:"checkInDate"`
	// CheckOut is a date in 2026, YYYY-MM-DD.
	CheckOut string `json:"checkOutDate"`
	// Total is the price, with two decimals.
	Total float64 `json:"totalPrice"`
	// Currency is USD, EUR or GBP.
	Currency string `json:"currency"`
	// Nights is from 1 to 9.
	Nights int `json:"nights"`
	// Notes are up to 24 words, maybe none.
	Notes string `json:"notes"`
	// Tags are two words.
	Tags []string `json:"tags"`
}

var (
	firstNames = []string{"Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Ken", "Rob", "Margaret", "Linus"}
	lastNames  = []string{"Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Thompson", "Pike", "Hamilton", "Torvalds"}
	statuses   = []string{"confirmed", "pending", "cancelled", "checked_in", "completed"}
)

// Items returns n generated records.
func Items(n int) []Item {
	r := rand.New(rand.NewPCG(3, 3))
	out := make([]Item, n)
	for i := range out {
		first, last := firstNames[r.IntN(len(firstNames))], lastNames[r.IntN(len(lastNames))]
		day := 1 + r.IntN(27)
		nights := 1 + r.IntN(9)
		var notes strings.Builder
		for w := r.IntN(25); w > 0; w-- {
			notes.WriteString(words[r.IntN(len(words))])
			notes.WriteByte(' ')
		}
		out[i] = Item{
			ID:        fmt.Sprintf("BK%05d", i+1),
			Status:    statuses[r.IntN(len(statuses))],
			GuestName: first + " " + last,
			Email:     strings.ToLower(first+"."+last) + "@example.com",
			CheckIn:   fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(12), day),
			CheckOut:  fmt.Sprintf("2026-%02d-%02d", 1+r.IntN(12), day+1),
			Total:     float64(r.IntN(500000)) / 100,
			Currency:  []string{"USD", "EUR", "GBP"}[r.IntN(3)],
			Nights:    nights,
			Notes:     strings.TrimSpace(notes.String()),
			Tags:      []string{words[r.IntN(len(words))], words[r.IntN(len(words))]},
		}
	}
	return out
}

// JSON returns an indented JSON array of generated records of about n bytes
// (at least n, and at most one record more).
func JSON(n int) string {
	items := Items(n/200 + 2)
	b, err := json.MarshalIndent(items, "", "  ")
	if err != nil {
		panic(err)
	}
	per := len(b) / len(items)
	k := min(len(items), n/per+1)
	for {
		b, err = json.MarshalIndent(items[:k], "", "  ")
		if err != nil {
			panic(err)
		}
		if len(b) >= n || k == len(items) {
			return string(b)
		}
		k++
	}
}
