package canonical

import "encoding/json"

// TaskStarted is the payload of task.started.
type TaskStarted struct {
	// TaskID is the provider's task id, unique within the session.
	TaskID string `json:"taskId"`
	// Description says what the task does.
	Description string `json:"description,omitempty"`
	// TaskType is the provider's kind of task (local_bash, local_agent, ...).
	TaskType string `json:"taskType,omitempty"`
}

// TaskProgress is the payload of task.progress.
type TaskProgress struct {
	// TaskID is the provider's task id.
	TaskID string `json:"taskId"`
	// Description says what the task is doing now.
	Description string `json:"description" canonical:"allowempty"`
	// Usage is the task's usage so far as the provider reported it.
	Usage json.RawMessage `json:"usage,omitempty"`
	// LastToolName is the tool the task used last.
	LastToolName string `json:"lastToolName,omitempty"`
}

// TaskCompleted is the payload of task.completed.
type TaskCompleted struct {
	// TaskID is the provider's task id.
	TaskID string `json:"taskId"`
	// Status is how the task ended.
	Status TaskStatus `json:"status"`
	// Summary is the task's final summary.
	Summary string `json:"summary,omitempty"`
	// Usage is the task's total usage as the provider reported it.
	Usage json.RawMessage `json:"usage,omitempty"`
}

// HookStarted is the payload of hook.started.
type HookStarted struct {
	// HookID is the provider's id of this hook run.
	HookID string `json:"hookId"`
	// HookName is the configured hook's name.
	HookName string `json:"hookName"`
	// HookEvent is the event that fired it (PreToolUse, Stop, ...).
	HookEvent string `json:"hookEvent"`
	// Command is what a command hook runs, when the provider says: one
	// event and matcher (one HookName) can run several commands, each a
	// run of its own.
	Command string `json:"command,omitempty"`
}

// HookProgress is the payload of hook.progress.
type HookProgress struct {
	// HookID is the provider's id of this hook run.
	HookID string `json:"hookId"`
	// Output is the hook's combined output so far.
	Output string `json:"output,omitempty"`
	// Stdout is the hook's standard output so far.
	Stdout string `json:"stdout,omitempty"`
	// Stderr is the hook's standard error so far.
	Stderr string `json:"stderr,omitempty"`
}

// HookCompleted is the payload of hook.completed.
type HookCompleted struct {
	// HookID is the provider's id of this hook run.
	HookID string `json:"hookId"`
	// Outcome is how the hook ended.
	Outcome HookOutcome `json:"outcome"`
	// Output is the hook's combined output.
	Output string `json:"output,omitempty"`
	// Stdout is the hook's standard output.
	Stdout string `json:"stdout,omitempty"`
	// Stderr is the hook's standard error.
	Stderr string `json:"stderr,omitempty"`
	// ExitCode is the hook process's exit status.
	ExitCode *int `json:"exitCode,omitempty"`
	// DurationMs is how long the run took, as the provider measured it.
	DurationMs *int64 `json:"durationMs,omitempty"`
}

// ToolProgress is the payload of tool.progress.
type ToolProgress struct {
	// ToolUseID is the provider's id of the tool call.
	ToolUseID string `json:"toolUseId,omitempty"`
	// ToolName is the tool's name.
	ToolName string `json:"toolName,omitempty"`
	// Summary says what the tool is doing.
	Summary string `json:"summary,omitempty"`
	// ElapsedSeconds is how long the tool has run, in seconds.
	ElapsedSeconds *float64 `json:"elapsedSeconds,omitempty" canonical:"nonneg"`
}

// ToolSummary is the payload of tool.summary.
type ToolSummary struct {
	// Summary is the provider's summary of the preceding tool calls.
	Summary string `json:"summary"`
	// PrecedingToolUseIDs are the provider ids of the summarized tool calls.
	PrecedingToolUseIDs []string `json:"precedingToolUseIds,omitempty"`
}

func (*TaskStarted) Kind() Kind   { return KindTaskStarted }
func (*TaskProgress) Kind() Kind  { return KindTaskProgress }
func (*TaskCompleted) Kind() Kind { return KindTaskCompleted }
func (*HookStarted) Kind() Kind   { return KindHookStarted }
func (*HookProgress) Kind() Kind  { return KindHookProgress }
func (*HookCompleted) Kind() Kind { return KindHookCompleted }
func (*ToolProgress) Kind() Kind  { return KindToolProgress }
func (*ToolSummary) Kind() Kind   { return KindToolSummary }

func (*TaskStarted) isPayload()   {}
func (*TaskProgress) isPayload()  {}
func (*TaskCompleted) isPayload() {}
func (*HookStarted) isPayload()   {}
func (*HookProgress) isPayload()  {}
func (*HookCompleted) isPayload() {}
func (*ToolProgress) isPayload()  {}
func (*ToolSummary) isPayload()   {}
