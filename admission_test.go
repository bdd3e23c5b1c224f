package ctxfit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ctxfit/ctxfit"
)

// gatedCounter counts exactly, but the first count of a text of gateLen
// bytes waits for the gate to open: the request that makes it holds its
// admission while the test runs others beside it.
type gatedCounter struct {
	gateLen int
	entered chan struct{}
	gate    chan struct{}
	once    sync.Once
}

func newGatedCounter(gateLen int) *gatedCounter {
	return &gatedCounter{gateLen: gateLen, entered: make(chan struct{}), gate: make(chan struct{})}
}

func (c *gatedCounter) Count(text string) int {
	if len(text) == c.gateLen {
		c.once.Do(func() {
			close(c.entered)
			<-c.gate
		})
	}
	return exact.Count(text)
}

// holding starts a request for body through g and returns once it holds
// its admission (it is counting), with a function that lets it finish
// and returns its outcome.
func holding(t *testing.T, g *ctxfit.Guard, c *gatedCounter, body []byte) (finish func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "held"}, serve(body, "text/plain"))
		done <- err
	}()
	select {
	case <-c.entered:
	case err := <-done:
		t.Fatalf("the held request ended before counting its response: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the held request did not count its response within a minute")
	}
	return func() error {
		close(c.gate)
		return receive(t, done, "the held request's outcome")
	}
}

// receive returns what ch gives, failing the test if nothing comes within
// a minute: a request that never ends is a failure, not a hung suite.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("%s did not come within a minute", what)
		panic("unreachable")
	}
}

// admissionConfig is cfg for the tests of admission: a shaping time limit
// that a loaded machine cannot reach while a request is held.
func admissionConfig(cfg ctxfit.Config) ctxfit.Config {
	cfg.Secret = secret
	cfg.ShapeTimeout = ctxfit.Duration(time.Hour)
	return cfg
}

func TestShapingIsBoundedAndTheRestGetARetryable503(t *testing.T) {
	text := func(n int) []byte { return []byte(strings.Repeat("word ", n/5)) }
	held := text(50_000)
	for _, tc := range []struct {
		name  string
		cfg   ctxfit.Config
		other []byte // a request beside the held one: refused
	}{
		{"one response at a time", ctxfit.Config{MaxConcurrentShaping: 1}, text(20_000)},
		{"a byte bound across requests", ctxfit.Config{MaxConcurrentShaping: 8, MaxShapingBytes: 60_000}, text(20_000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newGatedCounter(len(held))
			tc.cfg.AdmissionWait = ctxfit.Duration(time.Millisecond)
			g, err := ctxfit.New(&ctxfit.Options{Config: admissionConfig(tc.cfg), Counter: c})
			require.NoError(t, err)
			t.Cleanup(func() { _ = g.Close() })
			finish := holding(t, g, c, held)

			_, err = g.Handle(context.Background(), ctxfit.Request{Endpoint: "other"}, serve(tc.other, "text/plain"))
			require.ErrorIs(t, err, ctxfit.ErrBusy)
			p := ctxfit.ProblemOf(err, ctxfit.Params{})
			assert.Equal(t, 503, p.Status)
			assert.Equal(t, "shaping_busy", p.Code)
			assert.Positive(t, p.RetryAfter, "the client is told when to retry")

			small := []byte("a small response passes through without waiting")
			res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "small"}, serve(small, "text/plain"))
			require.NoError(t, err, "what passes through uncounted takes no room")
			assert.Equal(t, small, res.Body)

			require.NoError(t, finish())
			res, err = g.Handle(context.Background(), ctxfit.Request{Endpoint: "other"}, serve(tc.other, "text/plain"))
			require.NoError(t, err, "room is given back when the held request ends")
			assert.True(t, res.Shaped)
		})
	}
}

func TestARequestWaitingForRoomStopsWhenItsClientGoesAway(t *testing.T) {
	held := []byte(strings.Repeat("word ", 10_000))
	c := newGatedCounter(len(held))
	g, err := ctxfit.New(&ctxfit.Options{Config: admissionConfig(ctxfit.Config{MaxConcurrentShaping: 1,
		AdmissionWait: ctxfit.Duration(time.Hour)}), Counter: c})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	finish := holding(t, g, c, held)
	defer func() { require.NoError(t, finish()) }()

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := g.Handle(ctx, ctxfit.Request{Endpoint: "other"}, serve(held, "text/plain"))
		errc <- err
	}()
	cancel()
	err = receive(t, errc, "the waiting request's outcome")
	assert.True(t, errors.Is(err, context.Canceled), "got %v", err)
}

