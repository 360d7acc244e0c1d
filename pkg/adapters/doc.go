// Package adapters is the home of agentwire's provider adapters, one
// subpackage per dialect (codex-app-server, codex-exec, codex-rollout,
// claude-stream, claude-log, acp, gemini-stream).
//
// Every adapter is a pure function from a frame and a small, explicit,
// serializable state to canonical events: no clock, no randomness, no I/O,
// no logger. Time, ids and order come from the frame and its ingest
// metadata (tenant, session key, ordinal), so mapping the same frames twice
// yields byte-identical events. Adapters import only the standard library
// and package canonical; lint enforces it.
package adapters
