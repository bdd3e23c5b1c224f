package cursor_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/cursor"
)

func TestDecodeRejectsEveryBitFlip(t *testing.T) {
	clk := &clock{t: t0}
	c := newCodec(t, clk, nil)
	p := samplePayload()
	tok, err := c.Encode(p)
	require.NoError(t, err)
	raw := rawBytes(t, tok)

	for i := range raw {
		for bit := range 8 {
			flipped := bytes.Clone(raw)
			flipped[i] ^= 1 << bit
			bad := encodeRaw(flipped)
			_, err := c.Decode(bad, expectFor(p))
			if !assert.ErrorIs(t, err, cursor.ErrInvalid, "byte %d bit %d", i, bit) {
				return
			}
			assert.NotContains(t, err.Error(), bad)
		}
	}
}

// alphabet is the base64url alphabet plus characters that must never be
// accepted in a token.
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" + "=+/ \t\r\n.%~\x00\xff"

func TestDecodeRejectsEverySingleCharacterSubstitution(t *testing.T) {
	clk := &clock{t: t0}
	c := newCodec(t, clk, nil)
	p := samplePayload()
	tok, err := c.Encode(p)
	require.NoError(t, err)

	for i := range len(tok) {
		for j := range len(alphabet) {
			if alphabet[j] == tok[i] {
				continue
			}
			bad := tok[:i] + alphabet[j:j+1] + tok[i+1:]
			_, err := c.Decode(bad, expectFor(p))
			if !assert.Error(t, err, "position %d replaced by %q", i, alphabet[j]) {
				return
			}
			if !errors.Is(err, cursor.ErrMalformed) && !errors.Is(err, cursor.ErrInvalid) {
				t.Fatalf("position %d replaced by %q: got %v, want ErrMalformed or ErrInvalid", i, alphabet[j], err)
			}
		}
	}
}

func TestDecodeRejectsTruncatedAndExtendedTokens(t *testing.T) {
	clk := &clock{t: t0}
	c := newCodec(t, clk, nil)
	p := samplePayload()
	tok, err := c.Encode(p)
	require.NoError(t, err)

	t.Run("every proper prefix is rejected", func(t *testing.T) {
		for n := range len(tok) {
			_, err := c.Decode(tok[:n], expectFor(p))
			require.Error(t, err, "prefix of %d characters", n)
			assert.True(t, errors.Is(err, cursor.ErrMalformed) || errors.Is(err, cursor.ErrInvalid), "prefix of %d: %v", n, err)
		}
	})
	t.Run("every proper suffix is rejected", func(t *testing.T) {
		for n := 1; n < len(tok); n++ {
			_, err := c.Decode(tok[n:], expectFor(p))
			require.Error(t, err, "suffix from %d", n)
		}
	})
	t.Run("every one-character extension is rejected", func(t *testing.T) {
		for j := range len(alphabet) {
			_, err := c.Decode(tok+alphabet[j:j+1], expectFor(p))
			require.Error(t, err, "extended by %q", alphabet[j])
			_, err = c.Decode(alphabet[j:j+1]+tok, expectFor(p))
			require.Error(t, err, "prefixed by %q", alphabet[j])
		}
	})
	t.Run("whole extra bytes are rejected", func(t *testing.T) {
		raw := rawBytes(t, tok)
		for _, extra := range [][]byte{{0}, {0, 0, 0}, raw[len(raw)-cursor.TagLen:]} {
			bad := encodeRaw(append(bytes.Clone(raw), extra...))
			_, err := c.Decode(bad, expectFor(p))
			assertRejected(t, err, cursor.ErrInvalid, bad)
		}
	})
	t.Run("whole missing bytes are rejected", func(t *testing.T) {
		raw := rawBytes(t, tok)
		for _, bad := range []string{encodeRaw(raw[:len(raw)-1]), encodeRaw(raw[1:]), encodeRaw(raw[:cursor.Overhead])} {
			_, err := c.Decode(bad, expectFor(p))
			require.Error(t, err)
		}
	})
	t.Run("the empty token is malformed", func(t *testing.T) {
		_, err := c.Decode("", expectFor(p))
		assertRejected(t, err, cursor.ErrMalformed, "")
	})
}

