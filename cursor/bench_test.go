package cursor_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/cursor"
)

// benchPayloads are payloads of growing size for the benchmarks.
func benchPayloads() []struct {
	name string
	p    cursor.Payload
} {
	big := map[string]any{}
	for i := range 40 {
		big[fmt.Sprintf("field_%02d", i)] = fmt.Sprintf("value %d", i)
	}
	bigJSON, err := json.Marshal(big)
	if err != nil {
		panic(err)
	}
	noFilters := samplePayload()
	noFilters.Filters = nil
	large := samplePayload()
	large.Filters = bigJSON
	return []struct {
		name string
		p    cursor.Payload
	}{
		{name: "no filters", p: noFilters},
		{name: "small filters", p: samplePayload()},
		{name: fmt.Sprintf("%d-byte filters", len(bigJSON)), p: large},
	}
}

func BenchmarkEncode(b *testing.B) {
	clk := &clock{t: t0}
	c := newCodec(b, clk, nil)
	for _, bp := range benchPayloads() {
		b.Run(bp.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Encode(bp.p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	clk := &clock{t: t0}
	c := newCodec(b, clk, nil)
	for _, bp := range benchPayloads() {
		tok, err := c.Encode(bp.p)
		require.NoError(b, err)
		b.Run(bp.name, func(b *testing.B) {
			want := expectFor(bp.p)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Decode(tok, want); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	p := samplePayload()
	tok, err := c.Encode(p)
	require.NoError(b, err)
	b.Run("small filters in another key order", func(b *testing.B) {
		want := expectFor(p)
		want.Filters = json.RawMessage(`{"tags":["billing","urgent"], "status":"open"}`)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Decode(tok, want); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tampered", func(b *testing.B) {
		raw, err := base64.RawURLEncoding.DecodeString(tok)
		require.NoError(b, err)
		raw[len(raw)/2] ^= 1
		bad := base64.RawURLEncoding.EncodeToString(raw)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Decode(bad, expectFor(p)); err == nil {
				b.Fatal("accepted")
			}
		}
	})
	b.Run("oversize 1 MB", func(b *testing.B) {
		huge := strings.Repeat("A", 1<<20)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Decode(huge, expectFor(p)); err == nil {
				b.Fatal("accepted")
			}
		}
	})
}
