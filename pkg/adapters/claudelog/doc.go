// Package claudelog maps Claude Code session logs
// (`~/.claude/projects/<project>/<session>.jsonl`, and sub-agent
// transcripts `.../subagents/agent-*.jsonl`) to canonical events: dialect
// "claude-log", raw source "claude.session-log" (one log line per frame).
//
// The log holds the same Anthropic messages as the stream-json output of
// the session that wrote it, so the message, tool, plan and usage mapping
// is package claudestream's Transcript: the thread (native from
// sessionId), the content-block and tool item ids (native from message id
// + block index, and tool_use id) are the ones the stream of the same
// session gets.
//
// Turns: a turn runs from a user prompt (text, not a tool result, not
// isMeta or a compaction summary) to the main-line assistant message with
// a terminal stop_reason, or, in older logs that write no stop reason, to
// the next prompt; turn ids are derived from the prompt's line. The
// marker the CLI writes when the user interrupts ("[Request interrupted
// by user]") is no prompt: it ends the open turn interrupted. Nor are the
// lines older CLIs wrote for a local slash command (/clear: a caveat,
// <command-name>, <local-command-stdout>): they map as the
// system:local_command lines of later CLIs, outside turns. Sidechain
// (sub-agent) lines run inside the main turn, except in a sub-agent's own
// transcript, whose sidechain prompt opens its turns; their turn.started
// names the run (agentId), as the stream's task_started does (task_id),
// so that the projections count the run's tokens once when both are
// ingested.
//
// Usage: the log has no result. An assistant message split over several
// lines sharing message.id repeats its usage (refined as it streamed): the
// last line's counts, once; the turn's usage is the sum over its main-line
// messages, which equals the stream's result.usage of the same turn.
// Cost is not in the log.
//
// Time: a line's timestamp; a file-history snapshot has none of its own
// but the snapshot's (an update of one carries the original's, so not
// that); other lines without one are placed on the session's clock
// (adapter.Clock).
//
// Errors: an API error message (isApiErrorMessage) ends its turn failed
// with runtime.error; api_error retries are warnings; undecodable lines
// are runtime.error{validation_error}, unknown record types
// runtime.warning. Bookkeeping records (queue-operation, last-prompt,
// file-history-snapshot, attachment, ...) are thread.metadata.updated.
//
// Speed: a line is validated once and read by claudestream's scan of its
// members, as are its message and content blocks; Map updates the
// transcript in place.
//
// Benchmark: about 132,000 frames/s per core on the recordings (go test
// -bench, this machine: 157 MB/s over the claude-log recordings, 0.5 MB and
// 2.6k allocations a pass; best of 4 on a shared 2-vCPU machine, so a lower
// bound). Lines are large (1.2 KB on average): validating each (once, by
// jsonscan; canonical.NewRawChecked reuses the finding) is most of what is
// left.
package claudelog

// Intro is the paragraph the generated docs/mapping page opens with.
const Intro = "Claude Code session logs (`~/.claude/projects/<project>/<session>.jsonl`, and sub-agent transcripts), one line per frame, raw source `claude.session-log`. The messages are mapped by the same code as claude-stream, so the thread, content-block and tool item ids of a session's log equal those of its stream. A turn runs from a user prompt to the main-line assistant message with a terminal stop_reason (older logs: to the next prompt); an assistant message split over lines sharing message.id counts its (last) usage once, and a turn's usage is the sum over its messages. Bookkeeping records become thread.metadata.updated. Time is the line's timestamp, or for a file-history snapshot (a log's first line, as a rule) the time it was taken; a line without one (a summary, an update of a snapshot) is placed at its arrival shifted onto the log's clock, and before any line has given a time, at its arrival."