func TestDecodeRejectsNonCanonicalBase64(t *testing.T) {
	clk := &clock{t: t0}
	c := newCodec(t, clk, nil)
	p := samplePayload()
	// Find a token with a partial last group (so trailing bits exist) that
	// also uses both URL-only characters '-' and '_'.
	var tok string
	for i := range 10000 {
		p.Offset = int64(i)
		for n := range 3 {
			p.Snapshot = strings.Repeat("s", n)
			cand, err := c.Encode(p)
			require.NoError(t, err)
			if len(cand)%4 != 0 && strings.Contains(cand, "-") && strings.Contains(cand, "_") {
				tok = cand
				break
			}
		}
		if tok != "" {
			break
		}
	}
	require.NotEmpty(t, tok)
	_, err := c.Decode(tok, expectFor(p))
	require.NoError(t, err, "the unaltered token is accepted")

	last := tok[len(tok)-1]
	idx := strings.IndexByte(alphabet[:64], last)
	mid := len(tok) / 2
	std := strings.NewReplacer("-", "+", "_", "/").Replace(tok)
	tests := []struct {
		name string
		tok  string
	}{
		{name: "padding with one '='", tok: tok + "="},
		{name: "padding to a whole group", tok: tok + strings.Repeat("=", (4-len(tok)%4)%4)},
		{name: "the standard alphabet's '+' and '/'", tok: std},
		{name: "non-zero trailing bits", tok: tok[:len(tok)-1] + alphabet[idx+1:idx+2]},
		{name: "a newline inside", tok: tok[:mid] + "\n" + tok[mid:]},
		{name: "a carriage return inside", tok: tok[:mid] + "\r" + tok[mid:]},
		{name: "CRLF at the end", tok: tok + "\r\n"},
		{name: "a newline at the start", tok: "\n" + tok},
		{name: "a leading space", tok: " " + tok},
		{name: "a trailing space", tok: tok + " "},
		{name: "a tab inside", tok: tok[:mid] + "\t" + tok[mid:]},
		{name: "newlines every 76 characters", tok: tok[:76] + "\r\n" + tok[76:]},
	}
	for _, tt := range tests {
		t.Run("rejects "+tt.name, func(t *testing.T) {
			require.NotEqual(t, tok, tt.tok)
			_, err := c.Decode(tt.tok, expectFor(p))
			assertRejected(t, err, cursor.ErrMalformed, tt.tok)
		})
	}
}

func TestDecodeRejectsForeignKeys(t *testing.T) {
	clk := &clock{t: t0}
	oldSecret, newSecret := secret("old"), secret("new")
	oldCodec := newCodec(t, clk, nil, oldSecret)
	rotating := newCodec(t, clk, nil, newSecret, oldSecret)
	newOnly := newCodec(t, clk, nil, newSecret)
	stranger := newCodec(t, clk, nil, secret("stranger"))
	p := samplePayload()

	oldTok, err := oldCodec.Encode(p)
	require.NoError(t, err)
	newTok, err := rotating.Encode(p)
	require.NoError(t, err)

	t.Run("a rotating codec accepts cursors of the old key", func(t *testing.T) {
		_, err := rotating.Decode(oldTok, expectFor(p))
		assert.NoError(t, err)
	})
	t.Run("a rotating codec signs with the new key", func(t *testing.T) {
		_, err := newOnly.Decode(newTok, expectFor(p))
		assert.NoError(t, err)
		_, err = oldCodec.Decode(newTok, expectFor(p))
		assertRejected(t, err, cursor.ErrInvalid, newTok)
	})
	t.Run("a removed key stops verifying", func(t *testing.T) {
		_, err := newOnly.Decode(oldTok, expectFor(p))
		assertRejected(t, err, cursor.ErrInvalid, oldTok)
	})
	t.Run("an unrelated key is rejected", func(t *testing.T) {
		_, err := stranger.Decode(oldTok, expectFor(p))
		assertRejected(t, err, cursor.ErrInvalid, oldTok)
	})
	t.Run("a known key ID with a MAC from another key is rejected", func(t *testing.T) {
		forged := rawBytes(t, oldTok)
		copy(forged[1:cursor.HeaderLen], rawBytes(t, newTok)[1:cursor.HeaderLen])
		bad := encodeRaw(forged)
		_, err := rotating.Decode(bad, expectFor(p))
		assertRejected(t, err, cursor.ErrInvalid, bad)
	})
}

