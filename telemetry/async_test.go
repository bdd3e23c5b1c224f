package telemetry_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/telemetry"
)

// blocking is a sink whose calls block until their context ends; started
// receives a value when each call begins.
type blocking struct{ started chan struct{} }

func (b blocking) Record(ctx context.Context, _ telemetry.Record) error {
	b.started <- struct{}{}
	<-ctx.Done()
	return ctx.Err()
}

func TestAsyncNeverBlocksRecord(t *testing.T) {
	sink := blocking{started: make(chan struct{}, 16)}
	var dropped atomic.Int64
	a := telemetry.NewAsync(sink, &telemetry.AsyncOptions{
		Buffer:  2,
		OnDrop:  func(telemetry.Record) { dropped.Add(1) },
		OnError: func(error) {},
	})

	// The first record is taken by the goroutine and blocks there.
	require.NoError(t, a.Record(t.Context(), telemetry.Record{RequestID: "first"}))
	<-sink.started

	// Two more fill the buffer; the other seven are dropped at once.
	for range 9 {
		assert.NoError(t, a.Record(t.Context(), telemetry.Record{}))
	}
	assert.Equal(t, uint64(7), a.Dropped())
	assert.Equal(t, int64(7), dropped.Load())

	t.Run("Close that runs out of time cancels the sink and drops the rest", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		assert.ErrorIs(t, a.Close(ctx), context.Canceled)
		// A second Close waits for the goroutine to end.
		require.NoError(t, a.Close(t.Context()))
		assert.Equal(t, uint64(9), a.Dropped(), "the two buffered records are dropped too")
		assert.Equal(t, int64(9), dropped.Load())
		assert.Equal(t, uint64(1), a.Errors(), "the cancelled call's error is counted")
	})
}

func TestAsyncDrainsOnClose(t *testing.T) {
	c := &collector{}
	a := telemetry.NewAsync(c, nil)
	var want []telemetry.Record
	for i := range 100 {
		r := telemetry.Record{ItemCount: i}
		want = append(want, r)
		require.NoError(t, a.Record(t.Context(), r))
	}
	require.NoError(t, a.Close(t.Context()))
	assert.Equal(t, want, c.got(), "every record arrives, in order")
	assert.Zero(t, a.Dropped())

	t.Run("a record after Close is refused and counted as dropped", func(t *testing.T) {
		assert.ErrorIs(t, a.Record(t.Context(), telemetry.Record{}), telemetry.ErrClosed)
		assert.Equal(t, uint64(1), a.Dropped())
		assert.Len(t, c.got(), 100)
	})
}

func TestAsyncSinkErrorsAreCountedNotReturned(t *testing.T) {
	errBoom := errors.New("exporter down")
	tests := []struct {
		name    string
		sink    telemetry.Sink
		wantErr string
	}{
		{"a failing sink", failing(errBoom), "exporter down"},
		{"a panicking sink", telemetry.SinkFunc(func(context.Context, telemetry.Record) error { panic("boom") }), "panicked: boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []error
			a := telemetry.NewAsync(tt.sink, &telemetry.AsyncOptions{OnError: func(err error) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, err)
			}})
			for range 3 {
				assert.NoError(t, a.Record(t.Context(), telemetry.Record{}))
			}
			require.NoError(t, a.Close(t.Context()))
			assert.Equal(t, uint64(3), a.Errors())
			require.Len(t, got, 3)
			assert.ErrorContains(t, got[0], tt.wantErr)
		})
	}
}

type ctxKey struct{}

func TestAsyncContext(t *testing.T) {
	t.Run("the sink sees the record's context values but not its cancellation", func(t *testing.T) {
		type seen struct {
			value any
			err   error
		}
		ch := make(chan seen, 1)
		a := telemetry.NewAsync(telemetry.SinkFunc(func(ctx context.Context, _ telemetry.Record) error {
			ch <- seen{ctx.Value(ctxKey{}), ctx.Err()}
			return nil
		}), nil)
		ctx, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "trace-1"))
		cancel() // the request is over before the sink runs
		require.NoError(t, a.Record(ctx, telemetry.Record{}))
		require.NoError(t, a.Close(t.Context()))
		got := <-ch
		assert.Equal(t, "trace-1", got.value)
		assert.NoError(t, got.err)
	})
}

func TestAsyncLeavesNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 20 {
		a := telemetry.NewAsync(&collector{}, &telemetry.AsyncOptions{Buffer: 4})
		for range 10 {
			_ = a.Record(t.Context(), telemetry.Record{})
		}
		require.NoError(t, a.Close(t.Context()))
	}
	// Close returns once the goroutine has finished its work; give the
	// runtime a moment to retire it. (assert.Eventually would count its own
	// goroutine.)
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before)
}

func TestAsyncIsSafeForConcurrentUse(t *testing.T) {
	agg := telemetry.NewAggregate(nil)
	c := &collector{}
	a := telemetry.NewAsync(telemetry.Multi(agg, c), &telemetry.AsyncOptions{Buffer: 100000})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range 500 {
				assert.NoError(t, a.Record(t.Context(), fixture()[i%5]))
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			agg.Query(telemetry.Filter{})
		}
	})
	wg.Wait()
	// Close concurrently with late records: each is either delivered or
	// refused, never lost without a count.
	var late sync.WaitGroup
	var refused atomic.Uint64
	for range 4 {
		late.Go(func() {
			for range 100 {
				if errors.Is(a.Record(t.Context(), telemetry.Record{}), telemetry.ErrClosed) {
					refused.Add(1)
				}
			}
		})
	}
	require.NoError(t, a.Close(t.Context()))
	late.Wait()
	assert.Equal(t, uint64(4000+400), uint64(len(c.got()))+a.Dropped())
	assert.Equal(t, refused.Load(), a.Dropped())
	assert.Equal(t, len(c.got()), agg.Totals().Count)
}
