package project

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Config configures a Projector. The zero value is usable.
type Config struct {
	// Consumer names the durable RUNTIME consumer and the checkpoints.
	// Default bus.ProjectConsumer.
	Consumer string
	// Workers is how many sessions are applied in parallel (each worker owns
	// the sessions that hash to it). Default DefaultWorkers().
	Workers int
	// BatchSize bounds the events a worker applies in one transaction.
	// Default DefaultBatchSize.
	BatchSize int
	// DrainTimeout bounds how long a shutdown keeps retrying the batches in
	// hand when Postgres is unavailable. Default 30s.
	DrainTimeout time.Duration
	// BeforeCommit, when set, runs inside every batch transaction just
	// before it commits (tests use it to widen the crash window).
	BeforeCommit func(events int)
	// Committed, when set, is called after each batch commits, with its
	// events and how long applying it took: from its first transaction
	// begun to its commit, retries and backoff included, which is what an
	// event waits between being decoded and being acked.
	Committed func(events int, took time.Duration)
	// foldHook runs before each event is folded (tests make it panic).
	foldHook func(*canonical.Event)
}

// WithDefaults fills in zero fields.
func (c Config) WithDefaults() Config {
	if c.Consumer == "" {
		c.Consumer = bus.ProjectConsumer
	}
	if c.Workers <= 0 {
		c.Workers = DefaultWorkers()
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.DrainTimeout <= 0 {
		c.DrainTimeout = 30 * time.Second
	}
	return c
}

// InFlight is the most events the projector has unacked (the consumer's
// MaxAckPending). The events it holds in the heap (each a message with its
// headers parsed) are fewer, bounded by the workers' queues: per worker, a
// batch in Postgres and the next one decoded. Acks are cumulative (Acks),
// so the deliveries a worker finished stay unacked until every earlier one
// is, and those of the slowest worker's batch in Postgres hold back as
// many again of the others'.
func (c Config) InFlight() int { return 4 * c.Workers * c.BatchSize }

// DefaultBatchSize bounds a batch by default. A batch is what has arrived,
// so this matters only under load, where fewer, larger transactions cost
// less per event: in the bench, 1024 applied 20k-23k events/s at 76-88 ms
// of machine CPU per thousand, against 15k-19k at 92-118 for 256; 2048
// and 4096 did no better (their larger heaps cost more collecting).
const DefaultBatchSize = 1024

// DefaultWorkers is one worker per CPU this process may use, 2 to 8. A
// worker keeps a CPU busy decoding and folding while its transaction is
// in Postgres, and each one more is a Postgres backend writing the same
// log pages and indexes as the others: on 2 cores, 2 workers cost the
// machine about a seventh less CPU per event than 4, in each of 8 paired
// runs of agentwire bench, and applied as many events per second or a
// few percent more (4 was the default before).
func DefaultWorkers() int { return min(max(runtime.GOMAXPROCS(0), 2), 8) }

// Stats counts what a Projector did.
type Stats struct {
	// Applied counts events written to the projections.
	Applied atomic.Uint64
	// Skipped counts redelivered or duplicate events (no-ops).
	Skipped atomic.Uint64
	// DeadLettered counts events sent to deadletter.project.<tenant>.
	DeadLettered atomic.Uint64
	// Batches counts committed transactions.
	Batches atomic.Uint64
	// Retries counts batches retried after a transient Postgres error.
	Retries atomic.Uint64
	// Deadlocks counts the retries due to a deadlock Postgres detected:
	// rows shared by sessions are locked in key order, so it stays zero
	// unless that order is broken.
	Deadlocks atomic.Uint64
	// Restarts counts restarts of the consume loop (Postgres or NATS lost).
	Restarts atomic.Uint64
	// Superseded counts batches rolled back because another projector had
	// taken over the lease (this one had lost its lock).
	Superseded atomic.Uint64
}

// Projector applies RUNTIME to the Postgres projections. Start it with Run.
type Projector struct {
	cfg    Config
	pool   *pgxpool.Pool
	layout *bus.Layout
	log    *slog.Logger
	stats  Stats
	// active is set while this projector holds the lock and consumes.
	active atomic.Bool
	// failing is why the last run ended, until a new one takes the lock.
	failing atomic.Pointer[error]
	// stopped is why the projector stopped for good (a schema that does
	// not match, a rebuild refused): it applies nothing until restarted.
	stopped atomic.Pointer[error]
}

// New returns a Projector writing to pool (whose schema must be migrated)
// and reading RUNTIME through layout.
func New(pool *pgxpool.Pool, layout *bus.Layout, cfg Config, log *slog.Logger) *Projector {
	return &Projector{cfg: cfg.WithDefaults(), pool: pool, layout: layout, log: log}
}

// Stats returns the running counters.
func (p *Projector) Stats() *Stats { return &p.stats }

// Active reports whether this projector is the one applying RUNTIME (it
// holds the lock), not standing by or starting over.
func (p *Projector) Active() bool { return p.active.Load() }

// Health is why the projector is not working: it stopped for good, or
// its last run ended with an error and it has not taken over again yet.
// nil while it runs or stands by.
func (p *Projector) Health() error {
	if err := p.stopped.Load(); err != nil {
		return fmt.Errorf("projector stopped: %w", *err)
	}
	if err := p.failing.Load(); err != nil {
		return fmt.Errorf("projector starting over after: %w", *err)
	}
	return nil
}

// Backlog is how many RUNTIME events the projector's consumer has yet to
// see acked: not delivered yet, or delivered and not committed.
func (p *Projector) Backlog(ctx context.Context) (uint64, error) {
	// Looking the consumer up fetches its info: one request, not two.
	c, err := p.layout.JS.Consumer(ctx, bus.RuntimeStream, p.cfg.Consumer)
	if err != nil {
		return 0, fmt.Errorf("consumer %s: %w", p.cfg.Consumer, err)
	}
	ci := c.CachedInfo()
	return ci.NumPending + uint64(ci.NumAckPending), nil //nolint:gosec // a count
}

var (
	errLockLost    = errors.New("lost the projector lock")
	errSuperseded  = errors.New("another projector took over")
	errReconnected = errors.New("reconnected to NATS")
	errDeliveryGap = errors.New("a delivery was lost in flight")
)

// Run projects until ctx is cancelled, then finishes the batches in hand
// (committed and acked, or left for redelivery) and returns nil. It
// survives Postgres and NATS restarts: the consume loop starts over,
// resuming from the consumer's ack floor, and the checkpoints skip what
// was already applied. It returns an error only for what retrying cannot
// fix (a schema that does not match).
func (p *Projector) Run(ctx context.Context) error {
	const firstBackoff = 250 * time.Millisecond
	backoff := firstBackoff
	for {
		started := time.Now()
		err := p.runOnce(ctx)
		if ctx.Err() != nil {
			return nil //nolint:nilerr // shutting down: what the last run hit does not matter
		}
		if err == nil {
			err = errors.New("the consume loop ended")
		}
		p.failing.Store(&err)
		if errors.Is(err, errFatal) {
			p.stopped.Store(&err)
			return err
		}
		p.stats.Restarts.Add(1)
		if time.Since(started) > time.Minute {
			// A run that lasted is not part of a string of failures: the
			// last one, hours ago, must not make this one wait longer.
			backoff = firstBackoff
		}
		p.log.Warn("projector restarting", "err", err, "in", backoff)
		sleep(ctx, backoff)
		backoff = min(2*backoff, 5*time.Second)
	}
}

// lockKey makes one projector per consumer and schema the active one.
const lockKey = `hashtext('agentwire.project.' || $1::text || '.' || current_schema())`

// runOnce is one life of the consume loop: take the lock, rewind the
// consumer to its ack floor, fan messages out to the workers until ctx
// ends or a connection is lost.
func (p *Projector) runOnce(ctx context.Context) error {
	lock, err := p.takeLock(ctx, "standing by")
	if err != nil {
		return err // Run tells a shutdown from a failure
	}
	defer func() { _ = lock.Close(context.WithoutCancel(ctx)) }()
	cons, remadeFrom, err := p.layout.EnsureProjectConsumer(ctx, p.cfg.Consumer, p.cfg.InFlight())
	if err != nil {
		return err
	}
	if remadeFrom > 0 {
		p.log.Info("made the projector's consumer anew with cumulative acks, from its ack floor", "consumer", p.cfg.Consumer, "from", remadeFrom)
	}
	l, err := p.lease(ctx, lock)
	if err != nil {
		return err
	}
	p.active.Store(true)
	defer p.active.Store(false)
	// Events delivered to a previous life and not acked come again in
	// stream order, so every session's events arrive in order; what was
	// applied already is skipped by the checkpoints.
	if cons, err = p.layout.RewindProjectConsumer(ctx, cons); err != nil {
		return err
	}

	run, cancel := context.WithCancelCause(ctx)
	// The watcher pings the lock's connection: it must be done with it
	// before the connection is closed (deferred above, so run after this).
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		p.watch(run, cancel, lock)
	}()
	defer func() {
		cancel(nil)
		<-watched
	}()

	drain, releaseDrain := drainBounded(ctx, p.cfg.DrainTimeout)
	defer releaseDrain()
	workers := make([]*worker, p.cfg.Workers)
	a := NewAcks(p.layout.JS.Conn(), p.log)
	var wg sync.WaitGroup
	for i := range workers {
		workers[i] = newWorker(p, ctx, run, drain, l, cancel, a)
		wg.Go(workers[i].decode)
		wg.Go(workers[i].loop)
	}
	err = p.dispatch(run, cons, workers, a)
	for _, w := range workers {
		close(w.in)
	}
	wg.Wait()
	if cause := context.Cause(run); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	for _, w := range workers {
		if w.err != nil {
			return w.err
		}
	}
	return err
}

