package codexexec

import (
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

var itemEvents = []canonical.Kind{canonical.KindItemStarted, canonical.KindItemUpdated, canonical.KindItemCompleted}

// itemLines are what an item line emits: its item's events, after a
// turn.started when no turn is open (a log that starts mid-turn).
var itemLines = append([]canonical.Kind{canonical.KindTurnStarted}, itemEvents...)

var rules = adapter.Rules{
	{Kind: "thread.started", Emits: []canonical.Kind{canonical.KindThreadStarted}, Note: "thread_id → threadId (native); the session is the ingest session"},
	{Kind: "turn.started", Emits: []canonical.Kind{canonical.KindTurnStarted}, Note: "no turn id on the wire: derived from the frame"},
	{Kind: "turn.completed", Emits: []canonical.Kind{canonical.KindTurnStarted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated}, Note: "state completed. usage is the thread's running total (a resumed thread's includes the earlier runs): the turn's usage is its difference from the total this session last saw for the thread, folded with the OpenAI convention (input includes cached); thread.token-usage.updated follows with the total. A turn that was never started is opened first"},
	{Kind: "turn.failed", Emits: []canonical.Kind{canonical.KindRuntimeError, canonical.KindTurnStarted, canonical.KindTurnCompleted}, Note: "runtime.error (provider_error) with error.message, then turn.completed{failed} (opening the turn first if it was never started)"},
	{Kind: "item.started", Emits: itemLines, Note: "item.started; a second start of the same item is an update. Outside a turn (a log that starts mid-turn) the item opens one, which the turn.completed ahead ends"},
	{Kind: "item.updated", Emits: itemLines, Note: "item.updated; an item never started is opened first (and a turn, outside one)"},
	{Kind: "item.completed", Emits: itemLines, Note: "item.completed with the final text, exit code and files; an item never started is opened first (and a turn, outside one)"},
	{Kind: "error", Emits: []canonical.Kind{canonical.KindRuntimeWarning, canonical.KindRuntimeError}, Note: "\"Reconnecting... n/m\" is a warning (the turn goes on); any other message is a runtime.error; the turn ends only with turn.failed"},
	{Kind: "item:agent_message", Emits: itemEvents, Note: "assistant_message; text → content.assistant_text"},
	{Kind: "item:reasoning", Emits: itemEvents, Note: "reasoning; text → content.reasoning_text"},
	{Kind: "item:command_execution", Emits: itemEvents, Note: "command_execution; command, exit_code, aggregated_output → content.command_output"},
	{Kind: "item:file_change", Emits: itemEvents, Note: "file_change; changes[].path → files"},
	{Kind: "item:mcp_tool_call", Emits: itemEvents, Note: "mcp_tool_call; server/tool → title, tool → toolName"},
	{Kind: "item:web_search", Emits: itemEvents, Note: "web_search; query → title"},
	{Kind: "item:todo_list", Emits: append(append([]canonical.Kind{}, itemEvents...), canonical.KindTurnPlanUpdated), Note: "plan item, and turn.plan.updated with items[] (completed → completed, else pending)"},
	{Kind: "item:error", Emits: itemEvents, Note: "error item; message → detail"},
	{Kind: "item:collab_tool_call", Emits: itemEvents, Note: "collab_agent_tool_call (in the Rust definition, not the SDK types)"},
}
