package project

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"runtime/debug"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Errors are translated here, at the one boundary with the driver:
// errPermanent means this data can never be applied (dead-letter it),
// errFatal that the database is not what this program expects (stop),
// anything else is transient (retry).
var (
	errPermanent = errors.New("the event cannot be applied")
	errFatal     = errors.New("the database does not match this program (run `agentwire migrate`)")
)

func classify(err error) error {
	if err == nil {
		return nil
	}
	if pg, ok := errors.AsType[*pgconn.PgError](err); ok && len(pg.Code) == 5 {
		switch pg.Code[:2] {
		case "22", "23", "54": // data exception, integrity violation, program limit
			return fmt.Errorf("%w: %w", errPermanent, err)
		case "42", "3F": // undefined table or column, missing schema, no privilege
			return fmt.Errorf("%w: %w", errFatal, err)
		}
	}
	return err
}

// worker applies the sessions that hash to it, a batch per transaction.
// Its decoder runs ahead of it: the next events are decoded while a batch
// is in Postgres, which is most of a batch's time.
type worker struct {
	p       *Projector
	in      chan delivery
	decoded chan *decoded
	outer   context.Context //nolint:containedctx // cancelled on shutdown: drain what is in hand
	run     context.Context //nolint:containedctx // cancelled on shutdown or when the run is lost: abandon
	// drain is the run's context of statements and dead letters: cancelled
	// the drain timeout after a shutdown began (drainBounded).
	drain context.Context //nolint:containedctx // see above
	lease lease
	lost  context.CancelCauseFunc // ends the run
	acks  *Acks
	done  []uint64 // the positions of a committed batch's deliveries (Acks)
	err   error
}

// handOff is how many messages wait for a worker's decoder: it keeps pace
// with the dispatcher, so a few smooth the flow, and more would only be
// held in the heap.
const handOff = 64

func newWorker(p *Projector, outer, run, drain context.Context, l lease, lost context.CancelCauseFunc, a *Acks) *worker {
	return &worker{p: p, in: make(chan delivery, handOff), decoded: make(chan *decoded, p.cfg.BatchSize),
		outer: outer, run: run, drain: drain, lease: l, lost: lost, acks: a}
}

// givenUp reports whether what the worker holds is left unacked, for
// redelivery: the run was lost (and this is no shutdown draining it), or
// a shutdown ran out of time.
func (w *worker) givenUp() bool {
	return (w.run.Err() != nil && w.outer.Err() == nil) || w.drain.Err() != nil
}

// lease is what one run of the consume loop holds.
type lease struct {
	// generation is the run's generation of the consumer's lease; a batch
	// commits only while it is the current one (Projector.takeOver).
	generation int64
	// barrier is the consumer's barrier key: a batch holds its lock,
	// shared, while it reads the generation and commits.
	barrier int32
	// checkpoints is the key the run's checkpoints are kept under: the
	// consumer and the RUNTIME stream's creation time. A stream made anew
	// (its store lost or deleted) counts sequences from 1 again, and the
	// old stream's checkpoints would skip its events.
	checkpoints string
}

type decoded struct {
	msg jetstream.Msg
	seq uint64
	ev  canonical.Event
	pos uint64 // in acks
}

type outcome struct {
	applied, skipped int
	dead             []deadEvent
}

type deadEvent struct {
	d      *decoded
	reason string
}

// delivery is a message with its JetStream metadata, read once by the
// dispatcher (which checks the delivery order with it).
type delivery struct {
	msg jetstream.Msg
	md  *jetstream.MsgMetadata
	err error  // why there is no metadata
	pos uint64 // in acks
}

// decode decodes what the dispatcher hands the worker, in order, for loop
// to apply. An event that cannot be decoded is dead-lettered here: it is
// in no batch.
func (w *worker) decode() {
	defer close(w.decoded)
	for d := range w.in {
		if w.givenUp() {
			continue
		}
		m := d.msg
		if d.err != nil {
			w.deadLetter(d, "", "no JetStream metadata: "+d.err.Error())
			continue
		}
		ev, err := DecodeEvent(m.Subject(), m.Headers(), m.Data())
		if err != nil {
			w.deadLetter(d, m.Headers().Get("ce-tenant"), "undecodable event: "+err.Error())
			continue
		}
		w.decoded <- &decoded{msg: m, seq: d.md.Sequence.Stream, ev: ev, pos: d.pos}
	}
}

