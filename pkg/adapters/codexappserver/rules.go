package codexappserver

import (
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

type kinds_ = []canonical.Kind

var (
	itemEvents  = kinds_{canonical.KindItemStarted, canonical.KindItemUpdated, canonical.KindItemCompleted}
	deltaEvents = kinds_{canonical.KindItemStarted, canonical.KindContentDelta}
	updateEvts  = kinds_{canonical.KindItemStarted, canonical.KindItemUpdated}
	metadata    = kinds_{canonical.KindThreadMetadataUpdated}
	configured  = kinds_{canonical.KindSessionConfigured}
	warning     = kinds_{canonical.KindRuntimeWarning}
	progressEvt = kinds_{canonical.KindToolProgress}
	stateEvt    = kinds_{canonical.KindThreadStateChanged}
	authEvt     = kinds_{canonical.KindAuthStatus}
	realtime    = kinds_{canonical.KindThreadRealtimeItemAdded}
	opened      = kinds_{canonical.KindRequestOpened}
	userInput   = kinds_{canonical.KindUserInputRequested, canonical.KindRequestOpened}
)

const deltaNote = "; the item (thread, turn and item id scoped) is opened first when its item/started was not seen"

var rules = adapter.Rules{
	// Notifications: errors and thread lifecycle.
	{Kind: "error", Emits: kinds_{canonical.KindRuntimeWarning, canonical.KindRuntimeError}, Note: "willRetry true → runtime.warning (Codex retries, the turn goes on); otherwise runtime.error classed by codexErrorInfo (unauthorized → permission_error, stream disconnects → transport_error, else provider_error). The turn ends only with turn/completed. Params kept as detail"},
	{Kind: "thread/started", Emits: kinds_{canonical.KindThreadStarted}, Note: "thread.id → threadId (native, so the rollout of the same thread gets the same id)"},
	{Kind: "thread/status/changed", Emits: stateEvt, Note: "idle → idle, active → active (activeFlags such as waitingOnApproval in detail), systemError → error, notLoaded → closed; the status object is detail"},
	{Kind: "thread/readState/changed", Emits: metadata, Note: "metadata.readState"},
	{Kind: "thread/archived", Emits: stateEvt, Note: "archived"},
	{Kind: "thread/unarchived", Emits: stateEvt, Note: "idle (no unarchived state; detail says unarchived)"},
	{Kind: "thread/closed", Emits: stateEvt, Note: "closed"},
	{Kind: "thread/deleted", Emits: stateEvt, Note: "closed (detail says deleted)"},
	{Kind: "thread/reverted", Emits: metadata, Note: "metadata.reverted (a rollback of the thread's history)"},
	{Kind: "thread/compacted", Emits: stateEvt, Note: "compacted (deprecated in favour of the contextCompaction item, still mapped)"},
	{Kind: "thread/name/updated", Emits: metadata, Note: "threadName → name"},
	{Kind: "thread/section/changed", Emits: metadata, Note: "metadata.section"},
	{Kind: "thread/attachment/updated", Emits: metadata, Note: "metadata.attachment"},
	{Kind: "thread/goal/updated", Emits: metadata, Note: "metadata.goal"},
	{Kind: "thread/goal/cleared", Emits: metadata, Note: "metadata.goal = null"},
	{Kind: "thread/prediction/updated", Emits: metadata, Note: "metadata.prediction"},
	{Kind: "thread/queue/changed", Emits: metadata, Note: "metadata.queue"},
	{Kind: "thread/project/updated", Emits: metadata, Note: "metadata.project"},
	{Kind: "thread/environment/connected", Emits: metadata, Note: "metadata.environment (connected)"},
	{Kind: "thread/environment/disconnected", Emits: metadata, Note: "metadata.environment (disconnected)"},
	{Kind: "thread/settings/updated", Emits: metadata, Note: "metadata.settings (the thread's model, approval policy, ...)"},
	{Kind: "thread/tokenUsage/updated", Emits: kinds_{canonical.KindThreadTokenUsageUpdated}, Note: "total → usage, last → last, modelContextWindow; OpenAI convention (input includes cached and cache-write). The thread total is remembered so turn/completed can carry the turn's own usage; within an open turn, its usage so far (the total's growth since it started) → turn"},
	{Kind: "project/changed", Emits: configured, Note: "global: config.project"},
	{Kind: "skills/changed", Emits: configured, Note: "global: config.skills"},
	{Kind: "app/list/updated", Emits: configured, Note: "global: config.apps (EVENTS.md leaves it open; the app list is session configuration)"},
	{Kind: "remoteControl/status/changed", Emits: configured, Note: "global: config.remoteControl"},
	// Turns.
	{Kind: "turn/started", Emits: kinds_{canonical.KindTurnStarted, canonical.KindRuntimeWarning}, Note: "the turn id is only at turn.id; turnId native, scoped by thread. A second turn/started of an open turn is a warning"},
	{Kind: "turn/completed", Emits: kinds_{canonical.KindRuntimeError, canonical.KindTurnStarted, canonical.KindItemCompleted, canonical.KindTurnCompleted}, Note: "turn.status completed → completed, interrupted → interrupted, failed → failed (runtime.error first, classed by codexErrorInfo, with message, codexErrorInfo and additionalDetails as detail; errorMessage on the completion), inProgress → interrupted (ended without a verdict). usage = thread total now − total at turn start, when usage was reported; durationMs. Items left open are completed (failed unless the turn completed); a turn never started is opened first"},
	{Kind: "turn/diff/updated", Emits: kinds_{canonical.KindTurnDiffUpdated}, Note: "diff → unifiedDiff"},
	{Kind: "turn/plan/updated", Emits: kinds_{canonical.KindTurnPlanUpdated}, Note: "explanation and plan steps (pending, inProgress, completed)"},
	{Kind: "turn/moderationMetadata", Emits: metadata, Note: "metadata.moderation"},
	{Kind: "hook/started", Emits: kinds_{canonical.KindHookStarted}, Note: "run.id → hookId, run.sourcePath (or handlerType) → hookName, run.eventName → hookEvent"},
	{Kind: "hook/completed", Emits: kinds_{canonical.KindHookCompleted}, Note: "run.status completed → success, failed/blocked → error, stopped → cancelled; statusMessage → output; durationMs"},
	// Items.
	{Kind: "item/started", Emits: itemEvents, Note: "item.started with the item (type mapped, see item:*); a second start of an open item is an update. Items are native ids scoped by thread and turn"},
	{Kind: "item/completed", Emits: itemEvents, Note: "item.completed, authoritative: final text per stream kind, exit code, files, status; an item never started is opened first"},
	{Kind: "item/agentMessage/delta", Emits: deltaEvents, Note: "content.delta assistant_text" + deltaNote},
	{Kind: "item/plan/delta", Emits: deltaEvents, Note: "content.delta plan_text" + deltaNote},
	{Kind: "item/commandExecution/outputDelta", Emits: deltaEvents, Note: "content.delta command_output" + deltaNote},
	{Kind: "item/fileChange/outputDelta", Emits: deltaEvents, Note: "content.delta file_change_output (deprecated, no longer emitted)" + deltaNote},
	{Kind: "item/reasoning/summaryTextDelta", Emits: deltaEvents, Note: "content.delta reasoning_summary_text with summaryIndex" + deltaNote},
	{Kind: "item/reasoning/textDelta", Emits: deltaEvents, Note: "content.delta reasoning_text with contentIndex" + deltaNote},
	{Kind: "item/reasoning/summaryPartAdded", Emits: updateEvts, Note: "item.updated marking a summary section boundary (summaryIndex in detail)" + deltaNote},
	{Kind: "item/commandExecution/terminalInteraction", Emits: updateEvts, Note: "item.updated, stdin → detail" + deltaNote},
	{Kind: "item/fileChange/patchUpdated", Emits: updateEvts, Note: "item.updated, changes[].path → files" + deltaNote},
	{Kind: "item/mcpToolCall/progress", Emits: kinds_{canonical.KindItemStarted, canonical.KindToolProgress}, Note: "tool.progress on the MCP call's item, message → summary" + deltaNote},
	{Kind: "item/autoApprovalReview/started", Emits: opened, Note: "the guardian's automatic review of an approval, as a request: request.opened (unknown type), request id native from reviewId"},
	{Kind: "item/autoApprovalReview/completed", Emits: kinds_{canonical.KindRequestOpened, canonical.KindRequestResolved}, Note: "request.resolved, review.status → decision (opened first if its start was not seen)"},
	{Kind: "autoApprovalReview/strictReviewRequired", Emits: warning, Note: "runtime.warning: approvals now need strict review"},
	{Kind: "serverRequest/resolved", Emits: kinds_{canonical.KindRequestResolved}, Note: "request.resolved of the pending server request with that JSON-RPC id, when the client's answer did not already resolve it; after the answer it only confirms it and is consumed without events"},
	// Client-invoked tools and processes (no thread).
	{Kind: "command/exec/outputDelta", Emits: progressEvt, Note: "global: tool.progress keyed by processId, decoded output → summary"},
	{Kind: "process/outputDelta", Emits: progressEvt, Note: "global: tool.progress keyed by processHandle, decoded output → summary"},
	{Kind: "process/exited", Emits: kinds_{canonical.KindTaskCompleted}, Note: "global: task.completed of the process handle, exit code 0 → completed, else failed; stdout → summary"},
	{Kind: "thread/search/partial", Emits: progressEvt, Note: "tool.progress of the search request"},
	{Kind: "fs/changed", Emits: progressEvt, Note: "global: tool.progress of the file watch"},
	{Kind: "fuzzyFileSearch/sessionUpdated", Emits: progressEvt, Note: "global: tool.progress of the search session"},
	{Kind: "fuzzyFileSearch/sessionCompleted", Emits: progressEvt, Note: "global: tool.progress of the search session (its end)"},
	{Kind: "externalAgentConfig/import/progress", Emits: kinds_{canonical.KindTaskProgress}, Note: "global: task.progress of the import"},
	{Kind: "externalAgentConfig/import/completed", Emits: kinds_{canonical.KindTaskCompleted}, Note: "global: task.completed of the import"},
	// MCP, account, auth, model.
	{Kind: "mcpServer/oauthLogin/completed", Emits: kinds_{canonical.KindMCPOAuthCompleted}, Note: "success, name, error"},
	{Kind: "mcpServer/startupStatus/updated", Emits: kinds_{canonical.KindMCPStatusUpdated}, Note: "the server's status, whole"},
	{Kind: "mcpServer/event/stream/notification", Emits: kinds_{canonical.KindMCPStatusUpdated}, Note: "an MCP server's streamed notification, whole"},
	{Kind: "account/updated", Emits: kinds_{canonical.KindAccountUpdated}, Note: "global: authMode, planType as the account"},
	{Kind: "account/rateLimits/updated", Emits: kinds_{canonical.KindAccountRateLimitsUpdated}, Note: "global: the snapshot whole, primary/secondary → windows (usedPercent, windowDurationMins, resetsAt)"},
	{Kind: "account/gatewayOAuth/changed", Emits: authEvt, Note: "global: status → output, pending → isAuthenticating"},
	{Kind: "account/login/completed", Emits: authEvt, Note: "global: login over, error when it failed"},
	{Kind: "modelProvider/authRecoveryStarted", Emits: authEvt, Note: "isAuthenticating true, message → output"},
	{Kind: "modelProvider/authRecoveryCompleted", Emits: authEvt, Note: "isAuthenticating false, message → output"},
	{Kind: "model/rerouted", Emits: kinds_{canonical.KindModelRerouted}, Note: "fromModel, toModel, reason"},
	{Kind: "model/verification", Emits: warning, Note: "runtime.warning: the account must be verified (verifications in detail)"},
	{Kind: "model/safetyBuffering/updated", Emits: warning, Note: "runtime.warning: the response is held for safety checks (detail whole)"},
	{Kind: "warning", Emits: warning, Note: "message"},
	{Kind: "guardianWarning", Emits: warning, Note: "message"},
	{Kind: "deprecationNotice", Emits: kinds_{canonical.KindDeprecationNotice}, Note: "global: summary, details"},
	{Kind: "configWarning", Emits: kinds_{canonical.KindConfigWarning}, Note: "global: summary, details, path, range"},
	{Kind: "windows/worldWritableWarning", Emits: warning, Note: "global platform warning"},
	{Kind: "windowsSandbox/setupCompleted", Emits: kinds_{canonical.KindSessionStateChanged, canonical.KindRuntimeWarning}, Note: "global: success → session ready; failure → session error and runtime.warning"},
	// Realtime.
	{Kind: "thread/realtime/started", Emits: kinds_{canonical.KindThreadRealtimeStarted}, Note: "realtimeSessionId"},
	{Kind: "thread/realtime/itemAdded", Emits: realtime, Note: "the realtime item whole"},
	{Kind: "thread/realtime/item/started", Emits: realtime, Note: "realtime items are not thread items: thread.realtime.item-added with the params whole"},
	{Kind: "thread/realtime/item/transcript/delta", Emits: realtime, Note: "thread.realtime.item-added with the transcript delta"},
	{Kind: "thread/realtime/item/completed", Emits: realtime, Note: "thread.realtime.item-added with the final realtime item"},
	{Kind: "thread/realtime/transcript/delta", Emits: realtime, Note: "thread.realtime.item-added with the transcript delta"},
	{Kind: "thread/realtime/transcript/done", Emits: realtime, Note: "thread.realtime.item-added with the transcript"},
	{Kind: "thread/realtime/sdp", Emits: realtime, Note: "thread.realtime.item-added with the SDP answer"},
	{Kind: "thread/realtime/outputAudio/delta", Emits: kinds_{canonical.KindThreadRealtimeAudioDelta}, Note: "audio whole (data and sample metadata)"},
	{Kind: "thread/realtime/error", Emits: kinds_{canonical.KindThreadRealtimeError}, Note: "message"},
	{Kind: "thread/realtime/closed", Emits: kinds_{canonical.KindThreadRealtimeClosed}, Note: "reason"},
	// Server requests: each opens a request, canonical id derived from the
	// frame, JSON-RPC id in providerRequestId.
	{Kind: "item/commandExecution/requestApproval", Emits: opened, Note: "command_execution_approval; reason (or command) → detail; on the item it gates"},
	{Kind: "item/fileChange/requestApproval", Emits: opened, Note: "file_change_approval; on the item it gates"},
	{Kind: "item/permissions/requestApproval", Emits: opened, Note: "unknown (a grant of sandbox permissions has no canonical request type); on the item it gates"},
	{Kind: "item/tool/requestUserInput", Emits: userInput, Note: "user-input.requested with the questions, and request.opened tool_user_input"},
	{Kind: "mcpServer/elicitation/request", Emits: userInput, Note: "an MCP server asks the user: user-input.requested and request.opened tool_user_input"},
	{Kind: "item/tool/call", Emits: opened, Note: "dynamic_tool_call (the client runs the tool; callId in args)"},
	{Kind: "account/chatgptAuthTokens/refresh", Emits: opened, Note: "auth_tokens_refresh (global)"},
	{Kind: "attestation/generate", Emits: opened, Note: "unknown (global)"},
	{Kind: "applyPatchApproval", Emits: opened, Note: "legacy v1: apply_patch_approval; conversationId → thread, callId → item"},
	{Kind: "execCommandApproval", Emits: opened, Note: "legacy v1: exec_command_approval; conversationId → thread, callId → item"},
	// What the client sends.
	{Kind: "client:response", Emits: kinds_{canonical.KindUserInputResolved, canonical.KindRequestResolved, canonical.KindRuntimeWarning}, Note: "the client's answer to a server request (its own id space): request.resolved with the decision (accept, decline, or the variant's tag) and the answer whole; user-input.resolved with the answers for user-input requests; an error answer resolves with decision error. An answer to no pending request is a warning"},
	{Kind: "client:initialize", Emits: kinds_{canonical.KindSessionStarted}, Note: "the session comes up; clientInfo in message"},
	{Kind: "client:initialized", Emits: kinds_{canonical.KindSessionStateChanged}, Note: "session ready"},
	{Kind: "client:thread/start", Emits: configured, Note: "requested thread configuration (cwd, approvalPolicy, sandbox, model, ...)"},
	{Kind: "client:thread/resume", Emits: configured, Note: "requested thread configuration"},
	{Kind: "client:thread/fork", Emits: configured, Note: "requested thread configuration"},
	{Kind: "client:turn/start", Emits: configured, Note: "per-turn overrides (input left out: it comes back as a userMessage item)"},
	{Kind: "client:turn/interrupt", Emits: kinds_{canonical.KindSessionStateChanged}, Note: "running, reason interrupt requested; the turn ends with turn/completed interrupted"},
	{Kind: "response", Emits: kinds_{canonical.KindSessionConfigured, canonical.KindSessionStateChanged, canonical.KindUserInputResolved, canonical.KindRequestResolved, canonical.KindRuntimeWarning, canonical.KindRuntimeError}, Note: "the agent's answer to a client request, read by that request's method: initialize and thread/start|resume|fork → session.configured with the effective configuration (userAgent, model, cwd, sandbox; thread id in providerRefs); turn/start → session running; an error answer → runtime.error (JSON-RPC protocol codes → validation_error). A bare frame answering a pending server request is the client's answer (see client:response); an answer to no known request is a warning"},
}

var _ = func() bool {
	for _, t := range []string{
		"userMessage", "hookPrompt", "agentMessage", "functionCallOutput", "plan", "reasoning",
		"commandExecution", "fileChange", "mcpToolCall", "dynamicToolCall", "collabAgentToolCall",
		"subAgentActivity", "webSearch", "imageView", "sleep", "imageGeneration",
		"enteredReviewMode", "exitedReviewMode", "contextCompaction",
	} {
		rules = append(rules, adapter.Rule{Kind: "item:" + t, Emits: itemEvents, Note: itemNotes[t]})
	}
	return true
}()

var itemNotes = map[string]string{
	"userMessage":         "user_message; content text → content.unknown (user text is no assistant stream); item id keyed by turn and text, as codex-rollout keys it (one item when both are ingested); a second message alike in the turn keeps an id of its own",
	"hookPrompt":          "user_message (a prompt a hook adds for the user)",
	"agentMessage":        "assistant_message; text → content.assistant_text",
	"functionCallOutput":  "dynamic_tool_call (output the client supplied for a tool it ran)",
	"plan":                "plan; text → content.plan_text (the completed item is authoritative, not the deltas)",
	"reasoning":           "reasoning; summary → content.reasoning_summary_text, content → content.reasoning_text",
	"commandExecution":    "command_execution; command → command and title, exitCode, aggregatedOutput → content.command_output, status; source userShell → byUser (the user ran it, not the agent)",
	"fileChange":          "file_change; changes[].path → files, status",
	"mcpToolCall":         "mcp_tool_call; server/tool → title, tool → toolName",
	"dynamicToolCall":     "dynamic_tool_call; tool → toolName and title",
	"collabAgentToolCall": "collab_agent_tool_call; tool → toolName, prompt → detail",
	"subAgentActivity":    "collab_agent_tool_call (a sub-agent's activity seen from its parent)",
	"webSearch":           "web_search; query → title",
	"imageView":           "image_view; path → title",
	"sleep":               "unknown (a wait has no canonical item type)",
	"imageGeneration":     "image_view (an image put in front of the user)",
	"enteredReviewMode":   "review_entered",
	"exitedReviewMode":    "review_exited",
	"contextCompaction":   "context_compaction",
}
