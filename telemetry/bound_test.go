package telemetry_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/telemetry"
)

func TestTheSlogSinkCutsLongStringsAClientChose(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	for _, tt := range []struct {
		name   string
		record func(*telemetry.SlogSink) error
	}{
		{"a request ID", func(s *telemetry.SlogSink) error {
			return s.Record(context.Background(), telemetry.Record{RequestID: long, Endpoint: "GET /x"})
		}},
		{"an endpoint", func(s *telemetry.SlogSink) error {
			return s.Record(context.Background(), telemetry.Record{Endpoint: "GET /" + long})
		}},
		{"a gateway tool and parameter", func(s *telemetry.SlogSink) error {
			return s.RecordGateway(context.Background(), telemetry.GatewayRecord{Event: telemetry.GatewayValidationFailed, Tool: long, Parameter: long})
		}},
	} {
		t.Run(tt.name+" is cut to a bounded length", func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, tt.record(telemetry.NewSlogSink(slog.New(slog.NewJSONHandler(&buf, nil)))))
			assert.Less(t, buf.Len(), 2048)
			assert.Contains(t, buf.String(), "bytes)")
		})
	}
}