func TestDecodeRejectsUnknownVersions(t *testing.T) {
	clk := &clock{t: t0}
	c := newCodec(t, clk, nil)
	p := samplePayload()
	pt := cursor.Plaintext(p, uint64(t0.Unix()), 600)
	valid := cursor.Seal(c, 2, nil, pt)
	_, err := c.Decode(valid, expectFor(p))
	require.NoError(t, err, "the seam seals like Encode")

	for _, v := range []byte{0, 1, 3, 0x80, 0xff} {
		t.Run(fmt.Sprintf("rejects version %d even with a valid MAC", v), func(t *testing.T) {
			tok := cursor.Seal(c, v, nil, pt)
			_, err := c.Decode(tok, expectFor(p))
			assertRejected(t, err, cursor.ErrInvalid, tok)
			assert.Contains(t, err.Error(), "version")
		})
	}
}

func TestDecodeRejectsValidlySignedButNonCanonicalPayloads(t *testing.T) {
	clk := &clock{t: t0}
	c := newCodec(t, clk, nil)
	issued := uint64(t0.Unix())
	p := cursor.Payload{Kind: cursor.KindPage, Offset: 5, Scope: "s"}
	good := cursor.Plaintext(p, issued, 600)
	tests := []struct {
		name string
		pt   []byte
		iv   []byte
	}{
		{name: "a trailing byte", pt: append(bytes.Clone(good), 0)},
		{name: "a missing byte", pt: good[:len(good)-1]},
		{name: "an over-long offset varint", pt: append([]byte{1, 0x85, 0x00}, good[2:]...)},
		{name: "kind zero", pt: append([]byte{0}, good[1:]...)},
		{name: "an offset beyond int64", pt: append([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, good[2:]...)},
		{name: "an empty plaintext padded to the minimum", pt: make([]byte, 40)},
		{name: "a data length beyond the end", pt: append(append(bytes.Clone(good[:len(good)-33]), 0x7f), good[len(good)-32:]...)},
		{name: "an IV that is not the synthetic IV", pt: good, iv: make([]byte, cursor.IVLen)},
	}
	for _, tt := range tests {
		t.Run("rejects "+tt.name, func(t *testing.T) {
			tok := cursor.Seal(c, 2, tt.iv, tt.pt)
			_, err := c.Decode(tok, cursor.Binding{Scope: "s", Filters: json.RawMessage(`{"b":1, "a":2}`)})
			if errors.Is(err, cursor.ErrMismatch) {
				_, err = c.Decode(tok, cursor.Binding{Scope: "s"})
			}
			assertRejected(t, err, cursor.ErrInvalid, tok)
		})
	}
}

func TestDecodeExpiry(t *testing.T) {
	const ttl, skew = 10 * time.Minute, 30 * time.Second
	tests := []struct {
		name string
		opts *cursor.Options
		now  time.Time // the clock at Decode; the cursor is issued at t0
		err  error
	}{
		{name: "accepts a fresh cursor", now: t0},
		{name: "accepts a cursor one second before it expires", now: t0.Add(ttl - time.Second)},
		{name: "accepts a cursor at the instant it expires", now: t0.Add(ttl)},
		{name: "accepts an expired cursor within the skew", now: t0.Add(ttl + skew)},
		{name: "rejects a cursor a nanosecond past expiry plus skew", now: t0.Add(ttl + skew + 1), err: cursor.ErrExpired},
		{name: "rejects a cursor a day old", now: t0.Add(24 * time.Hour), err: cursor.ErrExpired},
		{name: "accepts a cursor issued within the skew in the future", now: t0.Add(-skew)},
		{name: "rejects a cursor issued beyond the skew in the future", now: t0.Add(-skew - time.Second), err: cursor.ErrExpired},
		{name: "rejects right after expiry when skew is negative", opts: &cursor.Options{Skew: -1}, now: t0.Add(ttl + time.Second), err: cursor.ErrExpired},
		{name: "rejects a future cursor when skew is negative", opts: &cursor.Options{Skew: -1}, now: t0.Add(-time.Second), err: cursor.ErrExpired},
		{name: "accepts within a custom skew", opts: &cursor.Options{Skew: 5 * time.Minute}, now: t0.Add(ttl + 5*time.Minute)},
		{name: "rejects past a custom TTL", opts: &cursor.Options{TTL: time.Minute}, now: t0.Add(time.Minute + skew + time.Second), err: cursor.ErrExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{t: t0}
			c := newCodec(t, clk, tt.opts)
			p := samplePayload()
			tok, err := c.Encode(p)
			require.NoError(t, err)

			clk.t = tt.now
			got, err := c.Decode(tok, expectFor(p))
			if tt.err == nil {
				require.NoError(t, err)
				assert.Equal(t, p.Offset, got.Offset)
				return
			}
			assertRejected(t, err, tt.err, tok)
		})
	}
}

