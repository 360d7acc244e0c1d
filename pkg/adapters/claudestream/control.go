package claudestream

import (
	"encoding/json"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// agentRequests are the control_request subtypes the CLI sends the host;
// every other subtype goes the other way.
var agentRequests = map[string]bool{"can_use_tool": true, "hook_callback": true, "mcp_message": true, "elicitation": true, "request_user_dialog": true}

type controlRequest struct {
	Subtype    string          `json:"subtype"`
	ToolName   string          `json:"tool_name"`
	ToolUseID  string          `json:"tool_use_id"`
	Input      json.RawMessage `json:"input"`
	CallbackID string          `json:"callback_id"`
	ServerName string          `json:"server_name"`
	MCPServer  string          `json:"mcp_server_name"`
	Message    *struct {
		Method string `json:"method"`
	} `json:"message"`
	Description string          `json:"description"`
	DialogKind  string          `json:"dialog_kind"`
	Model       *string         `json:"model"`
	Mode        string          `json:"mode"`
	Title       string          `json:"title"`
	Questions   json.RawMessage `json:"-"`
}

type controlResponse struct {
	Subtype   string          `json:"subtype"`
	RequestID string          `json:"request_id"`
	Error     string          `json:"error"`
	Response  json.RawMessage `json:"response"`
}

type permissionResult struct {
	Behavior     string          `json:"behavior"`
	Message      string          `json:"message"`
	Interrupt    bool            `json:"interrupt"`
	UpdatedInput json.RawMessage `json:"updatedInput"`
}

func (st *State) request(id string) int {
	for i, r := range st.Requests {
		if r.ID == id {
			return i
		}
	}
	return -1
}

func requestEnv(em *adapter.Emitter, st *State, env canonical.Event, id string) canonical.Event {
	env.RequestID = em.IDs().Native(canonical.EntityRequest, st.T.Session, "control", id)
	env.ProviderRefs.ProviderRequestID = id
	return env
}

// mapControl maps the stdin/stdout control protocol: the CLI's requests
// (permission prompts, hook callbacks, SDK MCP messages, elicitations) open
// requests that the host's control_response resolves, correlated by
// request_id; the host's own requests (initialize, interrupt, set_model,
// ...) and the CLI's answers to them configure the session.
func mapControl(em *adapter.Emitter, st *State, env canonical.Event, fr frame, dir adapter.Direction) {
	switch fr.Type {
	case "control_cancel_request":
		e := requestEnv(em, st, env, fr.RequestID)
		rt := canonical.RequestTypeUnknown
		if i := st.request(fr.RequestID); i >= 0 {
			rt = st.Requests[i].Type
			st.Requests = append(st.Requests[:i], st.Requests[i+1:]...)
		} else {
			em.Emit(e, &canonical.RequestOpened{RequestType: rt, Detail: "cancelled before it was seen"})
		}
		em.Emit(e, &canonical.RequestResolved{RequestType: rt, Decision: "cancelled"})
	case "control_request":
		var r controlRequest
		if err := jsonscan.Unmarshal(fr.Request, &r); err != nil {
			em.Fail(env, canonical.ErrorClassValidation, "control request could not be decoded: "+err.Error(), nil)
			return
		}
		if agentRequests[r.Subtype] && dir != adapter.FromClient {
			openRequest(em, st, env, fr, r)
			return
		}
		hostRequest(em, st, env, fr, r)
	case "control_response":
		r, err := decodeControlResponse(fr.Response)
		if err != nil {
			em.Fail(env, canonical.ErrorClassValidation, "control response could not be decoded: "+err.Error(), nil)
			return
		}
		if i := st.request(r.RequestID); i >= 0 || dir == adapter.FromClient {
			resolveRequest(em, st, env, r, i)
			return
		}
		hostResponse(em, st, env, fr, r)
	}
}

func openRequest(em *adapter.Emitter, st *State, env canonical.Event, fr frame, r controlRequest) {
	e := requestEnv(em, st, env, fr.RequestID)
	if r.ToolUseID != "" && st.T.openTool(r.ToolUseID) >= 0 {
		e.ItemID, e.ProviderRefs.ProviderItemID = st.T.ToolItemID(em, r.ToolUseID), r.ToolUseID
	}
	req := Request{ID: fr.RequestID, Subtype: r.Subtype, Tool: r.ToolName}
	p := &canonical.RequestOpened{Args: fr.Request}
	switch r.Subtype {
	case "can_use_tool":
		req.Type = ApprovalType(r.ToolName)
		p.Detail = firstNonEmpty(r.Description, r.ToolName)
		if tool := describeCommand(r.ToolName, r.Input); tool != "" {
			p.Detail = tool
		}
	case "hook_callback":
		req.Type, p.Detail = canonical.RequestTypeUnknown, "hook callback "+r.CallbackID
	case "mcp_message":
		req.Type, p.Detail = canonical.RequestTypeUnknown, "SDK MCP server "+r.ServerName
		if r.Message != nil {
			if r.Message.Method == "tools/call" {
				req.Type = canonical.RequestTypeDynamicToolCall
			}
			p.Detail += ": " + r.Message.Method
		}
	case "elicitation", "request_user_dialog":
		req.Type, p.Detail = canonical.RequestTypeToolUserInput, firstNonEmpty(r.MCPServer, r.DialogKind, r.Subtype)
	}
	p.RequestType = req.Type
	em.Emit(e, p)
	if req.Type == canonical.RequestTypeToolUserInput {
		em.Emit(e, &canonical.UserInputRequested{Questions: questions(r, fr.Request)})
	}
	st.Requests = append(st.Requests, req)
}

func questions(r controlRequest, raw json.RawMessage) json.RawMessage {
	var in struct {
		Questions json.RawMessage `json:"questions"`
	}
	if r.Subtype == "can_use_tool" && jsonscan.Unmarshal(r.Input, &in) == nil && len(in.Questions) > 0 {
		return in.Questions
	}
	return raw
}

func describeCommand(tool string, input json.RawMessage) string {
	var p canonical.ItemLifecycle
	p.ItemType = ToolType(tool, "tool_use")
	describeTool(&p, tool, "", input)
	if p.Command != "" {
		return p.Command
	}
	if len(p.Files) > 0 {
		return tool + " " + p.Files[0]
	}
	return ""
}

func resolveRequest(em *adapter.Emitter, st *State, env canonical.Event, r controlResponse, i int) {
	e := requestEnv(em, st, env, r.RequestID)
	req := Request{ID: r.RequestID, Type: canonical.RequestTypeUnknown}
	if i >= 0 {
		req = st.Requests[i]
		st.Requests = append(st.Requests[:i], st.Requests[i+1:]...)
	} else {
		em.Emit(e, &canonical.RequestOpened{RequestType: req.Type, Detail: "answered before it was seen"})
	}
	p := &canonical.RequestResolved{RequestType: req.Type, Resolution: nullable(r.Response)}
	var pr permissionResult
	_ = jsonscan.Unmarshal(r.Response, &pr) // not every answer is a permission result
	switch {
	case r.Subtype == "error":
		p.Decision = "error"
		if p.Resolution == nil {
			p.Resolution = mustJSON(map[string]string{"error": r.Error})
		}
	case pr.Behavior == "deny" && pr.Interrupt:
		p.Decision = "deny-interrupt"
	case pr.Behavior != "":
		p.Decision = pr.Behavior
	default:
		p.Decision = "answered"
	}
	em.Emit(e, p)
	if req.Type == canonical.RequestTypeToolUserInput && r.Subtype != "error" {
		answers := nullable(r.Response)
		var ui struct {
			Answers json.RawMessage `json:"answers"`
		}
		if jsonscan.Unmarshal(pr.UpdatedInput, &ui) == nil && len(ui.Answers) > 0 {
			answers = ui.Answers
		}
		if answers == nil {
			answers = json.RawMessage(`{}`)
		}
		em.Emit(e, &canonical.UserInputResolved{Answers: answers})
	}
}

// hostRequest maps a request the host sends the CLI. None of them is a
// canonical request (those go agent→client): initialize starts the
// controlled session, interrupt aborts the turn, the set_* requests
// change configuration; the rest are recorded for the CLI's answer.
func hostRequest(em *adapter.Emitter, st *State, env canonical.Event, fr frame, r controlRequest) {
	if st.Host == nil {
		st.Host = map[string]string{}
	}
	st.Host[fr.RequestID] = r.Subtype
	switch r.Subtype {
	case "initialize":
		em.Emit(env, &canonical.SessionStarted{Message: "initialize (stream-json control protocol)"})
	case "interrupt":
		if st.T.Turn != "" {
			env.TurnID = st.T.Turn
			em.Emit(env, &canonical.TurnAborted{Reason: "interrupted by the host"})
			return
		}
		em.Emit(env, &canonical.SessionStateChanged{State: canonical.SessionStateReady, Reason: "interrupt"})
	default:
		em.Emit(env, &canonical.SessionConfigured{Config: map[string]json.RawMessage{"request": fr.Request}})
	}
}

// hostResponse maps the CLI's answer to a host request: initialize's
// answer (commands, agents, models, account) configures the session, as
// do the answers to set_* and the like; an error is a runtime.error.
func hostResponse(em *adapter.Emitter, st *State, env canonical.Event, fr frame, r controlResponse) {
	subtype := st.Host[r.RequestID]
	delete(st.Host, r.RequestID)
	if r.Subtype == "error" {
		em.Fail(env, canonical.ErrorClassProvider, firstNonEmpty(r.Error, "control request failed")+" ("+firstNonEmpty(subtype, "request")+")", fr.Response)
		return
	}
	cfg := ConfigOf(r.Response)
	cfg["controlRequest"] = mustJSON(firstNonEmpty(subtype, "unknown"))
	em.Emit(env, &canonical.SessionConfigured{Config: cfg})
}
