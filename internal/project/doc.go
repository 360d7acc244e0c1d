// Package project is the projector: it applies the RUNTIME stream to the
// Postgres projections (package migrations has the schema), exactly once
// per event.
//
// # Order and parallelism
//
// RUNTIME subjects name provider and type, not session, so one durable
// pull consumer (bus.ProjectConsumer) reads the whole stream in order and
// hands each event to the worker that owns its session (a hash of tenant
// and session id). A session's events therefore reach one worker in stream
// order, and different sessions are applied in parallel. Sessions may
// share rows (a Codex thread seen through its app-server tap and its
// rollout log); every transaction locks shared rows in primary-key order
// (sql.go), so parallel workers cannot deadlock on them, and such rows
// merge column by column into the same result whichever session is
// applied first (migrations/README.md, "Rows two sessions describe").
//
// # Exactly once
//
// A worker applies a batch in one transaction that also records, per
// session, the last RUNTIME sequence applied (projector_checkpoints, kept
// per consumer and RUNTIME stream: a stream made anew counts from 1 again,
// and its events are not measured against the old one's checkpoints); the
// events are acked only after it commits (cumulatively: one ack covers
// every earlier delivery, so it is sent for the last of those finished in
// a row, whichever worker finished them; acks.go), and the commit is durable even
// on a server tuned with synchronous_commit = off (the transaction turns
// it on for itself), so a Postgres crash cannot lose an acked event. An event at or below its
// session's checkpoint is skipped, and so is an event whose id is already
// in the event log (the same event published twice): redelivery is a
// no-op. So that a crash can never let a later event of a session be
// applied before an earlier one that was lost in flight, each life of the
// consume loop starts by rewinding the consumer to its ack floor, and one
// projector per consumer and database is active at a time (a Postgres
// advisory lock; others stand by). The lock alone cannot stop a
// projector that lost it without knowing yet: taking the lock, a
// projector starts a new generation of the consumer's lease
// (projector_leases) and waits out the batches in flight under the old
// one; every batch reads the generation just before it commits and rolls
// back if it is no longer its own, so nothing commits behind a projector
// that has taken over. The loop starts over when the lock is lost
// (Postgres restarted, the connection killed), the lease taken over, or
// NATS reconnects.
//
// # Batches
//
// A batch's events are COPYed into the event log, folded in memory into
// one patch per touched row, and the patches written with one set-based
// upsert per table (rows travel as one array per column), followed by the
// checkpoints, all in one round trip. Content deltas of an item are
// concatenated per batch; while the item is open they are stored as one
// part of its text (item_text_parts), and the batch that completes it
// folds its parts into the row once, so a text streamed one delta per
// batch is not rewritten per delta. Item lifecycle content, above all
// item.completed's, is authoritative and replaces what deltas built. A batch is applied as if all its events were
// new, without reading the checkpoints first; an event applied already
// (redelivered after a crash, or published twice) makes the log refuse
// the COPY or the checkpoint check fail in the same round trip, and the
// batch is applied again, checkpoints read first.
//
// A batch is what a worker has at hand, up to the batch size: small when
// events trickle in, large under load, where fewer transactions cost less
// per event. Each worker's decoder runs ahead of it, so that the next
// events are decoded while a batch is in Postgres.
//
// # Bad events
//
// An event that cannot be decoded, or that Postgres rejects (a data or
// integrity error), goes to deadletter.project.<tenant> with the reason
// and is counted; the batch is then applied event by event in savepoints
// so the rest of it is kept. A rejected event is dead-lettered before the
// batch commits (its session's checkpoint passes it), under a message id
// of its own so that a batch applied again sends no second copy; if the
// dead letter cannot be written the batch is retried (an undecodable
// event's run starts over: it would hold back every later ack). Transient errors
// are retried (the messages' ack deadlines extended meanwhile); a schema
// that does not match stops the projector.
//
// # Rebuilding
//
// Every projection row is a function of the events of the stream in
// order, so truncating the projection tables and the checkpoints and
// consuming RUNTIME from the start rebuilds them exactly: PrepareRebuild
// does that, under the projector's lock (`agentwire project --rebuild`).
package project