// deadLetter puts a delivery the projector cannot even decode (it is in
// no batch) on deadletter.project.<tenant> with the reason, counts it and
// finishes it. If publishing fails, the run ends: the delivery would hold
// back the acks of every later one (Acks), and the next run gets it again.
func (w *worker) deadLetter(d delivery, tenant, reason string) {
	if err := w.p.publishDeadLetter(w.drain, d.msg, tenant, reason, ""); err != nil {
		w.p.log.Error("dead-lettering failed; the event will be redelivered", "reason", reason, "err", err)
		w.lost(err)
		return
	}
	w.p.deadLettered(tenant, reason)
	w.acks.Finish(d.pos)
}

// loop applies what decode hands it, a batch at a time (Batches).
func (w *worker) loop() {
	for batch := range Batches(w.decoded, w.p.cfg.BatchSize) {
		if w.err != nil || w.givenUp() {
			continue
		}
		w.process(batch)
	}
}

// Batches yields what arrives on in, a batch at a time until in is
// closed: a batch is its first value, waited for, and those that have
// arrived behind it, up to size. Under load batches fill up, fewer and
// larger transactions; a lone event is applied at once. The bench's
// floors batch with it too.
func Batches[T any](in <-chan T, size int) iter.Seq[[]T] {
	return func(yield func([]T) bool) {
		for v := range in {
			batch := []T{v}
		fill:
			for len(batch) < size {
				select {
				case v, ok := <-in:
					if !ok {
						break fill
					}
					batch = append(batch, v)
				default:
					break fill
				}
			}
			if !yield(batch) {
				return
			}
		}
	}
}

