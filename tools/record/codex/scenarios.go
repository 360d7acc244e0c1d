package codex

import (
	"encoding/json"

	"github.com/agentwire/agentwire/tools/record/internal/script"
)

// Codex 0.171.0 offers gpt-5.5 the unified exec tool (exec_command with a
// cmd string) rather than the older shell tool with an argv array.
const shellTool = "exec_command"

func args(v map[string]any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // literal maps below always marshal
	}
	return string(b)
}

func shellCall(id, cmd string) script.ToolCall {
	return script.ToolCall{ID: id, Name: shellTool, Args: args(map[string]any{"cmd": cmd, "yield_time_ms": 1000})}
}

// escalatedCall asks to run cmd outside the workspace-write sandbox, which
// is what makes Codex (approval_policy on-request) ask the client.
func escalatedCall(id, cmd string) script.ToolCall {
	return script.ToolCall{ID: id, Name: shellTool, Args: args(map[string]any{
		"cmd": cmd, "yield_time_ms": 1000,
		"sandbox_permissions": "require_escalated",
		"justification":       "Write a marker file outside the workspace?",
	})}
}

func planCall(id string, statuses ...string) script.ToolCall {
	steps := []string{"Look at the project files", "Summarize main.go"}
	plan := make([]any, len(steps))
	for i, s := range steps {
		plan[i] = map[string]any{"step": s, "status": statuses[i]}
	}
	return script.ToolCall{ID: id, Name: "update_plan", Args: args(map[string]any{"explanation": "Two small steps.", "plan": plan})}
}

// errorAttempts is more failures than Codex makes attempts with the retry
// limits of configTOML, so the turn fails instead of recovering.
const errorAttempts = 12

func failing(status int, msg string, retryAfter int) script.Script {
	sc := make(script.Script, errorAttempts)
	for i := range sc {
		sc[i] = script.Reply{Error: &script.HTTPError{Status: status, Message: msg, RetryAfterSeconds: retryAfter}}
	}
	return sc
}

const execNoApprovals = "codex exec has no client to answer approvals: it forces approval policy never, so an escalated exec_command is refused inside Codex (the model gets \"approval policy is Never; reject command\") and no approval or command event is emitted"

const approvalNotPersisted = "the approval request and answer are not persisted; the rollout shows the escalated call and its output"

func scenarios() []scenario {
	return []scenario{
		{
			name:    "plain",
			prompts: []string{"Say hello in one sentence."},
			script:  script.Script{{Text: "Hello! I'm ready to help with your project.", InputTokens: 1200, CachedTokens: 1024, OutputTokens: 12}},
		},
		{
			name:    "shell",
			prompts: []string{"List the files in this directory."},
			script: script.Script{
				{ToolCalls: []script.ToolCall{shellCall("call_ls", "ls")}, InputTokens: 1300, OutputTokens: 20},
				{Text: "The directory holds README.md, go.mod and main.go.", InputTokens: 1400, CachedTokens: 1280, OutputTokens: 14},
			},
		},
		{
			name:    "multistep",
			prompts: []string{"Plan, then read main.go and tell me what it prints."},
			script: script.Script{
				{Thinking: "The user wants a plan first, then a look at main.go.", ToolCalls: []script.ToolCall{planCall("call_plan1", "in_progress", "pending")}, InputTokens: 1300, OutputTokens: 40},
				{Text: "Reading main.go now.", ToolCalls: []script.ToolCall{shellCall("call_cat", "cat main.go")}, InputTokens: 1400, CachedTokens: 1280, OutputTokens: 20},
				{Thinking: "main.go prints hello; the plan is done.", ToolCalls: []script.ToolCall{planCall("call_plan2", "completed", "completed")}, InputTokens: 1500, CachedTokens: 1400, OutputTokens: 30},
				{Text: "main.go prints \"hello\" and exits.", InputTokens: 1600, CachedTokens: 1500, OutputTokens: 10},
			},
		},
		{
			name:    "error-500",
			prompts: []string{"Say hello."},
			script:  failing(500, "The server had an error while processing your request.", 0),
			note:    "500 on every request; codex retried (request_max_retries=2 inside each of 1+stream_max_retries=2 attempts) and failed the turn; it reports its own message, not the server's",
		},
		{
			name:    "error-429",
			prompts: []string{"Say hello."},
			// Two rate limits, then an answer: the recording shows the
			// retries and the recovery, where error-500 shows the failure.
			script: append(failing(429, "Rate limit reached for requests. Please try again in 1s.", 1)[:2],
				script.Reply{Text: "Hello, after a short wait.", InputTokens: 1200, OutputTokens: 7}),
			note:        "429 with Retry-After: 1 on the first two requests; codex waited about 1s before each retry and the third attempt answered",
			rolloutNote: "the retries leave no trace in the rollout",
		},
		{
			name:        "approval-allow",
			prompts:     []string{"Create a marker file next to the workspace."},
			approve:     "accept",
			rolloutNote: approvalNotPersisted,
			script: script.Script{
				{ToolCalls: []script.ToolCall{escalatedCall("call_touch", "touch ../marker.txt")}, InputTokens: 1300, OutputTokens: 30},
				{Text: "Created ../marker.txt.", InputTokens: 1400, CachedTokens: 1280, OutputTokens: 8},
			},
			execUnsupported: execNoApprovals,
		},
		{
			name:        "approval-deny",
			prompts:     []string{"Create a marker file next to the workspace."},
			approve:     "decline",
			rolloutNote: approvalNotPersisted,
			script: script.Script{
				{ToolCalls: []script.ToolCall{escalatedCall("call_touch", "touch ../marker.txt")}, InputTokens: 1300, OutputTokens: 30},
				{Text: "The command was declined, so I did not create the file.", InputTokens: 1400, CachedTokens: 1280, OutputTokens: 14},
			},
			execUnsupported: execNoApprovals,
		},
		{
			name:    "two-turns",
			prompts: []string{"Remember the number 7.", "What number did I ask you to remember?"},
			script: script.Script{
				{Text: "Noted: 7.", InputTokens: 1200, OutputTokens: 5},
				{Text: "You asked me to remember 7.", InputTokens: 1300, CachedTokens: 1200, OutputTokens: 8},
			},
		},
	}
}