// takeLock returns a connection of its own holding the projector's lock,
// once no other projector holds it (waiting, it says what it does), or
// ctx's error if it ends first.
func (p *Projector) takeLock(ctx context.Context, waiting string) (*pgx.Conn, error) {
	lock, err := pgx.ConnectConfig(ctx, p.pool.Config().ConnConfig)
	if err != nil {
		return nil, fmt.Errorf("connect to Postgres: %w", err)
	}
	for waited := false; ; waited = true {
		var ok bool
		if err := lock.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+lockKey+`)`, p.cfg.Consumer).Scan(&ok); err != nil {
			_ = lock.Close(context.WithoutCancel(ctx))
			return nil, classify(fmt.Errorf("take the projector lock: %w", err))
		}
		p.failing.Store(nil) // Postgres answers: running or standing by is healthy
		if ok {
			return lock, nil
		}
		if !waited {
			p.log.Info("another projector is active on this database; "+waiting, "consumer", p.cfg.Consumer)
		}
		sleep(ctx, time.Second)
		if err := ctx.Err(); err != nil {
			_ = lock.Close(context.WithoutCancel(ctx))
			return nil, err
		}
	}
}

// lease is this run's lease: a new generation of the consumer's lease,
// and the checkpoints' key for the RUNTIME stream as it is now. The
// checkpoints of the consumer's earlier streams are deleted: they can
// only skip events.
func (p *Projector) lease(ctx context.Context, lock *pgx.Conn) (lease, error) {
	st, err := p.layout.JS.Stream(ctx, bus.RuntimeStream)
	if err != nil {
		return lease{}, fmt.Errorf("stream %s: %w", bus.RuntimeStream, err)
	}
	l := lease{checkpoints: p.cfg.Consumer + "@" + st.CachedInfo().Created.UTC().Format(time.RFC3339Nano)}
	if l.generation, l.barrier, err = p.takeOver(ctx, lock); err != nil {
		return lease{}, err
	}
	tag, err := lock.Exec(ctx, `DELETE FROM projector_checkpoints
		WHERE (consumer = $1 OR left(consumer, length($1) + 1) = $1 || '@') AND consumer <> $2`, p.cfg.Consumer, l.checkpoints)
	if err != nil {
		return lease{}, classify(fmt.Errorf("drop the checkpoints of earlier streams: %w", err))
	}
	if n := tag.RowsAffected(); n > 0 {
		p.log.Info("RUNTIME was made anew; dropped the checkpoints of the earlier stream", "consumer", p.cfg.Consumer, "sessions", n)
	}
	return l, nil
}

