package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Dialect is this adapter's dialect name.
const Dialect = "acp"

// MappingVersion is bumped with every change of what the adapter emits.
const MappingVersion = "acp/5"

// Raw sources: EVENTS.md names them after Cursor, the first ACP agent; they
// are kept for every agent, so a subscriber filters ACP frames one way.
const (
	sourceNotification = "cursor.acp.notification"
	sourceRequest      = "cursor.acp.request"
	sourceResponse     = "cursor.acp.response"
)

// Adapter is the acp adapter.
type Adapter struct{}

// Dialect implements adapter.Adapter.
func (Adapter) Dialect() string { return Dialect }

// Provider implements adapter.Adapter.
func (Adapter) Provider() canonical.Provider { return canonical.ProviderCursor }

// MappingVersion implements adapter.Adapter.
func (Adapter) MappingVersion() string { return MappingVersion }

// Rules implements adapter.Adapter.
func (Adapter) Rules() adapter.Rules { return rules.WithDiagnostics() }

// Kinds implements adapter.Adapter. Without the session it cannot know
// which request a response answers: responses are "response" (or, by
// shape, a session/prompt result or an error code); sessions know better
// (adapter.ContextKinds).
func (Adapter) Kinds(f adapter.Frame) []string { return frameKinds(State{}, f) }

// NewSession implements adapter.Adapter. A provider given here is final;
// without one, the provider is cursor until the initialize response names
// the agent.
func (Adapter) NewSession(p canonical.Provider) adapter.Session {
	st := State{Provider: canonical.ProviderCursor}
	if p != "" {
		st.Provider, st.Fixed = p, true
	}
	return adapter.NewSessionKinds(st, Map, frameKinds)
}

// State is what the adapter remembers between frames.
type State struct {
	// Provider is the provider events are attributed to.
	Provider canonical.Provider `json:"provider"`
	// Fixed reports a provider given by the caller, which initialize does
	// not change.
	Fixed bool `json:"fixed,omitempty"`
	// ClientInit holds the params of the client's initialize request until
	// the agent answers it (see Map).
	ClientInit json.RawMessage `json:"clientInit,omitempty"`
	// Pending are the requests awaiting an answer, by direction and
	// JSON-RPC id ("c:<id>" sent by the client, "a:<id>" by the agent):
	// the two sides number their requests independently.
	Pending map[string]pending `json:"pending,omitempty"`
	// Sessions are the ACP sessions seen, by ACP session id.
	Sessions map[string]session `json:"sessions,omitempty"`
	// Current is the ACP session named last, for frames that name none.
	Current string `json:"current,omitempty"`
}

type pending struct {
	Method  string `json:"method"`
	Session string `json:"session,omitempty"`
	// Turn is the turn a session/prompt opened.
	Turn string `json:"turn,omitempty"`
	// Request and Type are the canonical request an agent request opened.
	Request string                `json:"request,omitempty"`
	Type    canonical.RequestType `json:"type,omitempty"`
	// Item and ToolCall are the tool call a permission request is about.
	Item     string `json:"item,omitempty"`
	ToolCall string `json:"toolCall,omitempty"`
	// Options maps a permission's optionIds to their kinds.
	Options map[string]string `json:"options,omitempty"`
	// Params are kept for the small setter requests whose response does not
	// repeat what was set (session/set_mode, providers/set).
	Params json.RawMessage `json:"params,omitempty"`
}

type session struct {
	// Turn is the open turn updates belong to ("" between turns).
	Turn string `json:"turn,omitempty"`
	// Text is the open text item (a message or thought being streamed).
	Text *text `json:"text,omitempty"`
	// Tools are the session's tool calls by toolCallId; finished ones are
	// kept so that a late repeat does not start them again.
	Tools map[string]toolCall `json:"tools,omitempty"`
	// Seq numbers tool calls in start order.
	Seq int `json:"seq,omitempty"`
	// Compactions are the session's compaction items by compactionId.
	Compactions map[string]bool `json:"compactions,omitempty"`
	// Subagents lists the child sessions task.started was emitted for.
	Subagents []string `json:"subagents,omitempty"`
	// Total is the thread's usage so far; Cumulative the last cumulative
	// ACP usage (PromptResponse.usage counts across all turns).
	Total      canonical.TokenUsage `json:"total"`
	Cumulative canonical.TokenUsage `json:"cumulative"`
	// Started reports that thread.started was emitted for the session.
	Started bool `json:"started,omitempty"`
}

