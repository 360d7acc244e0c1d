package acp

import (
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Intro is the paragraph the generated docs/mapping page opens with.
const Intro = "Agent Client Protocol (JSON-RPC 2.0 over stdio) as Cursor (`agent acp`), Gemini CLI (`--experimental-acp`), " +
	"Claude Code (claude-code-acp) and other agents speak it: bare frames or tap lines `{\"dir\":…,\"msg\":…}`. Raw sources are " +
	"`cursor.acp.notification`, `cursor.acp.request` and `cursor.acp.response` whatever the agent; `raw.method` of a response is the " +
	"method of the request it answers and `raw.messageType` the frame's kind below. Provider: `--provider` when given; else the agent " +
	"the `initialize` response names in agentInfo (Gemini CLI → `gemini`, claude-code-acp → `claude`, codex → `codex`, any other → a slug " +
	"of its name); else `cursor`. The client's `initialize` request, the only frame before that answer, maps to no events, so that no " +
	"id is made under a provider that is about to change; its clientInfo and capabilities are reported with the answer. The canonical " +
	"session is the ingest session (one agent process); each ACP session is a thread (native id from its sessionId). A turn is a " +
	"`session/prompt` request and its response; its id is derived from the request frame and every session/update in between belongs " +
	"to it. Requests of each side are told apart by the tap `dir` (bare responses by which side has that id pending). Kinds prefixed " +
	"`client:` are the client's requests and notifications, `client-response:` its answers to the agent's requests; they are not " +
	"INVENTORY rows."

type kinds = []canonical.Kind

func join(groups ...kinds) kinds {
	var out kinds
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

var (
	closesText = kinds{canonical.KindItemCompleted}
	textItem   = kinds{canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindItemUpdated}
	toolItem   = kinds{canonical.KindItemStarted, canonical.KindItemUpdated, canonical.KindItemCompleted, canonical.KindRuntimeWarning, canonical.KindRuntimeError}
	turnEnd    = kinds{canonical.KindTurnStarted, canonical.KindItemCompleted, canonical.KindTurnCompleted}
	sessionUp  = kinds{canonical.KindItemCompleted, canonical.KindSessionStarted, canonical.KindThreadStarted, canonical.KindSessionStateChanged, canonical.KindSessionConfigured, canonical.KindRuntimeError}
	errorEmits = join(kinds{canonical.KindRuntimeError, canonical.KindAuthStatus, canonical.KindSessionStateChanged}, turnEnd)
	configured = kinds{canonical.KindSessionConfigured}
	threadSt   = kinds{canonical.KindThreadStateChanged}
	resolved   = kinds{canonical.KindRequestResolved}
	opened     = kinds{canonical.KindRequestOpened}
	promptEnd  = join(turnEnd, kinds{canonical.KindThreadTokenUsageUpdated, canonical.KindRuntimeWarning, canonical.KindRuntimeError})
)

const (
	textNote = "content.delta on the session's open text item, started by the first chunk (item id derived from that frame; " +
		"messageId → providerItemId, a new messageId is a new item); any other item, a permission request or the turn's end completes it " +
		"with its whole text. Non-text blocks (image, audio, resource) are item.updated with the block as data"
	promptNote = "ends the turn its request opened (a superseded turn ends with its own response): open text and tool items are completed " +
		"(tool calls the agent never finished: declined if the permission was rejected, failed if the turn did not complete), then " +
		"turn.completed{stopReason}. usage (unstable, cumulative over the session) is turned into the turn's share (a count that fell in some " +
		"bucket is a new agent process's: the turn's whole, added to the thread's); Gemini CLI's " +
		"_meta.quota.token_count (per prompt, Gemini convention) is read when there is no usage; thread.token-usage.updated follows. " +
		"A response to a prompt never seen (an excerpt) ends the open turn or opens one first"
	errorNote = "runtime.error, class by code (-32700/-32600/-32601/-32602 validation_error, -32603 and -32002 provider_error, " +
		"-32000 permission_error, -32800 unknown, other codes provider_error); for session/prompt also turn.completed " +
		"(cancelled for -32800, else failed, with the message); for authenticate auth.status{error}; for session/new|load|resume|fork " +
		"session.state.changed{error}"
)

func errorRule(code, name string) adapter.Rule {
	r := adapter.Rule{Kind: "error:" + code, Emits: errorEmits, Note: name + ": " + errorNote}
	if code == "-32601" {
		r.Emits = append(append(kinds{}, errorEmits...), canonical.KindRuntimeWarning)
		r.Note += "; an answer to a session/cancel sent as a request is a runtime.warning (the agent cannot cancel; EVENTS.md §5.1)"
	}
	return r
}

func stopRule(reason, state string) adapter.Rule {
	return adapter.Rule{Kind: "session/prompt:" + reason, Emits: promptEnd, Note: "turn.completed{" + state + ", stopReason " + reason + "}"}
}

func clientSilent(method, why string) adapter.Rule {
	return adapter.Rule{Kind: "client:" + method, Note: "no events: " + why}
}

const setterWhy = "what it changed is reported when the agent answers"

var rules = adapter.Rules{
	// Agent notifications (session/update and others).
	{Kind: "session/update:user_message_chunk", Emits: join(closesText, textItem), Note: "user_message item (content under `unknown`; agents echo prompts or replay history with it); " + textNote},
	{Kind: "session/update:agent_message_chunk", Emits: join(closesText, textItem), Note: "assistant_message item, content.delta assistant_text; " + textNote},
	{Kind: "session/update:agent_thought_chunk", Emits: join(closesText, textItem), Note: "reasoning item, content.delta reasoning_text; " + textNote},
	{Kind: "session/update:tool_call", Emits: join(closesText, toolItem), Note: "item.started keyed by toolCallId (native, scoped by the ACP session); a repeated tool_call for the same id is item.updated, never a second start. kind → item type (execute → command_execution, edit/delete/move → file_change, others → dynamic_tool_call), title → title, rawInput.command → command, locations/diffs → files; status completed/failed → item.completed at once; an update after the end is a runtime.warning"},
	{Kind: "session/update:tool_call_update", Emits: join(closesText, toolItem), Note: "item.updated (pending/in_progress) or item.completed (completed; failed → failed, or declined when its permission was rejected) with content text / rawOutput → content (command_output for execute); an update of a call never announced opens it first"},
	{Kind: "session/update:plan", Emits: kinds{canonical.KindTurnPlanUpdated}, Note: "turn.plan.updated with every entry (pending/in_progress/completed; priority in raw)"},
	{Kind: "session/update:plan_update", Emits: kinds{canonical.KindTurnPlanUpdated}, Note: "unstable: items → steps; markdown content or file uri → explanation"},
	{Kind: "session/update:plan_removed", Emits: kinds{canonical.KindTurnPlanUpdated}, Note: "unstable: an empty plan"},
	{Kind: "session/update:available_commands_update", Emits: configured, Note: "session.configured{availableCommands}"},
	{Kind: "session/update:current_mode_update", Emits: configured, Note: "session.configured{currentModeId}"},
	{Kind: "session/update:config_option_update", Emits: configured, Note: "session.configured{configOptions}"},
	{Kind: "session/update:session_info_update", Emits: kinds{canonical.KindThreadMetadataUpdated}, Note: "thread.metadata.updated: title → name, updatedAt → metadata"},
	{Kind: "session/update:usage_update", Emits: kinds{canonical.KindThreadTokenUsageUpdated}, Note: "thread.token-usage.updated with the thread's usage so far and size → modelContextWindow (used and cost stay in raw: ACP gives no token breakdown)"},
	{Kind: "session/update:notice", Emits: kinds{canonical.KindRuntimeWarning, canonical.KindRuntimeError}, Note: "severity error → runtime.error (provider_error), info/warning → runtime.warning; title: description → message"},
	{Kind: "session/update:compaction_update", Emits: join(closesText, toolItem, threadSt), Note: "context_compaction item keyed by compactionId: in_progress starts it, completed/failed/cancelled complete it (failed for the latter two) with the summary; completed also thread.state.changed{compacted}"},
	{Kind: "session/update:compaction_summary_chunk", Emits: join(closesText, kinds{canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindRuntimeWarning}), Note: "content.delta (unknown) on the compaction item"},
	{Kind: "session/update:subagent_update", Emits: kinds{canonical.KindTaskStarted, canonical.KindTaskProgress}, Note: "unstable: task.started the first time a child sessionId is named (taskType subagent), task.progress after; description or title → description"},
	{Kind: "session/update:session_message", Emits: join(closesText, kinds{canonical.KindItemStarted, canonical.KindItemUpdated}), Note: "unstable: a text item (type unknown: the sender is another session) whose content is replaced; completed like chunks"},
	{Kind: "session/update:session_message_chunk", Emits: join(closesText, textItem), Note: "unstable: content.delta (unknown) on that item; " + textNote},
	{Kind: "elicitation/complete", Emits: kinds{canonical.KindUserInputResolved}, Note: "user-input.resolved with the params (a URL elicitation finished out of band)"},
	{Kind: "$/cancel_request", Emits: kinds{canonical.KindRequestResolved, canonical.KindRuntimeWarning}, Note: "the agent withdraws one of its requests: request.resolved{decision cancelled}; naming none pending is a runtime.warning"},
	{Kind: "auth/status_update", Emits: kinds{canonical.KindAuthStatus}, Note: "unstable: auth.status, state → output (unauthenticated → error)"},

	// Agent requests.
	{Kind: "session/request_permission", Emits: join(closesText, kinds{canonical.KindItemStarted, canonical.KindRequestOpened}), Note: "request.opened (request id derived from the frame; JSON-RPC id → providerRequestId; itemId = the tool call's) typed by the tool call's kind: execute → command_execution_approval, edit/delete/move → file_change_approval, others unknown; options in args. A tool call not announced before (Gemini CLI) is started here"},
	{Kind: "fs/read_text_file", Emits: opened, Note: "request.opened{dynamic_tool_call}: the client reads a file for the agent; path → detail"},
	{Kind: "fs/write_text_file", Emits: opened, Note: "request.opened{dynamic_tool_call}: the client writes a file for the agent; path → detail"},
	{Kind: "terminal/create", Emits: opened, Note: "request.opened{dynamic_tool_call}; command → detail"},
	{Kind: "terminal/output", Emits: opened, Note: "request.opened{dynamic_tool_call}; terminalId → detail"},
	{Kind: "terminal/release", Emits: opened, Note: "request.opened{dynamic_tool_call}; terminalId → detail"},
	{Kind: "terminal/wait_for_exit", Emits: opened, Note: "request.opened{dynamic_tool_call}; terminalId → detail"},
	{Kind: "terminal/kill", Emits: opened, Note: "request.opened{dynamic_tool_call}; terminalId → detail"},
	{Kind: "mcp/message", Emits: opened, Note: "unstable: request.opened{dynamic_tool_call}, the client relays an MCP message; method → detail"},
	{Kind: "elicitation/create", Emits: kinds{canonical.KindRequestOpened, canonical.KindUserInputRequested}, Note: "request.opened{tool_user_input} and user-input.requested with the params (message, mode, schema)"},

	// Agent responses to client requests.
	{Kind: "initialize", Emits: configured, Note: "session.configured{protocolVersion, agentCapabilities, authMethods, agentInfo, and the client's clientInfo, clientCapabilities}; agentInfo decides the provider (see above)"},
	{Kind: "authenticate", Emits: kinds{canonical.KindAuthStatus}, Note: "auth.status{isAuthenticating false}: success (errors: see error:*)"},
	{Kind: "logout", Emits: kinds{canonical.KindAuthStatus}, Note: "auth.status{output [logged out]}"},
	{Kind: "session/new", Emits: sessionUp, Note: "session.started, thread.started (threadId native from sessionId, which is also providerSessionId), session.state.changed{ready}, session.configured{modes, models, configOptions} when present"},
	{Kind: "session/load", Emits: sessionUp, Note: "as session/new with resume{sessionId} (the sessionId of the request); the history the agent replays before answering is mapped as it comes (outside any turn), and the answer completes its last text item"},
	{Kind: "session/resume", Emits: sessionUp, Note: "as session/load"},
	{Kind: "session/fork", Emits: sessionUp, Note: "unstable: as session/new for the new sessionId, resume{forkedFrom}"},
	{Kind: "session/list", Emits: kinds{canonical.KindThreadMetadataUpdated, canonical.KindSessionConfigured}, Note: "thread.metadata.updated per listed session (title → name, cwd/updatedAt → metadata); an empty list is session.configured{sessions []}"},
	{Kind: "session/delete", Emits: join(closesText, threadSt), Note: "thread.state.changed{closed, deleted}; an open text item of the session is completed first"},
	{Kind: "session/close", Emits: join(closesText, threadSt), Note: "thread.state.changed{closed}; an open text item of the session is completed first"},
	{Kind: "session/set_mode", Emits: configured, Note: "session.configured{currentModeId} from the request"},
	{Kind: "session/set_model", Emits: configured, Note: "session.configured{currentModelId} from the request (not in the schema; Gemini CLI has it)"},
	{Kind: "session/set_config_option", Emits: configured, Note: "session.configured{configOptions}"},
	{Kind: "session/prompt", Emits: promptEnd, Note: promptNote},
	stopRule("end_turn", "completed"),
	stopRule("max_tokens", "completed"),
	stopRule("max_turn_requests", "completed"),
	stopRule("refusal", "completed"),
	stopRule("cancelled", "cancelled"),
	{Kind: "providers/list", Emits: configured, Note: "unstable: session.configured{providers}"},
	{Kind: "providers/set", Emits: configured, Note: "unstable: session.configured{providers/set: the request's params}"},
	{Kind: "providers/disable", Emits: configured, Note: "unstable: session.configured{providers/disable: the request's params}"},
	{Kind: "auth/status", Emits: kinds{canonical.KindAuthStatus}, Note: "unstable: auth.status, state → output"},
	{Kind: "session/archive", Emits: threadSt, Note: "unstable: thread.state.changed{archived}"},
	{Kind: "session/unarchive", Emits: threadSt, Note: "unstable: thread.state.changed{idle, unarchived}"},
	{Kind: "session/status", Emits: threadSt, Note: "unstable: thread.state.changed: open → active, otherwise idle; status in detail"},
	{Kind: "session/set_title", Emits: kinds{canonical.KindThreadMetadataUpdated}, Note: "unstable: thread.metadata.updated{name}"},
	errorRule("-32700", "Parse error"),
	errorRule("-32600", "Invalid request"),
	errorRule("-32601", "Method not found"),
	errorRule("-32602", "Invalid params"),
	errorRule("-32603", "Internal error (claude-code-acp answers a failed or denied turn with it)"),
	errorRule("-32800", "Request cancelled"),
	errorRule("-32000", "Authentication required"),
	errorRule("-32002", "Resource not found"),
	{Kind: "error", Emits: errorEmits, Note: "an error code ACP does not name (Gemini CLI answers a failed prompt with the API's HTTP status, 429 or 500): " + errorNote},
	{Kind: "response", Emits: kinds{canonical.KindRuntimeWarning}, Note: "a result for no pending request (an excerpt) that is not a prompt result: runtime.warning with raw"},

	// The client's requests and notifications.
	clientSilent("initialize", "the answer names the agent and so the provider of every id; the request's clientInfo and capabilities are reported with it"),
	{Kind: "client:authenticate", Emits: kinds{canonical.KindAuthStatus}, Note: "auth.status{isAuthenticating true}"},
	{Kind: "client:session/new", Emits: kinds{canonical.KindSessionStateChanged}, Note: "session.state.changed{starting}"},
	{Kind: "client:session/load", Emits: kinds{canonical.KindSessionStateChanged}, Note: "session.state.changed{starting}"},
	{Kind: "client:session/resume", Emits: kinds{canonical.KindSessionStateChanged}, Note: "session.state.changed{starting}"},
	{Kind: "client:session/fork", Emits: kinds{canonical.KindSessionStateChanged}, Note: "session.state.changed{starting}"},
	{Kind: "client:session/prompt", Emits: join(closesText, kinds{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted}), Note: "turn.started (turn id derived from this frame) and the prompt as a user_message item (text blocks → content `unknown`, blocks → data). A prompt while another is in flight starts a new turn; the superseded one ends with its own response (stopReason cancelled → turn.completed{cancelled})"},
	{Kind: "client:session/cancel", Emits: join(closesText, kinds{canonical.KindTurnAborted}), Note: "turn.aborted for the open turn; the turn ends with the prompt's response (cancelled)"},
	{Kind: "client:$/cancel_request", Emits: kinds{canonical.KindTurnAborted, canonical.KindRuntimeWarning}, Note: "for a pending session/prompt: turn.aborted; otherwise runtime.warning"},
	clientSilent("logout", setterWhy),
	clientSilent("session/list", setterWhy),
	clientSilent("session/delete", setterWhy),
	clientSilent("session/close", setterWhy),
	clientSilent("session/set_mode", setterWhy+" (the requested mode is kept until then)"),
	clientSilent("session/set_model", setterWhy+" (the requested model is kept until then)"),
	clientSilent("session/set_config_option", setterWhy),
	clientSilent("session/archive", setterWhy),
	clientSilent("session/unarchive", setterWhy),
	clientSilent("session/status", setterWhy),
	clientSilent("session/set_title", setterWhy),
	clientSilent("providers/list", setterWhy),
	clientSilent("providers/set", setterWhy+" (the params are kept until then)"),
	clientSilent("providers/disable", setterWhy+" (the params are kept until then)"),
	clientSilent("auth/status", setterWhy),

	// The client's answers to agent requests.
	{Kind: "client-response:session/request_permission", Emits: resolved, Note: "request.resolved: selected → the option's kind (allow_once, allow_always, reject_once, reject_always; the optionId when the option is unknown), cancelled → cancelled; resolution = the outcome. A reject or cancel marks the tool call declined. An error answer is decision error"},
	{Kind: "client-response:fs/read_text_file", Emits: resolved, Note: "request.resolved{ok, the content as resolution}; an error answer is decision error"},
	{Kind: "client-response:fs/write_text_file", Emits: resolved, Note: "request.resolved{ok}; an error answer is decision error"},
	{Kind: "client-response:terminal/create", Emits: resolved, Note: "request.resolved{ok, terminalId in resolution}"},
	{Kind: "client-response:terminal/output", Emits: resolved, Note: "request.resolved{ok, output and exitStatus in resolution}"},
	{Kind: "client-response:terminal/release", Emits: resolved, Note: "request.resolved{ok}"},
	{Kind: "client-response:terminal/wait_for_exit", Emits: resolved, Note: "request.resolved{ok, exit status in resolution}"},
	{Kind: "client-response:terminal/kill", Emits: resolved, Note: "request.resolved{ok}"},
	{Kind: "client-response:mcp/message", Emits: resolved, Note: "request.resolved{ok, the MCP answer in resolution}"},
	{Kind: "client-response:elicitation/create", Emits: kinds{canonical.KindRequestResolved, canonical.KindUserInputResolved}, Note: "request.resolved{action} and user-input.resolved with the answer"},
	{Kind: "client-response", Emits: kinds{canonical.KindRuntimeWarning}, Note: "an answer to no pending agent request: runtime.warning with raw"},
}
