package cursor_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/cursor"
	"github.com/ctxfit/ctxfit/internal/rawjson"
)

// t0 is the time every test cursor is issued at, unless a test says otherwise.
var t0 = time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)

// secret returns a deterministic 32-byte secret for label.
func secret(label string) []byte {
	s := sha256.Sum256([]byte(label))
	return s[:]
}

// clock is a settable test clock; tests move it instead of sleeping.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time { return c.t }

// newCodec returns a codec over secrets (default: one secret "primary")
// whose clock is clk.
func newCodec(t testing.TB, clk *clock, opts *cursor.Options, secrets ...[]byte) *cursor.Codec {
	t.Helper()
	if len(secrets) == 0 {
		secrets = [][]byte{secret("primary")}
	}
	var o cursor.Options
	if opts != nil {
		o = *opts
	}
	o.Now = clk.Now
	c, err := cursor.NewCodec(secrets, &o)
	require.NoError(t, err)
	return c
}

func samplePayload() cursor.Payload {
	return cursor.Payload{
		Kind:     cursor.KindPage,
		Offset:   40,
		Index:    2,
		Order:    "created_desc",
		Filters:  json.RawMessage(`{"status":"open","tags":["billing","urgent"]}`),
		Scope:    "tools/list_orders",
		Subject:  "tenant-42",
		Snapshot: "snap-7f3a",
	}
}

// expectFor returns the Binding that a payload is bound to.
func expectFor(p cursor.Payload) cursor.Binding {
	return cursor.Binding{Kind: p.Kind, Scope: p.Scope, Subject: p.Subject, Order: p.Order, Filters: p.Filters}
}

var sentinels = []error{cursor.ErrMalformed, cursor.ErrInvalid, cursor.ErrExpired, cursor.ErrMismatch}

// assertRejected checks that err wraps want and no other sentinel, and that
// its message does not contain the token.
func assertRejected(t *testing.T, err error, want error, token string) {
	t.Helper()
	if !assert.Error(t, err) {
		return
	}
	assert.ErrorIs(t, err, want)
	matched := 0
	for _, s := range sentinels {
		if errors.Is(err, s) {
			matched++
		}
	}
	assert.Equal(t, 1, matched, "error must wrap exactly one sentinel: %v", err)
	if len(token) >= 8 {
		assert.NotContains(t, err.Error(), token, "error message must not echo the token")
	}
	assert.Contains(t, err.Error(), "request the first page again", "error message must say what to do next")
}

// rawBytes decodes a token to its wire bytes.
func rawBytes(t *testing.T, token string) []byte {
	t.Helper()
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	require.NoError(t, err)
	return raw
}

func encodeRaw(raw []byte) string { return base64.RawURLEncoding.EncodeToString(raw) }