type text struct {
	ID        string             `json:"id"`
	Kind      string             `json:"kind"`
	MessageID string             `json:"messageId,omitempty"`
	Turn      string             `json:"turn,omitempty"`
	Text      string             `json:"text,omitempty"`
	Type      canonical.ItemType `json:"type"`
}

type toolCall struct {
	ItemID string `json:"itemId"`
	Turn   string `json:"turn,omitempty"`
	Seq    int    `json:"seq"`
	// Item is what the agent said of the call so far, without its data.
	Item     canonical.ItemLifecycle `json:"item"`
	Kind     string                  `json:"kind,omitempty"`
	Done     bool                    `json:"done,omitempty"`
	Declined bool                    `json:"declined,omitempty"`
}

// message is one JSON-RPC 2.0 message.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

type class int

const (
	classRequest class = iota + 1
	classNotification
	classResponse
)

// frame is a decoded frame: the message, its class and who sent it.
type frame struct {
	// check is the frame's validation, reused for its raw copy
	// (canonical.NewRawChecked); zero when it was not scanned.
	check jsonscan.Info
	msg   message
	class class
	dir   adapter.Direction
	id    string // the JSON-RPC id as compact JSON
	key   string // the pending key of the request it is or answers
	// sid, update and tag are params.sessionId, params.update and its
	// sessionUpdate, read once (see paramsHead).
	sid    string
	update json.RawMessage
	tag    string
}

// paramsHead reads the members of params that route a frame: sessionId,
// update and update.sessionUpdate. Each is what decoding into a struct of
// that one member gives (errors ignored: a frame without them is still
// mapped).
func paramsHead(params json.RawMessage) (sid string, update json.RawMessage, tag string) {
	if s, u, ok := members(params, "sessionId", "update"); ok {
		if sid, ok = jsonscan.String(s); ok {
			if u == nil {
				return sid, nil, ""
			}
			if t, _, ok := members(u, "sessionUpdate", "sessionUpdate"); ok {
				if tag, ok = jsonscan.String(t); ok {
					return sid, u, tag
				}
			}
			var h struct {
				SessionUpdate string `json:"sessionUpdate"`
			}
			_ = jsonscan.Unmarshal(u, &h) // an update without a tag is unmapped
			return sid, u, h.SessionUpdate
		}
	}
	var p struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}
	_ = jsonscan.Unmarshal(params, &p) // frames without a session use the current one
	var h struct {
		SessionUpdate string `json:"sessionUpdate"`
	}
	_ = jsonscan.Unmarshal(p.Update, &h) // as above
	return p.SessionID, p.Update, h.SessionUpdate
}

// decode reads a frame. st decides who sent a bare response (see
// direction); ok is false for anything that is not a JSON-RPC message.
func decode(st State, f adapter.Frame) (frame, error) {
	var fr frame
	msg, dir, check, ok := scanMessage(f)
	fr.check = check
	if ok {
		fr.msg = msg
	} else {
		raw, d, ok := f.Unwrap()
		if !ok {
			return frame{}, fmt.Errorf("malformed tap line")
		}
		if err := jsonscan.Unmarshal(raw, &fr.msg); err != nil {
			return frame{}, err
		}
		dir = d
	}
	m := fr.msg
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method != "" && hasID:
		fr.class = classRequest
	case m.Method != "":
		fr.class = classNotification
	case len(m.ID) > 0 && (len(m.Result) > 0 || m.Error != nil):
		fr.class = classResponse
	default:
		return frame{}, fmt.Errorf("not a JSON-RPC request, notification or response")
	}
	if m.Method != "" {
		fr.sid, fr.update, fr.tag = paramsHead(m.Params)
	}
	if hasID {
		var c bytes.Buffer
		if err := json.Compact(&c, m.ID); err != nil {
			return frame{}, err
		}
		fr.id = c.String()
	}
	explicit := f.Direction != "" || bytes.HasPrefix(bytes.TrimSpace(f.Bytes), []byte(`{"dir"`))
	fr.dir = dir
	if !explicit {
		fr.dir = direction(st, fr)
	}
	switch {
	case fr.class == classRequest && fr.dir == adapter.FromClient, fr.class == classResponse && fr.dir == adapter.FromAgent:
		fr.key = "c:" + fr.id
	case fr.class == classRequest, fr.class == classResponse:
		fr.key = "a:" + fr.id
	}
	return fr, nil
}

