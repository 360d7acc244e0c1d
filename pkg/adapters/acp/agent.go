package acp

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// agentMessage maps a request or notification the agent sent.
func (m *mapper) agentMessage() {
	msg := m.fr.msg
	sid := m.sessionOf()
	env := m.env(sid)
	switch msg.Method {
	case "session/update":
		m.update(sid, m.fr.update, m.fr.tag)
	case "session/request_permission":
		m.permission(sid)
	case "fs/read_text_file", "fs/write_text_file", "terminal/create", "terminal/output", "terminal/release",
		"terminal/wait_for_exit", "terminal/kill", "mcp/message":
		// The client does the work on the agent's behalf: a tool-protocol request.
		m.openRequest(sid, canonical.RequestTypeDynamicToolCall, requestDetail(msg.Params), pending{})
	case "elicitation/create":
		m.openRequest(sid, canonical.RequestTypeToolUserInput, requestDetail(msg.Params), pending{})
		m.em.Emit(m.withRequest(env, m.st.Pending[m.fr.key].Request), &canonical.UserInputRequested{Questions: nonNull(msg.Params)})
	case "elicitation/complete":
		m.em.Emit(env, &canonical.UserInputResolved{Answers: nonNull(msg.Params)})
	case "$/cancel_request":
		m.cancelRequest(env, "a:")
	case "auth/status_update":
		m.authState(env, msg.Params)
	default:
		if m.fr.class == classRequest {
			m.st.Pending[m.fr.key] = pending{Method: msg.Method, Session: sid}
		}
		m.unmapped(env)
	}
}

// requestDetail is a one-line description of a tool-protocol request.
func requestDetail(params json.RawMessage) string {
	var p struct {
		Path       string `json:"path"`
		Command    string `json:"command"`
		TerminalID string `json:"terminalId"`
		Method     string `json:"method"`
		Message    string `json:"message"`
	}
	_ = jsonscan.Unmarshal(params, &p) // detail is optional
	for _, s := range []string{p.Path, p.Command, p.Message, p.Method, p.TerminalID} {
		if s != "" {
			return s
		}
	}
	return ""
}

// openRequest opens a canonical request for the agent's request; its id
// is derived from this frame (JSON-RPC ids are only unique per connection).
func (m *mapper) openRequest(sid string, rt canonical.RequestType, detail string, p pending) canonical.Event {
	p.Method, p.Session, p.Type = m.fr.msg.Method, sid, rt
	p.Request = m.ids.Derived(canonical.EntityRequest, m.em.Frame().Ordinal, 0)
	m.st.Pending[m.fr.key] = p
	env := m.withRequest(m.env(sid), p.Request)
	if p.Item != "" {
		env.ItemID, env.ProviderRefs.ProviderItemID = p.Item, p.ToolCall
	}
	m.em.Emit(env, &canonical.RequestOpened{RequestType: rt, Detail: detail, Args: m.fr.msg.Params})
	return env
}

// permission maps session/request_permission: the tool call it is about
// (started here if the agent did not announce it, as Gemini CLI does not)
// and a request typed by the call's kind.
func (m *mapper) permission(sid string) {
	var params struct {
		ToolCall json.RawMessage `json:"toolCall"`
		Options  []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
	}
	_ = jsonscan.Unmarshal(m.fr.msg.Params, &params) // a permission without a tool call is still a request
	var u toolUpdate
	_ = jsonscan.Unmarshal(params.ToolCall, &u) // as above
	p := pending{Options: map[string]string{}}
	for _, o := range params.Options {
		p.Options[o.OptionID] = o.Kind
	}
	rt := canonical.RequestTypeUnknown
	detail := ""
	if u.ToolCallID != "" {
		// The permission is no progress of the call: only an unknown call is started.
		s := m.sess(sid)
		tc, seen := s.Tools[u.ToolCallID]
		if !seen {
			u.Status = nil
			tc, _ = m.tool(sid, u, params.ToolCall)
		} else {
			tc.merge(u)
			s.Tools[u.ToolCallID] = tc
			m.put(sid, s)
			m.closeText(sid)
		}
		p.Item, p.ToolCall = tc.ItemID, u.ToolCallID
		if t, ok := requestTypes[tc.Kind]; ok {
			rt = t
		}
		detail = tc.Item.Title
		if tc.Item.Command != "" {
			detail = tc.Item.Command
		}
	} else {
		m.closeText(sid)
	}
	m.openRequest(sid, rt, detail, p)
}

