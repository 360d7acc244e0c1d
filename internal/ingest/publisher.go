package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Frame is one frame to publish.
type Frame struct {
	// SessionKey names the ingest session; ordinals count per key.
	SessionKey string
	// Dialect is the adapter dialect of the frame.
	Dialect string
	// Provider is the provider to attribute it to ("" lets the adapter decide).
	Provider canonical.Provider
	// Direction is who wrote the frame on a two-way stream ("" for one-way).
	Direction adapter.Direction
	// Bytes is the frame, without its newline.
	Bytes []byte
	// ReceivedAt is when it was read.
	ReceivedAt time.Time
	// Backlog says it was read from a log after it was written, so
	// ReceivedAt is not when it was written (Agentwire-Backlog).
	Backlog bool
	// WrittenBy, on a backlog frame, is when its log had been written up
	// to (a file's modification time); zero when not known.
	WrittenBy time.Time
}

// Publisher publishes frames to RAW asynchronously, assigning each session
// gapless ordinals from 1. Frames larger than the server's max payload go
// to the RAW_OBJECTS object store. Flush waits until JetStream has stored
// everything published so far, retrying what failed with the same message
// id (so a retry can never store a frame twice).
//
// The frames awaiting their acks are a window kept in order across an
// outage (bus.Ordered): after a failed send or a reconnect, later frames
// are held. While NATS is away they wait in memory, so the caller goes on;
// the first send once it is back (or Release) stores them and its own
// frame, in order.
type Publisher struct {
	layout *bus.Layout
	tenant string
	log    *slog.Logger

	// flushing orders Flushes: a Release from another goroutine and the
	// Flush of a held send retry their frames one after the other.
	flushing sync.Mutex
	mu       sync.Mutex
	ordinals map[string]uint64
	pending  []pending
	// order is the window of pending: it opens when pending is empty and no
	// Flush is storing what it took (flushed).
	order   *bus.Ordered
	flushed bool
	objects jetstream.ObjectStore
	frames  uint64
	bytes   uint64
}

type pending struct {
	msg *nats.Msg
	ack jetstream.PubAckFuture
}

// maxInFlight bounds the frames awaiting their ack before Publish flushes;
// memory stays bounded whatever the input size.
const maxInFlight = 2048

// NewPublisher returns a Publisher for tenant.
func NewPublisher(layout *bus.Layout, tenant string, log *slog.Logger) (*Publisher, error) {
	if err := canonical.ValidateTenant(tenant); err != nil {
		return nil, err
	}
	return &Publisher{layout: layout, tenant: tenant, log: log, ordinals: map[string]uint64{}, order: bus.NewOrdered(layout.JS)}, nil
}

// Publish queues f for publication and returns its ordinal.
func (p *Publisher) Publish(ctx context.Context, f Frame) (uint64, error) {
	p.mu.Lock()
	p.ordinals[f.SessionKey]++
	ordinal := p.ordinals[f.SessionKey]
	p.mu.Unlock()

	return ordinal, p.send(ctx, f, ordinal)
}

// send queues f under ordinal, flushing when too many await their acks.
func (p *Publisher) send(ctx context.Context, f Frame, ordinal uint64) error {
	msg := nats.NewMsg(bus.RawSubject(p.tenant, f.SessionKey, p.layout.Config.Partitions))
	h := msg.Header
	h.Set(bus.HeaderTenant, p.tenant)
	h.Set(bus.HeaderDialect, f.Dialect)
	if f.Provider != "" {
		h.Set(bus.HeaderProvider, string(f.Provider))
	}
	if f.Direction != "" {
		h.Set(bus.HeaderDirection, string(f.Direction))
	}
	h.Set(bus.HeaderSessionKey, f.SessionKey)
	h.Set(bus.HeaderOrdinal, strconv.FormatUint(ordinal, 10))
	h.Set(bus.HeaderReceivedAt, f.ReceivedAt.UTC().Format(time.RFC3339Nano))
	if f.Backlog {
		h.Set(bus.HeaderBacklog, "true")
		if !f.WrittenBy.IsZero() {
			h.Set(bus.HeaderWrittenBy, f.WrittenBy.UTC().Format(time.RFC3339Nano))
		}
	}
	msgID := bus.RawMsgID(p.tenant, f.SessionKey, ordinal)
	h.Set(bus.HeaderMsgID, msgID)
	msg.Data = f.Bytes

	if int64(len(f.Bytes)+headerBytes(h)) > p.maxPayload() {
		if err := p.putObject(ctx, msgID, f.Bytes); err != nil {
			return err
		}
		h.Set(bus.HeaderObject, msgID)
		msg.Data = nil
	}
	p.mu.Lock()
	p.openWindowLocked()
	ack, err := p.order.Publish(msg)
	p.pending = append(p.pending, pending{msg: msg, ack: ack})
	p.frames++
	p.bytes += uint64(len(f.Bytes))
	full := len(p.pending) >= maxInFlight
	p.mu.Unlock()
	if err != nil {
		p.log.Debug("async publish failed; will retry on flush", "err", err)
	}
	// Held while NATS is back: stored now, behind the held frames, so that
	// they are not kept until the caller's next Flush (a live tap may
	// flush only when its agent exits).
	heldBack := ack == nil && err == nil && p.layout.JS.Conn().IsConnected()
	if full || heldBack {
		return p.Flush(ctx)
	}
	return nil
}

