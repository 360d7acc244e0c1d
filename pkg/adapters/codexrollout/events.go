package codexrollout

import (
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/adapters/codexcommon"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// ev is the union of the EventMsg members the mapping reads.
type ev struct {
	Type             string          `json:"type"`
	TurnID           string          `json:"turn_id"`
	TurnIDCamel      string          `json:"turnId"`
	CallID           string          `json:"call_id"`
	CallIDCamel      string          `json:"callId"`
	ItemID           string          `json:"item_id"`
	ID               string          `json:"id"`
	Message          string          `json:"message"`
	Text             string          `json:"text"`
	Delta            string          `json:"delta"`
	Reason           json.RawMessage `json:"reason"`
	Command          json.RawMessage `json:"command"`
	Source           json.RawMessage `json:"source"`
	ExitCode         *int            `json:"exit_code"`
	AggregatedOutput *string         `json:"aggregated_output"`
	Stdout           string          `json:"stdout"`
	Stderr           string          `json:"stderr"`
	Success          *bool           `json:"success"`
	Query            string          `json:"query"`
	Invocation       *struct {
		Server string `json:"server"`
		Tool   string `json:"tool"`
	} `json:"invocation"`
	Tool           string                 `json:"tool"`
	Changes        json.RawMessage        `json:"changes"`
	Item           json.RawMessage        `json:"item"`
	Explanation    string                 `json:"explanation"`
	Plan           []codexcommon.PlanStep `json:"plan"`
	UnifiedDiff    string                 `json:"unified_diff"`
	FromModel      string                 `json:"from_model"`
	ToModel        string                 `json:"to_model"`
	Summary        string                 `json:"summary"`
	Details        *string                `json:"details"`
	CodexErrorInfo json.RawMessage        `json:"codex_error_info"`
	Error          json.RawMessage        `json:"error"`
	DurationMs     *int64                 `json:"duration_ms"`
	Duration       json.RawMessage        `json:"duration"`
	ContentIndex   *int                   `json:"content_index"`
	SummaryIndex   *int                   `json:"summary_index"`
	Questions      json.RawMessage        `json:"questions"`
	ThreadName     string                 `json:"thread_name"`
	Run            *struct {
		ID         string `json:"id"`
		EventName  string `json:"event_name"`
		Status     string `json:"status"`
		SourcePath string `json:"source_path"`
		DurationMs *int64 `json:"duration_ms"`
	} `json:"run"`
	AgentThreadID string `json:"agent_thread_id"`
	SessionID     string `json:"session_id"`
	Path          string `json:"path"`
	Prompt        string `json:"prompt"`
}

// taskError reads the error a task_complete carries: its message (or a
// fallback) and codex_error_info, and whether there is one. Absent or null
// is none.
func taskError(raw json.RawMessage) (msg string, info json.RawMessage, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, false
	}
	var e struct {
		Message        string          `json:"message"`
		CodexErrorInfo json.RawMessage `json:"codex_error_info"`
	}
	if jsonscan.Unmarshal(raw, &e) != nil {
		// Not the object of the schema: a message as a string, or a shape
		// of a later CLI. The turn failed all the same.
		_ = jsonscan.Unmarshal(raw, &e.Message)
	}
	return codexcommon.Text(e.Message, "turn failed"), e.CodexErrorInfo, true
}

// failsTurn says whether an error line means its turn failed, as the
// app-server decides for the same error: a retry announced, or a rollback
// of the thread that failed, leaves the turn going.
func failsTurn(msg string, info json.RawMessage) bool {
	return !codexcommon.IsRetrying(msg) && !strings.Contains(strings.ToLower(string(info)), "thread_rollback_failed")
}

// rustDurationMs reads a Rust Duration as serde writes it, {"secs": s,
// "nanos": n}, in whole milliseconds; nil for anything else.
func rustDurationMs(raw json.RawMessage) *int64 {
	var d struct {
		Secs  *int64 `json:"secs"`
		Nanos *int64 `json:"nanos"`
	}
	// A Rust Duration's nanos are below a second; more would overflow the
	// sum.
	if jsonscan.Unmarshal(raw, &d) != nil || d.Secs == nil || d.Nanos == nil || *d.Secs < 0 || *d.Nanos < 0 || *d.Nanos >= 1e9 ||
		*d.Secs > math.MaxInt64/1000-1 {
		return nil
	}
	return new(*d.Secs*1000 + *d.Nanos/1e6)
}