func (m *mapper) authState(env canonical.Event, params json.RawMessage) {
	var p struct {
		State string `json:"state"`
	}
	_ = jsonscan.Unmarshal(params, &p) // an unreadable state is reported as the raw frame
	a := &canonical.AuthStatus{}
	f := false
	a.IsAuthenticating = &f
	if p.State != "" {
		a.Output = []string{p.State}
	}
	if p.State == "unauthenticated" {
		a.Error = "unauthenticated"
	}
	m.em.Emit(env, a)
}

// update maps one session/update by its sessionUpdate tag.
func (m *mapper) update(sid string, u json.RawMessage, tag string) {
	env := m.env(sid)
	h := struct{ SessionUpdate string }{tag}
	switch h.SessionUpdate {
	case "agent_message_chunk", "agent_thought_chunk", "user_message_chunk", "session_message_chunk":
		m.chunk(sid, h.SessionUpdate, u, false)
	case "session_message":
		m.chunk(sid, h.SessionUpdate, u, true)
	case "tool_call", "tool_call_update":
		var tu toolUpdate
		if jsonscan.Unmarshal(u, &tu) != nil || tu.ToolCallID == "" {
			m.em.Fail(env, canonical.ErrorClassValidation, h.SessionUpdate+" without a toolCallId", nil)
			return
		}
		m.tool(sid, tu, u)
	case "plan":
		var p struct {
			Entries []planEntry `json:"entries"`
		}
		_ = jsonscan.Unmarshal(u, &p) // no entries is an empty plan
		m.em.Emit(env, &canonical.TurnPlanUpdated{Plan: steps(p.Entries)})
	case "plan_update":
		var p struct {
			Plan struct {
				Type    string      `json:"type"`
				Entries []planEntry `json:"entries"`
				Content string      `json:"content"`
				URI     string      `json:"uri"`
			} `json:"plan"`
		}
		_ = jsonscan.Unmarshal(u, &p) // as above
		pl := &canonical.TurnPlanUpdated{Plan: steps(p.Plan.Entries)}
		switch p.Plan.Type {
		case "markdown":
			pl.Explanation = p.Plan.Content
		case "file":
			pl.Explanation = p.Plan.URI
		}
		m.em.Emit(env, pl)
	case "plan_removed":
		m.em.Emit(env, &canonical.TurnPlanUpdated{Plan: []canonical.PlanStep{}})
	case "available_commands_update":
		m.em.Emit(env, &canonical.SessionConfigured{Config: configOf(u, "availableCommands")})
	case "current_mode_update":
		m.em.Emit(env, &canonical.SessionConfigured{Config: configOf(u, "currentModeId")})
	case "config_option_update":
		m.em.Emit(env, &canonical.SessionConfigured{Config: configOf(u, "configOptions")})
	case "session_info_update":
		var p struct {
			Title *string `json:"title"`
		}
		_ = jsonscan.Unmarshal(u, &p) // title is optional
		md := &canonical.ThreadMetadataUpdated{Metadata: configOf(u, "updatedAt", "_meta")}
		if p.Title != nil {
			md.Name = *p.Title
		}
		m.em.Emit(env, md)
	case "usage_update":
		var p struct {
			Size *int64 `json:"size"`
		}
		_ = jsonscan.Unmarshal(u, &p) // the size is optional detail
		tu := &canonical.ThreadTokenUsageUpdated{Usage: m.sess(sid).Total}
		if p.Size != nil && *p.Size >= 0 {
			tu.ModelContextWindow = p.Size
		}
		m.em.Emit(env, tu)
	case "notice":
		var p struct {
			Severity    string `json:"severity"`
			Title       string `json:"title"`
			Description string `json:"description"`
		}
		_ = jsonscan.Unmarshal(u, &p) // a notice without a title says so
		msg := p.Title
		if p.Description != "" {
			msg += ": " + p.Description
		}
		if msg == "" {
			msg = "agent notice"
		}
		if p.Severity == "error" {
			m.em.Fail(env, canonical.ErrorClassProvider, msg, u)
		} else {
			m.em.Warn(env, msg, u)
		}
	case "compaction_update", "compaction_summary_chunk":
		m.compaction(sid, h.SessionUpdate, u)
	case "subagent_update":
		var p struct {
			SessionID   string  `json:"sessionId"`
			Title       *string `json:"title"`
			Description *string `json:"description"`
		}
		_ = jsonscan.Unmarshal(u, &p) // a child without an id is still reported
		desc := ""
		for _, s := range []*string{p.Description, p.Title} {
			if s != nil && *s != "" {
				desc = *s
				break
			}
		}
		s := m.sess(sid)
		if slices.Contains(s.Subagents, p.SessionID) {
			m.em.Emit(env, &canonical.TaskProgress{TaskID: nonEmpty(p.SessionID, "subagent"), Description: desc})
			return
		}
		s.Subagents = append(s.Subagents, p.SessionID)
		m.put(sid, s)
		m.em.Emit(env, &canonical.TaskStarted{TaskID: nonEmpty(p.SessionID, "subagent"), Description: desc, TaskType: "subagent"})
	default:
		m.unmapped(env)
	}
}