func TestNewCodec(t *testing.T) {
	long := secret("a")
	short := []byte("0123456789abcdef0123456789abcde") // 31 bytes
	tests := []struct {
		name    string
		secrets [][]byte
		opts    *cursor.Options
		errHas  string // "" means success
	}{
		{name: "accepts one secret with nil options", secrets: [][]byte{long}},
		{name: "accepts several distinct secrets", secrets: [][]byte{long, secret("b"), secret("c")}},
		{name: "accepts a secret longer than 32 bytes", secrets: [][]byte{bytes.Repeat([]byte("k"), 64)}},
		{name: "refuses no secrets", secrets: nil, errHas: "at least one secret"},
		{name: "refuses an empty secret", secrets: [][]byte{{}}, errHas: "at least 32 bytes"},
		{name: "refuses a 31-byte secret", secrets: [][]byte{short}, errHas: "at least 32 bytes"},
		{name: "refuses a short verifying secret", secrets: [][]byte{long, short}, errHas: "secrets[1] is 31 bytes"},
		{name: "refuses a repeated secret", secrets: [][]byte{long, secret("b"), bytes.Clone(long)}, errHas: "secrets[2] repeats secrets[0]"},
		{name: "refuses a negative TTL", secrets: [][]byte{long}, opts: &cursor.Options{TTL: -time.Second}, errHas: "TTL is negative"},
		{name: "refuses a TTL of more than a century", secrets: [][]byte{long}, opts: &cursor.Options{TTL: 200 * 365 * 24 * time.Hour}, errHas: "TTL"},
		{name: "refuses a negative token cap", secrets: [][]byte{long}, opts: &cursor.Options{MaxTokenBytes: -1}, errHas: "MaxTokenBytes"},
		{name: "refuses a token cap too small for any cursor", secrets: [][]byte{long}, opts: &cursor.Options{MaxTokenBytes: 40}, errHas: "MaxTokenBytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := cursor.NewCodec(tt.secrets, tt.opts)
			if tt.errHas == "" {
				require.NoError(t, err)
				assert.NotNil(t, c)
				return
			}
			require.Error(t, err)
			assert.Nil(t, c)
			assert.Contains(t, err.Error(), tt.errHas)
			assert.True(t, strings.HasPrefix(err.Error(), "cursor: "), "message starts with the package name")
			for _, s := range tt.secrets {
				if len(s) > 0 {
					assert.NotContains(t, err.Error(), string(s), "message must not echo a secret")
					assert.NotContains(t, err.Error(), fmt.Sprintf("%x", s), "message must not echo a secret")
				}
			}
		})
	}
}

func TestNewCodecCopiesOptions(t *testing.T) {
	clk := &clock{t: t0}
	opts := &cursor.Options{TTL: time.Minute, Now: clk.Now}
	c, err := cursor.NewCodec([][]byte{secret("a")}, opts)
	require.NoError(t, err)
	opts.TTL = time.Hour
	opts.Now = func() time.Time { return t0.Add(-time.Hour) }

	assert.Equal(t, time.Minute, c.TTL())
	tok, err := c.Encode(samplePayload())
	require.NoError(t, err)
	p, err := c.Decode(tok, expectFor(samplePayload()))
	require.NoError(t, err)
	assert.Equal(t, t0, p.IssuedAt, "the clock in force at construction is used")
}

func TestCodecTTL(t *testing.T) {
	tests := []struct {
		name string
		ttl  time.Duration
		want time.Duration
	}{
		{name: "defaults to ten minutes", ttl: 0, want: 10 * time.Minute},
		{name: "keeps a whole number of seconds", ttl: 90 * time.Second, want: 90 * time.Second},
		{name: "rounds a fraction of a second up", ttl: 1500 * time.Millisecond, want: 2 * time.Second},
		{name: "rounds a nanosecond up to a second", ttl: 1, want: time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{t: t0}
			c := newCodec(t, clk, &cursor.Options{TTL: tt.ttl})
			assert.Equal(t, tt.want, c.TTL())

			tok, err := c.Encode(samplePayload())
			require.NoError(t, err)
			p, err := c.Decode(tok, expectFor(samplePayload()))
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.Expires.Sub(p.IssuedAt), "Expires is IssuedAt + TTL")
		})
	}
}

