// Package codexappserver maps the Codex app-server's JSON-RPC stream
// (dialect "codex-app-server": `codex app-server --listen stdio://`, frames
// without "jsonrpc", bare or as tap lines {"dir","msg"}) to canonical
// events.
//
// Ids: threads, turns and items are native: the thread by thread id, the
// turn by thread and turn id (turn/started and turn/completed carry it only
// at turn.id), the item by thread, turn and item id. The rollout adapter
// scopes them the same way, so a thread seen live and through its rollout
// file gets the same canonical ids. Requests get an id derived from the
// frame that opens them; the JSON-RPC id is kept in providerRequestId. The
// agent's requests and the client's requests are separate JSON-RPC id
// spaces and are tracked apart. Global notifications (account/*,
// configWarning, fs/changed, process/*, ...) carry the ingest session only.
// Time is the frame's emittedAtMs; a frame without one (requests,
// responses) is placed at its arrival on the server's time line
// (adapter.Clock).
//
// Turns: turn/started opens, turn/completed closes with the TurnStatus
// mapped (inProgress at completion reads as interrupted); a failed turn's
// error (message, codexErrorInfo, additionalDetails) becomes a runtime.error
// and the completion's errorMessage. Items still open at the end of their
// turn are completed then.
//
// Usage: thread/tokenUsage/updated is cumulative per thread and maps to
// thread.token-usage.updated; turn/completed carries the turn's own usage,
// the difference of the thread totals across the turn.
//
// Errors: `error` with willRetry true is a runtime.warning (the turn goes
// on); otherwise runtime.error. Frames that are not JSON-RPC are
// validation errors; unknown methods are runtime.warning with raw.
//
// Requests: server requests open request.opened (user-input requests also
// user-input.requested); the client's response (tap dir client) resolves
// them with its decision; serverRequest/resolved resolves them when no
// answer was seen and is otherwise a silent confirmation.
//
// Benchmark: BenchmarkMap maps all the app-server recordings as one
// session per iteration: 133k frames/s per core on the recordings of codex
// 0.171.0 (go test -bench, this machine, best of 4), 51 MB/s. A tap line is decoded
// with its message in one pass, the ids of params are read by a scan, the
// session steps its state in place; what is left is the handlers' decoding
// of params (a second pass over them) and the SHA-1 of the derived ids.
package codexappserver

// Intro is the paragraph the generated mapping page opens with.
const Intro = "The Codex app-server speaks JSON-RPC 2.0 without the \"jsonrpc\" member over stdio; agentwire reads it bare or as tap lines that say who wrote each message. " +
	"Threads, turns and items keep Codex's own ids (scoped thread → turn → item), so the same thread read from its rollout file maps to the same canonical ids. " +
	"Agent→client requests (approvals, user input, dynamic tool calls, token refresh) open requests that the client's answer resolves with its decision; the two JSON-RPC directions are separate id spaces. " +
	"Usage is cumulative per thread on the wire; turn.completed carries the turn's share. Time is the frame's emittedAtMs; a frame without one (the client's requests and answers) is placed at its arrival shifted onto the server's clock, so that approval latencies and durations compare times of one clock."
