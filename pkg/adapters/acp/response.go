package acp

import (
	"bytes"
	"encoding/json"
	"maps"
	"strconv"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// agentResponse maps the agent's answer to a client request.
func (m *mapper) agentResponse(p pending, answered bool) {
	msg := m.fr.msg
	if msg.Error != nil {
		m.errorResponse(p, answered)
		return
	}
	if _, isPrompt := stopReason(msg.Result); isPrompt && (!answered || p.Method == "session/prompt") {
		m.promptDone(p, answered)
		return
	}
	if !answered {
		m.em.Warn(canonical.Event{ProviderRefs: canonical.ProviderRefs{ProviderRequestID: m.fr.id}}, "a response to no pending client request", map[string]string{"id": m.fr.id})
		return
	}
	sid := p.Session
	env := m.env(sid)
	f := false
	switch p.Method {
	case "initialize":
		cfg := configOf(msg.Result, "protocolVersion", "agentCapabilities", "authMethods", "agentInfo", "_meta")
		maps.Copy(cfg, configOf(m.st.ClientInit, "clientInfo", "clientCapabilities"))
		m.st.ClientInit = nil
		m.em.Emit(env, &canonical.SessionConfigured{Config: cfg})
	case "authenticate":
		m.em.Emit(env, &canonical.AuthStatus{IsAuthenticating: &f})
	case "logout":
		m.em.Emit(env, &canonical.AuthStatus{IsAuthenticating: &f, Output: []string{"logged out"}})
	case "auth/status":
		m.authState(env, msg.Result)
	case "session/new", "session/fork":
		var r struct {
			SessionID string `json:"sessionId"`
		}
		_ = jsonscan.Unmarshal(msg.Result, &r) // checked below
		if r.SessionID == "" {
			m.em.Fail(env, canonical.ErrorClassValidation, p.Method+" result without a sessionId", nil)
			return
		}
		var resume json.RawMessage
		if p.Method == "session/fork" {
			resume = rawJSON(map[string]string{"forkedFrom": p.Session})
		}
		m.sessionUp(r.SessionID, resume)
	case "session/load", "session/resume":
		m.sessionUp(sid, rawJSON(map[string]string{"sessionId": sid, "via": p.Method}))
	case "session/list":
		var r struct {
			Sessions []struct {
				SessionID string  `json:"sessionId"`
				Title     *string `json:"title"`
				Cwd       string  `json:"cwd"`
				UpdatedAt *string `json:"updatedAt"`
			} `json:"sessions"`
		}
		_ = jsonscan.Unmarshal(msg.Result, &r) // an unreadable list lists nothing
		n := 0
		for _, s := range r.Sessions {
			if s.SessionID == "" {
				continue
			}
			md := &canonical.ThreadMetadataUpdated{Metadata: map[string]json.RawMessage{"cwd": rawJSON(s.Cwd)}}
			if s.Title != nil {
				md.Name = *s.Title
			}
			if s.UpdatedAt != nil {
				md.Metadata["updatedAt"] = rawJSON(*s.UpdatedAt)
			}
			m.em.Emit(m.env(s.SessionID), md)
			n++
		}
		if n == 0 {
			m.em.Emit(env, &canonical.SessionConfigured{Config: map[string]json.RawMessage{"sessions": json.RawMessage(`[]`)}})
		}
	case "session/delete":
		m.closeText(sid)
		m.em.Emit(env, &canonical.ThreadStateChanged{State: canonical.ThreadStateClosed, Detail: json.RawMessage(`{"deleted":true}`)})
	case "session/close":
		m.closeText(sid)
		m.em.Emit(env, &canonical.ThreadStateChanged{State: canonical.ThreadStateClosed})
	case "session/archive":
		m.em.Emit(env, &canonical.ThreadStateChanged{State: canonical.ThreadStateArchived})
	case "session/unarchive":
		m.em.Emit(env, &canonical.ThreadStateChanged{State: canonical.ThreadStateIdle, Detail: json.RawMessage(`{"unarchived":true}`)})
	case "session/status":
		var r struct {
			Status string `json:"status"`
		}
		_ = jsonscan.Unmarshal(msg.Result, &r) // an unknown status is idle
		state := canonical.ThreadStateIdle
		if r.Status == "open" {
			state = canonical.ThreadStateActive
		}
		m.em.Emit(env, &canonical.ThreadStateChanged{State: state, Detail: msg.Result})
	case "session/set_title":
		var r struct {
			Title string `json:"title"`
		}
		_ = jsonscan.Unmarshal(msg.Result, &r) // an empty title clears it
		m.em.Emit(env, &canonical.ThreadMetadataUpdated{Name: r.Title})
	case "session/set_mode":
		m.em.Emit(env, &canonical.SessionConfigured{Config: renamed(configOf(p.Params, "modeId"), "modeId", "currentModeId")})
	case "session/set_model":
		m.em.Emit(env, &canonical.SessionConfigured{Config: renamed(configOf(p.Params, "modelId"), "modelId", "currentModelId")})
	case "session/set_config_option":
		m.em.Emit(env, &canonical.SessionConfigured{Config: configOf(msg.Result, "configOptions")})
	case "providers/list":
		m.em.Emit(env, &canonical.SessionConfigured{Config: configOf(msg.Result, "providers")})
	case "providers/set", "providers/disable":
		m.em.Emit(env, &canonical.SessionConfigured{Config: map[string]json.RawMessage{p.Method: nonNull(p.Params)}})
	default:
		m.unmapped(env)
	}
}

func renamed(cfg map[string]json.RawMessage, from, to string) map[string]json.RawMessage {
	if v, ok := cfg[from]; ok {
		delete(cfg, from)
		cfg[to] = v
	}
	return cfg
}

// sessionUp maps a session coming up (session/new, load, resume, fork).
func (m *mapper) sessionUp(sid string, resume json.RawMessage) {
	m.st.Current = sid
	// session/load replays the history before it answers: the answer ends
	// the last replayed message.
	m.closeText(sid)
	env := m.env(sid)
	m.em.Emit(env, &canonical.SessionStarted{Resume: resume})
	s := m.sess(sid)
	if !s.Started {
		s.Started = true
		m.put(sid, s)
		m.em.Emit(env, &canonical.ThreadStarted{ProviderThreadID: sid})
	}
	m.em.Emit(env, &canonical.SessionStateChanged{State: canonical.SessionStateReady})
	if cfg := configOf(m.fr.msg.Result, "modes", "models", "configOptions", "_meta"); len(cfg) > 0 {
		m.em.Emit(env, &canonical.SessionConfigured{Config: cfg})
	}
}

// stopStates are the turn states of ACP stop reasons: only a cancelled
// turn did not end by itself; max_tokens, max_turn_requests and refusal
// are completed turns whose stopReason says why they stopped.
var stopStates = map[string]canonical.TurnState{
	"end_turn": canonical.TurnStateCompleted, "max_tokens": canonical.TurnStateCompleted,
	"max_turn_requests": canonical.TurnStateCompleted, "refusal": canonical.TurnStateCompleted,
	"cancelled": canonical.TurnStateCancelled,
}

// promptDone ends the turn of a session/prompt with its stopReason.
func (m *mapper) promptDone(p pending, answered bool) {
	reason, _ := stopReason(m.fr.msg.Result)
	sid, turn := m.promptTurn(p, answered)
	state, known := stopStates[reason]
	if !known {
		state = canonical.TurnStateCompleted
		m.unmapped(m.env(sid))
	}
	done := &canonical.TurnCompleted{State: state, StopReason: reason}
	last, ok := m.usage(sid, done)
	m.endTurn(sid, turn, done)
	if ok {
		env := m.env(sid)
		m.em.Emit(env, &canonical.ThreadTokenUsageUpdated{Usage: m.sess(sid).Total, Last: &last})
	}
}

// promptTurn is the turn a prompt response ends: its request's, or, for a
// response whose request was not seen (an excerpt), the session's open
// turn or one opened here.
func (m *mapper) promptTurn(p pending, answered bool) (string, string) {
	if answered && p.Turn != "" {
		return p.Session, p.Turn
	}
	sid := m.st.Current
	if answered {
		sid = p.Session
	}
	s := m.sess(sid)
	if s.Turn != "" {
		return sid, s.Turn
	}
	turn := m.ids.Derived(canonical.EntityTurn, m.em.Frame().Ordinal, 0)
	env := m.env(sid)
	env.TurnID = turn
	m.em.Emit(env, &canonical.TurnStarted{})
	return sid, turn
}

// usage reads a prompt result's usage: ACP's (unstable) usage, which counts
// the whole session, or else Gemini CLI's per-prompt _meta.quota.
func (m *mapper) usage(sid string, done *canonical.TurnCompleted) (canonical.TokenUsage, bool) {
	var r struct {
		Usage *struct {
			Input      int64 `json:"inputTokens"`
			Output     int64 `json:"outputTokens"`
			Thought    int64 `json:"thoughtTokens"`
			CacheRead  int64 `json:"cachedReadTokens"`
			CacheWrite int64 `json:"cachedWriteTokens"`
		} `json:"usage"`
		Meta struct {
			Quota struct {
				TokenCount json.RawMessage `json:"token_count"`
				ModelUsage []struct {
					Model      string          `json:"model"`
					TokenCount json.RawMessage `json:"token_count"`
				} `json:"model_usage"`
			} `json:"quota"`
		} `json:"_meta"`
	}
	if jsonscan.Unmarshal(m.fr.msg.Result, &r) != nil {
		return canonical.TokenUsage{}, false
	}
	s := m.sess(sid)
	var turn canonical.TokenUsage
	switch {
	case r.Usage != nil:
		u := r.Usage
		cum := canonical.TokenUsage{
			InputTokens: max(u.Input, 0), CachedInputTokens: max(u.CacheRead, 0), CacheWriteInputTokens: max(u.CacheWrite, 0),
			OutputTokens: max(u.Output, 0), ReasoningOutputTokens: max(u.Thought, 0),
		}
		// A count that fell in some bucket is a new agent process's (one
		// that loaded the session anew counts from zero): the turn used
		// all of it, and the thread keeps what the earlier process used.
		if cum.Behind(s.Cumulative) {
			turn = cum
		} else {
			turn = cum.Sub(s.Cumulative)
		}
		s.Cumulative, s.Total = cum, s.Total.Add(turn)
	case present(r.Meta.Quota.TokenCount):
		u, err := canonical.FoldUsage(r.Meta.Quota.TokenCount, canonical.GeminiUsage)
		if err != nil {
			m.em.Fail(m.env(sid), canonical.ErrorClassValidation, "prompt usage could not be read: "+err.Error(), nil)
			return canonical.TokenUsage{}, false
		}
		turn = u
		s.Total = s.Total.Add(u)
		for _, mu := range r.Meta.Quota.ModelUsage {
			if fu, err := canonical.FoldUsage(mu.TokenCount, canonical.GeminiUsage); err == nil && mu.Model != "" {
				if done.ModelUsage == nil {
					done.ModelUsage = map[string]canonical.ModelUsage{}
				}
				done.ModelUsage[mu.Model] = canonical.ModelUsage{TokenUsage: fu}
			}
		}
	default:
		return canonical.TokenUsage{}, false
	}
	m.put(sid, s)
	done.Usage = &turn
	return turn, true
}

// errorClasses classify JSON-RPC errors (EVENTS.md §5.4): malformed or
// unknown calls are validation errors, a failure inside the agent a
// provider error, missing authentication a permission error. Codes ACP
// does not name (Gemini CLI answers with HTTP statuses: 429, 500) are the
// provider's.
var errorClasses = map[int64]canonical.ErrorClass{
	-32700: canonical.ErrorClassValidation, -32600: canonical.ErrorClassValidation,
	-32601: canonical.ErrorClassValidation, -32602: canonical.ErrorClassValidation,
	-32603: canonical.ErrorClassProvider, -32002: canonical.ErrorClassProvider,
	-32000: canonical.ErrorClassPermission, -32800: canonical.ErrorClassUnknown,
}

func (m *mapper) errorResponse(p pending, answered bool) {
	e := m.fr.msg.Error
	sid := p.Session
	if !answered {
		sid = m.st.Current
	}
	env := m.env(sid)
	env.ProviderRefs.ProviderRequestID = m.fr.id
	class, ok := errorClasses[e.Code]
	if !ok {
		class = canonical.ErrorClassProvider
	}
	msg := nonEmpty(e.Message, "JSON-RPC error "+strconv.FormatInt(e.Code, 10))
	detail := rawJSON(map[string]any{"code": e.Code, "message": e.Message, "data": e.Data, "method": p.Method})
	if p.Method == "session/cancel" && e.Code == -32601 {
		// Agents that do not implement cancel: the turn goes on (EVENTS.md §5.1).
		m.em.Warn(env, "session/cancel is not supported by the agent: "+msg, detail)
		return
	}
	m.em.Fail(env, class, msg, detail)
	switch p.Method {
	case "session/prompt":
		sid, turn := m.promptTurn(p, answered)
		state := canonical.TurnStateFailed
		if e.Code == -32800 {
			state = canonical.TurnStateCancelled
		}
		m.endTurn(sid, turn, &canonical.TurnCompleted{State: state, ErrorMessage: msg})
	case "authenticate":
		f := false
		m.em.Emit(env, &canonical.AuthStatus{IsAuthenticating: &f, Error: msg})
	case "session/new", "session/load", "session/resume", "session/fork":
		m.em.Emit(env, &canonical.SessionStateChanged{State: canonical.SessionStateError, Reason: p.Method, Detail: msg})
	}
}

func compact(v json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return string(v)
	}
	return b.String()
}