func TestZeroCodecReturnsErrors(t *testing.T) {
	for _, c := range []*cursor.Codec{nil, new(cursor.Codec)} {
		_, err := c.Encode(samplePayload())
		assert.ErrorContains(t, err, "NewCodec")
		_, err = c.Decode("AAAA", cursor.Binding{})
		assert.ErrorIs(t, err, cursor.ErrInvalid)
		assert.Zero(t, c.TTL())
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		p    cursor.Payload
	}{
		{name: "every field set on a page cursor", p: samplePayload()},
		{name: "only the kind set", p: cursor.Payload{Kind: cursor.KindPage}},
		{name: "a chunk cursor", p: cursor.Payload{Kind: cursor.KindChunk, Offset: 1 << 20, Index: 7, Scope: "tools/read_file", Subject: "session-1"}},
		{name: "the largest offset and index", p: cursor.Payload{Kind: cursor.KindPage, Offset: 1<<63 - 1, Index: 1<<63 - 1}},
		{name: "unicode and control bytes in strings", p: cursor.Payload{Kind: cursor.KindPage, Order: "名前 ↑", Scope: "a\x00b\xff", Subject: "ü", Snapshot: "\n"}},
		{name: "a scalar filter", p: cursor.Payload{Kind: cursor.KindPage, Filters: json.RawMessage(`"open"`)}},
		{name: "nested filters", p: cursor.Payload{Kind: cursor.KindPage, Filters: json.RawMessage(`{"a":{"b":[1,2.5,-3e10,true,null,{"c":"d"}]},"z":12345678901234567890123}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{t: t0.Add(250 * time.Millisecond)}
			c := newCodec(t, clk, nil)
			tok, err := c.Encode(tt.p)
			require.NoError(t, err)

			got, err := c.Decode(tok, expectFor(tt.p))
			require.NoError(t, err)
			want := tt.p
			want.IssuedAt = t0 // truncated to the second
			want.Expires = t0.Add(10 * time.Minute)
			assert.Equal(t, want, got)
			assert.Equal(t, time.UTC, got.IssuedAt.Location())
		})
	}
}

func TestEncodeIgnoresIssuedAtAndExpires(t *testing.T) {
	clk := &clock{t: t0}
	c := newCodec(t, clk, nil)
	p := samplePayload()
	a, err := c.Encode(p)
	require.NoError(t, err)
	p.IssuedAt, p.Expires = t0.Add(-time.Hour), t0.Add(time.Hour)
	b, err := c.Encode(p)
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

func TestEncodeIsDeterministic(t *testing.T) {
	clk := &clock{t: t0}
	c := newCodec(t, clk, nil)
	a, err := c.Encode(samplePayload())
	require.NoError(t, err)
	b, err := c.Encode(samplePayload())
	require.NoError(t, err)
	assert.Equal(t, a, b, "same payload and clock give the same token")

	clk.t = t0.Add(time.Second)
	later, err := c.Encode(samplePayload())
	require.NoError(t, err)
	assert.NotEqual(t, a, later, "another issue time gives another token")
}

func TestEncodeRejectsInvalidPayloads(t *testing.T) {
	tests := []struct {
		name   string
		modify func(*cursor.Payload)
		clock  time.Time
		errHas string
	}{
		{name: "a zero kind", modify: func(p *cursor.Payload) { p.Kind = 0 }, errHas: "Kind"},
		{name: "kind zero", modify: func(p *cursor.Payload) { p.Kind = 0 }, errHas: "Kind"},
		{name: "a negative offset", modify: func(p *cursor.Payload) { p.Offset = -1 }, errHas: "Offset"},
		{name: "a negative index", modify: func(p *cursor.Payload) { p.Index = -1 }, errHas: "Index"},
		{name: "filters that are not JSON", modify: func(p *cursor.Payload) { p.Filters = json.RawMessage(`{"a":`) }, errHas: "Filters"},
		{name: "filters with trailing data", modify: func(p *cursor.Payload) { p.Filters = json.RawMessage(`{} {}`) }, errHas: "Filters"},
		{name: "filters of white space only", modify: func(p *cursor.Payload) { p.Filters = json.RawMessage(`  `) }, errHas: "Filters"},
		{name: "a payload over the token cap", modify: func(p *cursor.Payload) { p.Snapshot = strings.Repeat("s", 4096) }, errHas: "MaxTokenBytes"},
		{name: "a clock before 1970", modify: func(*cursor.Payload) {}, clock: time.Unix(-1, 0), errHas: "clock"},
		{name: "a clock after 9999", modify: func(*cursor.Payload) {}, clock: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), errHas: "clock"},
	}
	for _, tt := range tests {
		t.Run("refuses "+tt.name, func(t *testing.T) {
			clk := &clock{t: t0}
			if !tt.clock.IsZero() {
				clk.t = tt.clock
			}
			c := newCodec(t, clk, nil)
			p := samplePayload()
			tt.modify(&p)
			tok, err := c.Encode(p)
			require.Error(t, err)
			assert.Empty(t, tok)
			assert.Contains(t, err.Error(), tt.errHas)
			assert.True(t, strings.HasPrefix(err.Error(), "cursor: "))
		})
	}
}

func TestEncodeRespectsTheTokenCap(t *testing.T) {
	clk := &clock{t: t0}
	c := newCodec(t, clk, &cursor.Options{MaxTokenBytes: 200})
	p := cursor.Payload{Kind: cursor.KindPage}
	var last string
	for n := 0; ; n++ {
		p.Snapshot = strings.Repeat("x", n)
		tok, err := c.Encode(p)
		if err != nil {
			assert.ErrorContains(t, err, "MaxTokenBytes")
			break
		}
		require.LessOrEqual(t, len(tok), 200)
		last = tok
	}
	require.NotEmpty(t, last)
	assert.Greater(t, len(last), 196, "the cap is used up to the last base64 group")
	_, err := c.Decode(last, cursor.Binding{Kind: cursor.KindPage})
	assert.NoError(t, err, "a token at the cap is accepted")
}

func TestFiltersAreStoredCanonically(t *testing.T) {
	tests := []struct {
		name    string
		filters string
		want    string // "" means no filters
	}{
		{name: "sorts object keys", filters: `{"b":1,"a":2}`, want: `{"a":2,"b":1}`},
		{name: "removes white space", filters: " {\n\t\"a\" : [ 1 , 2 ] } ", want: `{"a":[1,2]}`},
		{name: "keeps numbers exactly as written", filters: `[1.0,1e2,12345678901234567890123]`, want: `[1.0,1e2,12345678901234567890123]`},
		{name: "unescapes needless escapes", filters: `"\u0041"`, want: `"A"`},
		{name: "keeps the last of repeated keys", filters: `{"a":1,"a":2}`, want: `{"a":2}`},
		{name: "treats JSON null as no filters", filters: ` null `, want: ""},
		{name: "treats empty filters as none", filters: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{t: t0}
			c := newCodec(t, clk, nil)
			p := cursor.Payload{Kind: cursor.KindPage, Filters: json.RawMessage(tt.filters)}
			tok, err := c.Encode(p)
			require.NoError(t, err)
			got, err := c.Decode(tok, cursor.Binding{Filters: json.RawMessage(tt.filters)})
			require.NoError(t, err)
			if tt.want == "" {
				assert.Nil(t, got.Filters)
			} else {
				assert.Equal(t, tt.want, string(got.Filters))
			}
		})
	}
}

func TestTokensAreOpaque(t *testing.T) {
	clk := &clock{t: t0}
	c := newCodec(t, clk, nil)
	p := samplePayload()
	tok, err := c.Encode(p)
	require.NoError(t, err)
	raw := rawBytes(t, tok)

	t.Run("no sealed field appears in the token or its bytes", func(t *testing.T) {
		for _, s := range []string{p.Order, p.Scope, p.Subject, p.Snapshot, string(p.Filters), "status", "billing", "open"} {
			assert.NotContains(t, tok, s)
			assert.False(t, bytes.Contains(raw, []byte(s)), "decoded token contains %q", s)
			if len(s) < 9 {
				continue // too short for a meaningful search in base64
			}
			for shift := range 3 { // the text's base64 at every byte alignment
				enc := base64.RawURLEncoding.EncodeToString(append(make([]byte, shift), s...))
				assert.NotContains(t, tok, enc[(4*shift+2)/3+1:len(enc)-2])
			}
		}
	})

	t.Run("tokens for neighbouring offsets are unrelated", func(t *testing.T) {
		a, b := p, p
		a.Offset, b.Offset = 1, 2
		ta, err := c.Encode(a)
		require.NoError(t, err)
		tb, err := c.Encode(b)
		require.NoError(t, err)
		ra, rb := rawBytes(t, ta), rawBytes(t, tb)
		require.Equal(t, len(ra), len(rb))
		same := 0
		for i := cursor.HeaderLen; i < len(ra); i++ {
			if ra[i] == rb[i] {
				same++
			}
		}
		// Random bytes agree one time in 256; allow a wide margin.
		assert.Less(t, same, (len(ra)-cursor.HeaderLen)/16, "IV, ciphertext and tag must all change")
		assert.Equal(t, ra[:cursor.HeaderLen], rb[:cursor.HeaderLen], "only the header (version, key ID) is shared")
	})

	t.Run("the offset cannot be read from the token length", func(t *testing.T) {
		a, b := p, p
		a.Offset, b.Offset = 1, 100
		ta, err := c.Encode(a)
		require.NoError(t, err)
		tb, err := c.Encode(b)
		require.NoError(t, err)
		assert.Equal(t, len(ta), len(tb), "small offsets share one varint length")
	})
}

func TestCodecIsSafeForConcurrentUse(t *testing.T) {
	clk := &clock{t: t0}
	c := newCodec(t, clk, nil, secret("a"), secret("b"))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				p := samplePayload()
				p.Offset = int64(g*1000 + i)
				tok, err := c.Encode(p)
				if !assert.NoError(t, err) {
					return
				}
				got, err := c.Decode(tok, expectFor(p))
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, p.Offset, got.Offset)
			}
		})
	}
	wg.Wait()
}

// randomPayload returns a valid payload with random fields, and its filters
// in canonical form.
func randomPayload(r *rand.Rand) (cursor.Payload, json.RawMessage) {
	str := func() string {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return string(b)
	}
	p := cursor.Payload{
		Kind:     cursor.Kind(1 + r.IntN(2)),
		Offset:   r.Int64() >> r.UintN(64),
		Index:    r.Int64() >> r.UintN(64),
		Order:    str(),
		Scope:    str(),
		Subject:  str(),
		Snapshot: str(),
	}
	if d := str(); r.IntN(3) == 0 && d != "" {
		p.Data = []byte(d) // empty Data comes back nil
	}
	if r.IntN(4) == 0 {
		return p, nil
	}
	v := randomJSON(r, 3)
	// Issue non-canonical JSON: indented, which also keeps key order.
	var err error
	p.Filters, err = json.MarshalIndent(v, " ", "\t")
	if err != nil {
		panic(err)
	}
	canon, err := rawjson.Canonical(nil, p.Filters)
	if err != nil {
		panic(err)
	}
	if string(canon) == "null" {
		canon = nil
	}
	return p, canon
}

func randomJSON(r *rand.Rand, depth int) any {
	n := 6
	if depth == 0 {
		n = 4
	}
	switch r.IntN(n) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return json.Number(fmt.Sprint(r.Int64() - r.Int64()))
	case 3:
		return fmt.Sprintf("s%d<&>\u2028é", r.IntN(1000))
	case 4:
		a := make([]any, r.IntN(4))
		for i := range a {
			a[i] = randomJSON(r, depth-1)
		}
		return a
	default:
		m := map[string]any{}
		for range r.IntN(5) {
			m[fmt.Sprintf("k%d", r.IntN(10))] = randomJSON(r, depth-1)
		}
		return m
	}
}

func TestRandomPayloadsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	clk := &clock{}
	c := newCodec(t, clk, nil, secret("a"), secret("b"))
	for i := range 3000 {
		p, canon := randomPayload(r)
		clk.t = time.Unix(r.Int64N(1<<35), r.Int64N(1e9))
		tok, err := c.Encode(p)
		require.NoError(t, err, "payload %d", i)
		q := p
		q.Filters = canon
		pt := cursor.Plaintext(q, uint64(clk.t.Unix()), 600)
		require.Len(t, pt, cursor.PlaintextLen(q, uint64(clk.t.Unix()), 600), "size computed in advance")

		got, err := c.Decode(tok, expectFor(p))
		require.NoError(t, err, "payload %d", i)
		want := p
		want.Filters = canon
		want.IssuedAt = time.Unix(clk.t.Unix(), 0).UTC()
		want.Expires = want.IssuedAt.Add(c.TTL())
		require.Equal(t, want, got, "payload %d", i)

		// Decoding is canonical: re-encoding at the same instant gives the
		// same token.
		again, err := c.Encode(got)
		require.NoError(t, err)
		require.Equal(t, tok, again, "payload %d", i)
	}
}

func TestOpenChecksEverythingButTheBinding(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	c, err := cursor.NewCodec([][]byte{[]byte(strings.Repeat("s", 32))}, &cursor.Options{Now: func() time.Time { return now }})
	require.NoError(t, err)
	tok, err := c.Encode(cursor.Payload{Kind: cursor.KindPage, Offset: 7, Scope: "list_bookings", Subject: "alice",
		Filters: json.RawMessage(`{"status":"confirmed"}`), Data: []byte{1, 2, 3}})
	require.NoError(t, err)

	p, err := c.Open(tok)
	require.NoError(t, err)
	assert.Equal(t, "list_bookings", p.Scope)
	assert.Empty(t, p.Filters, "filters are sealed as a digest")
	assert.Empty(t, p.Subject, "so is the subject")
	assert.Equal(t, []byte{1, 2, 3}, p.Data)
	assert.Equal(t, int64(7), p.Offset)

	p, err = c.OpenFor(tok, "alice")
	require.NoError(t, err)
	assert.Equal(t, "alice", p.Subject)
	assert.Equal(t, "list_bookings", p.Scope)
	_, err = c.OpenFor(tok, "bob")
	assert.ErrorIs(t, err, cursor.ErrMismatch)
	_, err = c.OpenFor(tok, "")
	assert.ErrorIs(t, err, cursor.ErrMismatch)

	tampered := []byte(tok)
	tampered[12] = map[bool]byte{true: 'A', false: 'B'}[tampered[12] != 'A']
	_, err = c.Open(string(tampered))
	assert.ErrorIs(t, err, cursor.ErrInvalid)

	now = now.Add(time.Hour)
	_, err = c.Open(tok)
	assert.ErrorIs(t, err, cursor.ErrExpired)
}

func TestACursorsSizeDoesNotDependOnItsSubjectOrFilters(t *testing.T) {
	c := newCodec(t, &clock{t: t0}, nil)
	small, err := c.Encode(cursor.Payload{Kind: cursor.KindPage, Scope: "list", Subject: "a", Filters: json.RawMessage(`{"q":"x"}`)})
	require.NoError(t, err)
	big := json.RawMessage(`{"q":"` + strings.Repeat("x", 20000) + `"}`)
	large, err := c.Encode(cursor.Payload{Kind: cursor.KindPage, Scope: "list", Subject: strings.Repeat("s", 5000), Filters: big})
	require.NoError(t, err)
	assert.Len(t, large, len(small))
	got, err := c.Decode(large, cursor.Binding{Scope: "list", Subject: strings.Repeat("s", 5000), Filters: big})
	require.NoError(t, err)
	assert.Equal(t, []byte(big), []byte(got.Filters))
	_, err = c.Decode(large, cursor.Binding{Scope: "list", Subject: strings.Repeat("s", 5000), Filters: json.RawMessage(`{"q":"y"}`)})
	assert.ErrorIs(t, err, cursor.ErrMismatch)
}

func TestFiltersThatDifferOnlyInInvalidUTF8AreDifferentFilters(t *testing.T) {
	c := newCodec(t, &clock{t: t0}, nil)
	tok, err := c.Encode(cursor.Payload{Kind: cursor.KindPage, Filters: json.RawMessage("{\"q\":\"\xff\"}")})
	require.NoError(t, err)
	_, err = c.Decode(tok, cursor.Binding{Filters: json.RawMessage("{\"q\":\"\xfe\"}")})
	assert.ErrorIs(t, err, cursor.ErrMismatch, "q=%ff and q=%fe must not share a binding")
	_, err = c.Decode(tok, cursor.Binding{Filters: json.RawMessage("{ \"q\" : \"\xff\" }")})
	assert.NoError(t, err)
}
