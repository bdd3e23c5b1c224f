package summary_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit/budget"
	"github.com/ctxfit/ctxfit/summary"
)

// cancellingCounter is an exact counter that, at its first call, tells
// another goroutine to cancel the context and waits until it has: the
// summary then goes on with a context that ended while it ran.
type cancellingCounter struct {
	budget.Counter
	once    sync.Once
	started chan struct{}
	ctx     context.Context
}

func (c *cancellingCounter) Count(text string) int {
	c.once.Do(func() {
		close(c.started)
		<-c.ctx.Done()
	})
	return c.Counter.Count(text)
}

func TestSummarizeContextStopsWhenTheContextEnds(t *testing.T) {
	huge := wideObject(200_000)
	shapes := []struct {
		name  string
		shape summary.Shape
	}{
		{"automatic selection", summary.Shape{Endpoint: "/x/{id}"}},
		{"configured fields", summary.Shape{Fields: []string{"id", "name"}}},
		{"a TopN rule", summary.Shape{TopN: []summary.TopN{{Path: "items", Score: "price", N: 3}}}},
	}
	for _, sh := range shapes {
		t.Run(sh.name+": an already cancelled context stops it at once", func(t *testing.T) {
			s := newSummarizer(t, nil)
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			r, err := s.SummarizeContext(ctx, huge, sh.shape)
			require.ErrorIs(t, err, context.Canceled)
			assert.Nil(t, r)
			assert.True(t, strings.HasPrefix(err.Error(), "summary: "), err.Error())
		})
		t.Run(sh.name+": a context cancelled from another goroutine while it runs stops it", func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			c := &cancellingCounter{Counter: exactCounter(t), started: make(chan struct{}), ctx: ctx}
			go func() {
				<-c.started
				cancel()
			}()
			s := newSummarizer(t, &summary.Options{Counter: c})
			r, err := s.SummarizeContext(ctx, huge, sh.shape)
			require.ErrorIs(t, err, context.Canceled)
			assert.Nil(t, r)
		})
	}
	t.Run("a deadline that has passed is the context's error too", func(t *testing.T) {
		s := newSummarizer(t, nil)
		ctx, cancel := context.WithTimeout(t.Context(), 0)
		defer cancel()
		_, err := s.SummarizeContext(ctx, huge, summary.Shape{})
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("the cause of a cancellation is kept", func(t *testing.T) {
		s := newSummarizer(t, nil)
		cause := errors.New("the client went away")
		ctx, cancel := context.WithCancelCause(t.Context())
		cancel(cause)
		_, err := s.SummarizeContext(ctx, huge, summary.Shape{})
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, cause)
	})
	t.Run("Summarize runs to the end", func(t *testing.T) {
		s := newSummarizer(t, nil)
		r, err := s.Summarize(wideObject(5_000), summary.Shape{Endpoint: "/x/{id}"})
		require.NoError(t, err)
		assert.True(t, r.Summarized)
	})
}

func TestProjectAndServeDetailsStopWhenTheContextEnds(t *testing.T) {
	huge := elementsObject(100_000)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name string
		run  func() error
	}{
		{"ProjectContext", func() error {
			_, _, err := summary.ProjectContext(ctx, huge, []string{"items.id"})
			return err
		}},
		{"ProjectContext without paths", func() error {
			_, _, err := summary.ProjectContext(ctx, huge, nil)
			return err
		}},
		{"ServeDetailsContext with top-level fields", func() error {
			_, err := summary.ServeDetailsContext(ctx, huge, "items")
			return err
		}},
		{"ServeDetailsContext with fields=all", func() error {
			_, err := summary.ServeDetailsContext(ctx, []byte(`{"a":1}`), "all")
			return err
		}},
		{"ProjectContext on a small input", func() error {
			_, _, err := summary.ProjectContext(ctx, []byte(`{"a":1}`), []string{"a"})
			return err
		}},
		{"ServeDetailsContext with a path through the array", func() error {
			_, err := summary.ServeDetailsContext(ctx, huge, "items.price")
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name+" returns the context's error", func(t *testing.T) {
			err := tt.run()
			require.ErrorIs(t, err, context.Canceled)
			assert.True(t, strings.HasPrefix(err.Error(), "summary: "), err.Error())
		})
	}
}
