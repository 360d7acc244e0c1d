package geministream

import (
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Intro is the paragraph the generated docs/mapping page opens with.
const Intro = "Gemini CLI `--output-format stream-json` (raw source `gemini.stream-json`, provider `gemini`). " +
	"Each `init` is one CLI process: a recording of `gemini -p … && gemini -p … --resume latest` holds two, " +
	"and the second continues the first one's thread (the thread is Gemini's `session_id`, native; the canonical " +
	"session is the ingest session). There is no turn or message id on the wire: a turn runs from the user `message` " +
	"to `result` and takes its id from the frame that opened it; an assistant message item runs over consecutive " +
	"`delta` messages until a tool call or the turn's end, and `item.completed` carries its whole text. " +
	"`tool_use`/`tool_result` pair by `tool_id` (scoped by the session). `result.stats` is folded with the Gemini " +
	"convention: `input_tokens` is the whole prompt and `cached` part of it, `input` (the uncached part) is not read " +
	"twice, and what `total_tokens` counts beyond prompt and output (thoughts) is reasoning output. " +
	"Invalid JSON, or JSON without `type`, is `runtime.error` (validation_error); an unknown type is `runtime.warning`."

var (
	turnOpen   = []canonical.Kind{canonical.KindTurnStarted}
	closeMsg   = []canonical.Kind{canonical.KindItemCompleted}
	turnClosed = []canonical.Kind{canonical.KindItemCompleted, canonical.KindTurnCompleted}
)

func kinds(groups ...[]canonical.Kind) []canonical.Kind {
	var out []canonical.Kind
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

var rules = adapter.Rules{
	{
		Kind:  "init",
		Emits: kinds(turnClosed, []canonical.Kind{canonical.KindSessionStarted, canonical.KindThreadStarted, canonical.KindSessionConfigured}),
		Note: "session.started (with `resume` when the session_id was seen before: a `--resume` process), thread.started the first time a session_id is seen " +
			"(threadId native from session_id), session.configured{model, session_id}. A turn a previous process left open is closed as failed first",
	},
	{
		Kind:  "message",
		Emits: kinds(closeMsg, turnOpen, []canonical.Kind{canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindItemCompleted}),
		Note: "role user: opens the turn (id derived from this frame) and is a user_message item (content under `unknown`). " +
			"role assistant with delta: content.delta (assistant_text) on the open assistant_message item, started by the first delta (item id derived). " +
			"Assistant without delta: the whole message; it ends the item",
	},
	{
		Kind:  "tool_use",
		Emits: kinds(closeMsg, turnOpen, []canonical.Kind{canonical.KindItemStarted, canonical.KindTurnPlanUpdated, canonical.KindItemUpdated, canonical.KindRuntimeWarning}),
		Note: "ends the open assistant message; item.started keyed by tool_id (run_shell_command → command_execution, write_file/replace → file_change, " +
			"google_web_search → web_search, write_todos → plan (and turn.plan.updated from its todos), server__tool → mcp_tool_call, else dynamic_tool_call; parameters → data). " +
			"A repeated tool_use is item.updated; one after its result is a runtime.warning",
	},
	{
		Kind:  "tool_result",
		Emits: kinds(closeMsg, turnOpen, []canonical.Kind{canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindRuntimeWarning}),
		Note: "item.completed by tool_id: status success → completed, error → failed with error.message as detail; output → content " +
			"(command_output for shell commands). A result for a call never seen is opened first; a second result is a runtime.warning",
	},
	{
		Kind:  "error",
		Emits: []canonical.Kind{canonical.KindRuntimeWarning, canonical.KindRuntimeError},
		Note:  "severity warning → runtime.warning, otherwise runtime.error (provider_error); the turn goes on until `result`",
	},
	{
		Kind:  "result",
		Emits: kinds(closeMsg, turnOpen, []canonical.Kind{canonical.KindRuntimeError, canonical.KindItemCompleted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated}),
		Note: "ends the open message and tool calls (unfinished ones failed) and the turn: status success → completed, else runtime.error (provider_error, error.message) " +
			"and turn.completed{failed}. stats → usage (see above), models → modelUsage, duration_ms → durationMs; thread.token-usage.updated with the stream's running total",
	},
}