func TestAReloadThatKeepsTheBoundsKeepsTheRequestsInFlightCounted(t *testing.T) {
	held := []byte(strings.Repeat("word ", 10_000))
	c := newGatedCounter(len(held))
	cfg := admissionConfig(ctxfit.Config{MaxConcurrentShaping: 1, AdmissionWait: ctxfit.Duration(time.Millisecond)})
	g, err := ctxfit.New(&ctxfit.Options{Config: cfg, Counter: c})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	finish := holding(t, g, c, held)
	defer func() { require.NoError(t, finish()) }()

	cfg.Threshold = 3000 // another setting changes; the bounds do not
	require.NoError(t, g.Reload(cfg))
	_, err = g.Handle(context.Background(), ctxfit.Request{Endpoint: "other"}, serve(held[1:], "text/plain"))
	require.ErrorIs(t, err, ctxfit.ErrBusy)
}

func TestARequestThatFindsRoomIsAdmittedHoweverShortTheWait(t *testing.T) {
	// A wait of a nanosecond has ended before the request looks for room:
	// the room that is free is taken all the same, every time.
	g, _ := newGuard(t, ctxfit.Config{MaxConcurrentShaping: 1, AdmissionWait: 1})
	body := []byte(strings.Repeat("word ", 10_000))
	for range 20 {
		res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "x"}, serve(body, "text/plain"))
		require.NoError(t, err)
		assert.True(t, res.Shaped)
	}
}

// gateCounter counts exactly, but every count of a text of gateLen bytes
// says so on entered and waits for the gate to open: each request that
// makes one holds its admission until then.
type gateCounter struct {
	gateLen int
	entered chan struct{}
	gate    chan struct{}
}

func (c *gateCounter) Count(text string) int {
	if len(text) == c.gateLen {
		c.entered <- struct{}{}
		<-c.gate
	}
	return exact.Count(text)
}

func TestOneSubjectsHeavyRequestsLeaveRoomForAnothersRequests(t *testing.T) {
	held := []byte(strings.Repeat("word ", 10_000))
	other := []byte(strings.Repeat("other ", 5_000))
	c := &gateCounter{gateLen: len(held), entered: make(chan struct{}, 4), gate: make(chan struct{})}
	// Two slots, so a subject's share is one (MaxShapingPerSubject's zero
	// value: half the slots).
	g, err := ctxfit.New(&ctxfit.Options{Config: admissionConfig(ctxfit.Config{MaxConcurrentShaping: 2,
		AdmissionWait: ctxfit.Duration(time.Millisecond)}), Counter: c})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	start := func(subject string) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "heavy", Subject: subject}, serve(held, "text/plain"))
			done <- err
		}()
		return done
	}
	first := start("alice")
	receive(t, c.entered, "alice's first request counting")
	second := start("alice")
	select {
	case <-c.entered:
		// alice holds both slots: bob finds no room below.
	case err := <-second:
		require.ErrorIs(t, err, ctxfit.ErrBusy, "alice's second request waits for her share, then is busy")
	case <-time.After(time.Minute):
		t.Fatal("alice's second request neither counted nor ended within a minute")
	}

	res, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "other", Subject: "bob"}, serve(other, "text/plain"))
	require.NoError(t, err, "bob is served beside alice's heavy requests")
	assert.True(t, res.Shaped)

	close(c.gate)
	require.NoError(t, receive(t, first, "alice's first request's outcome"))
	res, err = g.Handle(context.Background(), ctxfit.Request{Endpoint: "other", Subject: "alice"}, serve(other, "text/plain"))
	require.NoError(t, err, "alice's share is hers again once her request ends")
	assert.True(t, res.Shaped)
}

func TestRequestsWithoutASubjectShareOnlyTheSlots(t *testing.T) {
	held := []byte(strings.Repeat("word ", 10_000))
	c := &gateCounter{gateLen: len(held), entered: make(chan struct{}, 4), gate: make(chan struct{})}
	g, err := ctxfit.New(&ctxfit.Options{Config: admissionConfig(ctxfit.Config{MaxConcurrentShaping: 2,
		AdmissionWait: ctxfit.Duration(time.Hour)}), Counter: c})
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	var done [2]chan error
	for i := range done {
		done[i] = make(chan error, 1)
		go func() {
			_, err := g.Handle(context.Background(), ctxfit.Request{Endpoint: "heavy"}, serve(held, "text/plain"))
			done[i] <- err
		}()
		receive(t, c.entered, "an anonymous request counting")
	}
	close(c.gate)
	for i := range done {
		require.NoError(t, receive(t, done[i], "an anonymous request's outcome"))
	}
}
