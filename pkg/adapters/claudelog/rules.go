package claudelog

import (
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/adapters/claudestream"
	"github.com/agentwire/agentwire/pkg/canonical"
)

func k(kinds ...canonical.Kind) []canonical.Kind { return kinds }

var closing = k(canonical.KindRuntimeError, canonical.KindTurnStarted, canonical.KindItemCompleted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated)

var metadata = k(canonical.KindThreadMetadataUpdated)

// configured is what a user or assistant line may add: the session's CLI
// version (the first line naming one, or another) and the main
// conversation's model (when it changes), and the title of a summary
// whose leaf it is.
var configured = k(canonical.KindSessionConfigured, canonical.KindThreadMetadataUpdated)

const configuredNote = " A line whose version (the CLI's) differs from the last reported is followed by session.configured{claude_code_version, cwd, gitBranch}; a line that is the leaf of a summary the log wrote before it, by thread.metadata.updated{name: summary}, the last of its events."

const metadataNote = "bookkeeping beside the conversation: thread.metadata.updated with the record under its type (raw keeps it); a sub-agent's, in its own transcript (isSidechain), under `agent <agentId> <type>`, so that it never takes the place of the conversation's"

var rules = adapter.Rules{
	{Kind: "user", Emits: append(append(append([]canonical.Kind{}, claudestream.UserEmits...), closing...), configured...), Note: claudestream.UserNote + configuredNote + " A prompt is a user line with text and no tool_result that is not isMeta or isCompactSummary; a prompt while a turn is open ends that turn first (completed, with the summed usage: older logs write no stop reason). A main-line line whose only content is the CLI's interruption marker ([Request interrupted by user], ... for tool use]) is no prompt: a user_message titled as injected that ends the open turn interrupted (with the summed usage, and the marker's words without brackets as its error message), opening none. Local slash commands as CLIs before system:local_command wrote them (the isMeta caveat, then <command-name> and <local-command-stdout> user lines) are no prompts either: they end an open turn (completed) as a prompt would and open none; the caveat is a user_message titled as injected, the other two completed command_execution items titled local command, byUser, with the line as command_output, as system:local_command gives. A sidechain prompt opens a turn only when none is open (a sub-agent's own transcript), and is a user_message titled as injected: the launching conversation wrote it, not the user; so is a task notification (text that opens with <task-notification>), the CLI's notice that a background run ended, which opens a turn as a prompt does; a turn a sidechain line opens names the line's agentId in turn.started (agentId), the run's id, which the launching stream's task_started gives as task_id. isMeta text is a user_message titled as injected; a compaction summary is a context_compaction item."},
	{Kind: "assistant", Emits: append(append(append([]canonical.Kind{}, claudestream.AssistantEmits...), closing...), configured...), Note: claudestream.AssistantNote + configuredNote + " A main-conversation message whose model differs from the last reported is followed by session.configured{model}, in the open turn (the session's model, and the turn's when nothing named it; <synthetic> error messages name none)." + " Usage: the log writes the message's usage on each of its lines, refined as it streamed; the last line's counts once per message.id, and a turn's usage is the sum over its messages (a sidechain message inside the turn, as CLIs before 2.0 wrote sub-agents into the main log, counts in the turn's breakdown by model only, as the stream's result counts it in modelUsage and not in usage); a line that changes it before the turn ends is followed by thread.token-usage.updated with the turn's usage so far (turn, turnModelUsage, the turn's provider id) and the session total including it. A non-sidechain message with a terminal stop_reason (end_turn, stop_sequence, max_tokens, refusal) ends the turn; an API error message (isApiErrorMessage) ends it failed with runtime.error. Further lines of that message stay in the turn they ended."},
	{Kind: "summary", Emits: metadata, Note: "the title of the conversation that ends at its leafUuid: thread.metadata.updated{name: summary} when that is the message line before it (or it names no leaf); else thread.metadata.updated with the record under summary (raw keeps it), and the name follows the line that is its leaf, if the log has one (a resumed conversation). The CLI writes summaries of a project's other conversations into a log too: they name nothing here"},
	{Kind: "custom-title", Emits: metadata, Note: "thread.metadata.updated{name: customTitle}"},
	{Kind: "file-history-snapshot", Emits: metadata, Note: metadataNote + " (rewind snapshot)"},
	{Kind: "queue-operation", Emits: metadata, Note: metadataNote + " (input queue; the user line that follows carries the prompt)"},
	{Kind: "last-prompt", Emits: metadata, Note: metadataNote + " (resume pointer)"},
	{Kind: "attachment", Emits: k(canonical.KindThreadMetadataUpdated, canonical.KindHookCompleted), Note: metadataNote + " (context attached to the conversation: skill and agent listings, context a hook added, ...). The end of a hook run (hook_success, hook_non_blocking_error, hook_blocking_error, hook_error_during_execution, hook_cancelled) is hook.completed of the run its hook_progress line started (toolUseID, hookEvent or hookName's event, command): stdout, stderr, exitCode, durationMs, the blocking error or content as output"},
	{Kind: "agent-name", Emits: metadata, Note: metadataNote},
	{Kind: "tag", Emits: metadata, Note: metadataNote},
	{Kind: "pr-link", Emits: metadata, Note: metadataNote},
	{Kind: "worktree-state", Emits: metadata, Note: metadataNote},
	{Kind: "system:compact_boundary", Emits: k(canonical.KindThreadStateChanged), Note: "thread.state.changed{compacted} with compactMetadata"},
	{Kind: "system:turn_duration", Emits: append(append([]canonical.Kind{}, closing...), canonical.KindThreadMetadataUpdated), Note: "ends the open turn with durationMs; after a turn already ended, thread.metadata.updated{turnDuration}"},
	{Kind: "system:stop_hook_summary", Emits: k(canonical.KindHookCompleted), Note: "hook.completed for each of hookInfos (the run hook_progress started): error with the hookErrors that name its command, or with those that name none, else success; durationMs"},
	{Kind: "system:api_error", Emits: k(canonical.KindRuntimeWarning), Note: "runtime.warning: the API call failed and is retried (retryAttempt of maxRetries)"},
	{Kind: "system:local_command", Emits: k(canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted), Note: "a completed command_execution item (local slash command, byUser: the user ran it, not the agent) with its content as command_output"},
	{Kind: "system:informational", Emits: k(canonical.KindSessionStateChanged, canonical.KindRuntimeWarning), Note: "level warning/error → runtime.warning, else session.state.changed"},
	{Kind: "progress:hook_progress", Emits: k(canonical.KindHookStarted), Note: "hook.started: one run per line (hookName, hookEvent, command); id derived from toolUseID, hookEvent and command, as one toolUseID covers all of an event's commands and a tool's PreToolUse and PostToolUse hooks"},
	{Kind: "progress:bash_progress", Emits: k(canonical.KindToolProgress), Note: "tool.progress of the Bash call, elapsedTimeSeconds"},
	{Kind: "progress:agent_progress", Emits: k(canonical.KindToolProgress), Note: "tool.progress of the Task call (parentToolUseID); the sub-agent's messages are in its own transcript"},
	{Kind: "progress:waiting_for_task", Emits: k(canonical.KindToolProgress), Note: "tool.progress"},
	{Kind: "progress:mcp_progress", Emits: k(canonical.KindToolProgress), Note: "tool.progress"},
	{Kind: "progress:query_update", Emits: k(canonical.KindToolProgress), Note: "tool.progress (web search)"},
	{Kind: "progress:search_results_received", Emits: k(canonical.KindToolProgress), Note: "tool.progress (web search)"},
}
