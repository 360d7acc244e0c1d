// Package claudestream maps Claude Agent SDK / Claude Code stream-json
// (`claude -p --output-format stream-json --verbose`, with or without
// `--include-partial-messages`, and the tap lines of the stdin/stdout
// control protocol) to canonical events: dialect "claude-stream", raw
// sources claude.sdk.message and claude.sdk.permission (can_use_tool and
// the host's PermissionResult).
//
// Ids: the Claude session is the thread (ThreadID native from session_id;
// SessionID is the ingest session, known from the first frame). Claude has
// no turn id: a turn runs from a user input (the host's prompt on a tap
// line, or, when `-p` does not echo it, the first assistant frame) to its
// result, and its id is derived from the frame that opened it, so several
// turns get distinct ids. Content-block items are native from session +
// message id + block index, tool calls from the tool_use id, requests from
// request_id: stream_event partials, the full assistant message and the
// session log of the same session (package claudelog) agree on them.
//
// Partials: a streamed block opens its item at content_block_start and
// sends content.delta per delta; the complete assistant message, which
// Claude Code sends before content_block_stop, replaces the accumulated
// text (item.updated) and the stop completes the item, so text is never
// doubled. Tool items end with their tool_result (failed when is_error).
//
// Usage: result.usage is the turn's (Anthropic convention, folded with
// canonical.FoldUsage: cache reads and cache writes are their own
// buckets); modelUsage and total_cost_usd are cumulative over the CLI
// process, so each turn reports the difference from the previous result.
// thread.token-usage.updated carries the session total after each turn
// and, live, after each message_delta.
//
// Errors: result error_* subtypes and success with is_error (API errors)
// are runtime.error + turn.completed{failed}; api_retry is a warning.
// Undecodable frames are runtime.error{validation_error}, unknown kinds
// runtime.warning; nothing panics and nothing is dropped but keep_alive and
// message_stop (documented silent).
//
// The shared Transcript type holds the message, tool, plan and usage
// bookkeeping that package claudelog reuses.
//
// Speed: a frame, its message and its content blocks are flat objects,
// validated once and read by a scan of their members (scan.go, shared with
// claudelog) rather than by a decode of every nested layer; what the scan
// cannot read exactly as encoding/json would goes the encoding/json way.
// Map updates the state's maps and slices in place.
//
// Benchmark: about 126,000 frames/s per core on the recordings (go test
// -bench, this machine: 94 MB/s over the 302 frames of the claude-stream,
// claude-stream-partial and claude-control recordings, 1.6 MB and 12k
// allocations a pass; best of 4 on a shared 2-vCPU machine, so a lower
// bound). What is left is mostly the member scans, the second validation
// of each frame in canonical.NewRaw, the SHA-1 event ids and the decoding
// of init and result frames.
package claudestream

// Intro is the paragraph the generated docs/mapping page opens with.
const Intro = "Claude Agent SDK / Claude Code stream-json (`claude -p --output-format stream-json --verbose`, with or without `--include-partial-messages`), including tap lines of the stdin/stdout control protocol. Raw sources: `claude.sdk.message`, and `claude.sdk.permission` for can_use_tool requests and the host's PermissionResult. The Claude session is the thread (native id from session_id); a turn runs from a user input to its `result` and gets a derived id; content blocks are items with native ids from message id + block index (tool calls: tool_use id), so partials, the full message and the session log agree; usage follows the Anthropic convention (cache reads and writes are separate buckets), and modelUsage / total_cost_usd, which the CLI reports cumulatively, are turned into per-turn shares. Time is each frame's arrival: the CLI stamps only a few messages (tool results) with its own clock, and one session's events keep to one clock."
