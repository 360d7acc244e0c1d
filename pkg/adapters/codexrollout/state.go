package codexrollout

import (
	"maps"
	"slices"

	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// State is what the adapter remembers between lines.
type State struct {
	// Provider is the provider events are attributed to.
	Provider canonical.Provider `json:"provider"`
	// Clock keeps the frames that carry no time on the provider's time line.
	Clock adapter.Clock `json:"clock,omitzero"`
	// Thread is the provider thread id from session_meta.
	Thread string `json:"thread,omitempty"`
	// Turn is the provider turn id of the open turn; TurnID its canonical
	// id ("" between turns).
	Turn   string `json:"turn,omitempty"`
	TurnID string `json:"turnId,omitempty"`
	// TurnStart is the thread total when the open turn started; TurnUsage
	// reports whether usage was counted since.
	TurnStart canonical.TokenUsage `json:"turnStart"`
	TurnUsage bool                 `json:"turnUsage,omitempty"`
	// TurnError is why the open turn failed: the message of an error line
	// that fails it, or of the error task_complete carried.
	TurnError string `json:"turnError,omitempty"`
	// Total is the running count of the process writing the rollout, as
	// last reported; Base the counts of the processes before it in the
	// same rollout (a resumed thread counts from zero again). The
	// thread's usage is both (thread).
	Total canonical.TokenUsage `json:"total"`
	Base  canonical.TokenUsage `json:"base,omitzero"`
	// Open are the items not completed yet, oldest first.
	Open []OpenItem `json:"open,omitempty"`
	// Done lists the keys of items completed in the open turn, so that a
	// late copy of one is not opened again.
	Done []string `json:"done,omitempty"`
	// UsedTurns are the provider turn ids already given a canonical id: a
	// file that repeats one (a sanitized fixture) gets a derived id instead
	// of opening the same turn twice.
	UsedTurns []string `json:"usedTurns,omitempty"`
	// Requests are the open requests (approvals) by call id.
	Requests []OpenRequest `json:"requests,omitempty"`
	// Unmarked says the rollout marks no turns: the first session_meta's
	// cli_version is codex 0.40 or older, and no task_started or
	// task_complete came. There a prompt starts every turn.
	Unmarked bool `json:"unmarked,omitempty"`
}

// Family says which of the rollout's two records an item sighting came
// from: the EventMsg stream or the Responses API transcript. Both record
// the same message or reasoning, so a sighting in one completes the item
// the other opened.
type Family string

// Families.
const (
	FamilyEvent    Family = "event"
	FamilyResponse Family = "response"
)

// OpenItem is an item between its start and its completion.
type OpenItem struct {
	// Key identifies the item: "call:<call_id>" for tool calls, the
	// provider item id or "" for messages and reasoning.
	Key string `json:"key"`
	// ID is the canonical item id.
	ID string `json:"id"`
	// PID is the provider item id, when a sighting carried one.
	PID string `json:"pid,omitempty"`
	// Type is the canonical item type.
	Type canonical.ItemType `json:"type"`
	// Family opened the item; Streaming marks one opened by deltas.
	Family    Family `json:"family"`
	Streaming bool   `json:"streaming,omitempty"`
	// Tool marks a tool call, completed by its output rather than a copy.
	Tool bool `json:"tool,omitempty"`
	// Content is the item's content so far.
	Content map[canonical.StreamKind]string `json:"content,omitempty"`
	// Title, Command, ToolName describe the item for its completion.
	Title    string `json:"title,omitempty"`
	Command  string `json:"command,omitempty"`
	ToolName string `json:"toolName,omitempty"`
	// ExitCode and DurationMs are what the call's end event said
	// (exec_command_end, mcp_tool_call_end), for the completion by its
	// output, which says neither in the rollouts of 2026.
	ExitCode   *int   `json:"exitCode,omitempty"`
	DurationMs *int64 `json:"durationMs,omitempty"`
	// ByUser says a line of the call named the user as who ran it.
	ByUser bool `json:"byUser,omitempty"`
}

// OpenRequest is an approval or question the rollout recorded.
type OpenRequest struct {
	// Call is the call id the request gates.
	Call string `json:"call"`
	// ID is the canonical request id.
	ID string `json:"id"`
	// Type is the canonical request type.
	Type canonical.RequestType `json:"type"`
	// Item is the canonical id of the item it gates, if known.
	Item string `json:"item,omitempty"`
}

func (st State) clone() State {
	c := st
	c.Open = slices.Clone(st.Open)
	for i := range c.Open {
		if st.Open[i].Content != nil {
			c.Open[i].Content = maps.Clone(st.Open[i].Content)
		}
	}
	c.Done = slices.Clone(st.Done)
	c.Requests = slices.Clone(st.Requests)
	c.UsedTurns = slices.Clone(st.UsedTurns)
	return c
}

// SessionProvider implements adapter.ProviderState.
func (st State) SessionProvider() canonical.Provider { return st.Provider }

// thread is the thread's cumulative usage: every process's count.
func (st *State) thread() canonical.TokenUsage { return st.Base.Add(st.Total) }
