package normalize

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/pkg/adapters"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
	"github.com/agentwire/agentwire/pkg/canonical/wire"
)

// Config configures a Normalizer.
type Config struct {
	// BatchSize is how many frames a partition fetches at a time. Default
	// DefaultBatchSize.
	BatchSize int
	// SessionsPerPartition bounds the adapter sessions kept in memory per
	// partition; older ones are dropped (their state is saved). Default 1024.
	SessionsPerPartition int
	// GapTimeout is how long a frame that arrives ahead of its predecessor
	// is put back before the predecessor is given up as lost. It must
	// outlast a redelivery after a crash (the stream's AckWait plus the
	// partition's PinnedTTL), or frames would be skipped that are merely
	// late. Default 2 minutes.
	GapTimeout time.Duration
	// GapDelay is how long such a frame first waits before it is
	// redelivered; the wait grows with each redelivery, up to 5s. Default
	// 250ms.
	GapDelay time.Duration
	// PublishRetries bounds the retries of an event publish before the
	// event is dead-lettered. Default 8.
	PublishRetries int
	// PaceWindow bounds, in RAW stream sequences, how far the partitions
	// draining a backlog may run ahead of the slowest one (see pacer).
	// Default 8192; negative turns pacing off.
	PaceWindow int
	// OutageRetries bounds how often a call in the middle of a batch is
	// retried while NATS is away (with backoff up to 5s: the default, 50,
	// is about four minutes) before the batch is left for redelivery.
	OutageRetries int
	// mapHook runs before each frame is mapped (tests make it panic).
	mapHook func(adapter.Frame)
}

// DefaultBatchSize is how many frames a partition fetches at a time by
// default.
const DefaultBatchSize = 256

// WithDefaults fills in zero fields.
func (c Config) WithDefaults() Config {
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.SessionsPerPartition == 0 {
		c.SessionsPerPartition = 1024
	}
	// A batch's sessions must all stay in memory until their state is
	// saved at its end.
	c.SessionsPerPartition = max(c.SessionsPerPartition, c.BatchSize)
	if c.GapTimeout == 0 {
		c.GapTimeout = 2 * time.Minute
	}
	if c.GapDelay == 0 {
		c.GapDelay = 250 * time.Millisecond
	}
	if c.PublishRetries == 0 {
		c.PublishRetries = 8
	}
	if c.PaceWindow == 0 {
		c.PaceWindow = 8192
	}
	if c.OutageRetries == 0 {
		c.OutageRetries = 50
	}
	return c
}

// Stats counts what a Normalizer did.
type Stats struct {
	Frames, Events, Skipped, Gaps, Rebuilt, DeadLettered atomic.Uint64
}

// Normalizer maps RAW to RUNTIME. Start it with Run.
type Normalizer struct {
	cfg    Config
	layout *bus.Layout
	log    *slog.Logger
	kv     jetstream.KeyValue
	obj    jetstream.ObjectStore
	raw    jetstream.Stream
	stats  Stats
	pacer  *pacer
	// stopping is closed when Run's context ends or a partition cannot
	// start: a batch in hand is finished, but not by waiting for NATS to
	// come back (untilBack).
	stopping <-chan struct{}
}

// New returns a Normalizer over an applied layout; it refuses a NATS
// server that cannot pin a partition to one worker (bus.PinnedConsumers).
func New(ctx context.Context, layout *bus.Layout, cfg Config, log *slog.Logger) (*Normalizer, error) {
	if err := bus.Require(layout.JS.Conn(), bus.PinnedConsumers); err != nil {
		return nil, err
	}
	kv, err := layout.JS.KeyValue(ctx, bus.StateBucket)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", bus.StateBucket, err)
	}
	obj, err := layout.JS.ObjectStore(ctx, bus.RawObjects)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", bus.RawObjects, err)
	}
	raw, err := layout.JS.Stream(ctx, bus.RawStream)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", bus.RawStream, err)
	}
	return &Normalizer{cfg: cfg.WithDefaults(), layout: layout, log: log, kv: kv, obj: obj, raw: raw}, nil
}

// Stats returns the running counters.
func (n *Normalizer) Stats() *Stats { return &n.stats }

