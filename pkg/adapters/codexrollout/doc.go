// Package codexrollout maps Codex rollout files (dialect "codex-rollout":
// the JSONL Codex writes to CODEX_HOME/sessions, lines session_meta,
// response_item, event_msg, turn_context, compacted, world_state,
// token_usage_record, ...) to canonical events. Raw source codex.eventmsg.
//
// Ids: session_meta.id is the thread; task_started.turn_id the turn;
// items use the provider's id (call_id for tool calls), all native and
// scoped thread → turn → item as in the app-server adapter, so a thread
// read live and from its rollout gets the same thread, turn and item ids
// (user messages excepted: their response item id is not the app-server's).
// Lines without ids (legacy deltas, old response items) get derived ids.
// Time is each line's timestamp; a line without a valid one is placed on
// the time line of the lines before it (adapter.Clock).
//
// Turns: task_started opens, task_complete closes (turn_aborted closes as
// interrupted or cancelled); items and requests still open are closed with
// their turn. A turn ends failed, as the app-server's turn/completed says,
// when an error line came in it (one announcing a retry or a failed
// rollback excepted) or task_complete carries an error (codex 0.171 and
// later, which write no error line then). Rollouts older than
// task_started (codex 0.40) mark no turns: there a user_message starts
// one, and ends the one before it (completed, or failed as above); turn_aborted ends one as in later rollouts, and a log that
// ends inside a turn leaves it open.
//
// Items: the rollout records messages and reasoning twice, as EventMsg and
// as response items, in an order that differs between versions; the first
// copy opens the item, the copy from the other record completes it. Tool
// calls join every line about them by call_id (function_call, *_begin,
// *_end, item_completed) and complete with their output.
//
// Usage: token_count is cumulative: it replaces the thread total, a
// repeated snapshot adds no "last" usage, and turn.completed carries the
// total's growth across the turn, never a sum of snapshots. Rate limits in
// token_count become account.rate-limits.updated with their windows.
//
// Errors: error is runtime.error; stream_error (a retry) is a warning.
// Lines that are not JSON are validation errors; unknown types warnings.
//
// Benchmark: BenchmarkMap maps all the rollout recordings as one session
// per iteration: 89k frames/s per core on the recordings of codex 0.171.0
// (go test -bench, this machine, best of 4), 243 MB/s (their lines average 2.7 KB,
// session_meta lines 22 KB). A line is scanned for its members and
// decoded once with its payload's struct (event_msg, response_item) or
// only validated (the rest); the Raw is the frame's one copy and the
// payload a span of it; the session steps its state in place. Validation
// (jsonscan) and decoding (the encoding/json v2 engine) are what is left.
package codexrollout

// Intro is the paragraph the generated mapping page opens with.
const Intro = "A Codex rollout file is the session's own log: session metadata, the Responses API transcript (response_item) and the EventMsg stream (event_msg), plus per-turn context and usage records. " +
	"agentwire maps each line as it is appended. Threads, turns and tool calls keep Codex's ids, scoped as in the app-server dialect, so both views of one session share canonical ids. " +
	"Messages and reasoning, recorded once in each stream, become one item; token_count is cumulative and is turned into per-turn usage without counting repeated snapshots."