func TestDecodeTellsAFutureCursorApart(t *testing.T) {
	clk := &clock{t: t0}
	c := newCodec(t, clk, nil)
	tok, err := c.Encode(samplePayload())
	require.NoError(t, err)
	clk.t = t0.Add(-time.Hour)
	_, err = c.Decode(tok, expectFor(samplePayload()))
	assertRejected(t, err, cursor.ErrExpired, tok)
	assert.Contains(t, err.Error(), "in the future")
}

func TestDecodeBinding(t *testing.T) {
	p := samplePayload()
	tests := []struct {
		name   string
		modify func(*cursor.Binding)
		err    error
	}{
		{name: "accepts the exact request it was issued for", modify: func(*cursor.Binding) {}},
		{name: "accepts any kind when the expected kind is zero", modify: func(e *cursor.Binding) { e.Kind = 0 }},
		{name: "accepts filters with another key order and white space", modify: func(e *cursor.Binding) {
			e.Filters = json.RawMessage("{ \"tags\" : [\"billing\", \"urgent\"],\n \"status\": \"open\" }")
		}},
		{name: "rejects another kind", modify: func(e *cursor.Binding) { e.Kind = cursor.KindChunk }, err: cursor.ErrMismatch},
		{name: "rejects another scope", modify: func(e *cursor.Binding) { e.Scope = "tools/list_users" }, err: cursor.ErrMismatch},
		{name: "rejects another subject", modify: func(e *cursor.Binding) { e.Subject = "tenant-43" }, err: cursor.ErrMismatch},
		{name: "rejects a missing subject", modify: func(e *cursor.Binding) { e.Subject = "" }, err: cursor.ErrMismatch},
		{name: "rejects another order", modify: func(e *cursor.Binding) { e.Order = "created_asc" }, err: cursor.ErrMismatch},
		{name: "rejects other filters", modify: func(e *cursor.Binding) {
			e.Filters = json.RawMessage(`{"status":"closed","tags":["billing","urgent"]}`)
		}, err: cursor.ErrMismatch},
		{name: "rejects filters with the array reordered", modify: func(e *cursor.Binding) { e.Filters = json.RawMessage(`{"status":"open","tags":["urgent","billing"]}`) }, err: cursor.ErrMismatch},
		{name: "rejects missing filters", modify: func(e *cursor.Binding) { e.Filters = nil }, err: cursor.ErrMismatch},
		{name: "rejects JSON null filters", modify: func(e *cursor.Binding) { e.Filters = json.RawMessage(`null`) }, err: cursor.ErrMismatch},
		{name: "rejects expected filters that are not JSON", modify: func(e *cursor.Binding) { e.Filters = json.RawMessage(`{"status":`) }, err: cursor.ErrMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &clock{t: t0}
			c := newCodec(t, clk, nil)
			tok, err := c.Encode(p)
			require.NoError(t, err)
			want := expectFor(p)
			tt.modify(&want)

			got, err := c.Decode(tok, want)
			if tt.err == nil {
				require.NoError(t, err)
				assert.Equal(t, p.Offset, got.Offset)
				return
			}
			assertRejected(t, err, tt.err, tok)
			for _, sealed := range []string{p.Scope, p.Subject, p.Order, "billing"} {
				assert.NotContains(t, err.Error(), sealed, "a mismatch must not reveal sealed values")
			}
		})
	}
}

func TestDecodeTreatsNoFiltersAlike(t *testing.T) {
	for _, issued := range []string{"", "null"} {
		for _, expected := range []string{"", "null", " null\n"} {
			t.Run(fmt.Sprintf("accepts expected %q for issued %q", expected, issued), func(t *testing.T) {
				clk := &clock{t: t0}
				c := newCodec(t, clk, nil)
				tok, err := c.Encode(cursor.Payload{Kind: cursor.KindPage, Filters: json.RawMessage(issued)})
				require.NoError(t, err)
				_, err = c.Decode(tok, cursor.Binding{Filters: json.RawMessage(expected)})
				assert.NoError(t, err)
			})
		}
	}
}

