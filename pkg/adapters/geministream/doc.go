// Package geministream maps Gemini CLI `--output-format stream-json` events
// (dialect "gemini-stream", raw source "gemini.stream-json", provider
// "gemini") to canonical events.
//
// Ids: the only provider ids are the session_id of `init` (the thread,
// native; it is also providerRefs.providerSessionId) and tool_id (items,
// native, scoped by the session). The canonical session is the ingest
// session. Turns and messages have no id on the wire: a turn takes its id
// from the frame that opened it (the user message, or whatever frame
// arrived first in an excerpt), an assistant message from its first delta.
//
// Processes: every `init` is one CLI process. A recording may hold two
// processes' output joined (`gemini -p … && gemini -p … --resume latest`):
// the second init names the same session_id, so it is a session.started
// with `resume` and continues the same thread; a turn the first process
// left open (no result) is closed as failed.
//
// Turns and items: user `message` opens the turn; assistant `message`
// frames with delta:true stream into one assistant_message item
// (content.delta per frame) that completes, with its whole text, when a
// tool call starts or the turn ends; `tool_use`/`tool_result` are one item
// per tool_id (status error → failed). `result` ends the turn: success →
// completed, otherwise runtime.error (provider_error) plus
// turn.completed{failed}. `error` frames are runtime.warning or
// runtime.error by severity and do not end the turn.
//
// Usage: result.stats is folded with canonical.GeminiUsage. Gemini reports
// the whole prompt (input_tokens), its cached part (cached) and its
// uncached part (input); input_tokens and cached are read and input is
// not, so nothing is counted twice. Gemini 0.61 does not report thoughts
// apart, but total_tokens counts them: the excess of total_tokens over
// input_tokens+output_tokens is taken as reasoning output, so the
// canonical total equals Gemini's. Per-model stats become modelUsage;
// thread.token-usage.updated carries the running total of the stream.
//
// Errors: invalid JSON, or JSON without `type`, is runtime.error
// (validation_error) with the frame kept as raw; an unknown type is
// runtime.warning. Gemini's `--output-format json` (one pretty-printed
// document, not JSONL) is not this dialect: read line by line, every line
// is a validation error.
//
// Speed: an event is validated once and read by a scan of its members
// (scan.go; anything it cannot read exactly as encoding/json would goes the
// encoding/json way); stats are folded without a JSON round trip; Map
// updates the state in place.
//
// Benchmark: about 264,000 frames/s per core on the recordings (go test
// -bench, this machine: 47 MB/s over the gemini-stream recordings, 0.2 MB
// and 1.3k allocations a pass; best of 4 on a shared 2-vCPU machine, so a
// lower bound).
package geministream
