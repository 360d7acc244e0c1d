// Package bus is agentwire's NATS JetStream layout: the streams, subjects,
// headers, consumers and buckets every service shares, applied
// idempotently by whichever service starts first.
//
// Streams:
//
//	RAW       raw.<tenant>.<partition>.<session>   frames, byte for byte
//	RUNTIME   runtime.<provider>.<type>             canonical CloudEvents (binary mode)
//	DEADLETTER deadletter.>                         what a stage could not deliver, with the reason
//
// <partition> is P00…P15 (Config.Partitions), derived from the tenant and
// session key, so one session always lands in one partition; <session> is
// a hash of the two, so a session's frames can be re-read alone. The
// normalizer has one durable pull consumer per partition with the pinned
// priority policy: JetStream itself gives each partition to one worker at a
// time and moves it when that worker goes away; sessions in different
// partitions run in parallel on different workers.
//
// The RAW_OBJECTS object store holds frames larger than the server's max
// payload; their RAW message has an empty body and names the object. The
// NORMALIZER_STATE key-value bucket holds each session's adapter snapshot.
package bus
