package ctxfit

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
)

// admission bounds the work of shaping across requests: how many responses
// are counted and shaped at once, how many of them one subject's, and how
// many bytes they hold. A request waits for room at most
// Config.AdmissionWait, then gets [ErrBusy]: a burst of large responses
// costs a bounded amount of CPU and memory, and the requests beyond it a
// prompt, retryable answer instead of a queue.
//
// A request of a subject first takes one of its subject's share
// (Config.MaxShapingPerSubject), then a slot: a subject's requests beyond
// its share wait among themselves, not in the queue for the slots, so one
// client's burst leaves the slots beyond its share to the others.
type admission struct {
	slots, bytes *semaphore.Weighted
	maxSlots     int
	share        int // slots one subject may hold; no bound when it is maxSlots or more
	maxBytes     int64
	wait         time.Duration

	mu       sync.Mutex
	subjects map[string]*subjectShare // the subjects with a request admitted or waiting
}

// subjectShare is one subject's share of the slots, and how many of its
// requests hold or wait for it (the entry goes with the last).
type subjectShare struct {
	sem   *semaphore.Weighted
	users int
}

func newAdmission(c Config) *admission {
	return &admission{
		slots:    semaphore.NewWeighted(int64(c.MaxConcurrentShaping)),
		bytes:    semaphore.NewWeighted(c.MaxShapingBytes),
		maxSlots: c.MaxConcurrentShaping,
		share:    c.MaxShapingPerSubject,
		maxBytes: c.MaxShapingBytes,
		wait:     time.Duration(c.AdmissionWait),
		subjects: map[string]*subjectShare{},
	}
}

// same reports whether a was built from the limits of c, so that a Reload
// that leaves them alone keeps the requests in flight counted.
func (a *admission) same(c Config) bool {
	return a != nil && a.maxSlots == c.MaxConcurrentShaping && a.maxBytes == c.MaxShapingBytes &&
		a.share == c.MaxShapingPerSubject && a.wait == time.Duration(c.AdmissionWait)
}

// admit waits for a slot of the subject's share (a subject "" has none),
// a slot and n bytes (a response larger than the whole byte bound takes
// all of it), and returns the function that gives them back. It fails
// with ErrBusy past the wait, or with the context's error when the request
// goes away.
func (a *admission) admit(ctx context.Context, subject string, n int) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err // the client went away: nothing to shape for
	}
	w := min(int64(n), a.maxBytes)
	wctx, cancel := context.WithTimeout(ctx, a.wait)
	defer cancel()
	own := a.enter(subject)
	if own != nil {
		if err := acquire(wctx, own.sem, 1); err != nil {
			a.leave(subject, own)
			return nil, a.busy(ctx, err)
		}
	}
	giveBack := func() {
		if own != nil {
			own.sem.Release(1)
			a.leave(subject, own)
		}
	}
	if err := acquire(wctx, a.slots, 1); err != nil {
		giveBack()
		return nil, a.busy(ctx, err)
	}
	if err := acquire(wctx, a.bytes, w); err != nil {
		a.slots.Release(1)
		giveBack()
		return nil, a.busy(ctx, err)
	}
	return func() {
		a.bytes.Release(w)
		a.slots.Release(1)
		giveBack()
	}, nil
}

// enter returns the share of subject, counting the request as one of its
// users, or nil when the subject has no share to respect.
func (a *admission) enter(subject string) *subjectShare {
	if subject == "" || a.share <= 0 || a.share >= a.maxSlots {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.subjects[subject]
	if s == nil {
		s = &subjectShare{sem: semaphore.NewWeighted(int64(a.share))}
		a.subjects[subject] = s
	}
	s.users++
	return s
}

// leave counts one user of s out, and forgets the subject with its last.
func (a *admission) leave(subject string, s *subjectShare) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s.users--; s.users == 0 {
		delete(a.subjects, subject)
	}
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
