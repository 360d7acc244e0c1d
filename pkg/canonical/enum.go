package canonical

import "slices"

// enum is implemented by every closed string set of this package. The JSON
// Schema generator and the validator read the allowed values through it, so
// the Go constants are the only place they are written down.
type enum interface {
	enumValues() []string
}

func enumStrings[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

func isOneOf[T ~string](v T, vs []T) bool { return slices.Contains(vs, v) }

// ItemType is the canonical type of an item (EVENTS.md §1.3).
type ItemType string

// Item types.
const (
	ItemTypeUserMessage         ItemType = "user_message"
	ItemTypeAssistantMessage    ItemType = "assistant_message"
	ItemTypeReasoning           ItemType = "reasoning"
	ItemTypePlan                ItemType = "plan"
	ItemTypeCommandExecution    ItemType = "command_execution"
	ItemTypeFileChange          ItemType = "file_change"
	ItemTypeMCPToolCall         ItemType = "mcp_tool_call"
	ItemTypeDynamicToolCall     ItemType = "dynamic_tool_call"
	ItemTypeCollabAgentToolCall ItemType = "collab_agent_tool_call"
	ItemTypeWebSearch           ItemType = "web_search"
	ItemTypeImageView           ItemType = "image_view"
	ItemTypeReviewEntered       ItemType = "review_entered"
	ItemTypeReviewExited        ItemType = "review_exited"
	ItemTypeContextCompaction   ItemType = "context_compaction"
	ItemTypeError               ItemType = "error"
	ItemTypeUnknown             ItemType = "unknown"
)

// ItemTypes returns every ItemType.
func ItemTypes() []ItemType {
	return []ItemType{
		ItemTypeUserMessage, ItemTypeAssistantMessage, ItemTypeReasoning, ItemTypePlan,
		ItemTypeCommandExecution, ItemTypeFileChange, ItemTypeMCPToolCall, ItemTypeDynamicToolCall,
		ItemTypeCollabAgentToolCall, ItemTypeWebSearch, ItemTypeImageView, ItemTypeReviewEntered,
		ItemTypeReviewExited, ItemTypeContextCompaction, ItemTypeError, ItemTypeUnknown,
	}
}

// Valid reports whether t is one of ItemTypes.
func (t ItemType) Valid() bool        { return isOneOf(t, ItemTypes()) }
func (ItemType) enumValues() []string { return enumStrings(ItemTypes()) }

// RequestType is the canonical type of an agent-to-client request (EVENTS.md §1.4).
type RequestType string

// Request types.
const (
	RequestTypeCommandExecutionApproval RequestType = "command_execution_approval"
	RequestTypeFileChangeApproval       RequestType = "file_change_approval"
	RequestTypeApplyPatchApproval       RequestType = "apply_patch_approval"
	RequestTypeExecCommandApproval      RequestType = "exec_command_approval"
	RequestTypeToolUserInput            RequestType = "tool_user_input"
	RequestTypeDynamicToolCall          RequestType = "dynamic_tool_call"
	RequestTypeAuthTokensRefresh        RequestType = "auth_tokens_refresh" //nolint:gosec // a request type name, not a credential
	RequestTypeUnknown                  RequestType = "unknown"
)

// RequestTypes returns every RequestType.
func RequestTypes() []RequestType {
	return []RequestType{
		RequestTypeCommandExecutionApproval, RequestTypeFileChangeApproval, RequestTypeApplyPatchApproval,
		RequestTypeExecCommandApproval, RequestTypeToolUserInput, RequestTypeDynamicToolCall,
		RequestTypeAuthTokensRefresh, RequestTypeUnknown,
	}
}

// Valid reports whether t is one of RequestTypes.
func (t RequestType) Valid() bool        { return isOneOf(t, RequestTypes()) }
func (RequestType) enumValues() []string { return enumStrings(RequestTypes()) }

// SessionState is the state of a provider session.
type SessionState string

// Session states.
const (
	SessionStateStarting SessionState = "starting"
	SessionStateReady    SessionState = "ready"
	SessionStateRunning  SessionState = "running"
	SessionStateWaiting  SessionState = "waiting"
	SessionStateStopped  SessionState = "stopped"
	SessionStateError    SessionState = "error"
)

// SessionStates returns every SessionState.
func SessionStates() []SessionState {
	return []SessionState{SessionStateStarting, SessionStateReady, SessionStateRunning, SessionStateWaiting, SessionStateStopped, SessionStateError}
}

// Valid reports whether s is one of SessionStates.
func (s SessionState) Valid() bool        { return isOneOf(s, SessionStates()) }
func (SessionState) enumValues() []string { return enumStrings(SessionStates()) }

// ThreadState is the state of a thread.
type ThreadState string

// Thread states.
const (
	ThreadStateActive    ThreadState = "active"
	ThreadStateIdle      ThreadState = "idle"
	ThreadStateArchived  ThreadState = "archived"
	ThreadStateClosed    ThreadState = "closed"
	ThreadStateCompacted ThreadState = "compacted"
	ThreadStateError     ThreadState = "error"
)

// ThreadStates returns every ThreadState.
func ThreadStates() []ThreadState {
	return []ThreadState{ThreadStateActive, ThreadStateIdle, ThreadStateArchived, ThreadStateClosed, ThreadStateCompacted, ThreadStateError}
}

// Valid reports whether s is one of ThreadStates.
func (s ThreadState) Valid() bool        { return isOneOf(s, ThreadStates()) }
func (ThreadState) enumValues() []string { return enumStrings(ThreadStates()) }

// TurnState is how a turn ended.
type TurnState string

// Turn states.
const (
	TurnStateCompleted   TurnState = "completed"
	TurnStateFailed      TurnState = "failed"
	TurnStateInterrupted TurnState = "interrupted"
	TurnStateCancelled   TurnState = "cancelled"
)

// TurnStates returns every TurnState.
func TurnStates() []TurnState {
	return []TurnState{TurnStateCompleted, TurnStateFailed, TurnStateInterrupted, TurnStateCancelled}
}

// Valid reports whether s is one of TurnStates.
func (s TurnState) Valid() bool        { return isOneOf(s, TurnStates()) }
func (TurnState) enumValues() []string { return enumStrings(TurnStates()) }

// StreamKind says which content of an item a content.delta extends.
type StreamKind string

// Content stream kinds.
const (
	StreamAssistantText        StreamKind = "assistant_text"
	StreamReasoningText        StreamKind = "reasoning_text"
	StreamReasoningSummaryText StreamKind = "reasoning_summary_text"
	StreamPlanText             StreamKind = "plan_text"
	StreamCommandOutput        StreamKind = "command_output"
	StreamFileChangeOutput     StreamKind = "file_change_output"
	StreamUnknown              StreamKind = "unknown"
)

// StreamKinds returns every StreamKind.
func StreamKinds() []StreamKind {
	return []StreamKind{
		StreamAssistantText, StreamReasoningText, StreamReasoningSummaryText,
		StreamPlanText, StreamCommandOutput, StreamFileChangeOutput, StreamUnknown,
	}
}

// Valid reports whether k is one of StreamKinds.
func (k StreamKind) Valid() bool        { return isOneOf(k, StreamKinds()) }
func (StreamKind) enumValues() []string { return enumStrings(StreamKinds()) }

// ItemStatus is the status of an item in its lifecycle events.
type ItemStatus string

// Item statuses.
const (
	ItemStatusInProgress ItemStatus = "inProgress"
	ItemStatusCompleted  ItemStatus = "completed"
	ItemStatusFailed     ItemStatus = "failed"
	ItemStatusDeclined   ItemStatus = "declined"
)

// ItemStatuses returns every ItemStatus.
func ItemStatuses() []ItemStatus {
	return []ItemStatus{ItemStatusInProgress, ItemStatusCompleted, ItemStatusFailed, ItemStatusDeclined}
}

// Valid reports whether s is one of ItemStatuses.
func (s ItemStatus) Valid() bool        { return isOneOf(s, ItemStatuses()) }
func (ItemStatus) enumValues() []string { return enumStrings(ItemStatuses()) }

// PlanStepStatus is the status of one step of a turn plan.
type PlanStepStatus string

// Plan step statuses.
const (
	PlanStepPending    PlanStepStatus = "pending"
	PlanStepInProgress PlanStepStatus = "inProgress"
	PlanStepCompleted  PlanStepStatus = "completed"
)

// PlanStepStatuses returns every PlanStepStatus.
func PlanStepStatuses() []PlanStepStatus {
	return []PlanStepStatus{PlanStepPending, PlanStepInProgress, PlanStepCompleted}
}

// Valid reports whether s is one of PlanStepStatuses.
func (s PlanStepStatus) Valid() bool        { return isOneOf(s, PlanStepStatuses()) }
func (PlanStepStatus) enumValues() []string { return enumStrings(PlanStepStatuses()) }

// TaskStatus is how a background task ended.
type TaskStatus string

// Task statuses.
const (
	TaskStatusCompleted TaskStatus = "completed"
	TaskStatusFailed    TaskStatus = "failed"
	TaskStatusStopped   TaskStatus = "stopped"
)

// TaskStatuses returns every TaskStatus.
func TaskStatuses() []TaskStatus {
	return []TaskStatus{TaskStatusCompleted, TaskStatusFailed, TaskStatusStopped}
}

// Valid reports whether s is one of TaskStatuses.
func (s TaskStatus) Valid() bool        { return isOneOf(s, TaskStatuses()) }
func (TaskStatus) enumValues() []string { return enumStrings(TaskStatuses()) }

// HookOutcome is how a hook run ended.
type HookOutcome string

// Hook outcomes.
const (
	HookOutcomeSuccess   HookOutcome = "success"
	HookOutcomeError     HookOutcome = "error"
	HookOutcomeCancelled HookOutcome = "cancelled"
)

// HookOutcomes returns every HookOutcome.
func HookOutcomes() []HookOutcome {
	return []HookOutcome{HookOutcomeSuccess, HookOutcomeError, HookOutcomeCancelled}
}

// Valid reports whether o is one of HookOutcomes.
func (o HookOutcome) Valid() bool        { return isOneOf(o, HookOutcomes()) }
func (HookOutcome) enumValues() []string { return enumStrings(HookOutcomes()) }

// ExitKind says whether a session ended normally.
type ExitKind string

// Exit kinds.
const (
	ExitGraceful ExitKind = "graceful"
	ExitError    ExitKind = "error"
)

// ExitKinds returns every ExitKind.
func ExitKinds() []ExitKind { return []ExitKind{ExitGraceful, ExitError} }

// Valid reports whether k is one of ExitKinds.
func (k ExitKind) Valid() bool        { return isOneOf(k, ExitKinds()) }
func (ExitKind) enumValues() []string { return enumStrings(ExitKinds()) }

// ErrorClass classifies a runtime.error.
type ErrorClass string

// Runtime error classes.
const (
	// ErrorClassProvider is a failure reported by the provider (model, API, agent).
	ErrorClassProvider ErrorClass = "provider_error"
	// ErrorClassTransport is a broken pipe, connection or process.
	ErrorClassTransport ErrorClass = "transport_error"
	// ErrorClassPermission is a denied authentication or authorization.
	ErrorClassPermission ErrorClass = "permission_error"
	// ErrorClassValidation is a frame that could not be decoded or did not fit its schema.
	ErrorClassValidation ErrorClass = "validation_error"
	// ErrorClassUnknown is everything else.
	ErrorClassUnknown ErrorClass = "unknown"
)

// ErrorClasses returns every ErrorClass.
func ErrorClasses() []ErrorClass {
	return []ErrorClass{ErrorClassProvider, ErrorClassTransport, ErrorClassPermission, ErrorClassValidation, ErrorClassUnknown}
}

// Valid reports whether c is one of ErrorClasses.
func (c ErrorClass) Valid() bool        { return isOneOf(c, ErrorClasses()) }
func (ErrorClass) enumValues() []string { return enumStrings(ErrorClasses()) }
