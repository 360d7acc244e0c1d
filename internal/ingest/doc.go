// Package ingest reads agent frames from their sources (files, standard
// input, spawned agent processes) and publishes them unchanged to the RAW
// stream, each with its ingest session key and a gapless ordinal.
//
// A frame is one line without its newline; lines that hold only white
// space are not frames (as in `agentwire map`, so both number frames
// alike). Lines may be of any length and hold any bytes: broken JSON,
// invalid UTF-8 and 5 MB lines are published as they are (frames larger
// than a message go to the RAW_OBJECTS object store), and the normalizer
// turns them into error events.
//
// Session keys (they decide event ids, so they must be stable):
//
//	file   "file:" + the absolute path of the file (slashes)
//	stdin  "stdin:" + the start time, RFC 3339 with nanoseconds, UTC (unless --session)
//	exec   "exec:" + the command's base name + ":" + the start time, as for stdin (unless --session)
//	proxy  "proxy:" + the agent's base name + ":" + the start time, as for stdin (unless --session)
//
// `ingest proxy` puts itself between a controlling app and an agent that
// speaks JSON-RPC (or Claude's stream-json) over stdio: both directions go
// to one session, the agent's messages with Agentwire-Direction "agent",
// the app's with "client", numbered in the order they crossed the proxy
// (a message is queued just before it is forwarded, so an answer always
// follows what it answers). Its stderr lines and exit status are the
// diagnostic frames of exec. Frames pass through a bounded on-disk buffer
// (Spool), so NATS outages never slow the agent; what NATS has not stored
// when the proxy exits stays there, numbered, for the next proxy run or
// `ingest flush` to publish (ResumeSpools).
//
// Re-ingesting a file publishes the same message ids: JetStream drops them
// within its duplicate window, and the normalizer skips ordinals it has
// already mapped after that, so ingesting twice never duplicates events.
//
// # Diagnostic frames of exec
//
// `ingest exec` (and `ingest proxy`) adds frames of its own to the
// command's session, in the command's dialect, told apart from provider
// frames by an "agentwire" member that no provider uses:
//
//	{"agentwire":"model","model":"…"}          the first frame, when the command line of codex, claude, gemini or cursor-agent (or npx of one) names a model (ModelFromArgs)
//	{"agentwire":"stderr","line":"…"}          one per line of standard error
//	{"agentwire":"stderr","lineBase64":"…"}    the same, when the line is not valid UTF-8
//	{"agentwire":"exit","code":N}              the last frame: the exit status
//	{"agentwire":"exit","code":143,"signal":"SIGTERM"}   killed by a signal: 128+n and its name
//	{"agentwire":"exit","code":-1,"error":"…"}           the status could not be read
//
// Every adapter maps them alike (adapter.Diagnostic): the model frame to
// session.configured with config.model (codex exec never names its model,
// so this is what prices its turns), a stderr frame to a
// runtime.warning with the line, raw kept; the exit frame to
// session.exited with the exit code, after a runtime.error when the agent
// failed (a non-zero status that SIGINT or SIGTERM did not cause). Both
// are keyed by the session and the frame's ordinal like any other frame. Stdout and stderr lines get ordinals in the order
// ingest read them (one publisher goroutine), so their relative order is
// as close to the command's as two pipes allow.
//
// # Default log locations
//
// `ingest file` without a PATH reads the agent CLIs' own logs, when they
// exist: ~/.claude/projects (claude-log), $CODEX_HOME/sessions or
// ~/.codex/sessions (codex-rollout) and ~/.gemini/tmp (sniffed; see
// DefaultLocations for what Gemini CLI keeps there).
package ingest
