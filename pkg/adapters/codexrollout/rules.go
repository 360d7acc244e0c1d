package codexrollout

import (
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

type ks = []canonical.Kind

var (
	item     = ks{canonical.KindItemStarted, canonical.KindItemUpdated, canonical.KindItemCompleted}
	tool     = ks{canonical.KindItemStarted, canonical.KindItemUpdated, canonical.KindItemCompleted, canonical.KindToolProgress, canonical.KindRequestResolved}
	delta    = ks{canonical.KindItemStarted, canonical.KindContentDelta}
	config   = ks{canonical.KindSessionConfigured}
	meta     = ks{canonical.KindThreadMetadataUpdated}
	request  = ks{canonical.KindRequestOpened}
	turnEnd  = ks{canonical.KindRequestResolved, canonical.KindItemCompleted, canonical.KindTurnCompleted}
	turnBoth = ks{canonical.KindTurnStarted, canonical.KindRequestResolved, canonical.KindItemCompleted, canonical.KindTurnCompleted}
)

const (
	pairNote = "the rollout records messages and reasoning twice (EventMsg and response_item, in either order): the first copy opens the item, the copy from the other record completes it (paired by provider id when both have one, else by order); an unpaired copy is completed by the next copy of its record or the end of the turn"
	toolNote = "tool item keyed by call_id (native id scoped by thread and turn, the same as the app-server item): the first line of the call opens it, later lines update it, its output completes it; a line about a call already completed is tool.progress. A *_begin resolves the approval that gated the call (decision approved)"
)

var rules = adapter.Rules{
	// Turns.
	{Kind: "task_started", Emits: turnBoth, Note: "turn.started; turn_id → turnId (native, scoped by thread: the app-server's id for the same turn). A turn still open is completed interrupted first"},
	{Kind: "task_complete", Emits: append(ks{canonical.KindRuntimeError}, turnBoth...), Note: "turn.completed{completed}, or {failed} with errorMessage when an error line failed the turn or the line carries an error (codex 0.171 and later: runtime.error classed by its codex_error_info first), durationMs; usage = thread total now − total at task_started (token_count is cumulative, so repeated snapshots add nothing); open items and requests are closed first; a turn never started is opened first"},
	{Kind: "turn_aborted", Emits: append(ks{canonical.KindTurnAborted}, turnEnd...), Note: "turn.aborted{reason}, then turn.completed (interrupted; cancelled when replaced) if a turn is open"},
	{Kind: "token_count", Emits: ks{canonical.KindThreadTokenUsageUpdated, canonical.KindAccountRateLimitsUpdated}, Note: "info.total_token_usage → thread usage (replaces, never adds; a total below the last one is a resumed process counting from zero again in the same rollout, and the earlier processes' counts are added to it, so the thread's usage is all of it and the open turn's goes on from where it was), last_token_usage → last unless the snapshot repeats the previous total, model_context_window, and within a turn the turn's usage so far (the total's growth since it started) → turn; rate_limits → account.rate-limits.updated with primary/secondary windows (used_percent, window_minutes, resets_at or resets_in_seconds from the line's time)"},
	// Messages and reasoning.
	{Kind: "user_message", Emits: append(append(ks{}, turnBoth...), item...), Note: "user_message item, its id keyed by turn and text as codex-app-server keys it (one item when both are ingested); " + pairNote + " In a rollout that marks no turns (no task_started: codex 0.40 and before) it starts a turn, ending the one it started before (completed, or failed after an error line; usage = the thread total's growth across it)"},
	{Kind: "agent_message", Emits: item, Note: "assistant_message item; message → content.assistant_text; " + pairNote},
	{Kind: "agent_reasoning", Emits: item, Note: "reasoning item; text → content.reasoning_summary_text; " + pairNote},
	{Kind: "agent_reasoning_raw_content", Emits: ks{canonical.KindItemStarted, canonical.KindItemUpdated}, Note: "item.updated of the open reasoning item (raw reasoning text in detail), or its start"},
	{Kind: "agent_reasoning_section_break", Emits: ks{canonical.KindItemStarted, canonical.KindItemUpdated}, Note: "item.updated of the open reasoning item (a summary section boundary), or its start"},
	{Kind: "agent_message_delta", Emits: delta, Note: "legacy, no ids: content.delta assistant_text on the open assistant message (opened if none)"},
	{Kind: "agent_reasoning_delta", Emits: delta, Note: "legacy, no ids: content.delta reasoning_summary_text on the open reasoning item"},
	{Kind: "agent_reasoning_raw_content_delta", Emits: delta, Note: "legacy, no ids: content.delta reasoning_text on the open reasoning item"},
	{Kind: "agent_message_content_delta", Emits: delta, Note: "content.delta assistant_text on item_id"},
	{Kind: "reasoning_content_delta", Emits: delta, Note: "content.delta reasoning_summary_text on item_id, summary_index"},
	{Kind: "reasoning_raw_content_delta", Emits: delta, Note: "content.delta reasoning_text on item_id, content_index"},
	{Kind: "plan_delta", Emits: delta, Note: "content.delta plan_text on item_id"},
	{Kind: "item_started", Emits: tool, Note: "TurnItem (PascalCase tags, same type table as the app-server): messages and reasoning pair as the other copies; other items join their call by id"},
	{Kind: "item_completed", Emits: tool, Note: "TurnItem: messages and reasoning pair as the other copies (the id is the app-server item id, except for UserMessage, which pairs by order); tool items join their call by id and update it, the call's output completes it"},
	// Tools.
	{Kind: "exec_command_begin", Emits: tool, Note: "command_execution; source user_shell → byUser (the user ran it, not the agent); " + toolNote},
	{Kind: "exec_command_output_delta", Emits: delta, Note: "content.delta command_output on the call"},
	{Kind: "terminal_interaction", Emits: tool, Note: "item.updated of the command; " + toolNote},
	{Kind: "exec_command_end", Emits: tool, Note: "command_execution: exit_code, aggregated_output, source user_shell → byUser; " + toolNote},
	{Kind: "patch_apply_begin", Emits: tool, Note: "file_change; " + toolNote},
	{Kind: "patch_apply_end", Emits: tool, Note: "file_change; " + toolNote},
	{Kind: "mcp_tool_call_begin", Emits: tool, Note: "mcp_tool_call, invocation server/tool → title; " + toolNote},
	{Kind: "mcp_tool_call_end", Emits: tool, Note: "mcp_tool_call; " + toolNote},
	{Kind: "web_search_begin", Emits: tool, Note: "web_search; " + toolNote},
	{Kind: "web_search_end", Emits: tool, Note: "web_search, query → title; " + toolNote},
	{Kind: "image_generation_begin", Emits: tool, Note: "image_view (an image put in front of the user); " + toolNote},
	{Kind: "image_generation_end", Emits: tool, Note: "image_view; " + toolNote},
	{Kind: "view_image_tool_call", Emits: tool, Note: "image_view, path → title; " + toolNote},
	{Kind: "dynamic_tool_call_request", Emits: tool, Note: "dynamic_tool_call (callId); " + toolNote},
	{Kind: "dynamic_tool_call_response", Emits: tool, Note: "dynamic_tool_call; " + toolNote},
	{Kind: "collab_agent_spawn_begin", Emits: tool, Note: "collab_agent_tool_call; " + toolNote},
	{Kind: "collab_agent_spawn_end", Emits: tool, Note: "collab_agent_tool_call; " + toolNote},
	{Kind: "collab_agent_interaction_begin", Emits: tool, Note: "collab_agent_tool_call; " + toolNote},
	{Kind: "collab_agent_interaction_end", Emits: tool, Note: "collab_agent_tool_call; " + toolNote},
	{Kind: "collab_waiting_begin", Emits: tool, Note: "collab_agent_tool_call; " + toolNote},
	{Kind: "collab_waiting_end", Emits: tool, Note: "collab_agent_tool_call; " + toolNote},
	{Kind: "collab_close_begin", Emits: tool, Note: "collab_agent_tool_call; " + toolNote},
	{Kind: "collab_close_end", Emits: tool, Note: "collab_agent_tool_call; " + toolNote},
	{Kind: "collab_resume_begin", Emits: tool, Note: "collab_agent_tool_call; " + toolNote},
	{Kind: "collab_resume_end", Emits: tool, Note: "collab_agent_tool_call; " + toolNote},
	{Kind: "sub_agent_activity", Emits: ks{canonical.KindTaskProgress}, Note: "task.progress of the sub-agent (agent_thread_id)"},
	{Kind: "entered_review_mode", Emits: item, Note: "review_entered item, started and completed"},
	{Kind: "exited_review_mode", Emits: item, Note: "review_exited item, started and completed"},
	// Requests (the rollout does not record the answers).
	{Kind: "exec_approval_request", Emits: request, Note: "request.opened exec_command_approval, on the call's item; resolved (approved) when the command begins, else at the end of the turn without a decision"},
	{Kind: "apply_patch_approval_request", Emits: request, Note: "request.opened apply_patch_approval; resolved as exec_approval_request"},
	{Kind: "request_permissions", Emits: request, Note: "request.opened unknown (a grant of permissions); resolved at the end of the turn"},
	{Kind: "request_user_input", Emits: ks{canonical.KindUserInputRequested, canonical.KindRequestOpened}, Note: "user-input.requested and request.opened tool_user_input; resolved at the end of the turn"},
	{Kind: "elicitation_request", Emits: ks{canonical.KindUserInputRequested, canonical.KindRequestOpened}, Note: "an MCP server asks the user: user-input.requested and request.opened tool_user_input"},
	// Turn and thread state.
	{Kind: "plan_update", Emits: ks{canonical.KindTurnPlanUpdated}, Note: "explanation and plan steps (pending, in_progress, completed)"},
	{Kind: "turn_diff", Emits: ks{canonical.KindTurnDiffUpdated}, Note: "unified_diff"},
	{Kind: "model_reroute", Emits: ks{canonical.KindModelRerouted}, Note: "from_model, to_model, reason"},
	{Kind: "context_compacted", Emits: ks{canonical.KindThreadStateChanged}, Note: "compacted"},
	{Kind: "thread_rolled_back", Emits: meta, Note: "metadata.rolledBack"},
	{Kind: "thread_name_updated", Emits: meta, Note: "thread_name → name"},
	{Kind: "undo_started", Emits: meta, Note: "metadata.undo"},
	{Kind: "undo_completed", Emits: meta, Note: "metadata.undo"},
	{Kind: "session_configured", Emits: config, Note: "config.session (model, history log, ...)"},
	{Kind: "mcp_startup_update", Emits: ks{canonical.KindMCPStatusUpdated}, Note: "the server's status, whole"},
	{Kind: "mcp_startup_complete", Emits: ks{canonical.KindMCPStatusUpdated}, Note: "ready/failed/cancelled servers, whole"},
	{Kind: "get_history_entry_response", Emits: config, Note: "a list reply: config.historyEntry"},
	{Kind: "mcp_list_tools_response", Emits: config, Note: "a list reply: config.mcpTools"},
	{Kind: "list_custom_prompts_response", Emits: config, Note: "a list reply: config.customPrompts"},
	{Kind: "list_skills_response", Emits: config, Note: "a list reply: config.skills"},
	{Kind: "list_remote_skills_response", Emits: config, Note: "a list reply: config.remoteSkills"},
	{Kind: "remote_skill_downloaded", Emits: config, Note: "config.remoteSkillDownloaded"},
	{Kind: "skills_update_available", Emits: config, Note: "config.skillsUpdateAvailable"},
	{Kind: "deprecation_notice", Emits: ks{canonical.KindDeprecationNotice}, Note: "summary, details"},
	{Kind: "error", Emits: ks{canonical.KindRuntimeError}, Note: "runtime.error classed by codex_error_info; the turn ends only with task_complete or turn_aborted, and then failed (as the app-server's turn/completed says), unless the error announced a retry or a failed thread rollback"},
	{Kind: "warning", Emits: ks{canonical.KindRuntimeWarning}, Note: "message"},
	{Kind: "stream_error", Emits: ks{canonical.KindRuntimeWarning}, Note: "Codex retries the stream: a warning, the turn goes on"},
	{Kind: "background_event", Emits: ks{canonical.KindRuntimeWarning}, Note: "a background notice: warning with message"},
	{Kind: "shutdown_complete", Emits: ks{canonical.KindSessionExited}, Note: "graceful"},
	{Kind: "raw_response_item", Emits: append(append(ks{}, tool...), canonical.KindContentDelta, canonical.KindTurnPlanUpdated, canonical.KindThreadMetadataUpdated), Note: "its item is mapped as a response_item line"},
	{Kind: "hook_started", Emits: ks{canonical.KindHookStarted}, Note: "run id, event name"},
	{Kind: "hook_completed", Emits: ks{canonical.KindHookCompleted}, Note: "run status completed → success, failed/blocked → error, stopped → cancelled; duration_ms"},
	{Kind: "realtime_conversation_started", Emits: ks{canonical.KindThreadRealtimeStarted}, Note: "session_id → realtimeSessionId"},
	{Kind: "realtime_conversation_realtime", Emits: ks{canonical.KindThreadRealtimeItemAdded}, Note: "the realtime event whole"},
	{Kind: "realtime_conversation_closed", Emits: ks{canonical.KindThreadRealtimeClosed}, Note: "reason"},
	// Newer than the schema (0.146–0.171).
	{Kind: "thread_settings_applied", Emits: config, Note: "config.threadSettings"},
	{Kind: "thread_goal_updated", Emits: meta, Note: "metadata.goal"},
	{Kind: "guardian_assessment", Emits: meta, Note: "metadata.guardianAssessment (the automatic reviewer's verdict)"},
	// Rollout lines other than event_msg.
	{Kind: "session_meta", Emits: ks{canonical.KindSessionStarted, canonical.KindThreadStarted, canonical.KindSessionConfigured}, Note: "id → threadId (native: the app-server thread); session.started on the first; cwd, cli_version, originator, model_provider, git, ... → config (instructions left out: they are in raw). A session_meta of the same thread only configures"},
	{Kind: "turn_context", Emits: config, Note: "the turn's model, cwd, approval and sandbox policy, effort → config"},
	{Kind: "world_state", Emits: config, Note: "config.worldState (the environment the model is told about)"},
	{Kind: "compacted", Emits: ks{canonical.KindThreadStateChanged}, Note: "compacted (the replacement history is in raw)"},
	{Kind: "token_usage_record", Emits: ks{canonical.KindThreadTokenUsageUpdated}, Note: "one response's usage → last; the thread total advances by it, so the token_count that follows with the same total adds nothing; within a turn, the turn's usage so far → turn"},
	{Kind: "inter_agent_communication_metadata", Emits: meta, Note: "metadata.interAgentCommunication"},
	{Kind: "response_item:message", Emits: item, Note: "role assistant → assistant_message, user → user_message (" + pairNote + "); developer/system, and user-role context Codex injects (<environment_context>, <user_instructions>, AGENTS.md instructions, <turn_aborted>, ...: a message wholly inside one of Codex's context markers) → an unknown item, started and completed (instructions, not conversation)"},
	{Kind: "response_item:agent_message", Emits: item, Note: "assistant_message, paired like message"},
	{Kind: "response_item:reasoning", Emits: item, Note: "reasoning; summary → reasoning_summary_text, content → reasoning_text; paired like message"},
	{Kind: "response_item:function_call", Emits: append(append(ks{}, tool...), canonical.KindTurnPlanUpdated), Note: "by name: shell/exec_command/... → command_execution, apply_patch → file_change, update_plan → plan (and turn.plan.updated from its arguments), view_image → image_view, server__tool → mcp_tool_call, agent tools → collab_agent_tool_call, else dynamic_tool_call; " + toolNote},
	{Kind: "response_item:custom_tool_call", Emits: tool, Note: "as function_call (apply_patch → file_change)"},
	{Kind: "response_item:local_shell_call", Emits: tool, Note: "command_execution"},
	{Kind: "response_item:tool_search_call", Emits: tool, Note: "dynamic_tool_call"},
	{Kind: "response_item:function_call_output", Emits: tool, Note: "completes the call: output → content (command_output, file_change_output, else unknown); a shell call's output that older CLIs wrapped as {output, metadata: {exit_code}} is unwrapped, the exit code kept; an output that reports the user declined the call (\"patch rejected by user\", \"exec command rejected by user\", codex 0.171's \"exec_command failed: ... Rejected(...)\") completes it declined: the rollout keeps no approval"},
	{Kind: "response_item:custom_tool_call_output", Emits: tool, Note: "completes the call"},
	{Kind: "response_item:local_shell_call_output", Emits: tool, Note: "completes the call"},
	{Kind: "response_item:tool_search_output", Emits: tool, Note: "completes the call"},
	{Kind: "response_item:web_search_call", Emits: item, Note: "web_search item, started and completed; action.query → title"},
	{Kind: "response_item:image_generation_call", Emits: item, Note: "image_view item, started and completed"},
	{Kind: "response_item:compaction", Emits: item, Note: "context_compaction item, started and completed"},
	{Kind: "response_item:compaction_summary", Emits: item, Note: "context_compaction item, started and completed"},
	{Kind: "response_item:ghost_snapshot", Emits: meta, Note: "metadata.ghostSnapshot (the undo snapshot)"},
}
