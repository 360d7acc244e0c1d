// Package adapter is what every provider adapter is built from: the Frame
// an adapter maps (bytes plus ingest metadata), tap-line unwrapping, the
// Emitter that stamps canonical envelopes with deterministic ids, and the
// Rule table each adapter publishes to say how it maps every kind.
//
// An adapter is a pure function (state, frame) → (state, events, error):
// no clock, no randomness, no I/O, no logger. Time comes from the frame,
// ids from the frame's session key and ordinal (canonical.IDSpace), so the
// same frames always give the same events.
package adapter