// Run consumes every partition until ctx is cancelled, then finishes the
// batches in hand (their frames are acked or left for redelivery) and
// returns.
func (n *Normalizer) Run(ctx context.Context) error {
	if n.cfg.PaceWindow > 0 {
		n.pacer = newPacer(n.layout.Config.Partitions, uint64(n.cfg.PaceWindow))
	}

	// A consumer that cannot be applied stops the partitions already
	// running too; a shutdown while they are being applied is no error.
	run, cancel := context.WithCancel(ctx)
	defer cancel()
	n.stopping = run.Done()
	var wg sync.WaitGroup
	errs := make(chan error, n.layout.Config.Partitions+1)
	for p := range n.layout.Config.Partitions {
		// Applied anew at every start: a NATS restart then is waited out.
		c, err := untilBack(run, n, func() (jetstream.Consumer, error) { return n.layout.NormalizeConsumer(run, p) })
		if err != nil {
			if ctx.Err() == nil {
				errs <- err
			}
			cancel()
			break
		}
		wg.Go(func() {
			if err := n.partition(run, p, c); err != nil && run.Err() == nil {
				errs <- fmt.Errorf("partition %s: %w", bus.PartitionToken(p), err)
			}
		})
	}
	wg.Wait()
	close(errs)
	return errors.Join(collect(errs)...)
}

func collect(ch <-chan error) []error {
	var out []error
	for err := range ch {
		out = append(out, err)
	}
	return out
}