func (w *worker) process(batch []*decoded) {
	p := w.p
	ctx := w.drain
	careful := false
	backoff := 100 * time.Millisecond
	began := time.Now()
	for {
		out, err := p.apply(ctx, batch, careful, w.lease)
		if err == nil {
			if p.cfg.Committed != nil {
				p.cfg.Committed(len(batch), time.Since(began))
			}
			p.stats.Batches.Add(1)
			p.stats.Applied.Add(uint64(out.applied)) //nolint:gosec // counts are non-negative
			p.stats.Skipped.Add(uint64(out.skipped)) //nolint:gosec // counts are non-negative
			for _, de := range out.dead {
				p.deadLettered(de.d.ev.Tenant, de.reason)
			}
			w.done = w.done[:0]
			for _, d := range batch {
				w.done = append(w.done, d.pos)
			}
			w.acks.Finish(w.done...)
			return
		}
		switch {
		case errors.Is(err, errPermanent) && !careful:
			// One event spoils the batch: apply them one by one, each in a
			// savepoint, and dead-letter the ones that fail.
			careful = true
			continue
		case errors.Is(err, errFatal):
			// The whole run ends, not just this worker: the dispatcher
			// would otherwise keep handing it events it drops, until the
			// ack limit stalls the consumer and the projector hangs,
			// healthy to look at.
			p.log.Error("projector stopped", "err", err)
			w.err = err
			w.lost(err)
			return
		case errors.Is(err, errSuperseded):
			// Another projector is active: what is in hand is left to it.
			p.stats.Superseded.Add(1)
			w.lost(err)
			p.log.Warn("another projector took over; the batch will be redelivered", "events", len(batch), "err", err)
			return
		}
		if w.gaveUp(batch, err) {
			return
		}
		p.stats.Retries.Add(1)
		if pg, ok := errors.AsType[*pgconn.PgError](err); ok && pg.Code == pgDeadlockDetected {
			p.stats.Deadlocks.Add(1)
		}
		p.log.Warn("applying a batch failed; retrying", "events", len(batch), "err", err, "in", backoff)
		for _, d := range batch {
			_ = d.msg.InProgress()
		}
		if w.outer.Err() != nil {
			// Draining: the run is cancelled, which would end the wait at
			// once and retry as fast as the failures come, for the whole
			// drain timeout.
			sleep(w.drain, backoff)
		} else {
			sleep(w.run, backoff)
		}
		if w.gaveUp(batch, err) {
			return
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// gaveUp reports whether the worker gives the failing batch up (givenUp),
// and says so.
func (w *worker) gaveUp(batch []*decoded, err error) bool {
	if !w.givenUp() {
		return false
	}
	w.p.log.Warn("giving up a batch; it will be redelivered", "events", len(batch), "err", err)
	return true
}

// drainBounded is the context of a run's statements and dead letters.
// A shutdown does not cancel it: the batches in hand are finished,
// committed and acked, or given up after the drain timeout. It is
// cancelled that timeout after the shutdown began, so that a Postgres that
// refuses or hangs (a lock never released, a server that stopped
// answering) cannot hold the shutdown longer, however many batches the
// workers hold.
func drainBounded(outer context.Context, drain time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(outer))
	stop := context.AfterFunc(outer, func() {
		t := time.NewTimer(drain)
		defer t.Stop()
		select {
		case <-t.C:
			cancel()
		case <-ctx.Done():
		}
	})
	return ctx, func() {
		stop()
		cancel()
	}
}

const selectCheckpoints = `
SELECT c.tenant_id, c.session_id::text, c.last_seq FROM projector_checkpoints c
JOIN unnest($2::text[], $3::uuid[]) AS x(t, s) ON c.tenant_id = x.t AND c.session_id = x.s
WHERE c.consumer = $1`

const countBehind = `
SELECT count(*) FROM projector_checkpoints c
JOIN unnest($2::text[], $3::uuid[], $4::int8[]) AS x(t, s, q) ON c.tenant_id = x.t AND c.session_id = x.s
WHERE c.consumer = $1 AND c.last_seq >= x.q`

const upsertCheckpoints = `
INSERT INTO projector_checkpoints AS c (consumer, tenant_id, session_id, last_seq, updated_at)
SELECT $1, t, s, q, now() FROM unnest($2::text[], $3::uuid[], $4::int8[]) AS x(t, s, q)
ON CONFLICT (consumer, tenant_id, session_id) DO UPDATE SET
    last_seq = greatest(c.last_seq, EXCLUDED.last_seq), updated_at = EXCLUDED.updated_at`

const insertEvents = `
INSERT INTO events (tenant_id, event_id, type, provider, session_id, thread_id, turn_id, item_id, request_id,
    created_at, mapping_version, runtime_seq, data)
SELECT t, e::uuid, ty, p, s::uuid, nullif(th, '')::uuid, nullif(tu, '')::uuid, nullif(it, '')::uuid,
    nullif(rq, '')::uuid, c, mv, sq, d::jsonb
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
    $9::text[], $10::timestamptz[], $11::text[], $12::int8[], $13::text[])
    AS x(t, e, ty, p, s, th, tu, it, rq, c, mv, sq, d)
ON CONFLICT (tenant_id, event_id) DO NOTHING
RETURNING tenant_id, event_id::text`

// apply writes a batch in one transaction with its checkpoints: events at
// or below a session's checkpoint are skipped, then events already in the
// log (a duplicate published again) are skipped, and the rest are folded
// and written. careful applies event by event in savepoints.
//
// A batch holding an event applied already is rare (redelivery after a
// crash, the same event published twice), so a batch is first applied as
// if all its events were new: COPY into the log, then every projection
// statement and the checkpoints in one round trip. If that finds an event
// applied already, the transaction is rolled back and the batch applied
// again knowing which events are new.
//
// l.generation is the run's generation of the projector's lease: a batch
// commits only while it is still the current one (Projector.takeOver).
// Two projectors consuming at once would split a session's events between
// them, and the one behind would skip what the other's checkpoint passed.
func (p *Projector) apply(ctx context.Context, batch []*decoded, careful bool, l lease) (outcome, error) {
	mode := applyOptimistic
	if careful {
		mode = applyCareful
	}
	out, err := p.applyTx(ctx, batch, mode, l)
	if errors.Is(err, errAlreadyApplied) {
		return p.applyTx(ctx, batch, applyExact, l)
	}
	return out, err
}

type applyMode int

const (
	applyOptimistic applyMode = iota // every event is new
	applyExact                       // ask the log which events are new first
	applyCareful                     // event by event, in savepoints
)

// errAlreadyApplied: an optimistic batch held an event applied already.
var errAlreadyApplied = errors.New("the batch holds an event applied already")

func (p *Projector) applyTx(ctx context.Context, batch []*decoded, mode applyMode, l lease) (outcome, error) {
	var out outcome
	// Read committed, whatever the server's default: the lease's
	// generation must be read with a snapshot taken after the barrier lock
	// (Projector.takeOver), not the transaction's first statement's.
	tx, err := p.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return out, classify(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()

	// first and last are each session's first and last sequence in the
	// batch.
	first, last := map[key]uint64{}, map[key]uint64{}
	for _, d := range batch {
		k := key{d.ev.Tenant, d.ev.SessionID}
		if _, ok := first[k]; !ok {
			first[k] = d.seq
		}
		last[k] = max(last[k], d.seq)
	}
	var applied map[key]uint64
	if mode != applyOptimistic {
		if applied, err = checkpoints(ctx, tx, l.checkpoints, first); err != nil {
			return out, err
		}
	}
	fresh := make([]*decoded, 0, len(batch))
	seen := map[key]bool{}
	for _, d := range batch {
		id := key{d.ev.Tenant, d.ev.EventID}
		if d.seq <= applied[key{d.ev.Tenant, d.ev.SessionID}] || seen[id] {
			out.skipped++
			continue
		}
		seen[id] = true
		fresh = append(fresh, d)
	}

	w := newWrites()
	b := &pgx.Batch{}
	b.Queue(txSettings)
	behind := 0
	switch mode {
	case applyOptimistic:
		if err := copyEvents(ctx, tx, fresh); err != nil {
			if pg, ok := errors.AsType[*pgconn.PgError](err); ok && pg.Code == pgUniqueViolation && pg.ConstraintName == "events_pkey" {
				return out, errAlreadyApplied
			}
			return out, classify(err)
		}
		if err := p.fold(w, len(fresh), func(i int) *canonical.Event { return &fresh[i].ev }); err != nil {
			return out, err
		}
		out.applied = len(fresh)
		// The checkpoints were not read first: an event applied already is
		// in the log, and COPY refused it above. This catches one the
		// checkpoints have passed that is not in the log (dead-lettered),
		// in the same round trip as the writes.
		queueBehind(b, l.checkpoints, first, &behind)
	case applyExact:
		isNew := map[key]bool{}
		logged := &pgx.Batch{}
		queueEvents(logged, fresh, func(k key) { isNew[k] = true })
		if err := tx.SendBatch(ctx, logged).Close(); err != nil {
			return out, classify(err)
		}
		err := p.fold(w, len(fresh), func(i int) *canonical.Event {
			if d := fresh[i]; isNew[key{d.ev.Tenant, d.ev.EventID}] {
				out.applied++
				return &d.ev
			}
			out.skipped++
			return nil
		})
		if err != nil {
			return out, err
		}
	case applyCareful:
		for _, d := range fresh {
			ok, reason, err := p.applyOne(ctx, tx, d)
			switch {
			case err != nil:
				return out, err
			case reason != "":
				out.dead = append(out.dead, deadEvent{d: d, reason: reason})
			case ok:
				out.applied++
			default:
				out.skipped++
			}
		}
	}
	w.queue(b)
	queueCheckpoints(b, l.checkpoints, last)
	b.Queue(`SELECT pg_advisory_xact_lock_shared($1::int4, 0)`, l.barrier)
	var current int64
	b.Queue(`SELECT coalesce((SELECT generation FROM projector_leases WHERE consumer = $1), 0)`, p.cfg.Consumer).QueryRow(func(row pgx.Row) error { return row.Scan(&current) })
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return out, classify(err)
	}
	if current != l.generation {
		return out, fmt.Errorf("%w: lease generation %d, this run's is %d", errSuperseded, current, l.generation)
	}
	if behind > 0 {
		return out, errAlreadyApplied
	}
	// The events Postgres refused are dead-lettered before the commit
	// moves their sessions' checkpoints past them: a dead letter that
	// failed (NATS away) or was never sent (a crash just after the
	// commit) would lose them, acked, in neither the log nor the dead
	// letters. Sent and then not committed, they are sent again when the
	// batch is, under the same message id: the stream drops the copy.
	for _, de := range out.dead {
		if err := p.publishDeadLetter(ctx, de.d.msg, de.d.ev.Tenant, de.reason, "project:"+de.d.ev.Tenant+":"+de.d.ev.EventID); err != nil {
			return out, fmt.Errorf("dead-letter event %s: %w", de.d.ev.EventID, err)
		}
	}
	if p.cfg.BeforeCommit != nil {
		p.cfg.BeforeCommit(len(batch))
	}
	if err := tx.Commit(ctx); err != nil {
		return out, classify(err)
	}
	return out, nil
}

// txSettings sets what a batch transaction needs, for it alone:
//
//   - The batch is acked once the transaction commits, so the commit must
//     be durable: on a server that does not wait for the WAL flush
//     (synchronous_commit = off, a common tuning), a Postgres crash would
//     lose acked events. A stronger setting (remote_apply) is left as is.
//   - The statements look rows up by key whatever their arrays hold, so
//     the plan Postgres caches for each is the right one from the first
//     execution: planning anew for the first five of every statement on
//     every connection (plan_cache_mode = auto) cost ~3% of the CPU per
//     event in the bench (median of 8 runs each).
const txSettings = `SELECT set_config('plan_cache_mode', 'force_generic_plan', true),
    CASE WHEN current_setting('synchronous_commit') = 'off' THEN set_config('synchronous_commit', 'on', true) END`

const (
	pgUniqueViolation  = "23505"
	pgDeadlockDetected = "40P01"
)

// checkpoints returns the last sequence applied of each session named.
func checkpoints(ctx context.Context, tx pgx.Tx, consumer string, sessions map[key]uint64) (map[key]uint64, error) {
	var t, s []string
	for k := range sessions {
		t, s = append(t, k.tenant), append(s, k.id)
	}
	last := map[key]uint64{}
	rows, err := tx.Query(ctx, selectCheckpoints, consumer, t, s)
	if err != nil {
		return nil, classify(err)
	}
	defer rows.Close()
	for rows.Next() {
		var k key
		var seq int64
		if err := rows.Scan(&k.tenant, &k.id, &seq); err != nil {
			return nil, classify(err)
		}
		last[k] = uint64(seq) //nolint:gosec // sequences are positive
	}
	return last, classify(rows.Err())
}

// queueBehind queues a count of the sessions whose checkpoint is at or
// past their first sequence in the batch.
func queueBehind(b *pgx.Batch, consumer string, first map[key]uint64, n *int) {
	var t, s []string
	var q []int64
	for k, seq := range first {
		t, s, q = append(t, k.tenant), append(s, k.id), append(q, int64(seq)) //nolint:gosec // sequences fit
	}
	b.Queue(countBehind, consumer, t, s, q).QueryRow(func(row pgx.Row) error { return row.Scan(n) })
}

func queueCheckpoints(b *pgx.Batch, consumer string, maxSeq map[key]uint64) {
	var t, s []string
	var q []int64
	for _, k := range sortedKeys(maxSeq, cmpKey) {
		t, s, q = append(t, k.tenant), append(s, k.id), append(q, int64(maxSeq[k])) //nolint:gosec // sequences fit
	}
	b.Queue(upsertCheckpoints, consumer, t, s, q)
}

// applyOne applies one event in a savepoint. A permanent failure rolls the
// savepoint back and returns the reason to dead-letter it with.
func (p *Projector) applyOne(ctx context.Context, tx pgx.Tx, d *decoded) (applied bool, reason string, err error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return false, "", classify(err)
	}
	fail := func(err error) (bool, string, error) {
		_ = sp.Rollback(ctx)
		if errors.Is(err, errPermanent) {
			return false, err.Error(), nil
		}
		return false, "", err
	}
	isNew := false
	b := &pgx.Batch{}
	queueEvents(b, []*decoded{d}, func(key) { isNew = true })
	if err := sp.SendBatch(ctx, b).Close(); err != nil {
		return fail(classify(err))
	}
	if !isNew {
		return false, "", classify(sp.Commit(ctx))
	}
	w := newWrites()
	if err := p.fold(w, 1, func(int) *canonical.Event { return &d.ev }); err != nil {
		return fail(err)
	}
	b = &pgx.Batch{}
	w.queue(b)
	if err := sp.SendBatch(ctx, b).Close(); err != nil {
		return fail(classify(err))
	}
	if err := sp.Commit(ctx); err != nil {
		return false, "", classify(err)
	}
	return true, "", nil
}

// fold folds event(0) to event(n-1) into w, skipping nil. A panic there
// is a bug of the projector's own; it is caught once for the whole batch
// and returned as a permanent error: the batch is then applied event by
// event (applyOne folds one at a time), and the event that panics is
// dead-lettered with the reason (and logged with the stack) rather than
// stopping the projector on it after every restart.
func (p *Projector) fold(w *writes, n int, event func(i int) *canonical.Event) (err error) {
	var e *canonical.Event
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("projector bug: folding an event panicked", "event", e.EventID, "type", e.Type(), "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("%w: projector bug: folding %s panicked: %v", errPermanent, e.Type(), r)
		}
	}()
	for i := range n {
		if e = event(i); e == nil {
			continue
		}
		if p.cfg.foldHook != nil {
			p.cfg.foldHook(e)
		}
		w.fold(e)
	}
	return nil
}