func TestDecodeChecksInOrder(t *testing.T) {
	clk := &clock{t: t0}
	c := newCodec(t, clk, &cursor.Options{MaxTokenBytes: 512})
	p := samplePayload()
	tok, err := c.Encode(p)
	require.NoError(t, err)
	expired := t0.Add(time.Hour)
	tampered := rawBytes(t, tok)
	tampered[len(tampered)-1] ^= 1
	tests := []struct {
		name string
		tok  string
		now  time.Time
		want cursor.Binding
		err  error
	}{
		{name: "size before base64", tok: strings.Repeat("!", 513), err: cursor.ErrMalformed},
		{name: "base64 before the signature", tok: tok + "=", now: expired, err: cursor.ErrMalformed},
		{name: "the signature before expiry", tok: encodeRaw(tampered), now: expired, err: cursor.ErrInvalid},
		{name: "expiry before binding", tok: tok, now: expired, want: cursor.Binding{Scope: "elsewhere"}, err: cursor.ErrExpired},
		{name: "binding last", tok: tok, now: t0, want: cursor.Binding{Scope: "elsewhere"}, err: cursor.ErrMismatch},
	}
	for _, tt := range tests {
		t.Run("checks "+tt.name, func(t *testing.T) {
			clk.t = tt.now
			_, err := c.Decode(tt.tok, tt.want)
			assertRejected(t, err, tt.err, tt.tok)
		})
	}
}

func TestDecodeRejectsOversizeTokensBeforeDecoding(t *testing.T) {
	clk := &clock{t: t0}
	c := newCodec(t, clk, nil)
	p := samplePayload()
	tok, err := c.Encode(p)
	require.NoError(t, err)

	huge := strings.Repeat(tok, 1<<20/len(tok)+1)[:1<<20] // 1 MB of valid-looking base64
	tests := []struct {
		name string
		tok  string
	}{
		{name: "a 1 MB token", tok: huge},
		{name: "a 1 MB token of invalid characters", tok: strings.Repeat("!", 1<<20)},
		{name: "a token one byte over the cap", tok: huge[:cursor.DefaultMaxTokenBytes+1]},
	}
	for _, tt := range tests {
		t.Run("rejects "+tt.name, func(t *testing.T) {
			_, err := c.Decode(tt.tok, expectFor(p))
			assertRejected(t, err, cursor.ErrMalformed, tt.tok)
			assert.Contains(t, err.Error(), "longer than 4096 bytes")

			allocs := testing.AllocsPerRun(20, func() {
				_, _ = c.Decode(tt.tok, expectFor(p))
			})
			assert.Zero(t, allocs, "oversize input is rejected without allocating")
		})
	}
}

func TestErrorMessagesNeverContainTheToken(t *testing.T) {
	clk := &clock{t: t0}
	sec := secret("primary")
	c := newCodec(t, clk, nil, sec)
	p := samplePayload()
	tok, err := c.Encode(p)
	require.NoError(t, err)
	raw := rawBytes(t, tok)
	flipped := bytes.Clone(raw)
	flipped[len(flipped)/2] ^= 0x10

	cases := map[string]func() error{
		"malformed": func() error { _, err := c.Decode(tok+"==", expectFor(p)); return err },
		"tampered":  func() error { _, err := c.Decode(encodeRaw(flipped), expectFor(p)); return err },
		"wrong key": func() error { _, err := newCodec(t, clk, nil, secret("x")).Decode(tok, expectFor(p)); return err },
		"expired": func() error {
			clk.t = t0.Add(time.Hour)
			defer func() { clk.t = t0 }()
			_, err := c.Decode(tok, expectFor(p))
			return err
		},
		"mismatch":        func() error { _, err := c.Decode(tok, cursor.Binding{}); return err },
		"oversize":        func() error { _, err := c.Decode(strings.Repeat(tok, 100), expectFor(p)); return err },
		"too short":       func() error { _, err := c.Decode(tok[:20], expectFor(p)); return err },
		"encode too long": func() error { q := p; q.Scope = tok + strings.Repeat("x", 5000); _, err := c.Encode(q); return err },
	}
	for name, run := range cases {
		t.Run("for "+name, func(t *testing.T) {
			err := run()
			require.Error(t, err)
			msg := err.Error()
			assert.NotContains(t, msg, tok)
			assert.NotContains(t, msg, tok[:16], "not even part of the token")
			assert.NotContains(t, msg, string(sec))
			assert.NotContains(t, msg, fmt.Sprintf("%x", sec[:8]))
		})
	}
}