// messageMembers are the members of message, in its order.
var messageMembers = []string{"id", "method", "params", "result", "error"}

// scanMessage is Frame.Unwrap and the decoding of its message in one
// validation of the frame and a scan: what they give for frames whose
// members are of the types message has; ok is false for any other frame,
// which decode reads the long way (and reports as it reports them).
func scanMessage(f adapter.Frame) (message, adapter.Direction, jsonscan.Info, bool) {
	info := jsonscan.Check(f.Bytes)
	if !info.Valid {
		return message{}, "", info, false
	}
	raw, dir := f.Bytes, f.Direction
	if dir == "" {
		dir = adapter.FromAgent
	}
	if trimmed := bytes.TrimSpace(f.Bytes); bytes.HasPrefix(trimmed, []byte(`{"dir"`)) {
		d, msg, ok := members(trimmed, "dir", "msg")
		if !ok || d == nil || msg == nil {
			return message{}, "", info, false
		}
		s, ok := jsonscan.String(d)
		if !ok || (s != string(adapter.FromAgent) && s != string(adapter.FromClient)) {
			return message{}, "", info, false
		}
		raw, dir = msg, adapter.Direction(s)
	}
	// The message's members are kept (state, events): they must not share
	// the caller's buffer, as decoded RawMessages do not.
	raw = bytes.Clone(raw)
	var v [5][]byte
	if !jsonscan.Fields(raw, messageMembers, v[:]) {
		return message{}, "", info, false
	}
	method, ok := jsonscan.String(v[1])
	if !ok {
		return message{}, "", info, false
	}
	m := message{ID: v[0], Method: method, Params: v[2], Result: v[3]}
	if e := v[4]; e != nil && string(e) != "null" {
		m.Error = &rpcError{}
		if e[0] != '{' || jsonscan.Unmarshal(e, m.Error) != nil {
			return message{}, "", info, false
		}
	}
	return m, dir, info, true
}

// direction guesses who sent a bare frame (no tap dir): requests and
// notifications by method, a response by which side has a request of its
// id pending; agent when nothing tells (ADAPTERS.md).
func direction(st State, fr frame) adapter.Direction {
	if fr.class != classResponse {
		if _, ok := clientMethods[fr.msg.Method]; ok {
			return adapter.FromClient
		}
		return adapter.FromAgent
	}
	_, agentAsked := st.Pending["a:"+fr.id]
	_, clientAsked := st.Pending["c:"+fr.id]
	switch {
	case agentAsked && !clientAsked:
		return adapter.FromClient
	case agentAsked && clientAsked:
		var r map[string]json.RawMessage
		if jsonscan.Unmarshal(fr.msg.Result, &r) == nil {
			if _, ok := r["outcome"]; ok {
				return adapter.FromClient
			}
		}
	}
	return adapter.FromAgent
}

// clientMethods are the methods the client calls on the agent; the value
// says whether the request maps to no events (its response says it all).
var clientMethods = map[string]bool{
	"initialize": true, "authenticate": false, "logout": true,
	"session/new": false, "session/load": false, "session/resume": false, "session/fork": false,
	"session/prompt": false, "session/cancel": false,
	"session/list": true, "session/delete": true, "session/close": true,
	"session/set_mode": true, "session/set_model": true, "session/set_config_option": true,
	"session/archive": true, "session/unarchive": true, "session/status": true, "session/set_title": true,
	"providers/list": true, "providers/set": true, "providers/disable": true, "auth/status": true,
}

