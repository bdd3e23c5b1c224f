package telemetry

import (
	"context"
	"errors"
	"fmt"
)

// A Sink receives the [Record] of every response, as a slog.Handler
// receives log records.
//
// Record is called concurrently, from the goroutines serving requests,
// unless the sink is wrapped in [NewAsync]; implementations must be safe for
// concurrent use. Record is called once per response, after the response is
// complete; there is no other call order.
//
// Record must not modify r.OptimizationMetadata, and a sink that keeps the
// map past the call must keep a copy (maps.Clone) or the fields it needs.
// The caller, for its part, does not modify the map after the call.
//
// A sink returns an error when it could not record r (an invalid record, an
// exporter failure, a closed sink). The caller logs or counts the error; it
// never fails or delays the response because of it. A sink that may be slow
// belongs in [NewAsync].
type Sink interface {
	Record(ctx context.Context, r Record) error
}

// SinkFunc adapts a function to the [Sink] interface.
type SinkFunc func(ctx context.Context, r Record) error

// Record calls f(ctx, r).
func (f SinkFunc) Record(ctx context.Context, r Record) error { return f(ctx, r) }

// Multi returns a Sink that sends each record to every one of sinks, in
// order, as io.MultiWriter writes to several writers. A sink that fails or
// panics does not stop the others: the errors of all of them are returned,
// joined, and a panic becomes an error. Nil sinks are skipped; with a single
// sink Multi returns it unchanged, and with none a sink that does nothing.
//
// The returned Sink is safe for concurrent use when all of sinks are.
func Multi(sinks ...Sink) Sink {
	var all []Sink
	for _, s := range sinks {
		switch s := s.(type) {
		case nil:
		case multi:
			all = append(all, s...)
		default:
			all = append(all, s)
		}
	}
	if len(all) == 1 {
		return all[0]
	}
	return multi(all)
}

type multi []Sink

func (m multi) Record(ctx context.Context, r Record) error {
	var errs []error
	for _, s := range m {
		if err := safeRecord(ctx, s, r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// safeRecord calls s.Record and turns a panic into an error: telemetry must
// never bring a request down.
func safeRecord(ctx context.Context, s Sink, r Record) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("telemetry: sink %T panicked: %v", s, v)
		}
	}()
	return s.Record(ctx, r)
}
