package claude

import (
	"github.com/agentwire/agentwire/tools/record/internal/script"
)

// scenario is one scripted conversation.
type scenario struct {
	name string
	// prompts are the user turns, one per result frame expected.
	prompts []string
	script  script.Script
	// approval is how the control client answers can_use_tool: "allow",
	// "deny", or "" when the scenario expects none (any that comes is
	// allowed, so a surprise prompt does not hang the run).
	approval string
}

const (
	// lsArgs is pre-approved by allowedBash, so shell and multistep run
	// without a permission prompt in every mode.
	lsArgs = `{"command":"ls","description":"List the files in the project"}`
	// touchArgs is not pre-approved: it is what the approval scenarios ask for.
	touchArgs = `{"command":"touch approved.txt","description":"Create approved.txt"}`
	// allowedBash pre-approves ls only; other commands need a permission.
	allowedBash = "Bash(ls:*) TodoWrite"
	// taskArgs starts a general-purpose sub-agent.
	taskArgs = `{"description":"List the files","prompt":"List the files in this project and report them.","subagent_type":"general-purpose","model":"haiku"}`
	// taskBackgroundArgs starts the same sub-agent in the background.
	taskBackgroundArgs = `{"description":"List the files","prompt":"List the files in this project and report them.","subagent_type":"general-purpose","model":"haiku","run_in_background":true}`
)

func usage(in, cached, out int) script.Reply {
	return script.Reply{InputTokens: in, CachedTokens: cached, OutputTokens: out}
}

func reply(base script.Reply, r script.Reply) script.Reply {
	r.InputTokens, r.CachedTokens, r.OutputTokens = base.InputTokens, base.CachedTokens, base.OutputTokens
	return r
}