// queueEvents queues the insert of the events into the log, calling logged
// with each one that was not there yet.
func queueEvents(b *pgx.Batch, evs []*decoded, logged func(key)) {
	if len(evs) == 0 {
		return
	}
	b.Queue(insertEvents, eventArgs(evs)...).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var k key
			if err := rows.Scan(&k.tenant, &k.id); err != nil {
				return err
			}
			logged(k)
		}
		return rows.Err()
	})
}

// eventArgs are the parameters of insertEvents: a column per array.
func eventArgs(evs []*decoded) []any {
	n := len(evs)
	var (
		t, e, ty, pr, s, th, tu, it, rq, mv = make([]string, n), make([]string, n), make([]string, n), make([]string, n),
			make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		// The documents go as they came, without a copy into strings.
		data = make([][]byte, n)
		at   = make([]time.Time, n)
		seq  = make([]int64, n)
	)
	for i, d := range evs {
		ev := &d.ev
		t[i], e[i], ty[i], pr[i], s[i] = ev.Tenant, ev.EventID, string(ev.Type()), string(ev.Provider), ev.SessionID
		th[i], tu[i], it[i], rq[i] = ev.ThreadID, ev.TurnID, ev.ItemID, ev.RequestID
		at[i], mv[i], seq[i], data[i] = ev.CreatedAt, ev.MappingVersion, int64(d.seq), storableJSON(d.msg.Data()) //nolint:gosec // sequences fit
	}
	return []any{t, e, ty, pr, s, th, tu, it, rq, at, mv, seq, data}
}