// partition is one partition's loop: one goroutine, so the sessions of a
// partition need no locks and are mapped strictly in turn.
func (n *Normalizer) partition(ctx context.Context, p int, c jetstream.Consumer) error {
	w := &partitionWorker{n: n, p: p, sessions: newSessionCache(n.cfg.SessionsPerPartition)}
	// A fetch returns when its batch is full or its wait is over. An idle
	// partition asks for one frame and waits long, so the first frame of a
	// burst is mapped as soon as it lands; then it asks for whole batches
	// with a short wait, so a trickle is not held back a second per batch.
	idle, received := true, false
	for ctx.Err() == nil {
		size, wait := n.cfg.BatchSize, 20*time.Millisecond
		if idle {
			size, wait = 1, time.Second
		}
		for n.pacer.ahead(p) && ctx.Err() == nil {
			sleep(ctx, 2*time.Millisecond)
		}
		batch, err := c.Fetch(size, jetstream.FetchMaxWait(wait), jetstream.FetchPriorityGroup(bus.NormalizeGroup))
		if err != nil {
			if ctx.Err() != nil {
				break // shutting down: a failed fetch is expected
			}
			n.log.Debug("fetch failed; retrying", "partition", p, "err", err)
			sleep(ctx, 250*time.Millisecond)
			continue
		}
		var msgs []jetstream.Msg
		for m := range batch.Messages() {
			msgs = append(msgs, m)
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && len(msgs) == 0 {
			n.log.Debug("fetch ended with an error", "partition", p, "err", err)
		}
		idle = len(msgs) == 0
		if idle {
			n.pacer.fetched(p, 0, false)
			continue
		}
		if md, err := msgs[len(msgs)-1].Metadata(); err == nil {
			n.pacer.fetched(p, md.Sequence.Stream, md.NumPending > 0)
		}
		received = true
		// The batch is finished even when ctx is cancelled meanwhile, so
		// that a shutdown acks what it has stored.
		if err := w.process(context.WithoutCancel(ctx), msgs); err != nil {
			if !bus.Outage(err) || ctx.Err() != nil {
				return err
			}
			// NATS stayed away longer than a batch waits: the batch is left
			// for redelivery, and the sessions are read again from their
			// saved states (the state in memory may have moved past what
			// was published and saved), as after a crash.
			n.log.Warn("NATS is away; the batch in hand is left for redelivery", "partition", p, "err", err)
			w.sessions = newSessionCache(n.cfg.SessionsPerPartition)
			sleep(ctx, time.Second)
			continue
		}
	}
	// A worker that stops cleanly hands its partition over at once rather
	// than leave it pinned to a client that is gone until PinnedTTL runs
	// out (a restart would stall every partition that long). Only a worker
	// that has received frames is likely the pinned one; unpinning another
	// merely moves the partition, which ordinals make safe.
	if received {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if err := n.raw.UnpinConsumer(uctx, "normalize-"+bus.PartitionToken(p), bus.NormalizeGroup); err != nil {
			n.log.Debug("unpin on shutdown", "partition", p, "err", err)
		}
	}
	return nil
}

// untilBack waits an outage out for a call in the middle of a batch or
// at start (bus.WaitOut): failing, it would stop the partition. Past
// cfg.OutageRetries, or once a shutdown begins, its error leaves the batch
// unacked, for redelivery (partition).
func untilBack[T any](ctx context.Context, n *Normalizer, f func() (T, error)) (T, error) {
	return bus.WaitOut(ctx, n.stopping, n.cfg.OutageRetries, f)
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
}

type partitionWorker struct {
	n        *Normalizer
	p        int
	sessions *sessionCache
	// prefetched holds the saved states the current batch needs (prefetch).
	prefetched map[string]loaded
}

type pendingEvent struct {
	msg *nats.Msg
	ack jetstream.PubAckFuture
}

// process maps a batch: publish every event asynchronously, wait for the
// acks, save the touched sessions' state, then ack the frames.
func (w *partitionWorker) process(ctx context.Context, msgs []jetstream.Msg) error {
	n := w.n
	var (
		published []pendingEvent
		toAck     []jetstream.Msg
		dirty     = map[string]*sessionEntry{}
	)
	w.prefetch(ctx, msgs)
	defer clear(w.prefetched)
	// The batch's events keep their order in RUNTIME across an outage: held
	// after a failure or a reconnect, they are published behind the failed
	// ones when the batch waits for its acks.
	order := bus.NewOrdered(n.layout.JS)
	emit := func(msg *nats.Msg) {
		ack, err := order.Publish(msg)
		published = append(published, pendingEvent{msg: msg, ack: ack})
		if err != nil {
			n.log.Debug("async publish failed; this and the batch's later events wait for a retry", "err", err)
		}
	}
	for _, m := range msgs {
		meta, err := readMeta(m)
		if err != nil {
			n.deadLetter(ctx, "", m.Data(), m.Headers(), "unusable frame headers: "+err.Error())
			_ = m.Term()
			continue
		}
		s, err := w.session(ctx, meta)
		if err != nil {
			return err
		}
		if meta.ordinal <= s.last {
			n.stats.Skipped.Add(1)
			toAck = append(toAck, m)
			continue
		}
		if meta.ordinal > s.last+1 {
			// The frames in between are in flight elsewhere (redelivery after
			// a crash) or stored out of order: read them from RAW now rather
			// than wait for them.
			if err := w.fillGap(ctx, s, meta, emit); err != nil {
				return err
			}
			dirty[s.key] = s
			if meta.ordinal > s.last+1 && !w.acceptGap(m, meta, s) {
				continue
			}
		}
		data := m.Data()
		if meta.object != "" {
			if data, err = n.object(ctx, meta.object); err != nil {
				n.log.Warn("a large frame's object is unreadable; retrying later", "object", meta.object, "err", err)
				_ = m.NakWithDelay(time.Second)
				continue
			}
		}
		md, _ := m.Metadata()
		if err := w.mapOne(ctx, s, rawFrame{meta: meta, data: data, seq: seqOf(md)}, emit); err != nil {
			return err
		}
		dirty[s.key] = s
		toAck = append(toAck, m)
	}
	for _, pe := range published {
		if err := w.awaitPublish(ctx, pe); err != nil {
			return err
		}
	}
	if err := n.saveAll(ctx, dirty); err != nil {
		return err
	}
	for _, m := range toAck {
		if err := m.Ack(); err != nil {
			// Redelivery is harmless: the saved state skips the frame.
			n.log.Debug("ack failed", "err", err)
		}
	}
	return nil
}

// mapOne maps one frame of s and hands its events' messages to emit.
func (w *partitionWorker) mapOne(ctx context.Context, s *sessionEntry, f rawFrame, emit func(*nats.Msg)) error {
	n := w.n
	events, panicked, err := w.mapFrame(s, f)
	if err != nil {
		return fmt.Errorf("map frame %d of %q: %w", f.meta.ordinal, f.meta.sessionKey, err)
	}
	if panicked != "" {
		n.deadLetter(ctx, f.meta.tenant, f.data, nil, fmt.Sprintf("adapter bug: mapping frame %d of %q (%s) panicked: %s",
			f.meta.ordinal, f.meta.sessionKey, f.meta.dialect, panicked))
	}
	for _, e := range events {
		msg, err := w.encode(e, f)
		if err != nil {
			n.deadLetter(ctx, f.meta.tenant, f.data, nil, "adapter produced an invalid event: "+err.Error())
			continue
		}
		emit(msg)
	}
	s.last = f.meta.ordinal
	if f.seq > 0 {
		s.seq = f.seq
	}
	n.stats.Frames.Add(1)
	n.stats.Events.Add(uint64(len(events)))
	return nil
}

// mapFrame maps f with s's adapter session. An adapter that panics has a
// bug (the fuzz targets hold every adapter to never panicking): the panic
// is logged with its stack and returned as panicked, for the frame to be
// dead-lettered, rather than stopping the normalizer on the same frame
// after every restart. The session goes on with the frames after it.
func (w *partitionWorker) mapFrame(s *sessionEntry, f rawFrame) (events []canonical.Event, panicked string, err error) {
	defer func() {
		if r := recover(); r != nil {
			w.n.log.Error("adapter bug: mapping a frame panicked", "session", f.meta.sessionKey, "ordinal", f.meta.ordinal,
				"dialect", f.meta.dialect, "panic", r, "stack", string(debug.Stack()))
			events, panicked, err = nil, fmt.Sprint(r), nil
		}
	}()
	frame := f.frame()
	if w.n.cfg.mapHook != nil {
		w.n.cfg.mapHook(frame)
	}
	events, err = s.session.Map(frame)
	return events, "", err
}

// fillGap maps the frames between s's last and meta's, read from RAW.
func (w *partitionWorker) fillGap(ctx context.Context, s *sessionEntry, meta frameMeta, emit func(*nats.Msg)) error {
	frames, err := w.readSession(ctx, meta, s.last, meta.ordinal, s.seq+1)
	if err != nil {
		return fmt.Errorf("read the frames %d..%d of %q: %w", s.last+1, meta.ordinal-1, meta.sessionKey, err)
	}
	if len(frames) == 0 || frames[0].meta.ordinal != s.last+1 {
		// Stored before the last mapped frame (an ingest retry): read it all.
		if frames, err = w.readSession(ctx, meta, s.last, meta.ordinal, 1); err != nil {
			return err
		}
	}
	for _, f := range frames {
		if f.meta.ordinal != s.last+1 {
			break
		}
		if err := w.mapOne(ctx, s, f, emit); err != nil {
			return err
		}
	}
	return nil
}

func seqOf(md *jetstream.MsgMetadata) uint64 {
	if md == nil {
		return 0
	}
	return md.Sequence.Stream
}

// encode builds the event's message. An event too large for a message —
// it carries its frame, which may be megabytes — travels with a reference
// to the frame instead: the RAW message, or the object it came from.
// Events come from adapters, whose conformance suites and fuzz targets
// hold every event to canonical.Validate, so the common path does not
// validate each one again; the rare rewritten ones are validated.
func (w *partitionWorker) encode(e canonical.Event, f rawFrame) (*nats.Msg, error) {
	msg, err := wire.ToNATSValidated(e)
	if err != nil || e.Raw == nil || int64(len(msg.Data)+4096) <= w.n.maxPayload() {
		return msg, err
	}
	sum := sha256.Sum256(f.data)
	ref := canonical.RawReference{Bytes: len(f.data), SHA256: hex.EncodeToString(sum[:])}
	if f.meta.object != "" {
		ref.Bucket, ref.Object = bus.RawObjects, f.meta.object
	} else {
		ref.Stream, ref.Seq = bus.RawStream, f.seq
	}
	raw := e.Raw.Referenced(ref)
	e.Raw = &raw
	if msg, err = wire.ToNATS(e); err != nil || int64(len(msg.Data)+4096) <= w.n.maxPayload() {
		return msg, err
	}
	return wire.ToNATS(shrink(e, int(w.n.maxPayload())))
}

func (n *Normalizer) maxPayload() int64 {
	if nc := n.layout.JS.Conn(); nc != nil && nc.MaxPayload() > 0 {
		return nc.MaxPayload()
	}
	return 1 << 20
}

// acceptGap decides about a frame that arrived before its predecessor:
// put it back for a while, then accept that the predecessor is lost.
func (w *partitionWorker) acceptGap(m jetstream.Msg, meta frameMeta, s *sessionEntry) bool {
	md, err := m.Metadata()
	if err == nil && time.Since(md.Timestamp) < w.n.cfg.GapTimeout {
		delay := min(w.n.cfg.GapDelay*time.Duration(min(md.NumDelivered, 100)), 5*time.Second)
		_ = m.NakWithDelay(delay)
		return false
	}
	w.n.stats.Gaps.Add(1)
	w.n.log.Warn("frames of a session are missing; going on without them",
		"session", meta.sessionKey, "after", s.last, "next", meta.ordinal)
	return true
}

func (w *partitionWorker) awaitPublish(ctx context.Context, pe pendingEvent) error {
	n := w.n
	if pe.ack != nil {
		select {
		case <-pe.ack.Ok():
			return nil
		case err := <-pe.ack.Err():
			n.log.Debug("publish not acknowledged; retrying", "err", err)
		case <-time.After(30 * time.Second):
		}
	}
	backoff := 100 * time.Millisecond
	var last error
	for range n.cfg.PublishRetries {
		err := n.publish(ctx, pe.msg)
		if err == nil {
			return nil
		}
		// NATS away for longer than a batch waits, or a shutdown: the
		// batch is left for redelivery, the event is not dead-lettered.
		if bus.Outage(err) {
			return fmt.Errorf("publish to RUNTIME while NATS is away: %w", err)
		}
		last = err
		if errors.Is(err, nats.ErrMaxPayload) {
			break // retrying cannot help
		}
		sleep(ctx, backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
	n.deadLetter(ctx, pe.msg.Header.Get("ce-tenant"), pe.msg.Data, pe.msg.Header, "publish to RUNTIME failed: "+last.Error())
	return nil
}

// publish publishes msg to a stream and waits for its ack, each try
// bounded, an outage waited out (untilBack).
func (n *Normalizer) publish(ctx context.Context, msg *nats.Msg) error {
	_, err := untilBack(ctx, n, func() (*jetstream.PubAck, error) {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return n.layout.JS.PublishMsg(pctx, msg)
	})
	return err
}

func (n *Normalizer) object(ctx context.Context, name string) ([]byte, error) {
	r, err := n.obj.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	return io.ReadAll(r)
}

// deadLetter records what could not be delivered; when even that fails,
// the log is the last resort.
func (n *Normalizer) deadLetter(ctx context.Context, tenant string, data []byte, h nats.Header, reason string) {
	n.stats.DeadLettered.Add(1)
	if tenant == "" {
		tenant = "unknown"
	}
	msg := nats.NewMsg(bus.DeadLetterSubject("normalize", tenant))
	for k, v := range h {
		if k != bus.HeaderMsgID {
			msg.Header[k] = v
		}
	}
	msg.Header.Set(bus.HeaderReason, reason)
	msg.Data = data
	if limit := int(n.maxPayload()) - 16<<10; len(data) > limit {
		// What did not fit once will not fit here either: keep the head.
		msg.Data = data[:max(limit, 0)]
		msg.Header.Set(bus.HeaderReason, reason+fmt.Sprintf(" (body cut to %d of %d bytes)", len(msg.Data), len(data)))
	}
	// NATS away: waited out (publish), or the only copy of the frame or
	// event would be this log line.
	if err := n.publish(ctx, msg); err != nil {
		n.log.Error("dead-lettering failed", "reason", reason, "err", err)
		return
	}
	n.log.Warn("dead-lettered", "reason", reason)
}

type frameMeta struct {
	tenant, dialect, sessionKey, object string
	provider                            canonical.Provider
	direction                           adapter.Direction
	ordinal                             uint64
	receivedAt, writtenBy               time.Time
	backlog                             bool
}

func readMeta(m jetstream.Msg) (frameMeta, error) { return parseMeta(m.Headers()) }

func parseMeta(h nats.Header) (frameMeta, error) {
	meta := frameMeta{
		tenant: h.Get(bus.HeaderTenant), dialect: h.Get(bus.HeaderDialect),
		sessionKey: h.Get(bus.HeaderSessionKey), object: h.Get(bus.HeaderObject),
		provider: canonical.Provider(h.Get(bus.HeaderProvider)), direction: adapter.Direction(h.Get(bus.HeaderDirection)),
	}
	if err := canonical.ValidateTenant(meta.tenant); err != nil {
		return meta, err
	}
	if meta.sessionKey == "" {
		return meta, errors.New("no session key")
	}
	if meta.provider != "" && !meta.provider.Valid() {
		return meta, fmt.Errorf("invalid provider %q", meta.provider)
	}
	var err error
	if meta.ordinal, err = strconv.ParseUint(h.Get(bus.HeaderOrdinal), 10, 64); err != nil || meta.ordinal == 0 {
		return meta, fmt.Errorf("ordinal %q is not a positive integer", h.Get(bus.HeaderOrdinal))
	}
	if meta.receivedAt, err = time.Parse(time.RFC3339Nano, h.Get(bus.HeaderReceivedAt)); err != nil {
		return meta, fmt.Errorf("received-at %q: %w", h.Get(bus.HeaderReceivedAt), err)
	}
	// A hint about the receive time: any other value is no backlog, and
	// no reason to set the frame aside.
	meta.backlog = h.Get(bus.HeaderBacklog) == "true"
	if v := h.Get(bus.HeaderWrittenBy); v != "" && meta.backlog {
		// The same: a time that does not parse is not known.
		meta.writtenBy, _ = time.Parse(time.RFC3339Nano, v)
	}
	if _, err := adapters.Lookup(meta.dialect); err != nil {
		return meta, err
	}
	return meta, nil
}
