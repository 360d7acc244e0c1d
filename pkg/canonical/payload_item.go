package canonical

import "encoding/json"

// ItemLifecycle is the payload shared by item.started, item.updated and
// item.completed. The payload of item.completed is authoritative: Content
// holds the item's final text per stream kind, whatever deltas came before.
type ItemLifecycle struct {
	// ItemType is the canonical type of the item.
	ItemType ItemType `json:"itemType"`
	// Status is the item's status at this point of its lifecycle.
	Status ItemStatus `json:"status,omitempty"`
	// Title is a short human-readable title (a tool name, a file path).
	Title string `json:"title,omitempty"`
	// Detail is a longer human-readable description.
	Detail string `json:"detail,omitempty"`
	// ToolName is the tool the item calls, for tool items.
	ToolName string `json:"toolName,omitempty"`
	// Command is the command line, for command_execution items.
	Command string `json:"command,omitempty"`
	// ExitCode is the command's exit status, for finished command_execution items.
	ExitCode *int `json:"exitCode,omitempty"`
	// DurationMs is how long a finished tool or command item ran, in
	// milliseconds, as the provider measured it (when it says).
	DurationMs *int64 `json:"durationMs,omitempty" canonical:"nonneg"`
	// ByUser says the user ran it, not the agent: a shell command typed
	// into the CLI (Codex's user shell), a local slash command (Claude
	// Code's /clear, /model, ...). Such items are not the agent's tool
	// calls.
	ByUser bool `json:"byUser,omitempty"`
	// Files lists the paths a file_change item touches.
	Files []string `json:"files,omitempty"`
	// Content is the item's full text per stream kind (assistant text,
	// reasoning, command output, ...), when known at this point.
	Content map[StreamKind]string `json:"content,omitempty"`
	// ParentItemID is the canonical id of the item this one runs under (a
	// sub-agent's tool call), when there is one.
	ParentItemID string `json:"parentItemId,omitempty" canonical:"uuid"`
	// Data is the provider's item object as it sent it.
	Data json.RawMessage `json:"data,omitempty"`
}

// ItemStarted is the payload of item.started.
type ItemStarted ItemLifecycle

// ItemUpdated is the payload of item.updated.
type ItemUpdated ItemLifecycle

// ItemCompleted is the payload of item.completed.
type ItemCompleted ItemLifecycle

// ContentDelta is the payload of content.delta: a chunk to append to the
// StreamKind content of the event's item.
type ContentDelta struct {
	// StreamKind says which content of the item the chunk extends.
	StreamKind StreamKind `json:"streamKind"`
	// Delta is the chunk of text.
	Delta string `json:"delta" canonical:"allowempty"`
	// ContentIndex numbers the content part, for providers that split content (Codex reasoning).
	ContentIndex *int `json:"contentIndex,omitempty" canonical:"nonneg"`
	// SummaryIndex numbers the summary part (Codex reasoning summaries).
	SummaryIndex *int `json:"summaryIndex,omitempty" canonical:"nonneg"`
}

func (*ItemStarted) Kind() Kind   { return KindItemStarted }
func (*ItemUpdated) Kind() Kind   { return KindItemUpdated }
func (*ItemCompleted) Kind() Kind { return KindItemCompleted }
func (*ContentDelta) Kind() Kind  { return KindContentDelta }

func (*ItemStarted) isPayload()   {}
func (*ItemUpdated) isPayload()   {}
func (*ItemCompleted) isPayload() {}
func (*ContentDelta) isPayload()  {}