func scenarios() []scenario {
	bash := func(id, args string) []script.ToolCall {
		return []script.ToolCall{{ID: id, Name: "Bash", Args: args}}
	}
	todo := func(id, args string) []script.ToolCall {
		return []script.ToolCall{{ID: id, Name: "TodoWrite", Args: args}}
	}
	return []scenario{
		{
			name:    "plain",
			prompts: []string{"Say hello in one short sentence."},
			script: script.Script{
				reply(usage(3100, 0, 12), script.Reply{Text: "Hello! This is a tiny Go project that prints hello."}),
			},
		},
		{
			name:    "shell",
			prompts: []string{"List the files in this project."},
			script: script.Script{
				reply(usage(3100, 0, 30), script.Reply{Text: "I'll list the files.", ToolCalls: bash("toolu_rec_shell_ls", lsArgs)}),
				reply(usage(3300, 3100, 25), script.Reply{Text: "The project has three files: README.md, go.mod and main.go."}),
			},
		},
		{
			name:    "multistep",
			prompts: []string{"Look at this project and tell me what it does. Plan your steps first."},
			script: script.Script{
				reply(usage(3100, 0, 80), script.Reply{
					Thinking:  "The user wants to know what the project does. I should plan: list the files, then read them and summarize.",
					ToolCalls: todo("toolu_rec_multi_todo1", `{"todos":[{"content":"List the project files","status":"in_progress","activeForm":"Listing the project files"},{"content":"Summarize what the project does","status":"pending","activeForm":"Summarizing what the project does"}]}`),
				}),
				reply(usage(3400, 3100, 30), script.Reply{Text: "Listing the files first.", ToolCalls: bash("toolu_rec_multi_ls", lsArgs)}),
				reply(usage(3600, 3400, 60), script.Reply{
					Thinking:  "There are go.mod, main.go and README.md: a tiny Go program. Both steps are done now.",
					ToolCalls: todo("toolu_rec_multi_todo2", `{"todos":[{"content":"List the project files","status":"completed","activeForm":"Listing the project files"},{"content":"Summarize what the project does","status":"completed","activeForm":"Summarizing what the project does"}]}`),
				}),
				reply(usage(3800, 3600, 30), script.Reply{Text: "This is a tiny Go module (example.com/demo) whose main.go prints \"hello\"."}),
			},
		},
		{
			name:    "error-500",
			prompts: []string{"Say hello."},
			// CLAUDE_CODE_MAX_RETRIES=1: the first try and one retry fail.
			script: script.Script{
				{Error: &script.HTTPError{Status: 500, Message: "Internal server error (scripted)"}},
				{Error: &script.HTTPError{Status: 500, Message: "Internal server error (scripted)"}},
				{Error: &script.HTTPError{Status: 500, Message: "Internal server error (scripted)"}},
			},
		},
		{
			name:    "error-429",
			prompts: []string{"Say hello."},
			script: script.Script{
				{Error: &script.HTTPError{Status: 429, Message: "Rate limited (scripted)", RetryAfterSeconds: 1}},
				{Error: &script.HTTPError{Status: 429, Message: "Rate limited (scripted)", RetryAfterSeconds: 1}},
				{Error: &script.HTTPError{Status: 429, Message: "Rate limited (scripted)", RetryAfterSeconds: 1}},
			},
		},
		{
			name:     "approval-allow",
			prompts:  []string{"Create a file named approved.txt."},
			approval: "allow",
			script: script.Script{
				reply(usage(3100, 0, 30), script.Reply{Text: "I'll create the file.", ToolCalls: bash("toolu_rec_allow_touch", touchArgs)}),
				reply(usage(3300, 3100, 15), script.Reply{Text: "Created approved.txt."}),
			},
		},
		{
			name:     "approval-deny",
			prompts:  []string{"Create a file named approved.txt."},
			approval: "deny",
			script: script.Script{
				reply(usage(3100, 0, 30), script.Reply{Text: "I'll create the file.", ToolCalls: bash("toolu_rec_deny_touch", touchArgs)}),
				reply(usage(3300, 3100, 20), script.Reply{Text: "I could not create approved.txt: permission to run the command was denied."}),
			},
		},
		{
			// A sub-agent (the Task tool) runs its own requests inside the
			// main turn: the stream shows them under parent_tool_use_id,
			// the result's modelUsage counts them, and the CLI writes them
			// to a transcript of their own beside the session log.
			name:    "subagent",
			prompts: []string{"Have a sub-agent list the files in this project."},
			script: script.Script{
				reply(usage(3100, 0, 40), script.Reply{Text: "I'll ask a sub-agent.", ToolCalls: []script.ToolCall{{ID: "toolu_rec_sub_task", Name: "Task", Args: taskArgs}}}),
				reply(usage(2000, 0, 20), script.Reply{Text: "Listing the files.", ToolCalls: bash("toolu_rec_sub_ls", lsArgs)}),
				reply(usage(2200, 2000, 25), script.Reply{Text: "The project has README.md, go.mod and main.go."}),
				reply(usage(3500, 3100, 30), script.Reply{Text: "The sub-agent found three files: README.md, go.mod and main.go."}),
			},
		},
		{
			// The same sub-agent in the background: the Task call returns
			// at once and the turn ends while the sub-agent runs; its
			// notification then starts a turn of its own. The two ask the
			// API at the same time, so each reply names its model.
			name:    "subagent-background",
			prompts: []string{"Have a sub-agent list the files in this project in the background."},
			script: script.Script{
				{Model: "sonnet", InputTokens: 3100, OutputTokens: 40, Text: "I'll start a sub-agent in the background.", ToolCalls: []script.ToolCall{{ID: "toolu_rec_bg_task", Name: "Task", Args: taskBackgroundArgs}}},
				{Model: "haiku", InputTokens: 2000, OutputTokens: 20, Text: "Listing the files.", ToolCalls: bash("toolu_rec_bg_ls", lsArgs)},
				{Model: "haiku", InputTokens: 2200, CachedTokens: 2000, OutputTokens: 25, Text: "The project has README.md, go.mod and main.go."},
				{Model: "sonnet", InputTokens: 3300, CachedTokens: 3100, OutputTokens: 20, Text: "The sub-agent is listing the files; I'll report when it is done."},
				{Model: "sonnet", InputTokens: 3500, CachedTokens: 3300, OutputTokens: 30, Text: "The sub-agent found three files: README.md, go.mod and main.go."},
			},
		},
		{
			name:    "two-turns",
			prompts: []string{"What language is this project in? Answer in one word.", "And what does main.go print?"},
			script: script.Script{
				reply(usage(3100, 0, 3), script.Reply{Text: "Go."}),
				reply(usage(3200, 3100, 8), script.Reply{Text: "It prints \"hello\"."}),
			},
		},
	}
}