// Release stores the frames held since a failure or a reconnect, once
// NATS is back, as the next send would. A live source calls it while it
// waits for input, so that they are not kept until its next frame; it may
// call it from another goroutine than the one publishing.
func (p *Publisher) Release(ctx context.Context) error {
	p.mu.Lock()
	p.openWindowLocked()
	held := p.order.Held()
	p.mu.Unlock()
	if !held || !p.layout.JS.Conn().IsConnected() {
		return nil
	}
	return p.Flush(ctx)
}

// Stats returns the frames and bytes published so far.
func (p *Publisher) Stats() (frames, bytes uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.frames, p.bytes
}

func (p *Publisher) maxPayload() int64 {
	if nc := p.layout.JS.Conn(); nc != nil && nc.MaxPayload() > 0 {
		return nc.MaxPayload()
	}
	return 1 << 20
}

func headerBytes(h nats.Header) int {
	n := 64
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

func (p *Publisher) putObject(ctx context.Context, name string, b []byte) error {
	p.mu.Lock()
	store := p.objects
	p.mu.Unlock()
	if store == nil {
		var err error
		if store, err = p.layout.JS.ObjectStore(ctx, bus.RawObjects); err != nil {
			return fmt.Errorf("open %s: %w", bus.RawObjects, err)
		}
		p.mu.Lock()
		p.objects = store
		p.mu.Unlock()
	}
	// Retried like a message (a NATS restart must not lose a big frame);
	// putting the same name again replaces the object, so a retry is safe.
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		_, err := store.Put(ctx, jetstream.ObjectMeta{Name: name}, bytes.NewReader(b))
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("store a %d-byte frame in %s: %w", len(b), bus.RawObjects, errors.Join(err, ctx.Err()))
		}
		if attempt == 1 || attempt%10 == 0 {
			p.log.Warn("storing a large frame failed; retrying", "attempt", attempt, "bytes", len(b), "err", err)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// Flush waits until every frame published so far is stored, retrying
// failures with backoff until ctx ends. The frames not known stored then
// stay, for the next Flush.
func (p *Publisher) Flush(ctx context.Context) error {
	p.flushing.Lock()
	defer p.flushing.Unlock()
	p.mu.Lock()
	batch := p.pending
	p.pending, p.flushed = nil, true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.flushed = false
		p.openWindowLocked()
		p.mu.Unlock()
	}()

	var failed []*nats.Msg
	for i, pe := range batch {
		if pe.ack == nil {
			failed = append(failed, pe.msg)
			continue
		}
		select {
		case <-pe.ack.Ok():
		case err := <-pe.ack.Err():
			p.log.Debug("publish not acknowledged; retrying", "subject", pe.msg.Subject, "err", err)
			failed = append(failed, pe.msg)
		case <-ctx.Done():
			for _, rest := range batch[i:] {
				failed = append(failed, rest.msg)
			}
			p.keep(failed)
			return ctx.Err()
		}
	}
	for j, msg := range failed {
		if err := p.retry(ctx, msg); err != nil {
			p.keep(failed[j:])
			return err
		}
	}
	return nil
}

// openWindowLocked opens a new window when nothing is pending or being
// flushed: frames sent meanwhile by another goroutine while a Flush
// retried held ones were held, and stay so until the Flush that stores
// them.
func (p *Publisher) openWindowLocked() {
	if len(p.pending) == 0 && !p.flushed {
		p.order.Reset()
	}
}

// keep puts back the frames a Flush that ended early did not know stored,
// held, for a later Flush to retry in order before anything sent since.
func (p *Publisher) keep(msgs []*nats.Msg) {
	back := make([]pending, 0, len(msgs))
	for _, msg := range msgs {
		back = append(back, pending{msg: msg})
	}
	p.mu.Lock()
	p.pending = append(back, p.pending...)
	p.order.Hold()
	p.mu.Unlock()
}

func (p *Publisher) retry(ctx context.Context, msg *nats.Msg) error {
	backoff := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := p.layout.JS.PublishMsg(pctx, msg)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("publish frame %s: %w", msg.Header.Get(bus.HeaderMsgID), errors.Join(err, ctx.Err()))
		}
		if attempt == 1 || attempt%10 == 0 {
			p.log.Warn("publishing a frame failed; retrying", "attempt", attempt, "err", err)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}
