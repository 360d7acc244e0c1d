// Package codexexec maps the `codex exec --json` stream (the Codex SDK's
// ThreadEvent JSONL, dialect "codex-exec") to canonical events.
//
// Ids: the thread id is the only provider id; items are "item_N" within a
// run, so item ids are scoped by thread and turn. Turns have no id: each
// turn.started derives one from its frame. A log that starts mid-turn has
// items before any turn.started: the first of them opens the turn (an id
// from its frame) that the turn.completed ahead ends, so every item is in
// a turn. thread.started begins a run: a turn the run before left open
// stays open, and the new run's items are not in it. The session is the
// ingest session.
//
// Usage: turn.completed carries the thread's running total (OpenAI
// convention: input includes cached), not the turn's: exec reports
// total_token_usage, and `codex exec resume` carries the earlier runs'
// tokens over. The turn's usage is the difference from the total the
// session last saw for the thread (all of it for a session's first turn
// of a thread); thread.token-usage.updated carries the total itself.
//
// Items: exec often reports an item only when it completes; the adapter
// then opens it first, so every item has a start and an end. item.completed
// carries the final text (agent message, reasoning, command output); a
// todo_list item is also a turn.plan.updated.
//
// Errors: "error" lines that announce a reconnect ("Reconnecting... 2/5")
// are warnings, others runtime errors; turn.failed is runtime.error plus
// turn.completed{failed}; a 401/Unauthorized is a permission_error.
//
// Benchmark: BenchmarkMap maps all the exec recordings as one session per
// iteration: 341k frames/s per core on the recordings of codex 0.171.0
// (go test -bench, this machine, best of 4), 38 MB/s (exec lines are short). Each
// line is decoded once, item lines twice (the line, then its item), and
// the Raw is the frame's one copy, shared by its events.
package codexexec

// Intro is the paragraph the generated mapping page opens with.
const Intro = "`codex exec --json` prints the Codex SDK's thread events, one per line. The thread id is the only provider id: " +
	"turns get ids derived from their turn.started frame (in a log that starts mid-turn, from the first item, which opens the turn), items (item_0, item_1, ... per run) are scoped by thread and turn. " +
	"turn.completed carries the thread's running total, which a resumed thread carries over from earlier runs: a turn's usage is its difference from the total the session last saw for the thread " +
	"(cached_input_tokens, cache_write_input_tokens and reasoning_output_tokens folded into the canonical buckets), and thread.token-usage.updated carries the total; " +
	"turn.failed is a runtime.error plus turn.completed{failed}, and \"Reconnecting...\" errors are warnings."
