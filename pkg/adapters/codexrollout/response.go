package codexrollout

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/adapters/codexcommon"
	"github.com/agentwire/agentwire/pkg/canonical"
)

type respItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Summary   json.RawMessage `json:"summary"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	Status    string          `json:"status"`
	Action    *struct {
		Type    string          `json:"type"`
		Query   string          `json:"query"`
		Command json.RawMessage `json:"command"`
	} `json:"action"`
}

// toolNames maps Codex's function tool names to canonical item types;
// names with "__" are MCP tools (server__tool), others dynamic tools.
var toolNames = map[string]canonical.ItemType{
	"shell": canonical.ItemTypeCommandExecution, "exec_command": canonical.ItemTypeCommandExecution,
	"shell_command": canonical.ItemTypeCommandExecution, "local_shell": canonical.ItemTypeCommandExecution,
	"container.exec": canonical.ItemTypeCommandExecution, "write_stdin": canonical.ItemTypeCommandExecution,
	"unified_exec": canonical.ItemTypeCommandExecution,
	"apply_patch":  canonical.ItemTypeFileChange, "update_plan": canonical.ItemTypePlan,
	"view_image": canonical.ItemTypeImageView, "web_search": canonical.ItemTypeWebSearch,
	"spawn_agent": canonical.ItemTypeCollabAgentToolCall, "send_input": canonical.ItemTypeCollabAgentToolCall,
	"wait": canonical.ItemTypeCollabAgentToolCall, "close_agent": canonical.ItemTypeCollabAgentToolCall,
	"resume_agent": canonical.ItemTypeCollabAgentToolCall,
}

func toolType(name string) canonical.ItemType {
	if t, ok := toolNames[name]; ok {
		return t
	}
	if strings.Contains(name, "__") {
		return canonical.ItemTypeMCPToolCall
	}
	return canonical.ItemTypeDynamicToolCall
}

// commandOf reads the command of a shell-like call's arguments.
func commandOf(args string) string {
	var a struct {
		Cmd     json.RawMessage `json:"cmd"`
		Command json.RawMessage `json:"command"`
	}
	if jsonscan.Unmarshal([]byte(args), &a) != nil {
		return ""
	}
	return codexcommon.Text(argv(a.Cmd), argv(a.Command))
}

func outputText(raw json.RawMessage) string {
	var s string
	if jsonscan.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Output string `json:"output"`
	}
	if jsonscan.Unmarshal(raw, &o) == nil && o.Output != "" {
		return o.Output
	}
	return codexcommon.JoinText(raw)
}

// responseItem maps a response_item line: the Responses API transcript.
func (mp *mapper) responseItem(raw json.RawMessage) {
	var r respItem
	err := jsonscan.Unmarshal(raw, &r)
	mp.decodedResponseItem(r, err, raw)
}

// decodedResponseItem maps a response item raw that decoded as r, or
// failed to with err.
func (mp *mapper) decodedResponseItem(r respItem, err error, raw json.RawMessage) {
	if err != nil {
		mp.em.Fail(mp.env, canonical.ErrorClassValidation, "response_item could not be read", nil)
		return
	}
	switch r.Type {
	case "message", "agent_message":
		t, k := canonical.ItemTypeAssistantMessage, canonical.StreamAssistantText
		switch r.Role {
		case "user":
			t, k = canonical.ItemTypeUserMessage, canonical.StreamUnknown
			if name, ok := contextFragment(codexcommon.JoinText(r.Content)); ok {
				// State Codex hands the model in the user's role
				// (environment, instructions, an aborted turn, ...): not
				// what the user said, so not a user message, as Codex's own
				// turn items leave it out.
				mp.toolSighting(sighting{fam: FamilyResponse, final: true, lc: canonical.ItemLifecycle{ItemType: canonical.ItemTypeUnknown, Title: name, Data: raw}})
				return
			}
		case "developer", "system":
			// Instructions Codex gives the model: context, not a message of
			// the conversation; a self-contained item of unknown type.
			mp.toolSighting(sighting{fam: FamilyResponse, final: true, lc: canonical.ItemLifecycle{ItemType: canonical.ItemTypeUnknown, Title: r.Role + " message", Data: raw}})
			return
		}
		s := sighting{fam: FamilyResponse, pid: r.ID, lc: canonical.ItemLifecycle{ItemType: t, Content: text(k, codexcommon.JoinText(r.Content)), Data: raw}}
		if t == canonical.ItemTypeUserMessage {
			s.pid = ""
		}
		mp.messageSighting(s)
	case "reasoning":
		c := map[canonical.StreamKind]string{}
		if s := codexcommon.JoinText(r.Summary); s != "" {
			c[canonical.StreamReasoningSummaryText] = s
		}
		if s := codexcommon.JoinText(r.Content); s != "" {
			c[canonical.StreamReasoningText] = s
		}
		mp.messageSighting(sighting{fam: FamilyResponse, pid: r.ID, lc: canonical.ItemLifecycle{ItemType: canonical.ItemTypeReasoning, Content: c, Data: raw}})
	case "function_call", "custom_tool_call", "local_shell_call", "tool_search_call":
		name := codexcommon.Text(r.Name, r.Type)
		t := toolType(name)
		if r.Type == "local_shell_call" {
			t = canonical.ItemTypeCommandExecution
		}
		if r.Type == "tool_search_call" {
			t = canonical.ItemTypeDynamicToolCall
		}
		lc := canonical.ItemLifecycle{ItemType: t, ToolName: name, Title: name, Data: raw}
		if t == canonical.ItemTypeCommandExecution {
			lc.Command = commandOf(r.Arguments)
			if r.Action != nil {
				lc.Command = codexcommon.Text(lc.Command, argv(r.Action.Command))
			}
			lc.Title = codexcommon.Text(lc.Command, name)
		}
		call := codexcommon.Text(r.CallID, r.ID)
		mp.toolSighting(sighting{fam: FamilyResponse, pid: call, key: "call:" + call, lc: lc})
		if name == "update_plan" {
			var a struct {
				Explanation string                 `json:"explanation"`
				Plan        []codexcommon.PlanStep `json:"plan"`
			}
			if jsonscan.Unmarshal([]byte(r.Arguments), &a) == nil && a.Plan != nil {
				mp.em.Emit(mp.env, &canonical.TurnPlanUpdated{Explanation: a.Explanation, Plan: codexcommon.Plan(a.Plan)})
			}
		}
	case "function_call_output", "custom_tool_call_output", "tool_search_output", "local_shell_call_output":
		call := codexcommon.Text(r.CallID, r.ID)
		lc := canonical.ItemLifecycle{Data: raw}
		i := slices.IndexFunc(mp.st.Open, func(o OpenItem) bool { return o.Key == "call:"+call })
		if i >= 0 {
			lc.ItemType = mp.st.Open[i].Type
		} else {
			lc.ItemType = canonical.ItemTypeDynamicToolCall
		}
		out := outputText(r.Output)
		if rejected(out) {
			lc.Status = canonical.ItemStatusDeclined
		}
		if lc.ItemType == canonical.ItemTypeCommandExecution {
			if text, exit, ms, ok := shellOutput(out); ok {
				out, lc.ExitCode, lc.DurationMs = text, exit, ms
			} else if text, exit, ms, ok := execOutput(out); ok {
				out, lc.ExitCode, lc.DurationMs = text, exit, ms
			} else {
				lc.ExitCode = sandboxExit(out)
			}
		}
		if out != "" {
			k := canonical.StreamUnknown
			switch lc.ItemType { //nolint:exhaustive // output streams exist for these two
			case canonical.ItemTypeCommandExecution:
				k = canonical.StreamCommandOutput
			case canonical.ItemTypeFileChange:
				k = canonical.StreamFileChangeOutput
			}
			lc.Content = map[canonical.StreamKind]string{k: out}
		}
		mp.toolSighting(sighting{fam: FamilyResponse, pid: call, key: "call:" + call, final: true, lc: lc})
	case "web_search_call":
		lc := canonical.ItemLifecycle{ItemType: canonical.ItemTypeWebSearch, Data: raw}
		if r.Action != nil {
			lc.Title = r.Action.Query
		}
		mp.toolSighting(sighting{fam: FamilyResponse, pid: r.ID, final: true, lc: lc})
	case "image_generation_call":
		mp.toolSighting(sighting{fam: FamilyResponse, pid: r.ID, final: true, lc: canonical.ItemLifecycle{ItemType: canonical.ItemTypeImageView, Data: raw}})
	case "compaction", "compaction_summary":
		mp.toolSighting(sighting{fam: FamilyResponse, pid: r.ID, final: true, lc: canonical.ItemLifecycle{ItemType: canonical.ItemTypeContextCompaction, Data: raw}})
	case "ghost_snapshot":
		mp.em.Emit(mp.env, &canonical.ThreadMetadataUpdated{Metadata: map[string]json.RawMessage{"ghostSnapshot": raw}})
	default:
		adapter.Unmapped(mp.em, mp.env, "response_item:"+r.Type)
	}
}

// shellOutput unwraps a shell call's output as Codex CLIs of 2025 wrote it
// for the model: a JSON object {"output": text, "metadata": {"exit_code":
// n, "duration_seconds": s}}, which is the only place those rollouts say
// how the command exited and how long it ran (its call and output lines
// have one timestamp).
func shellOutput(out string) (string, *int, *int64, bool) {
	if !strings.HasPrefix(out, "{") {
		return "", nil, nil, false
	}
	var o struct {
		Output   *string `json:"output"`
		Metadata *struct {
			ExitCode        *int     `json:"exit_code"`
			DurationSeconds *float64 `json:"duration_seconds"`
		} `json:"metadata"`
	}
	if jsonscan.Unmarshal([]byte(out), &o) != nil || o.Output == nil || o.Metadata == nil {
		return "", nil, nil, false
	}
	var ms *int64
	if s := o.Metadata.DurationSeconds; s != nil && *s >= 0 && *s < 1e12 {
		ms = new(int64(math.Round(*s * 1000)))
	}
	return *o.Output, o.Metadata.ExitCode, ms, true
}

// rejected says whether a call's output is Codex's report that the user
// declined the call, which the model is told in place of an output. The
// approval itself is not in the rollout: this is all that tells a
// declined call from one that ran. Codex of 2025 wrote "patch rejected by
// user" and "exec command rejected by user"; codex 0.171 writes
// `exec_command failed: CreateProcess { message: "Rejected(\"rejected by user\")" }`.
func rejected(out string) bool {
	out = strings.TrimSpace(out)
	return out == "patch rejected by user" || out == "exec command rejected by user" ||
		strings.HasPrefix(out, "exec_command failed: ") && strings.Contains(out, "Rejected(")
}

// sandboxExit is the exit code of a command the sandbox stopped, as Codex
// CLIs of 2025 reported it in place of the output: "failed in sandbox
// MacosSeatbelt with execution error: ..., exit code: 1, stdout: ...,
// stderr: ...". The text stays the output: it is what the model saw.
func sandboxExit(out string) *int {
	if !strings.HasPrefix(out, "failed in sandbox ") {
		return nil
	}
	_, after, ok := strings.Cut(out, ", exit code: ")
	if !ok {
		return nil
	}
	code, _, ok := strings.Cut(after, ",")
	if !ok {
		return nil
	}
	n, err := strconv.Atoi(code)
	if err != nil {
		return nil
	}
	return &n
}

// execOutput unwraps an exec_command or write_stdin call's output as
// Codex CLIs of 2026 write it for the model: header lines, then "Output:"
// and the output itself.
//
//	Chunk ID: 56effa
//	Wall time: 0.0512 seconds
//	Process exited with code 0
//	Original token count: 3
//	Output:
//	...
//
// The exit code and the wall time are the command's once its process
// exited; while it runs ("Process running with session ID n") the wall
// time is only this chunk's wait. Any other line before "Output:" means
// this is not such a header: the output is kept as it is.
func execOutput(out string) (string, *int, *int64, bool) {
	var exit *int
	var wall *float64
	header, body, found := strings.Cut(out, "\nOutput:\n")
	if !found {
		header, found = strings.CutSuffix(out, "\nOutput:")
	}
	if !found || header == "" {
		return "", nil, nil, false
	}
	for line := range strings.SplitSeq(header, "\n") {
		switch {
		case strings.HasPrefix(line, "Chunk ID: "), strings.HasPrefix(line, "Original token count: "),
			strings.HasPrefix(line, "Process running with session ID "):
		case strings.HasPrefix(line, "Wall time: ") && strings.HasSuffix(line, " seconds"):
			s, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(line, "Wall time: "), " seconds"), 64)
			// ParseFloat reads "NaN" and "Inf" too, which no duration is.
			if err != nil || math.IsNaN(s) || s < 0 || s > 1e9 {
				return "", nil, nil, false
			}
			wall = &s
		case strings.HasPrefix(line, "Process exited with code "):
			n, err := strconv.Atoi(strings.TrimPrefix(line, "Process exited with code "))
			if err != nil {
				return "", nil, nil, false
			}
			exit = &n
		default:
			return "", nil, nil, false
		}
	}
	var ms *int64
	if exit != nil && wall != nil {
		ms = new(int64(math.Round(*wall * 1000)))
	}
	return body, exit, ms, true
}

// outputDelta appends command output to the call's item.
func (mp *mapper) outputDelta(e ev) {
	key := "call:" + e.call()
	i := slices.IndexFunc(mp.st.Open, func(o OpenItem) bool { return o.Key == key })
	if i < 0 {
		mp.st.Open = append(mp.st.Open, mp.open(sighting{fam: FamilyEvent, key: key, tool: true, lc: canonical.ItemLifecycle{ItemType: canonical.ItemTypeCommandExecution}}))
		i = len(mp.st.Open) - 1
	}
	chunk := e.Delta
	if chunk == "" {
		chunk = e.Stdout
	}
	mp.em.Emit(mp.itemEnv(mp.st.Open[i]), &canonical.ContentDelta{StreamKind: canonical.StreamCommandOutput, Delta: chunk})
}

// contextFragments are the markers of the user-role messages that carry
// context rather than what the user said, as Codex itself recognises them
// (codex-rs "contextual user fragments": a message wholly between an open
// and a close marker): these are the ones its rollouts have written.
var contextFragments = [...]struct{ name, open, close string }{
	{"environment context", "<environment_context>", "</environment_context>"},
	{"user instructions", "<user_instructions>", "</user_instructions>"},
	{"AGENTS.md instructions", "# AGENTS.md instructions for ", "</INSTRUCTIONS>"},
	{"turn aborted", "<turn_aborted>", "</turn_aborted>"},
	{"user shell command", "<user_shell_command>", "</user_shell_command>"},
	{"skill", "<skill>", "</skill>"},
	{"subagent notification", "<subagent_notification>", "</subagent_notification>"},
	{"collaboration mode", "<collaboration_mode>", "</collaboration_mode>"},
}

// contextFragment reports whether a user-role message is context, and
// which kind.
func contextFragment(text string) (string, bool) {
	t := strings.TrimSpace(text)
	for _, f := range contextFragments {
		if len(t) >= len(f.open)+len(f.close) && strings.HasPrefix(t, f.open) && strings.HasSuffix(t, f.close) {
			return f.name, true
		}
	}
	return "", false
}
