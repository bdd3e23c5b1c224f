package ctxfit

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sync/semaphore"
)

// admission bounds the work of shaping across requests: how many responses
// are counted and shaped at once, and how many bytes they hold. A request
// waits for room at most Config.AdmissionWait, then gets [ErrBusy]: a
// burst of large responses costs a bounded amount of CPU and memory, and
// the requests beyond it a prompt, retryable answer instead of a queue.
type admission struct {
	slots, bytes *semaphore.Weighted
	maxSlots     int
	maxBytes     int64
	wait         time.Duration
}

func newAdmission(c Config) *admission {
	return &admission{
		slots:    semaphore.NewWeighted(int64(c.MaxConcurrentShaping)),
		bytes:    semaphore.NewWeighted(c.MaxShapingBytes),
		maxSlots: c.MaxConcurrentShaping,
		maxBytes: c.MaxShapingBytes,
		wait:     time.Duration(c.AdmissionWait),
	}
}

// same reports whether a was built from the limits of c, so that a Reload
// that leaves them alone keeps the requests in flight counted.
func (a *admission) same(c Config) bool {
	return a != nil && a.maxSlots == c.MaxConcurrentShaping && a.maxBytes == c.MaxShapingBytes &&
		a.wait == time.Duration(c.AdmissionWait)
}

// admit waits for a slot and for n bytes (a response larger than the whole
// byte bound takes all of it), and returns the function that gives them
// back. It fails with ErrBusy past the wait, or with the context's error
// when the request goes away.
func (a *admission) admit(ctx context.Context, n int) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err // the client went away: nothing to shape for
	}
	w := min(int64(n), a.maxBytes)
	wctx, cancel := context.WithTimeout(ctx, a.wait)
	defer cancel()
	if err := acquire(wctx, a.slots, 1); err != nil {
		return nil, a.busy(ctx, err)
	}
	if err := acquire(wctx, a.bytes, w); err != nil {
		a.slots.Release(1)
		return nil, a.busy(ctx, err)
	}
	return func() {
		a.bytes.Release(w)
		a.slots.Release(1)
	}, nil
}

// acquire takes n of sem at once when they are free (and nobody waits
// before us), else waits for them until ctx ends. A request that finds
// room is admitted however short the wait: semaphore.Acquire prefers to
// fail once its context has ended, which a wait of a millisecond on a
// loaded machine, or of a nanosecond anywhere, already has.
func acquire(ctx context.Context, sem *semaphore.Weighted, n int64) error {
	if sem.TryAcquire(n) {
		return nil
	}
	return sem.Acquire(ctx, n)
}

func (a *admission) busy(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ErrBusy
	}
	return err
}
