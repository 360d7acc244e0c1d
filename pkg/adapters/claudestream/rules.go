package claudestream

import (
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

func k(kinds ...canonical.Kind) []canonical.Kind { return kinds }

const (
	kTurnStarted = canonical.KindTurnStarted
	kTurnDone    = canonical.KindTurnCompleted
	kUsage       = canonical.KindThreadTokenUsageUpdated
	kStarted     = canonical.KindItemStarted
	kUpdated     = canonical.KindItemUpdated
	kCompleted   = canonical.KindItemCompleted
	kDelta       = canonical.KindContentDelta
	kPlan        = canonical.KindTurnPlanUpdated
	kState       = canonical.KindSessionStateChanged
	kConfigured  = canonical.KindSessionConfigured
	kOpened      = canonical.KindRequestOpened
	kResolved    = canonical.KindRequestResolved
	kError       = canonical.KindRuntimeError
	kWarning     = canonical.KindRuntimeWarning
)

// Shared rule emits, reused by claude-log for the same messages.
var (
	// AssistantEmits are the events an assistant message maps to.
	AssistantEmits = k(kTurnStarted, kStarted, kUpdated, kCompleted, kPlan)
	// UserEmits are the events a user message maps to.
	UserEmits = k(kTurnStarted, kStarted, kUpdated, kCompleted)
	// ResultEmits are the events a result maps to.
	ResultEmits = k(kError, kTurnStarted, kCompleted, kTurnDone, kUsage)
)

// Notes shared with claude-log.
const (
	AssistantNote = "Each content block is an item. Claude Code writes one message as several frames sharing message.id, one block each: a block's index is its position in the message, and its item id is native from session + message id + index (tool_use blocks: from the tool_use id), so partials, the full message and the session log agree. text → assistant_message (content.assistant_text), thinking → reasoning (reasoning_text): item.started + item.completed, or — when stream_event partials opened the block — item.updated with the authoritative text (content_block_stop completes it), never a second copy. tool_use → item.started of the tool's type (Bash → command_execution with command; Edit/Write/MultiEdit/NotebookEdit → file_change with files; mcp__* → mcp_tool_call; WebSearch/WebFetch → web_search; TodoWrite/TaskCreate/TaskUpdate → plan plus turn.plan.updated; Task/Agent → collab_agent_tool_call; others → dynamic_tool_call); the tool_result completes it. parent_tool_use_id → parentItemId. A synthetic API-error message (error set) is a failed assistant_message. Opens an implicit turn when none is open (`-p` does not echo the prompt). The id of a turn's first assistant message is its turn.completed's providerRefs.providerTurnId: Claude names no turns, and the stream and the session log of one run agree on it. A message without content blocks (not seen from Claude) is a runtime.warning, so that its frame yields an event."
	UserNote      = "tool_result blocks complete their tool item (failed when is_error; Bash output → content.command_output, file changes → file_change_output, others → detail; tool_use_result kept in data). Text is a user_message item (id native from uuid, else derived). A prompt opens a turn."
)

var rules = adapter.Rules{
	{Kind: "assistant", Emits: append(k(kUsage), AssistantEmits...), Note: AssistantNote + " A message whose usage (message_start's, in a stream) is new to the turn is followed by thread.token-usage.updated with the turn's usage so far (turn, turnModelUsage, the turn's provider id) and the session total including it: a stream cut off before its result states no other. A sub-agent's message (parent_tool_use_id) inside a turn counts in the turn's breakdown by model (turnModelUsage) and not in its usage or the session total, as the result's modelUsage and usage count it."},
	{Kind: "user", Emits: UserEmits, Note: UserNote + " In the stream, the host's prompt (a client tap line) opens a turn when none is open; a message sent while a turn runs joins it."},
	{Kind: "user:replay", Emits: UserEmits, Note: "As user; a replayed top-level prompt opens a turn when none is open."},
	{Kind: "stream_event", Emits: k(kTurnStarted, kState, kStarted, kUpdated, kCompleted, kDelta, kUsage), Note: "message_start → session.state.changed{running}; content_block_start → item.started (text/thinking: id from message id + index; tool_use/server_tool_use/mcp_tool_use: from the tool_use id, typed by tool name); content_block_delta text_delta → content.delta assistant_text, thinking_delta → reasoning_text, input_json_delta → content.delta unknown (the tool input as generated), signature_delta → item.updated; content_block_stop → item.completed for text/thinking once the full assistant message gave the final text (else item.updated and the message completes it), item.updated for tool calls (their tool_result ends them); message_delta → thread.token-usage.updated (the message's final usage → last, the running session total, and the open turn's usage so far → turn, by model → turnModelUsage, with the turn's provider id); a sub-agent's (parent_tool_use_id) counts in turnModelUsage only; message_stop → none (framing)."},
	{Kind: "result:success", Emits: ResultEmits, Note: "turn.completed{completed} with usage (Anthropic convention: cache_read → cachedInputTokens, cache_creation → cacheWriteInputTokens), stop_reason, duration_ms, and the turn's share of modelUsage and total_cost_usd (the CLI reports those cumulatively over the session: the difference from the previous result); then thread.token-usage.updated with the session total (each Claude session's own: a frame naming another session_id starts that thread's total from zero, or from its own when the frames come back to it). is_error (API errors come as success + is_error) → runtime.error + turn.completed{failed}. Tool calls left open are completed as failed first, but those of a background sub-agent run still going when the turn completed: they outlive it. A result while a turn is set aside (system:init) ends that turn instead, the oldest first; its modelUsage was read when it was written, after the next turn began, so the turn's share of the model its own messages ran on is its usage, and the rest of that model's count is the next result's turn's; neither turn states that model's cost, which cannot be split without prices (the views price it)."},
	{Kind: "result:error_during_execution", Emits: ResultEmits, Note: "runtime.error (provider_error, errors[] joined) + turn.completed{failed} with usage and cost"},
	{Kind: "result:error_max_turns", Emits: ResultEmits, Note: "runtime.error + turn.completed{failed}"},
	{Kind: "result:error_max_budget_usd", Emits: ResultEmits, Note: "runtime.error + turn.completed{failed}"},
	{Kind: "result:error_max_structured_output_retries", Emits: ResultEmits, Note: "runtime.error + turn.completed{failed}"},
	{Kind: "system:init", Emits: k(canonical.KindItemCompleted, canonical.KindThreadStarted, kConfigured), Note: "thread.started the first time a session_id is seen (the Claude session is the thread; id native from session_id), then session.configured with every member (model, tools, permissionMode, mcp_servers, skills, plugins, ...). The model is remembered for turn.started. An init of the same session that follows a sub-agent run's end (task_notification) while a turn the model has answered is open sets that turn aside, still open, for its result: `-p` writes a turn's result only after its background sub-agents' notification has run a turn of its own. Its items still open are completed (but a background run's tool calls), and the frames that follow are the next turn's."},
	{Kind: "system:status", Emits: k(kState), Note: "session.state.changed{running} with status (requesting, compacting) as reason and permissionMode as detail; a cleared status outside a turn is ready"},
	{Kind: "system:compact_boundary", Emits: k(canonical.KindThreadStateChanged), Note: "thread.state.changed{compacted} with compact_metadata"},
	{Kind: "system:hook_started", Emits: k(canonical.KindHookStarted), Note: "hook_id, hook_name, hook_event"},
	{Kind: "system:hook_progress", Emits: k(canonical.KindHookProgress), Note: "output, stdout, stderr"},
	{Kind: "system:hook_response", Emits: k(canonical.KindHookCompleted), Note: "outcome (success/error/cancelled), exit_code, output"},
	{Kind: "tool_progress", Emits: k(canonical.KindToolProgress), Note: "tool_use_id, tool_name, elapsed_time_seconds; itemId of the open tool call"},
	{Kind: "tool_use_summary", Emits: k(canonical.KindToolSummary), Note: "summary, preceding_tool_use_ids"},
	{Kind: "auth_status", Emits: k(canonical.KindAuthStatus), Note: "isAuthenticating, output, error"},
	{Kind: "system:task_started", Emits: k(canonical.KindTaskStarted), Note: "task_id, description, task_type (or subagent_type); itemId of the launching tool call when open. The run is remembered with the open turn: after that turn ended (a run in the background), its frames (parent_tool_use_id), task events and tool calls belong to that turn and open none"},
	{Kind: "system:task_progress", Emits: k(canonical.KindTaskProgress), Note: "description, usage, last_tool_name"},
	{Kind: "system:task_notification", Emits: k(canonical.KindTaskCompleted), Note: "status completed/failed/stopped, summary, usage; the run is over"},
	{Kind: "system:task_updated", Emits: k(canonical.KindTaskProgress), Note: "task.progress with the patch's description, error or status; the terminal status comes again as task_notification, which is where task.completed comes from"},
	{Kind: "system:background_tasks_changed", Emits: k(canonical.KindTaskProgress), Note: "task.progress of the pseudo-task `background` (the list itself stays in raw)"},
	{Kind: "system:files_persisted", Emits: k(canonical.KindFilesPersisted), Note: "files[] (filename, file_id) and failed[]"},
	{Kind: "system:api_retry", Emits: k(kWarning), Note: "runtime.warning: the API call failed and is retried (attempt, max_retries, error_status); the turn goes on"},
	{Kind: "system:control_request_progress", Emits: k(kState), Note: "session.state.changed{running}, reason control_request_progress, status as detail"},
	{Kind: "system:model_refusal_fallback", Emits: k(canonical.KindModelRerouted), Note: "model.rerouted original_model → fallback_model, reason refusal; later turns use the fallback model"},
	{Kind: "system:model_refusal_no_fallback", Emits: k(kError), Note: "runtime.error (provider_error) with the refusal content"},
	{Kind: "system:local_command_output", Emits: k(kStarted, kCompleted), Note: "a completed command_execution item (title local command, byUser: the user ran it, not the agent) with the output as content.command_output"},
	{Kind: "system:plugin_install", Emits: k(kConfigured, canonical.KindConfigWarning), Note: "session.configured{pluginInstall}; status failed → config.warning"},
	{Kind: "system:thinking_tokens", Emits: k(kState), Note: "session.state.changed{running}, reason thinking, with the estimate (progress only, not billed usage)"},
	{Kind: "system:session_state_changed", Emits: k(kState), Note: "idle → ready, running → running, requires_action → waiting"},
	{Kind: "system:worker_shutting_down", Emits: k(canonical.KindSessionExited), Note: "session.exited{graceful, recoverable} with the reason"},
	{Kind: "system:commands_changed", Emits: k(kConfigured), Note: "session.configured with the new commands"},
	{Kind: "system:notification", Emits: k(kState), Note: "session.state.changed (state unchanged), reason notification, text as detail"},
	{Kind: "system:memory_recall", Emits: k(kConfigured), Note: "session.configured{memoryRecall}: memories loaded into the context"},
	{Kind: "system:elicitation_complete", Emits: k(canonical.KindUserInputResolved), Note: "user-input.resolved for the MCP elicitation"},
	{Kind: "system:permission_denied", Emits: k(kOpened, kResolved), Note: "a permission the CLI denied without asking the host: request.opened (type by tool) + request.resolved{deny}, request id native from the tool_use id"},
	{Kind: "system:mirror_error", Emits: k(kWarning), Note: "runtime.warning: the session mirror failed; the session goes on"},
	{Kind: "system:informational", Emits: k(kState, kWarning), Note: "level warning → runtime.warning; other levels → session.state.changed with the content as detail"},
	{Kind: "conversation_reset", Emits: k(kError, kTurnStarted, kCompleted, kTurnDone, canonical.KindThreadStateChanged, canonical.KindThreadStarted), Note: "an open turn ends cancelled; thread.state.changed{closed} for the old conversation, thread.started for new_conversation_id"},
	{Kind: "system:session_writes_lost", Emits: k(kError), Note: "runtime.error: transcript writes were lost"},
	{Kind: "rate_limit_event", Emits: k(canonical.KindAccountRateLimitsUpdated), Note: "a rate-limit observation: rateLimits = rate_limit_info; one window named by rateLimitType with status, resetsAt (Unix seconds), utilization as usedPercent; overageStatus as a second window"},
	{Kind: "prompt_suggestion", Emits: k(canonical.KindThreadMetadataUpdated), Note: "thread.metadata.updated{promptSuggestion}"},
	{Kind: "active_goal", Emits: k(canonical.KindThreadMetadataUpdated), Note: "thread.metadata.updated{activeGoal}"},
	{Kind: "keep_alive", Note: "none: a keep-alive says nothing (documented silent frame)"},
	{Kind: "control_request:hook_callback", Emits: k(kOpened), Note: "request.opened{unknown} for the SDK hook callback (callback_id); the host's control_response resolves it"},
	{Kind: "control_request:mcp_message", Emits: k(kOpened), Note: "request.opened for the SDK MCP server message: tools/call → dynamic_tool_call, other methods unknown"},
	{Kind: "control_request:elicitation", Emits: k(kOpened, canonical.KindUserInputRequested), Note: "request.opened{tool_user_input} + user-input.requested with the elicitation"},
	{Kind: "control_request:request_user_dialog", Emits: k(kOpened, canonical.KindUserInputRequested), Note: "request.opened{tool_user_input} + user-input.requested with the dialog"},
	{Kind: "control_request:can_use_tool", Emits: k(kOpened, canonical.KindUserInputRequested), Note: "request.opened: Bash → command_execution_approval, Edit/Write/MultiEdit/NotebookEdit → file_change_approval, AskUserQuestion → tool_user_input (+ user-input.requested with its questions), others unknown; request id native from request_id, itemId of the tool call; args = the request"},
	{Kind: "canUseTool", Emits: k(kOpened, canonical.KindUserInputRequested), Note: "the SDK callback a can_use_tool control request invokes: mapped as control_request:can_use_tool (raw source claude.sdk.permission)"},
	{Kind: "control_response:success", Emits: k(kOpened, kResolved, canonical.KindUserInputResolved, kConfigured), Note: "from the host (client tap line, or a bare frame answering an open request): request.resolved with decision allow/deny/deny-interrupt (or answered) and the response as resolution; AskUserQuestion/elicitation answers → user-input.resolved. From the CLI (answering a host request): session.configured with the response members (initialize: commands, agents, models, account) and controlRequest = the request subtype"},
	{Kind: "control_response:error", Emits: k(kOpened, kResolved, kError), Note: "from the host: request.resolved{error}; from the CLI: runtime.error (provider_error)"},
	{Kind: "permission_result:allow", Emits: k(kOpened, kResolved, canonical.KindUserInputResolved), Note: "the host's PermissionResult allow (updatedInput, updatedPermissions): request.resolved{allow} (raw source claude.sdk.permission)"},
	{Kind: "permission_result:deny", Emits: k(kOpened, kResolved, canonical.KindUserInputResolved), Note: "PermissionResult deny (message, interrupt): request.resolved{deny}, or deny-interrupt when interrupt is set"},
	{Kind: "control_cancel_request", Emits: k(kOpened, kResolved), Note: "request.resolved{cancelled} for the open request with that request_id (opened first if never seen)"},
	// Host→CLI requests, seen on tap lines; not INVENTORY rows.
	{Kind: "control_request:initialize", Emits: k(canonical.KindSessionStarted), Note: "host→CLI: session.started; the CLI's answer configures the session"},
	{Kind: "control_request:interrupt", Emits: k(canonical.KindTurnAborted, kState), Note: "host→CLI: turn.aborted for the open turn (its result still ends it)"},
	{Kind: "control_request:set_model", Emits: k(kConfigured), Note: "host→CLI: session.configured{request}"},
	{Kind: "control_request:set_permission_mode", Emits: k(kConfigured), Note: "host→CLI: session.configured{request}"},
}