// publishDeadLetter puts m on deadletter.project.<tenant> with the
// reason, retrying a few times. A non-empty msgID makes a second copy (a
// batch applied again after a crash) a duplicate the stream drops.
func (p *Projector) publishDeadLetter(ctx context.Context, m jetstream.Msg, tenant, reason, msgID string) error {
	msg := nats.NewMsg(bus.DeadLetterProjectSubject(deadLetterTenant(tenant)))
	for k, v := range m.Headers() {
		if k != bus.HeaderMsgID {
			msg.Header[k] = v
		}
	}
	if msgID != "" {
		msg.Header.Set(bus.HeaderMsgID, msgID)
	}
	msg.Header.Set(bus.HeaderReason, reason)
	msg.Data = m.Data()
	var err error
	for attempt := range 5 {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = p.layout.JS.PublishMsg(pctx, msg)
		cancel()
		if err == nil {
			return nil
		}
		sleep(ctx, time.Duration(attempt+1)*200*time.Millisecond)
	}
	return fmt.Errorf("publish to %s: %w", msg.Subject, err)
}

// deadLettered counts an event dead-lettered. Its delivery is finished
// like the others (Acks), not terminated: with cumulative acks, the
// server takes a termination for an ack of every earlier delivery too.
func (p *Projector) deadLettered(tenant, reason string) {
	p.stats.DeadLettered.Add(1)
	p.log.Warn("dead-lettered", "tenant", deadLetterTenant(tenant), "reason", reason)
}