func (e ev) turn() string { return codexcommon.Text(e.TurnID, e.TurnIDCamel) }
func (e ev) call() string { return codexcommon.Text(e.CallID, e.CallIDCamel) }

func nn(v *int) *int {
	if v == nil || *v < 0 {
		return nil
	}
	return v
}

// toolEvents maps the EventMsg tool begin/end families to an item type and
// whether the line ends the call.
var toolEvents = map[string]struct {
	t   canonical.ItemType
	end bool
}{
	"exec_command_begin":             {canonical.ItemTypeCommandExecution, false},
	"exec_command_end":               {canonical.ItemTypeCommandExecution, false},
	"terminal_interaction":           {canonical.ItemTypeCommandExecution, false},
	"patch_apply_begin":              {canonical.ItemTypeFileChange, false},
	"patch_apply_end":                {canonical.ItemTypeFileChange, false},
	"mcp_tool_call_begin":            {canonical.ItemTypeMCPToolCall, false},
	"mcp_tool_call_end":              {canonical.ItemTypeMCPToolCall, false},
	"web_search_begin":               {canonical.ItemTypeWebSearch, false},
	"web_search_end":                 {canonical.ItemTypeWebSearch, false},
	"image_generation_begin":         {canonical.ItemTypeImageView, false},
	"image_generation_end":           {canonical.ItemTypeImageView, false},
	"view_image_tool_call":           {canonical.ItemTypeImageView, false},
	"dynamic_tool_call_request":      {canonical.ItemTypeDynamicToolCall, false},
	"dynamic_tool_call_response":     {canonical.ItemTypeDynamicToolCall, false},
	"collab_agent_spawn_begin":       {canonical.ItemTypeCollabAgentToolCall, false},
	"collab_agent_spawn_end":         {canonical.ItemTypeCollabAgentToolCall, false},
	"collab_agent_interaction_begin": {canonical.ItemTypeCollabAgentToolCall, false},
	"collab_agent_interaction_end":   {canonical.ItemTypeCollabAgentToolCall, false},
	"collab_waiting_begin":           {canonical.ItemTypeCollabAgentToolCall, false},
	"collab_waiting_end":             {canonical.ItemTypeCollabAgentToolCall, false},
	"collab_close_begin":             {canonical.ItemTypeCollabAgentToolCall, false},
	"collab_close_end":               {canonical.ItemTypeCollabAgentToolCall, false},
	"collab_resume_begin":            {canonical.ItemTypeCollabAgentToolCall, false},
	"collab_resume_end":              {canonical.ItemTypeCollabAgentToolCall, false},
}

// configEvents are list replies and skill notices: session configuration.
var configEvents = map[string]string{
	"session_configured":           "session",
	"get_history_entry_response":   "historyEntry",
	"mcp_list_tools_response":      "mcpTools",
	"list_custom_prompts_response": "customPrompts",
	"list_skills_response":         "skills",
	"list_remote_skills_response":  "remoteSkills",
	"remote_skill_downloaded":      "remoteSkillDownloaded",
	"skills_update_available":      "skillsUpdateAvailable",
	"thread_settings_applied":      "threadSettings",
}

var metadataEvents = map[string]string{
	"thread_rolled_back":  "rolledBack",
	"undo_started":        "undo",
	"undo_completed":      "undo",
	"thread_goal_updated": "goal",
	"guardian_assessment": "guardianAssessment",
}