// takeOver starts a new generation of the consumer's lease on lock (the
// connection holding the consumer's lock) and returns it with the
// consumer's barrier key, once no batch transaction of an earlier
// generation can commit any more.
//
// A batch transaction takes the consumer's barrier lock (shared), then, in
// a statement of its own and so with a snapshot taken after it has the
// lock, reads the generation, and commits only if it is its own. Taking
// the barrier lock exclusively after the new generation is committed
// waits for every batch transaction holding it: those that read the old
// generation commit first, and any after sees the new one and rolls back.
// A projector whose lock was lost (its connection killed, Postgres
// restarted) is otherwise told only at its watcher's next ping, seconds
// later; meanwhile its batches commit only while no other projector has
// taken over, which is harmless.
func (p *Projector) takeOver(ctx context.Context, lock *pgx.Conn) (generation int64, barrier int32, err error) {
	if err := lock.QueryRow(ctx, takeLease, p.cfg.Consumer).Scan(&generation, &barrier); err != nil {
		return 0, 0, classify(fmt.Errorf("take the projector lease: %w", err))
	}
	waiting := time.AfterFunc(5*time.Second, func() {
		p.log.Info("waiting for the previous projector's transactions to end", "consumer", p.cfg.Consumer)
	})
	defer waiting.Stop()
	for _, q := range []string{`SELECT pg_advisory_lock($1::int4, 0)`, `SELECT pg_advisory_unlock($1::int4, 0)`} {
		if _, err := lock.Exec(ctx, q, barrier); err != nil {
			return 0, 0, classify(fmt.Errorf("wait out the previous projector's transactions: %w", err))
		}
	}
	return generation, barrier, nil
}

