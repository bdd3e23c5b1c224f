package cursor_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/cursor"
)

var update = flag.Bool("update", false, "rewrite the golden seed tokens in testdata/fuzz/FuzzDecode")

// fuzzSecret and fuzzExpect are shared by the FuzzDecode seeds: every valid
// seed token is issued at t0 with fuzzSecret for fuzzExpect.
var (
	fuzzSecret = secret("fuzz")
	fuzzExpect = cursor.Binding{
		Scope:   "tools/list_orders",
		Subject: "tenant-42",
		Order:   "created_desc",
		Filters: json.RawMessage(`{"status":"open"}`),
	}
)

// goldenSeeds are the payloads of the valid seed tokens. Their tokens are
// golden: a change to the wire format changes them, and TestGoldenTokens
// fails until they are refreshed with -update.
var goldenSeeds = []struct {
	name string
	p    cursor.Payload
}{
	{name: "valid-page", p: cursor.Payload{Kind: cursor.KindPage, Offset: 40, Index: 2}},
	{name: "valid-chunk", p: cursor.Payload{Kind: cursor.KindChunk, Offset: 1 << 20, Index: 9, Snapshot: "snap-7f3a"}},
	{name: "valid-zero", p: cursor.Payload{Kind: cursor.KindPage}},
}

func fuzzPayload(p cursor.Payload) cursor.Payload {
	p.Scope, p.Subject, p.Order, p.Filters = fuzzExpect.Scope, fuzzExpect.Subject, fuzzExpect.Order, fuzzExpect.Filters
	return p
}

func fuzzCodec(t testing.TB, now time.Time) *cursor.Codec {
	t.Helper()
	c, err := cursor.NewCodec([][]byte{fuzzSecret}, &cursor.Options{Now: func() time.Time { return now }})
	require.NoError(t, err)
	return c
}

// seedFile is the `go test fuzz v1` file that holds one string argument.
func seedFile(s string) string {
	return "go test fuzz v1\nstring(" + strconv.Quote(s) + ")\n"
}

func TestGoldenTokens(t *testing.T) {
	c := fuzzCodec(t, t0)
	for _, seed := range goldenSeeds {
		t.Run(seed.name+" still encodes to its golden token", func(t *testing.T) {
			tok, err := c.Encode(fuzzPayload(seed.p))
			require.NoError(t, err)
			path := filepath.Join("testdata", "fuzz", "FuzzDecode", seed.name)
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(seedFile(tok)), 0o644))
			}
			golden, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./cursor -run TestGoldenTokens -update to create it")
			assert.Equal(t, seedFile(tok), string(golden), "the wire format changed; if that is intended, bump the version byte and run with -update")

			got, err := c.Decode(tok, fuzzExpect)
			require.NoError(t, err)
			assert.Equal(t, seed.p.Offset, got.Offset)
		})
	}
}

