package telemetry_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/telemetry"
)

// collector is a Sink that keeps the records it receives.
type collector struct {
	mu      sync.Mutex
	records []telemetry.Record
}

func (c *collector) Record(_ context.Context, r telemetry.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records = append(c.records, r)
	return nil
}

func (c *collector) got() []telemetry.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]telemetry.Record(nil), c.records...)
}

func failing(err error) telemetry.Sink {
	return telemetry.SinkFunc(func(context.Context, telemetry.Record) error { return err })
}

func TestMulti(t *testing.T) {
	errA, errB := errors.New("sink a failed"), errors.New("sink b failed")
	rec := telemetry.Record{RequestID: "r1"}

	t.Run("every sink receives the record even when earlier ones fail", func(t *testing.T) {
		first, last := &collector{}, &collector{}
		panicky := telemetry.SinkFunc(func(context.Context, telemetry.Record) error { panic("boom") })
		err := telemetry.Multi(first, failing(errA), panicky, failing(errB), last).Record(t.Context(), rec)
		require.Error(t, err)
		assert.ErrorIs(t, err, errA)
		assert.ErrorIs(t, err, errB)
		assert.Contains(t, err.Error(), "panicked: boom")
		assert.Equal(t, []telemetry.Record{rec}, first.got())
		assert.Equal(t, []telemetry.Record{rec}, last.got())
	})
	t.Run("all sinks succeeding is no error", func(t *testing.T) {
		a, b := &collector{}, &collector{}
		require.NoError(t, telemetry.Multi(a, nil, b).Record(t.Context(), rec))
		assert.Len(t, a.got(), 1)
		assert.Len(t, b.got(), 1)
	})
	t.Run("a single sink is returned unchanged", func(t *testing.T) {
		c := &collector{}
		assert.Same(t, c, telemetry.Multi(nil, c))
	})
	t.Run("no sinks record nothing without error", func(t *testing.T) {
		assert.NoError(t, telemetry.Multi().Record(t.Context(), rec))
	})
	t.Run("nested multi-sinks are flattened and still reach every sink", func(t *testing.T) {
		a, b, c := &collector{}, &collector{}, &collector{}
		err := telemetry.Multi(telemetry.Multi(a, failing(errA)), telemetry.Multi(b, c)).Record(t.Context(), rec)
		assert.ErrorIs(t, err, errA)
		for _, s := range []*collector{a, b, c} {
			assert.Len(t, s.got(), 1)
		}
	})
}
