package acp

import (
	"encoding/json"
	"strings"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// clientRequest maps a request or notification the client sent.
func (m *mapper) clientRequest() {
	msg := m.fr.msg
	silent, known := clientMethods[msg.Method]
	sid := ""
	if msg.Method != "initialize" && msg.Method != "authenticate" && msg.Method != "session/new" {
		sid = m.sessionOf()
	}
	if m.fr.class == classRequest {
		p := pending{Method: msg.Method, Session: sid}
		if silent && len(msg.Params) <= 4096 {
			// What a setter set is in its request only.
			p.Params = msg.Params
		}
		m.st.Pending[m.fr.key] = p
	}
	env := m.env(sid)
	switch {
	case msg.Method == "initialize":
		// The agent's answer decides the provider, which every id depends
		// on; the request's content is reported with it (session.configured).
		if len(msg.Params) <= 16384 {
			m.st.ClientInit = msg.Params
		}
	case !known && msg.Method == "$/cancel_request":
		m.cancelRequest(env, "c:")
	case !known:
		m.unmapped(env)
	case silent:
		// Its response says what happened.
	case msg.Method == "authenticate":
		t := true
		m.em.Emit(env, &canonical.AuthStatus{IsAuthenticating: &t})
	case msg.Method == "session/prompt":
		m.prompt(sid)
	case msg.Method == "session/cancel":
		m.closeText(sid)
		m.em.Emit(m.env(sid), &canonical.TurnAborted{Reason: "the client sent session/cancel"})
	default: // session/new, load, resume, fork
		m.em.Emit(env, &canonical.SessionStateChanged{State: canonical.SessionStateStarting, Reason: msg.Method})
	}
}

// prompt opens a turn: the session/prompt request is its start and the
// user's message. A prompt while another is in flight supersedes it; the
// earlier one stays open until its own response (stopReason cancelled).
func (m *mapper) prompt(sid string) {
	m.closeText(sid)
	turn := m.ids.Derived(canonical.EntityTurn, m.em.Frame().Ordinal, 0)
	s := m.sess(sid)
	s.Turn = turn
	m.put(sid, s)
	p := m.st.Pending[m.fr.key]
	p.Turn = turn
	m.st.Pending[m.fr.key] = p
	env := m.env(sid)
	env.TurnID = turn
	m.em.Emit(env, &canonical.TurnStarted{})
	var params struct {
		Prompt []contentBlock `json:"prompt"`
	}
	_ = jsonscan.Unmarshal(m.fr.msg.Params, &params) // an unreadable prompt is still a prompt
	env.ItemID = m.ids.Derived(canonical.EntityItem, m.em.Frame().Ordinal, 0)
	item := canonical.ItemLifecycle{ItemType: canonical.ItemTypeUserMessage, Status: canonical.ItemStatusInProgress}
	started := canonical.ItemStarted(item)
	m.em.Emit(env, &started)
	item.Status = canonical.ItemStatusCompleted
	var texts []string
	for _, b := range params.Prompt {
		if t := b.text(); t != "" {
			texts = append(texts, t)
		}
	}
	if len(texts) > 0 {
		item.Content = map[canonical.StreamKind]string{canonical.StreamUnknown: strings.Join(texts, "\n")}
	}
	if len(params.Prompt) > 0 {
		item.Data = rawJSON(params.Prompt)
	}
	done := canonical.ItemCompleted(item)
	m.em.Emit(env, &done)
}

// cancelRequest maps $/cancel_request: the sender withdraws one of its own
// requests (prefix says whose).
func (m *mapper) cancelRequest(env canonical.Event, prefix string) {
	var params struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	_ = jsonscan.Unmarshal(m.fr.msg.Params, &params) // an unreadable id matches nothing
	key := prefix + compact(params.RequestID)
	p, ok := m.st.Pending[key]
	switch {
	case ok && prefix == "a:" && p.Request != "":
		delete(m.st.Pending, key)
		env = m.env(p.Session)
		env.RequestID = p.Request
		env.ProviderRefs.ProviderRequestID = compact(params.RequestID)
		m.em.Emit(env, &canonical.RequestResolved{RequestType: p.Type, Decision: "cancelled", Resolution: m.fr.msg.Params})
	case ok && p.Method == "session/prompt":
		env = m.env(p.Session)
		env.TurnID = p.Turn
		m.em.Emit(env, &canonical.TurnAborted{Reason: "the client sent $/cancel_request for session/prompt"})
	default:
		m.em.Warn(env, "$/cancel_request names no pending request", map[string]string{"requestId": compact(params.RequestID)})
	}
}

// clientResponse maps the client's answer to an agent request.
func (m *mapper) clientResponse(p pending, answered bool) {
	if !answered || p.Request == "" {
		m.em.Warn(canonical.Event{ProviderRefs: canonical.ProviderRefs{ProviderRequestID: m.fr.id}}, "a client response to no pending agent request", map[string]string{"id": m.fr.id})
		return
	}
	env := m.withRequest(m.env(p.Session), p.Request)
	if p.Item != "" {
		env.ItemID = p.Item
		env.ProviderRefs.ProviderItemID = p.ToolCall
	}
	msg := m.fr.msg
	res := &canonical.RequestResolved{RequestType: p.Type, Resolution: msg.Result}
	if msg.Error != nil {
		res.Decision, res.Resolution = "error", rawJSON(msg.Error)
		m.em.Emit(env, res)
		return
	}
	switch p.Method {
	case "session/request_permission":
		var r struct {
			Outcome struct {
				Outcome  string `json:"outcome"`
				OptionID string `json:"optionId"`
			} `json:"outcome"`
		}
		_ = jsonscan.Unmarshal(msg.Result, &r) // an unreadable outcome resolves without a decision
		res.Decision = r.Outcome.Outcome
		if r.Outcome.Outcome == "selected" {
			// The option's kind (allow_once, reject_once, ...) is the same
			// across agents; optionIds are each agent's own.
			res.Decision = r.Outcome.OptionID
			if k := p.Options[r.Outcome.OptionID]; k != "" {
				res.Decision = k
			}
		}
		if strings.HasPrefix(res.Decision, "reject") || res.Decision == "cancelled" {
			m.decline(p.Session, p.ToolCall)
		}
		m.em.Emit(env, res)
	case "elicitation/create":
		var r struct {
			Action string `json:"action"`
		}
		_ = jsonscan.Unmarshal(msg.Result, &r) // an unreadable action resolves without a decision
		res.Decision = r.Action
		m.em.Emit(env, res)
		m.em.Emit(env, &canonical.UserInputResolved{Answers: nonNull(msg.Result)})
	default:
		res.Decision = "ok"
		m.em.Emit(env, res)
	}
}

func (m *mapper) decline(sid, toolCall string) {
	s := m.sess(sid)
	if tc, ok := s.Tools[toolCall]; ok {
		tc.Declined = true
		s.Tools[toolCall] = tc
		m.put(sid, s)
	}
}

func nonNull(v json.RawMessage) json.RawMessage {
	if !present(v) {
		return json.RawMessage(`{}`)
	}
	return v
}