func deadLetterTenant(tenant string) string {
	if canonical.ValidateTenant(tenant) != nil {
		return "unknown"
	}
	return tenant
}

// EventColumns are the event log's columns, in the order EventSource gives them.
var EventColumns = []string{"tenant_id", "event_id", "type", "provider", "session_id", "thread_id", "turn_id", "item_id",
	"request_id", "created_at", "mapping_version", "runtime_seq", "data"}

// EventSource returns the log's rows of n events, for pgx's CopyFrom:
// event(i) is the i-th event, its RUNTIME sequence and its document as
// published, which goes as Postgres can store it (storableJSON). Ids go
// as binary UUIDs: a string for a uuid column makes pgx fail to encode it
// (building an error with fmt), then parse it as text, which cost a sixth
// of the projector's own CPU. pgx encodes a row before
// it asks for the next, so one row's values are kept in the source and
// reused, each a pointer (an interface holding a string, a time or a
// UUID by value is an allocation: ten per event).
func EventSource(n int, event func(i int) (*canonical.Event, uint64, []byte)) pgx.CopyFromSource {
	s := &eventSource{n: n, i: -1, event: event}
	// In EventColumns' order; the others are set for each row.
	s.vals = []any{nil, nil, &s.typ, &s.provider, nil, nil, nil, nil, nil, nil, nil, &s.seq, &s.data}
	return s
}