type planEntry struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

func steps(es []planEntry) []canonical.PlanStep {
	out := []canonical.PlanStep{}
	for _, e := range es {
		st := canonical.PlanStepPending
		switch e.Status {
		case "in_progress":
			st = canonical.PlanStepInProgress
		case "completed":
			st = canonical.PlanStepCompleted
		}
		out = append(out, canonical.PlanStep{Step: e.Content, Status: st})
	}
	return out
}

// compaction maps context compaction: one context_compaction item per
// compactionId, its summary streamed as content; a finished compaction
// also marks the thread compacted.
func (m *mapper) compaction(sid, tag string, u json.RawMessage) {
	var p struct {
		CompactionID string         `json:"compactionId"`
		Status       string         `json:"status"`
		Summary      []contentBlock `json:"summary"`
		Content      contentBlock   `json:"content"`
		Error        string         `json:"error"`
	}
	_ = jsonscan.Unmarshal(u, &p) // missing members map to an anonymous compaction
	m.closeText(sid)
	s := m.sess(sid)
	if s.Compactions == nil {
		s.Compactions = map[string]bool{}
	}
	env := m.env(sid)
	env.ItemID = m.ids.Native(canonical.EntityItem, sid, "compaction", p.CompactionID)
	env.ProviderRefs.ProviderItemID = p.CompactionID
	done, seen := s.Compactions[p.CompactionID]
	if done {
		m.em.Warn(env, "an update of a compaction that already ended", map[string]string{"compactionId": p.CompactionID})
		return
	}
	item := canonical.ItemLifecycle{ItemType: canonical.ItemTypeContextCompaction, Status: canonical.ItemStatusInProgress, Data: u}
	if !seen {
		st := canonical.ItemStarted(item)
		m.em.Emit(env, &st)
	}
	s.Compactions[p.CompactionID] = false
	if tag == "compaction_summary_chunk" {
		m.em.Emit(env, &canonical.ContentDelta{StreamKind: canonical.StreamUnknown, Delta: p.Content.text()})
		m.put(sid, s)
		return
	}
	switch p.Status {
	case "completed", "failed", "cancelled":
		item.Status = canonical.ItemStatusCompleted
		if p.Status != "completed" {
			item.Status, item.Detail = canonical.ItemStatusFailed, nonEmpty(p.Error, p.Status)
		}
		var sum strings.Builder
		for _, b := range p.Summary {
			sum.WriteString(b.text())
		}
		if sum.Len() > 0 {
			item.Content = map[canonical.StreamKind]string{canonical.StreamUnknown: sum.String()}
		}
		c := canonical.ItemCompleted(item)
		m.em.Emit(env, &c)
		s.Compactions[p.CompactionID] = true
		if p.Status == "completed" {
			tenv := m.env(sid)
			m.em.Emit(tenv, &canonical.ThreadStateChanged{State: canonical.ThreadStateCompacted, Detail: u})
		}
	default:
		if seen {
			up := canonical.ItemUpdated(item)
			m.em.Emit(env, &up)
		}
	}
	m.put(sid, s)
}

func nonEmpty(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}