// takeLease starts a new generation of consumer $1's lease and returns it
// with the consumer's barrier key: the advisory lock (in the two-key
// space, apart from lockKey's bigint one) that batch transactions hold
// shared and a projector taking over takes exclusively.
const takeLease = `
INSERT INTO projector_leases AS l (consumer, generation, holder) VALUES ($1, 1, pg_backend_pid())
ON CONFLICT (consumer) DO UPDATE SET generation = l.generation + 1, holder = EXCLUDED.holder, taken_at = now()
RETURNING generation, ` + lockKey

// watch ends the run when the lock's connection dies (Postgres restarted:
// the lock is gone) or the NATS connection was re-established (messages in
// flight may have been lost; rewinding to the ack floor brings them back).
func (p *Projector) watch(run context.Context, cancel context.CancelCauseFunc, lock *pgx.Conn) {
	nc := p.layout.JS.Conn()
	reconnects := nc.Stats().Reconnects
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-run.Done():
			return
		case <-tick.C:
		}
		if r := nc.Stats().Reconnects; r != reconnects {
			cancel(errReconnected)
			return
		}
		if n%4 == 3 {
			pctx, c := context.WithTimeout(run, 5*time.Second)
			err := lock.Ping(pctx)
			c()
			if err != nil && run.Err() == nil {
				cancel(fmt.Errorf("%w: %w", errLockLost, err))
				return
			}
		}
	}
}

// dispatch hands each message to the worker that owns its session, in
// stream order, until run ends.
func (p *Projector) dispatch(run context.Context, cons jetstream.Consumer, workers []*worker, a *Acks) error {
	it, err := cons.Messages(jetstream.PullMaxMessages(p.cfg.BatchSize), jetstream.PullExpiry(5*time.Second))
	if err != nil {
		return fmt.Errorf("consume RUNTIME: %w", err)
	}
	stopped := make(chan struct{})
	go func() {
		select {
		case <-run.Done():
		case <-stopped:
		}
		it.Stop()
	}()
	defer close(stopped)
	var deliveries deliveryOrder
	for {
		m, err := it.Next()
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) || run.Err() != nil {
				return nil
			}
			p.log.Debug("consume: transient error", "err", err)
			continue
		}
		md, mdErr := m.Metadata()
		if mdErr == nil {
			if err := deliveries.next(md.Sequence.Consumer); err != nil {
				// This message must not be applied: its session's earlier
				// events may be the ones lost, and the checkpoint would
				// then skip them when they come again.
				return err
			}
		}
		h := m.Headers()
		w := workers[workerOf(h.Get("ce-tenant"), h.Get("ce-sessionid"), len(workers))]
		select {
		case w.in <- delivery{msg: m, md: md, err: mdErr, pos: a.Track(m)}:
		case <-run.Done():
			return nil
		}
	}
}

// deliveryOrder checks that the consumer's deliveries arrive without a
// gap. The server numbers every delivery of the consumer (redeliveries
// too); one lost in flight (the connection broke while the server sent
// it: the server counts it as delivered) shows as a gap at the next. The
// watcher ends the run on a reconnect, but only at its next tick, and
// messages that arrived on the new connection meanwhile would have been
// applied ahead of their session's lost ones; a gap ends the run before
// the message after it is handed to a worker, and the next run rewinds to
// the ack floor.
//
// A run starts by rewinding the consumer, which numbers deliveries from 1
// again, so a run's first delivery must be 1. A later one means another
// client took the first: a projector that lost the lock and does not know
// yet, or this process's previous run, whose pull request the server may
// still hold. Those events' sessions would go on here without them, and
// when they came again the checkpoints would skip them.
type deliveryOrder struct{ last uint64 }

func (d *deliveryOrder) next(delivered uint64) error {
	if delivered != d.last+1 {
		if d.last == 0 {
			return fmt.Errorf("%w: the run's first delivery is %d, not 1: another consumer took the first", errDeliveryGap, delivered)
		}
		return fmt.Errorf("%w: delivery %d came after %d", errDeliveryGap, delivered, d.last)
	}
	d.last = delivered
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// workerOf is the worker of n that applies a session's events: always the
// same one, so that a session's events are applied in order.
func workerOf(tenant, session string, n int) int {
	f := fnv.New32a()
	_, _ = f.Write([]byte(tenant))
	_, _ = f.Write([]byte{0})
	_, _ = f.Write([]byte(session))
	return int(f.Sum32() % uint32(n)) //nolint:gosec // n is a small worker count
}