// errorKinds are the JSON-RPC error codes ACP names (INVENTORY rows).
var errorKinds = map[int64]bool{-32700: true, -32600: true, -32601: true, -32602: true, -32603: true, -32800: true, -32000: true, -32002: true}

func frameKinds(st State, f adapter.Frame) []string {
	fr, err := decode(st, f)
	if err != nil {
		return nil
	}
	return fr.kinds(st)
}

func (fr frame) kinds(st State) []string {
	m := fr.msg
	switch {
	case fr.class != classResponse && fr.dir == adapter.FromClient:
		return []string{"client:" + m.Method}
	case m.Method == "session/update":
		return []string{"session/update:" + fr.tag}
	case fr.class != classResponse:
		return []string{m.Method}
	case fr.dir == adapter.FromClient:
		if p, ok := st.Pending[fr.key]; ok {
			return []string{"client-response:" + p.Method}
		}
		return []string{"client-response"}
	case m.Error != nil:
		if errorKinds[m.Error.Code] {
			return []string{"error:" + strconv.FormatInt(m.Error.Code, 10)}
		}
		return []string{"error"}
	}
	method := ""
	if p, ok := st.Pending[fr.key]; ok {
		method = p.Method
	}
	if reason, ok := stopReason(m.Result); ok && (method == "" || method == "session/prompt") {
		return []string{"session/prompt", "session/prompt:" + reason}
	}
	if method == "" {
		return []string{"response"}
	}
	return []string{method}
}

func stopReason(result json.RawMessage) (string, bool) {
	if v, _, ok := members(result, "stopReason", "stopReason"); ok {
		if v == nil || string(v) == "null" {
			return "", false
		}
		if s, ok := jsonscan.String(v); ok {
			return s, true
		}
	}
	var r struct {
		StopReason *string `json:"stopReason"`
	}
	if jsonscan.Unmarshal(result, &r) != nil || r.StopReason == nil {
		return "", false
	}
	return *r.StopReason, true
}

func source(c class) string {
	switch c {
	case classRequest:
		return sourceRequest
	case classNotification:
		return sourceNotification
	case classResponse:
	}
	return sourceResponse
}

// Map maps one frame; it is the adapter's core, a function of its input
// but for one thing: the maps of st are updated in place, not copied on
// every frame (a session's tool calls are kept to its end), so the state
// passed in is the returned state's and must not be used again.
func Map(st State, f adapter.Frame) (State, []canonical.Event, error) {
	fr, err := decode(st, f)
	if err != nil {
		return st, adapter.Undecodable(f, st.Provider, MappingVersion, sourceNotification, err), nil
	}
	if st.Pending == nil {
		st.Pending = map[string]pending{}
	}
	if st.Sessions == nil {
		st.Sessions = map[string]session{}
	}
	kinds := fr.kinds(st)
	p, answered := st.Pending[fr.key]
	method := fr.msg.Method
	if fr.class == classResponse {
		method = p.Method
	}
	raw := canonical.NewRawChecked(source(fr.class), method, kinds[0], f.Bytes, fr.check)
	if err := adapter.CheckDepth(f, raw, fr.check); err != nil {
		return st, adapter.Undecodable(f, st.Provider, MappingVersion, source(fr.class), err), nil
	}
	if fr.class == classResponse {
		delete(st.Pending, fr.key)
	}
	// The provider is part of every id and of the envelope, so it is decided
	// before this frame's events are made: the initialize response names the
	// agent. The client's initialize request, before it, maps to nothing.
	if fr.class == classResponse && fr.dir == adapter.FromAgent && answered && p.Method == "initialize" && fr.msg.Error == nil && !st.Fixed {
		if prov := providerOf(fr.msg.Result); prov != "" {
			st.Provider = prov
		}
	}
	em := adapter.NewEmitter(f, st.Provider, MappingVersion, raw)
	m := &mapper{em: em, st: &st, ids: em.IDs(), fr: fr, kind: kinds[0]}
	switch {
	case fr.class == classResponse && fr.dir == adapter.FromClient:
		m.clientResponse(p, answered)
	case fr.class == classResponse:
		m.agentResponse(p, answered)
	case fr.dir == adapter.FromClient:
		m.clientRequest()
	default:
		m.agentMessage()
	}
	return st, em.Events(), nil
}