// eventMsg maps an event_msg line whose payload raw decoded as e, or
// failed to with err.
func (mp *mapper) eventMsg(kind string, e ev, err error, raw json.RawMessage) bool {
	if err != nil {
		mp.em.Fail(mp.env, canonical.ErrorClassValidation, kind+" could not be read: "+strings.SplitN(err.Error(), "\n", 2)[0], nil)
		return true
	}
	em, env := mp.em, mp.env
	if k, ok := configEvents[kind]; ok {
		em.Emit(env, &canonical.SessionConfigured{Config: map[string]json.RawMessage{k: raw}})
		return true
	}
	if k, ok := metadataEvents[kind]; ok {
		em.Emit(env, &canonical.ThreadMetadataUpdated{Metadata: map[string]json.RawMessage{k: raw}})
		return true
	}
	if te, ok := toolEvents[kind]; ok {
		mp.toolEvent(kind, e, te.t, raw)
		return true
	}
	switch kind {
	case "task_started":
		mp.st.Unmarked = false
		mp.startTurn(e.turn(), &canonical.TurnStarted{})
	case "task_complete":
		mp.st.Unmarked = false
		mp.ensureTurn(e.turn())
		if msg, info, ok := taskError(e.Error); ok {
			// Codex 0.171 and later say why the turn failed here, and
			// write no error line before it. Like turn.failed of codex
			// exec, it is a runtime.error and the failed turn's end.
			em.Fail(mp.env, codexcommon.ErrorClass(info, msg), msg, e.Error)
			mp.st.TurnError = msg
		}
		mp.endTurn(mp.turnEnd(adapter.Measured(e.DurationMs)))
	case "turn_aborted":
		reason := codexcommon.Text(strings.Trim(string(e.Reason), `"`), "aborted")
		em.Emit(env, &canonical.TurnAborted{Reason: reason})
		if mp.st.TurnID != "" {
			state := canonical.TurnStateInterrupted
			if reason == "replaced" {
				state = canonical.TurnStateCancelled
			}
			mp.endTurn(&canonical.TurnCompleted{State: state, ErrorMessage: reason})
		}
	case "token_count":
		mp.tokenCount(raw)
	case "user_message":
		if mp.st.Unmarked {
			// A rollout that marks no turns: a prompt is where a turn
			// starts, and where the one before it ended. Its usage is the
			// thread total's growth across it, as for a marked turn.
			var prompt []OpenItem
			if mp.st.TurnID != "" {
				// This prompt's copy in the transcript (response_item) came
				// first and is open in the turn that ends here: it goes on
				// to the turn it starts.
				mp.st.Open = slices.DeleteFunc(mp.st.Open, func(o OpenItem) bool {
					if o.Type == canonical.ItemTypeUserMessage && o.Family == FamilyResponse {
						prompt = append(prompt, o)
						return true
					}
					return false
				})
				mp.endTurn(mp.turnEnd(nil))
			}
			mp.startTurn("", &canonical.TurnStarted{})
			mp.st.Open = append(mp.st.Open, prompt...)
		}
		mp.messageSighting(sighting{fam: FamilyEvent, lc: canonical.ItemLifecycle{ItemType: canonical.ItemTypeUserMessage, Content: text(canonical.StreamUnknown, e.Message), Data: raw}})
	case "agent_message":
		mp.messageSighting(sighting{fam: FamilyEvent, lc: canonical.ItemLifecycle{ItemType: canonical.ItemTypeAssistantMessage, Content: text(canonical.StreamAssistantText, e.Message), Data: raw}})
	case "agent_reasoning":
		mp.messageSighting(sighting{fam: FamilyEvent, lc: canonical.ItemLifecycle{ItemType: canonical.ItemTypeReasoning, Content: text(canonical.StreamReasoningSummaryText, e.Text), Data: raw}})
	case "agent_reasoning_raw_content", "agent_reasoning_section_break":
		// Part of the reasoning item agent_reasoning reports: an update of
		// the open one (or its start).
		mp.reasoningPart(e, raw)
	case "agent_message_delta":
		mp.delta(canonical.ItemTypeAssistantMessage, canonical.StreamAssistantText, "", e.Delta, nil, nil)
	case "agent_reasoning_delta":
		mp.delta(canonical.ItemTypeReasoning, canonical.StreamReasoningSummaryText, "", e.Delta, nil, nil)
	case "agent_reasoning_raw_content_delta":
		mp.delta(canonical.ItemTypeReasoning, canonical.StreamReasoningText, "", e.Delta, nil, nil)
	case "agent_message_content_delta":
		mp.delta(canonical.ItemTypeAssistantMessage, canonical.StreamAssistantText, e.ItemID, e.Delta, nil, nil)
	case "reasoning_content_delta":
		mp.delta(canonical.ItemTypeReasoning, canonical.StreamReasoningSummaryText, e.ItemID, e.Delta, nil, nn(e.SummaryIndex))
	case "reasoning_raw_content_delta":
		mp.delta(canonical.ItemTypeReasoning, canonical.StreamReasoningText, e.ItemID, e.Delta, nn(e.ContentIndex), nil)
	case "plan_delta":
		mp.delta(canonical.ItemTypePlan, canonical.StreamPlanText, e.ItemID, e.Delta, nil, nil)
	case "item_started", "item_completed":
		mp.turnItem(kind == "item_completed", e)
	case "exec_command_output_delta":
		mp.outputDelta(e)
	case "plan_update":
		em.Emit(env, &canonical.TurnPlanUpdated{Explanation: e.Explanation, Plan: codexcommon.Plan(e.Plan)})
	case "turn_diff":
		em.Emit(env, &canonical.TurnDiffUpdated{UnifiedDiff: e.UnifiedDiff})
	case "model_reroute":
		em.Emit(env, &canonical.ModelRerouted{FromModel: codexcommon.Text(e.FromModel, "unknown"), ToModel: codexcommon.Text(e.ToModel, "unknown"), Reason: codexcommon.Text(strings.Trim(string(e.Reason), `"`), "unknown")})
	case "context_compacted":
		em.Emit(env, &canonical.ThreadStateChanged{State: canonical.ThreadStateCompacted})
	case "thread_name_updated":
		em.Emit(env, &canonical.ThreadMetadataUpdated{Name: e.ThreadName})
	case "mcp_startup_update", "mcp_startup_complete":
		em.Emit(env, &canonical.MCPStatusUpdated{Status: raw})
	case "deprecation_notice":
		em.Emit(env, &canonical.DeprecationNotice{Summary: codexcommon.Text(e.Summary, "deprecation"), Details: deref(e.Details)})
	case "error":
		msg := codexcommon.Text(e.Message, "codex reported an error")
		em.Fail(env, codexcommon.ErrorClass(e.CodexErrorInfo, msg), msg, raw)
		if mp.st.TurnID != "" && failsTurn(msg, e.CodexErrorInfo) {
			mp.st.TurnError = msg
		}
	case "warning", "background_event":
		em.Warn(env, codexcommon.Text(e.Message, kind), raw)
	case "stream_error":
		// Codex retries the stream: the turn goes on.
		em.Warn(env, codexcommon.Text(e.Message, "stream error"), raw)
	case "exec_approval_request":
		mp.openRequest(e.call(), canonical.RequestTypeExecCommandApproval, codexcommon.Text(strings.Trim(string(e.Reason), `"`), argv(e.Command)), raw, nil)
	case "apply_patch_approval_request":
		mp.openRequest(e.call(), canonical.RequestTypeApplyPatchApproval, strings.Trim(string(e.Reason), `"`), raw, nil)
	case "request_permissions":
		mp.openRequest(e.call(), canonical.RequestTypeUnknown, strings.Trim(string(e.Reason), `"`), raw, nil)
	case "request_user_input":
		mp.openRequest(e.call(), canonical.RequestTypeToolUserInput, "", raw, orEmpty(e.Questions))
	case "elicitation_request":
		mp.openRequest(codexcommon.Text(e.ID, e.call()), canonical.RequestTypeToolUserInput, e.Message, raw, raw)
	case "shutdown_complete":
		em.Emit(env, &canonical.SessionExited{ExitKind: canonical.ExitGraceful, Reason: "shutdown complete"})
	case "entered_review_mode", "exited_review_mode":
		t := canonical.ItemTypeReviewEntered
		if kind == "exited_review_mode" {
			t = canonical.ItemTypeReviewExited
		}
		mp.toolSighting(sighting{fam: FamilyEvent, final: true, lc: canonical.ItemLifecycle{ItemType: t, Data: raw}})
	case "raw_response_item":
		var p struct {
			Item json.RawMessage `json:"item"`
		}
		_ = jsonscan.Unmarshal(raw, &p)
		mp.responseItem(orEmpty(p.Item))
	case "hook_started":
		if e.Run != nil {
			em.Emit(env, &canonical.HookStarted{HookID: codexcommon.Text(e.Run.ID, "hook"), HookName: codexcommon.Text(e.Run.SourcePath, "hook"), HookEvent: codexcommon.Text(e.Run.EventName, "unknown")})
		} else {
			em.Emit(env, &canonical.HookStarted{HookID: "hook", HookName: "hook", HookEvent: "unknown"})
		}
	case "hook_completed":
		p := &canonical.HookCompleted{HookID: "hook", Outcome: canonical.HookOutcomeSuccess}
		if e.Run != nil {
			p.HookID = codexcommon.Text(e.Run.ID, p.HookID)
			switch e.Run.Status {
			case "failed", "blocked":
				p.Outcome = canonical.HookOutcomeError
			case "stopped":
				p.Outcome = canonical.HookOutcomeCancelled
			}
			p.DurationMs = adapter.Measured(e.Run.DurationMs)
		}
		em.Emit(env, p)
	case "realtime_conversation_started":
		em.Emit(env, &canonical.ThreadRealtimeStarted{RealtimeSessionID: e.SessionID})
	case "realtime_conversation_realtime":
		em.Emit(env, &canonical.ThreadRealtimeItemAdded{Item: raw})
	case "realtime_conversation_closed":
		em.Emit(env, &canonical.ThreadRealtimeClosed{Reason: strings.Trim(string(e.Reason), `"`)})
	case "sub_agent_activity":
		em.Emit(env, &canonical.TaskProgress{TaskID: codexcommon.Text(e.AgentThreadID, "sub-agent"), Description: "sub-agent activity"})
	default:
		return false
	}
	return true
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func argv(raw json.RawMessage) string {
	var a []string
	if jsonscan.Unmarshal(raw, &a) == nil {
		return strings.Join(a, " ")
	}
	var s string
	_ = jsonscan.Unmarshal(raw, &s)
	return s
}

func text(k canonical.StreamKind, s string) map[canonical.StreamKind]string {
	if s == "" {
		return nil
	}
	return map[canonical.StreamKind]string{k: s}
}

func (mp *mapper) reasoningPart(e ev, raw json.RawMessage) {
	for i, o := range mp.st.Open {
		if o.Type == canonical.ItemTypeReasoning && !o.Tool {
			mp.update(i, canonical.ItemLifecycle{ItemType: canonical.ItemTypeReasoning, Content: nil, Detail: e.Text, Data: raw})
			return
		}
	}
	it := mp.open(sighting{fam: FamilyEvent, lc: canonical.ItemLifecycle{ItemType: canonical.ItemTypeReasoning, Data: raw}})
	it.Streaming = true
	mp.st.Open = append(mp.st.Open, it)
}

func (mp *mapper) toolEvent(kind string, e ev, t canonical.ItemType, raw json.RawMessage) {
	call := e.call()
	lc := canonical.ItemLifecycle{ItemType: t, Command: argv(e.Command), Data: raw}
	switch t { //nolint:exhaustive // only these carry a title
	case canonical.ItemTypeCommandExecution:
		lc.Title = lc.Command
		out := e.AggregatedOutput
		if out == nil && (e.Stdout != "" || e.Stderr != "") {
			s := e.Stdout + e.Stderr
			out = &s
		}
		if out != nil && *out != "" {
			lc.Content = map[canonical.StreamKind]string{canonical.StreamCommandOutput: *out}
		}
		lc.ExitCode = e.ExitCode
		lc.ByUser = codexcommon.UserShell(e.Source)
	case canonical.ItemTypeMCPToolCall:
		if e.Invocation != nil {
			lc.ToolName, lc.Title = e.Invocation.Tool, strings.Trim(e.Invocation.Server+"/"+e.Invocation.Tool, "/")
		}
	case canonical.ItemTypeWebSearch:
		lc.Title = e.Query
	case canonical.ItemTypeDynamicToolCall:
		lc.ToolName, lc.Title = e.Tool, e.Tool
	case canonical.ItemTypeImageView:
		lc.Title = e.Path
	}
	if strings.HasSuffix(kind, "_end") {
		lc.DurationMs = rustDurationMs(e.Duration)
	}
	if strings.HasSuffix(kind, "_begin") || kind == "dynamic_tool_call_request" {
		mp.resolveRequest(call, "approved")
	}
	if kind == "exec_command_output_delta" {
		return
	}
	mp.toolSighting(sighting{fam: FamilyEvent, key: "call:" + call, lc: lc})
}

// turnItem maps item_started/item_completed (TurnItem, PascalCase tags):
// tool items join their call by id, messages and reasoning pair with
// their response item.
func (mp *mapper) turnItem(final bool, e ev) {
	var it codexcommon.Item
	if err := jsonscan.Unmarshal(e.Item, &it); err != nil || it.ID == "" {
		mp.em.Fail(mp.env, canonical.ErrorClassValidation, e.Type+" carries no item with an id", nil)
		return
	}
	lc := it.Lifecycle(e.Item, final)
	switch lc.ItemType { //nolint:exhaustive // messages pair, everything else is a call
	case canonical.ItemTypeUserMessage, canonical.ItemTypeAssistantMessage, canonical.ItemTypeReasoning:
		s := sighting{fam: FamilyEvent, pid: it.ID, lc: lc}
		if lc.ItemType == canonical.ItemTypeUserMessage {
			// Its id is not the response item's: pair by position.
			s.pid = ""
		}
		mp.messageSighting(s)
	default:
		mp.toolSighting(sighting{fam: FamilyEvent, pid: it.ID, key: "call:" + it.ID, lc: lc})
	}
}