type eventSource struct {
	n, i     int
	event    func(i int) (*canonical.Event, uint64, []byte)
	ids      [6]pgtype.UUID // event, session, thread, turn, item, request
	typ      string
	provider string
	seq      int64
	data     []byte
	vals     []any
}

func (s *eventSource) Next() bool {
	s.i++
	return s.i < s.n
}

func (s *eventSource) Values() ([]any, error) {
	ev, seq, data := s.event(s.i)
	s.typ, s.provider, s.seq, s.data = string(ev.Type()), string(ev.Provider), int64(seq), storableJSON(data) //nolint:gosec // sequences fit
	v := s.vals
	v[0], v[9], v[10] = &ev.Tenant, &ev.CreatedAt, &ev.MappingVersion
	v[1], v[4] = s.uuid(0, ev.EventID), s.uuid(1, ev.SessionID)
	v[5], v[6], v[7] = s.uuid(2, ev.ThreadID), s.uuid(3, ev.TurnID), s.uuid(4, ev.ItemID)
	v[8] = s.uuid(5, ev.RequestID)
	return v, nil
}

func (s *eventSource) Err() error { return nil }

// uuid is the id as COPY sends it, in slot k: NULL when absent, and the
// text itself when it is no UUID, for Postgres to refuse with its own
// message.
func (s *eventSource) uuid(k int, id string) any {
	if id == "" {
		return nil
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return id
	}
	s.ids[k] = pgtype.UUID{Bytes: u, Valid: true}
	return &s.ids[k]
}

// copyEvents copies the events into the log. COPY inserts rows in bulk
// (a page at a time, without a speculative insertion per row): it cost
// Postgres about a tenth less CPU than INSERT ... SELECT FROM unnest for
// the same events, and the log is most of what Postgres does per batch.
func copyEvents(ctx context.Context, tx pgx.Tx, evs []*decoded) error {
	if len(evs) == 0 {
		return nil
	}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"events"}, EventColumns, EventSource(len(evs), func(i int) (*canonical.Event, uint64, []byte) {
		return &evs[i].ev, evs[i].seq, evs[i].msg.Data()
	}))
	return err
}