type mapper struct {
	em   *adapter.Emitter
	st   *State
	ids  canonical.IDSpace
	fr   frame
	kind string
}

// providerOf names the provider of an initialize result's agentInfo. The
// agents agentwire has adapters for keep their provider, so that a Gemini
// or Claude session has one provider however it was captured; any other
// agent gets a slug of its name.
func providerOf(result json.RawMessage) canonical.Provider {
	var r struct {
		AgentInfo *struct {
			Name  string `json:"name"`
			Title string `json:"title"`
		} `json:"agentInfo"`
	}
	if jsonscan.Unmarshal(result, &r) != nil || r.AgentInfo == nil {
		return ""
	}
	name := strings.ToLower(r.AgentInfo.Name + " " + r.AgentInfo.Title)
	switch {
	case strings.Contains(name, "gemini"):
		return canonical.ProviderGemini
	case strings.Contains(name, "claude"):
		return canonical.ProviderClaude
	case strings.Contains(name, "codex"):
		return canonical.ProviderCodex
	case strings.Contains(name, "cursor"):
		return canonical.ProviderCursor
	}
	if p := canonical.ProviderFromName(r.AgentInfo.Name); p.Valid() {
		return p
	}
	return canonical.ProviderFromName(r.AgentInfo.Title)
}

// env is the envelope of an event of ACP session sid (none when "").
func (m *mapper) env(sid string) canonical.Event {
	if sid == "" {
		return canonical.Event{}
	}
	return canonical.Event{
		ThreadID: m.ids.Native(canonical.EntityThread, sid),
		TurnID:   m.st.Sessions[sid].Turn,
		ProviderRefs: canonical.ProviderRefs{
			ProviderSessionID: sid, ProviderThreadID: sid,
		},
	}
}

func (m *mapper) withRequest(env canonical.Event, reqID string) canonical.Event {
	env.RequestID = reqID
	env.ProviderRefs.ProviderRequestID = m.fr.id
	return env
}

// sessionOf reads params.sessionId, and remembers it as the current session.
func (m *mapper) sessionOf() string {
	if m.fr.sid == "" {
		return m.st.Current
	}
	m.st.Current = m.fr.sid
	return m.fr.sid
}

func (m *mapper) sess(sid string) session { return m.st.Sessions[sid] }

func (m *mapper) put(sid string, s session) {
	if sid == "" {
		return
	}
	m.st.Sessions[sid] = s
}

func (m *mapper) unmapped(env canonical.Event) { adapter.Unmapped(m.em, env, m.kind) }

// rawJSON returns v as JSON for a config or detail member.
func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

// present reports a JSON member that says something (not absent, not null).
func present(v json.RawMessage) bool { return len(v) > 0 && string(v) != "null" }

// configOf picks the members of a JSON object that are present.
func configOf(obj json.RawMessage, names ...string) map[string]json.RawMessage {
	// What decoding obj into a map gives: the last member of each name.
	found := map[string]json.RawMessage{}
	plain := true
	if jsonscan.EachMember(obj, func(key, val []byte) bool {
		if bytes.IndexByte(key, '\\') >= 0 {
			plain = false
			return false
		}
		for _, n := range names {
			if string(key) == n {
				found[n] = val
			}
		}
		return true
	}) && plain {
		for n, v := range found {
			if !present(v) {
				delete(found, n)
			}
		}
		return found
	}
	var all map[string]json.RawMessage
	_ = jsonscan.Unmarshal(obj, &all) // a non-object has no members
	out := map[string]json.RawMessage{}
	for _, n := range names {
		if v, ok := all[n]; ok && present(v) {
			out[n] = v
		}
	}
	return out
}

// SessionProvider implements adapter.ProviderState.
func (st State) SessionProvider() canonical.Provider { return st.Provider }
