package otelsink_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ctxfit/ctxfit/telemetry"
	"github.com/ctxfit/ctxfit/telemetry/otelsink"
)

func ExampleNew() {
	// In production the provider comes from your OpenTelemetry setup, with
	// a periodic reader and an exporter; a manual reader shows the values.
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(context.Background())

	sink, err := otelsink.New(provider)
	if err != nil {
		panic(err)
	}
	// Send the same records to an in-memory aggregate and to metrics.
	all := telemetry.Multi(telemetry.NewAggregate(nil), sink)
	_ = all.Record(context.Background(), telemetry.Record{
		Endpoint: "GET /orders", Strategy: "pagination", Outcome: "shaped",
		TokensBefore: 9000, TokensAfter: 3000,
	})

	var rm metricdata.ResourceMetrics
	_ = reader.Collect(context.Background(), &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "ctxfit.tokens" {
			for _, p := range sum.DataPoints {
				if v, _ := p.Attributes.Value(otelsink.KeyTokenType); v.AsString() == otelsink.TokenTypeSaved {
					fmt.Println(m.Name, v.AsString(), p.Value)
				}
			}
		}
	}
	// Output:
	// ctxfit.tokens saved 6000
}
