// Package codexexec maps the `codex exec --json` stream (the Codex SDK's
// ThreadEvent JSONL, dialect "codex-exec") to canonical events.
//
// Ids: the thread id is the only provider id; items are "item_N" within a
// run, so item ids are scoped by thread and turn. Turns have no id: each
// turn.started derives one from its frame. The session is the ingest session.
//
// Usage: turn.completed carries the turn's usage (OpenAI convention: input
// includes cached); the adapter reports it on turn.completed and keeps a
// running thread total for thread.token-usage.updated.
//
// Items: exec often reports an item only when it completes; the adapter
// then opens it first, so every item has a start and an end. item.completed
// carries the final text (agent message, reasoning, command output); a
// todo_list item is also a turn.plan.updated.
//
// Errors: "error" lines that announce a reconnect ("Reconnecting... 2/5")
// are warnings, others runtime errors; turn.failed is runtime.error plus
// turn.completed{failed}.
package codexexec