// checkSentinel fails unless err wraps exactly one sentinel and, for tokens
// long enough to tell, does not contain the token.
func checkSentinel(t *testing.T, err error, token string) {
	t.Helper()
	matched := 0
	for _, s := range sentinels {
		if errors.Is(err, s) {
			matched++
		}
	}
	if matched != 1 {
		t.Fatalf("error wraps %d sentinels, want exactly 1: %v", matched, err)
	}
	if len(token) >= 16 && strings.Contains(err.Error(), token) {
		t.Fatalf("error message contains the token: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	c := fuzzCodec(f, t0)
	for _, seed := range goldenSeeds {
		tok, err := c.Encode(fuzzPayload(seed.p))
		require.NoError(f, err)
		f.Add(tok)
		f.Add(tok + "=")
		f.Add(tok[:len(tok)-1])
		f.Add(tok[:len(tok)/2] + "\n" + tok[len(tok)/2:])
		f.Add(strings.NewReplacer("-", "+", "_", "/").Replace(tok))
	}
	f.Add("")
	f.Add("AQ")
	f.Add(strings.Repeat("A", cursor.DefaultMaxTokenBytes+1))

	f.Fuzz(func(t *testing.T, token string) {
		p, err := c.Decode(token, fuzzExpect)
		if err != nil {
			checkSentinel(t, err, token)
			return
		}
		// Anything accepted is exactly what Encode writes for its payload
		// at the instant it was issued.
		again, err := fuzzCodec(t, p.IssuedAt).Encode(p)
		if err != nil {
			t.Fatalf("accepted payload does not re-encode: %v", err)
		}
		if again != token {
			t.Fatalf("accepted token re-encodes differently:\n got  %q\n want %q", again, token)
		}
	})
}

// canonicalJSON is the test's own reading of a JSON value, for comparing
// filters by meaning.
func canonicalJSON(t *testing.T, raw []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decoding filters: %v", err)
	}
	return v
}

func FuzzRoundTrip(f *testing.F) {
	f.Add(uint8(1), int64(40), int64(2), "created_desc", []byte(`{"status":"open"}`), "tools/list_orders", "tenant-42", "", t0.Unix())
	f.Add(uint8(2), int64(1<<40), int64(0), "", []byte(nil), "tools/read_file", "", "snap", int64(0))
	f.Add(uint8(1), int64(0), int64(0), "", []byte(` { "b" : [1, 2.50, "x"], "a" : null } `), "", "", "", int64(253402300799))
	f.Add(uint8(1), int64(1<<63-1), int64(1<<63-1), "\x00\xff", []byte(`null`), "é", "\u2028", "<&>", int64(1))
	f.Add(uint8(0), int64(-1), int64(-1), "", []byte(`{`), "", "", "", int64(-1))

	// One codec whose clock each input sets: a fuzz target's inputs run
	// one at a time within a process.
	clk := &clock{}
	codec := newCodec(f, clk, nil, fuzzSecret)
	f.Fuzz(func(t *testing.T, kind uint8, offset, index int64, order string, filters []byte, scope, subject, snapshot string, unix int64) {
		p := cursor.Payload{
			Kind: cursor.Kind(kind), Offset: offset, Index: index,
			Order: order, Filters: filters, Scope: scope, Subject: subject, Snapshot: snapshot,
		}
		clk.t = time.Unix(unix, 0)
		tok, err := codec.Encode(p)

		valid := p.Kind != 0 &&
			offset >= 0 && index >= 0 && unix >= 0 && unix <= 253402300799 &&
			(len(filters) == 0 || json.Valid(filters))
		if !valid {
			if err == nil {
				t.Fatalf("Encode accepted an invalid payload %+v at %d", p, unix)
			}
			return
		}
		if err != nil {
			if strings.Contains(err.Error(), "MaxTokenBytes") {
				return // too large to issue: refused, as documented
			}
			t.Fatalf("Encode refused a valid payload: %v", err)
		}
		if len(tok) > cursor.DefaultMaxTokenBytes {
			t.Fatalf("token of %d bytes exceeds the cap", len(tok))
		}

		want := cursor.Binding{Kind: p.Kind, Scope: scope, Subject: subject, Order: order, Filters: filters}
		got, err := codec.Decode(tok, want)
		if err != nil {
			t.Fatalf("Decode rejected a fresh token: %v", err)
		}
		if got.Kind != p.Kind || got.Offset != offset || got.Index != index || got.Order != order ||
			got.Scope != scope || got.Subject != subject || got.Snapshot != snapshot {
			t.Fatalf("round trip changed the payload:\n got  %+v\n want %+v", got, p)
		}
		if !got.IssuedAt.Equal(time.Unix(unix, 0)) || !got.Expires.Equal(got.IssuedAt.Add(codec.TTL())) {
			t.Fatalf("times: issued %v expires %v, want issued %v", got.IssuedAt, got.Expires, time.Unix(unix, 0))
		}
		switch {
		case len(filters) == 0:
			if got.Filters != nil {
				t.Fatalf("filters %q came back from none", got.Filters)
			}
		case canonicalJSON(t, filters) == nil:
			if got.Filters != nil {
				t.Fatalf("filters %q came back from JSON null", got.Filters)
			}
		default:
			if !reflect.DeepEqual(canonicalJSON(t, filters), canonicalJSON(t, got.Filters)) {
				t.Fatalf("filters changed meaning: %q became %q", filters, got.Filters)
			}
		}

		// Deterministic and canonical: the decoded payload re-encodes to the
		// same token, and binds with its canonical filters too.
		again, err := codec.Encode(got)
		if err != nil || again != tok {
			t.Fatalf("decoded payload re-encodes to %q, %v; want %q", again, err, tok)
		}
		want.Filters = got.Filters
		if _, err := codec.Decode(tok, want); err != nil {
			t.Fatalf("canonical filters do not bind: %v", err)
		}
	})
}
