// Package normalize is the normalizer service: it consumes the RAW stream
// in order per session, maps frames to canonical events with the adapters
// of the registry, and publishes them to RUNTIME as CloudEvents.
//
// Ordering and exactly-once: each RAW partition has one durable consumer
// that JetStream pins to one worker at a time; within it, a session's
// frames are mapped strictly by ordinal. A frame is acked only after its events are stored in RUNTIME and
// its session's adapter state is saved, so a crash at any point replays
// from the last ack: the restored state skips frames it has already
// mapped, and events published again carry the same ids (JetStream's
// duplicate window drops them). A frame that arrives ahead of its
// predecessors — in flight to a worker that died, or a session whose saved
// state is gone — makes the worker read the missing frames back from RAW
// and map them first, so the session's state is rebuilt and its events
// come out complete and in order. They are stored in RUNTIME in that
// order too when NATS goes away and comes back in the middle of a batch:
// once a publish fails, or the client reconnects (failing the acks of what
// it had sent), the batch's later events wait and are published behind
// the failed ones, which the projector relies on.
//
// Frames too large for a message come from the RAW_OBJECTS store; events
// that cannot be published after retries go to deadletter.normalize.<tenant>
// with the reason, as do frames whose headers are unusable.
package normalize
