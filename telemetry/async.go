package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
)

// DefaultAsyncBuffer is the default number of records an [Async] holds.
const DefaultAsyncBuffer = 1024

// ErrClosed is returned by [Async.Record] after [Async.Close].
var ErrClosed = errors.New("telemetry: sink closed")

// AsyncOptions configure an [Async]. A nil *AsyncOptions and zero fields
// mean the documented defaults; NewAsync copies the options.
type AsyncOptions struct {
	// Buffer is the number of records waiting for the sink; a record that
	// finds it full is dropped. Zero or negative means 1,024.
	Buffer int
	// OnDrop, when not nil, is called with every dropped record, in the
	// goroutine that dropped it: usually the one serving the request, so it
	// must be quick and must not block. Nil means drops are only counted.
	OnDrop func(Record)
	// OnDropGateway is OnDrop for the records given to
	// [Async.RecordGateway]. Nil means they are only counted.
	OnDropGateway func(GatewayRecord)
	// OnError, when not nil, is called with every error the sink returns, in
	// the Async's goroutine. Nil means errors are logged with slog.Default()
	// at WARN. Errors are counted either way.
	OnError func(error)
}

// Async runs a [Sink] in a goroutine of its own so that a slow or failing
// sink never delays or fails a response. [Async.Record] puts the record in a
// buffer and returns at once; when the buffer is full the record is dropped
// and counted ([Async.Dropped]). The sink's errors and panics are counted
// ([Async.Errors]) and reported to OnError, never to the caller.
//
// The sink is called from a single goroutine, in the order records were
// buffered, with a context that keeps the values of the context given to
// Record (a trace span, for instance) but not its cancellation: the request
// is usually over by then. That context is cancelled when [Async.Close] runs
// out of time.
//
// A record's OptimizationMetadata is read by the sink after Record returns;
// the caller must not modify it.
//
// Async is a [GatewaySink] as well: [Async.RecordGateway] buffers gateway
// records in the same buffer, in the same order, for a sink that is a
// GatewaySink, under the same rules (dropped and counted when the buffer is
// full, flushed by Close).
//
// Async is safe for concurrent use. Its zero value is not usable; call
// [NewAsync]. Close it to stop its goroutine.
type Async struct {
	sink    Sink
	gsink   GatewaySink // sink, if it is one
	onDrop  func(Record)
	onDropG func(GatewayRecord)
	onError func(error)

	mu     sync.RWMutex // guards closed and the sending side of ch
	closed bool
	ch     chan asyncItem

	base      context.Context // cancelled when Close gives up waiting
	cancel    context.CancelFunc
	abandon   atomic.Bool // drop what is left instead of sending it
	done      chan struct{}
	closeOnce sync.Once

	dropped atomic.Uint64
	errs    atomic.Uint64
}

type asyncItem struct {
	ctx context.Context
	r   Record
	g   *GatewayRecord // not nil: a gateway record, and r is unused
}

// NewAsync starts a goroutine that feeds sink with the records given to the
// returned Async's Record method. opts may be nil.
func NewAsync(sink Sink, opts *AsyncOptions) *Async {
	var o AsyncOptions
	if opts != nil {
		o = *opts
	}
	if o.Buffer <= 0 {
		o.Buffer = DefaultAsyncBuffer
	}
	if o.OnError == nil {
		o.OnError = func(err error) {
			slog.Default().Warn("telemetry: sink failed", "error", err)
		}
	}
	base, cancel := context.WithCancel(context.Background())
	a := &Async{
		sink:    sink,
		onDrop:  o.OnDrop,
		onDropG: o.OnDropGateway,
		onError: o.OnError,
		ch:      make(chan asyncItem, o.Buffer),
		base:    base,
		cancel:  cancel,
		done:    make(chan struct{}),
	}
	a.gsink, _ = sink.(GatewaySink)
	go a.run()
	return a
}

// Record buffers r for the sink and returns at once. It returns nil, or
// [ErrClosed] after Close; a record dropped because the buffer is full is
// counted, not reported as an error, since nothing would be done about it.
func (a *Async) Record(ctx context.Context, r Record) error {
	return a.enqueue(asyncItem{ctx: ctx, r: r})
}

// RecordGateway buffers r for the sink, as Record does, when the sink is a
// [GatewaySink]; otherwise it does nothing and returns nil. It returns nil,
// or [ErrClosed] after Close; a record dropped because the buffer is full is
// counted in [Async.Dropped] and given to OnDropGateway.
func (a *Async) RecordGateway(ctx context.Context, r GatewayRecord) error {
	if a.gsink == nil {
		return nil
	}
	return a.enqueue(asyncItem{ctx: ctx, g: &r})
}

func (a *Async) enqueue(it asyncItem) error {
	a.mu.RLock()
	if a.closed {
		a.mu.RUnlock()
		a.dropItem(it)
		return ErrClosed
	}
	select {
	case a.ch <- it:
		a.mu.RUnlock()
	default:
		a.mu.RUnlock()
		a.dropItem(it)
	}
	return nil
}

func (a *Async) drop(r Record) {
	a.dropped.Add(1)
	if a.onDrop != nil {
		a.onDrop(r)
	}
}

func (a *Async) dropItem(it asyncItem) {
	if it.g == nil {
		a.drop(it.r)
		return
	}
	a.dropped.Add(1)
	if a.onDropG != nil {
		a.onDropG(*it.g)
	}
}

func (a *Async) run() {
	defer close(a.done)
	for it := range a.ch {
		if a.abandon.Load() {
			a.dropItem(it)
			continue
		}
		a.send(it)
	}
}

func (a *Async) send(it asyncItem) {
	var ctx context.Context = a.base
	if it.ctx != nil {
		ctx = detached{Context: a.base, values: it.ctx}
	}
	var err error
	if it.g != nil {
		err = safeRecordGateway(ctx, a.gsink, *it.g)
	} else {
		err = safeRecord(ctx, a.sink, it.r)
	}
	if err != nil {
		a.errs.Add(1)
		a.onError(err)
	}
}

// detached is the context of a sink call: the values of the record's
// context (a trace span, for instance) with the deadline and cancellation
// of the Async's own (cancelled when Close runs out of time), without a
// context and a callback to set up for every record.
type detached struct {
	context.Context // the Async's base
	values          context.Context
}

func (d detached) Value(key any) any { return d.values.Value(key) }

// Dropped returns the number of records dropped so far: those that found
// the buffer full, those given to Record after Close, and those left when
// Close ran out of time.
func (a *Async) Dropped() uint64 { return a.dropped.Load() }

// Errors returns the number of errors (and panics) the sink has returned.
func (a *Async) Errors() uint64 { return a.errs.Load() }

// Close stops accepting records, waits until the buffered ones have been
// given to the sink and stops the goroutine. If ctx ends first, Close
// cancels the context of the sink call in progress, drops the records still
// buffered (counting them) and returns ctx's error; the goroutine then ends
// as soon as that sink call returns, which a sink that honours its context
// does at once. Close is idempotent; it does not close the wrapped sink.
func (a *Async) Close(ctx context.Context) error {
	a.closeOnce.Do(func() {
		a.mu.Lock()
		a.closed = true
		close(a.ch)
		a.mu.Unlock()
	})
	select {
	case <-a.done:
		a.cancel()
		return nil
	case <-ctx.Done():
		select {
		case <-a.done: // finished just in time
			a.cancel()
			return nil
		default:
		}
		a.abandon.Store(true)
		a.cancel()
		return ctx.Err()
	}
}
