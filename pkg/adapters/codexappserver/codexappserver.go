package codexappserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/adapters/codexcommon"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Dialect is this adapter's dialect name.
const Dialect = "codex-app-server"

// MappingVersion is bumped with every change of what the adapter emits.
const MappingVersion = "codex-app-server/11"

// Raw sources: what the agent sends unasked, what it asks, and the
// answers to requests in either direction.
const (
	sourceNotification = "codex.app-server.notification"
	sourceRequest      = "codex.app-server.request"
	sourceResponse     = "codex.app-server.response"
	// sourceClient is a request or notification the client sent.
	sourceClient = "codex.app-server.client"
)

// Adapter is the codex-app-server adapter.
type Adapter struct{}

// Dialect implements adapter.Adapter.
func (Adapter) Dialect() string { return Dialect }

// Provider implements adapter.Adapter.
func (Adapter) Provider() canonical.Provider { return canonical.ProviderCodex }

// MappingVersion implements adapter.Adapter.
func (Adapter) MappingVersion() string { return MappingVersion }

// Rules implements adapter.Adapter.
func (Adapter) Rules() adapter.Rules { return rules.WithDiagnostics() }

// Kinds implements adapter.Adapter: a notification or server request is its
// method (and "item:<type>" for item frames); what the client sends is
// "client:<method>"; answers are "response" (to the client) or
// "client:response" (to the agent), "error" members included.
func (Adapter) Kinds(f adapter.Frame) []string {
	m, dir, ok := decode(f)
	if !ok {
		return nil
	}
	return kinds(m, dir)
}

func kinds(m message, dir adapter.Direction) []string {
	prefix := ""
	if dir == adapter.FromClient {
		prefix = "client:"
	}
	switch {
	case m.Method != "":
		var p struct {
			Item struct {
				Type string `json:"type"`
			} `json:"item"`
		}
		if (m.Method == "item/started" || m.Method == "item/completed") && jsonscan.Unmarshal(m.Params, &p) == nil && p.Item.Type != "" {
			return []string{m.Method, "item:" + p.Item.Type}
		}
		return []string{prefix + m.Method}
	case len(m.ID) > 0:
		return []string{prefix + "response"}
	}
	return nil
}

// NewSession implements adapter.Adapter.
func (Adapter) NewSession(p canonical.Provider) adapter.Session {
	if p == "" {
		p = canonical.ProviderCodex
	}
	return codexcommon.NewSession(State{Provider: p}, step)
}

// State is what the adapter remembers between frames. JSON-RPC ids are
// per direction: the agent's requests (approvals) and the client's
// requests (initialize, thread/start, ...) are two id spaces.
type State struct {
	// Provider is the provider events are attributed to.
	Provider canonical.Provider `json:"provider"`
	// Clock keeps the frames that carry no time on the provider's time line.
	Clock adapter.Clock `json:"clock,omitzero"`
	// ServerRequests are the agent's requests still waiting for an answer,
	// by JSON-RPC id.
	ServerRequests map[string]Pending `json:"serverRequests,omitempty"`
	// ClientRequests are the client's requests still waiting, by
	// JSON-RPC id: method, so the answer can be read.
	ClientRequests map[string]string `json:"clientRequests,omitempty"`
	// Turns are the open turns ("thread/turn" provider ids), each with
	// the thread's usage total when it started.
	Turns []OpenTurn `json:"turns,omitempty"`
	// Items are the open items ("thread/turn/item" provider ids).
	Items []string `json:"items,omitempty"`
	// Usage is each thread's cumulative usage as last reported.
	Usage map[string]canonical.TokenUsage `json:"usage,omitempty"`
}

// Pending is an open server request.
type Pending struct {
	// ID is the canonical request id.
	ID string `json:"id"`
	// Type is the canonical request type.
	Type canonical.RequestType `json:"type"`
	// Method is the request's method.
	Method string `json:"method"`
	// Thread, Turn and Item are the provider ids the request named.
	Thread string `json:"thread,omitempty"`
	Turn   string `json:"turn,omitempty"`
	Item   string `json:"item,omitempty"`
}

// OpenTurn is a turn between turn/started and turn/completed.
type OpenTurn struct {
	// Key is "thread/turn".
	Key string `json:"key"`
	// StartUsage is the thread's usage total when the turn started.
	StartUsage canonical.TokenUsage `json:"startUsage"`
	// SawUsage reports whether usage was reported during the turn.
	SawUsage bool `json:"sawUsage,omitempty"`
	// UserMessages are the turn's user messages: the provider item that
	// took each text key (codexcommon.UserMessageKey).
	UserMessages map[string]string `json:"userMessages,omitempty"`
}

// message is a JSON-RPC message; Codex omits "jsonrpc".
type message struct {
	ID          json.RawMessage `json:"id"`
	Method      string          `json:"method"`
	Params      json.RawMessage `json:"params"`
	Result      json.RawMessage `json:"result"`
	Error       json.RawMessage `json:"error"`
	EmittedAtMs *int64          `json:"emittedAtMs"`
}

// tapMessage is a tap line decoded with its message in one pass.
type tapMessage struct {
	Dir *adapter.Direction `json:"dir"`
	Msg *message           `json:"msg"`
}

var tapMembers = [...]string{"dir", "msg"}

// decodeTap decodes a tap line and its message in one pass, where
// f.Unwrap and then decoding the message would decode it twice. ok is
// false when it cannot be sure to read the line as they would (a member
// named twice or not exactly, a message that does not decode): decode
// does it their way then.
func decodeTap(trimmed []byte) (message, adapter.Direction, bool) {
	var seen [len(tapMembers)]bool
	plain := true
	if !jsonscan.EachMember(trimmed, func(k, _ []byte) bool {
		if !jsonscan.PlainKey(k) {
			plain = false
			return false
		}
		for i, name := range tapMembers {
			if bytes.EqualFold(k, []byte(name)) {
				if string(k) != name || seen[i] {
					plain = false
					return false
				}
				seen[i] = true
			}
		}
		return true
	}) || !plain {
		return message{}, "", false
	}
	var tm tapMessage
	if jsonscan.Unmarshal(trimmed, &tm) != nil || tm.Dir == nil || tm.Msg == nil {
		return message{}, "", false
	}
	if *tm.Dir != adapter.FromAgent && *tm.Dir != adapter.FromClient {
		return message{}, "", false
	}
	return *tm.Msg, *tm.Dir, true
}

func decode(f adapter.Frame) (message, adapter.Direction, bool) {
	if trimmed := bytes.TrimSpace(f.Bytes); bytes.HasPrefix(trimmed, []byte(`{"dir"`)) {
		if m, dir, ok := decodeTap(trimmed); ok {
			return checkMessage(m, dir)
		}
	}
	msg, dir, ok := f.Unwrap()
	if !ok {
		return message{}, dir, false
	}
	var m message
	if jsonscan.Unmarshal(msg, &m) != nil {
		return message{}, dir, false
	}
	return checkMessage(m, dir)
}

func checkMessage(m message, dir adapter.Direction) (message, adapter.Direction, bool) {
	if m.Method == "" && len(m.ID) == 0 {
		return message{}, dir, false
	}
	if string(m.ID) == "null" {
		m.ID = nil
	}
	return m, dir, true
}

// ids are the correlation ids most frames carry in params.
type ids struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	ItemID   string `json:"itemId"`
	Thread   *struct {
		ID string `json:"id"`
	} `json:"thread"`
	Turn *struct {
		ID string `json:"id"`
	} `json:"turn"`
}

// mapper carries one frame's context through the mapping functions.
type mapper struct {
	st  *State
	em  *adapter.Emitter
	f   adapter.Frame
	m   message
	env canonical.Event
	// thread, turn, item are the frame's provider ids.
	thread, turn, item string
}

// Map maps one frame; it is the adapter's pure core. Sessions step their
// own state in place instead (step), which spares the copy.
func Map(st State, f adapter.Frame) (State, []canonical.Event, error) {
	st = st.clone()
	events := step(&st, f)
	return st, events, nil
}

// step maps one frame by updating st.
func step(st *State, f adapter.Frame) []canonical.Event {
	m, dir, ok := decode(f)
	if !ok {
		return adapter.Undecodable(f, st.Provider, MappingVersion, sourceNotification, fmt.Errorf("not a JSON-RPC message or tap line"))
	}
	source, msgType := sourceNotification, ""
	switch {
	case dir == adapter.FromClient && m.Method != "":
		source = sourceClient
	case m.Method != "" && len(m.ID) > 0:
		source = sourceRequest
	case m.Method == "":
		source, msgType = sourceResponse, "response"
		if len(m.Error) > 0 {
			msgType = "error"
		}
	}
	raw := canonical.NewRaw(source, m.Method, msgType, f.Bytes)
	if err := adapter.CheckDepth(f, raw, jsonscan.Info{}); err != nil {
		return adapter.Undecodable(f, st.Provider, MappingVersion, source, err)
	}
	em := adapter.NewEmitter(f, st.Provider, MappingVersion, raw)
	var emitted time.Time
	if m.EmittedAtMs != nil && *m.EmittedAtMs > 0 {
		emitted, _ = adapter.UnixMilli(*m.EmittedAtMs)
	}
	// Notifications carry the server's time, requests and responses do
	// not: the clock puts them on one time line (approval latencies were
	// the server's clock against the tap's).
	em.SetTimeOn(&st.Clock, emitted)
	mp := &mapper{st: st, em: em, f: f, m: m}
	var p ids
	if len(m.Params) > 0 && !p.scan(m.Params) {
		if err := jsonscan.Unmarshal(m.Params, &p); err != nil {
			return adapter.Undecodable(f, st.Provider, MappingVersion, source, fmt.Errorf("params of %s: %w", m.Method, err))
		}
	}
	mp.setIDs(p)
	switch {
	case m.Method == "" && dir == adapter.FromClient:
		mp.clientResponse()
	case m.Method == "":
		mp.response()
	case dir == adapter.FromClient:
		mp.clientMessage()
	case len(m.ID) > 0:
		mp.serverRequest()
	default:
		if !mp.notification() {
			adapter.Unmapped(em, mp.env, m.Method)
		}
	}
	return em.Events()
}

var idMembers = [...]string{"threadId", "turnId", "itemId", "thread", "turn"}

// scan reads the ids of params (valid JSON) without decoding them as
// encoding/json would, and reports whether it could be sure to read them
// the same (otherwise they are decoded).
func (p *ids) scan(params []byte) bool {
	var seen [len(idMembers)]bool
	ok := true
	if !jsonscan.EachMember(params, func(k, v []byte) bool {
		if !jsonscan.PlainKey(k) {
			ok = false
			return false
		}
		for i, name := range idMembers {
			if !bytes.EqualFold(k, []byte(name)) {
				continue
			}
			if string(k) != name || seen[i] {
				ok = false
				return false
			}
			seen[i] = true
			if string(v) == "null" {
				continue
			}
			if i >= 3 {
				id, sure := codexcommon.StringMembers(v, "id")
				if !sure {
					ok = false
					return false
				}
				ref := &struct {
					ID string `json:"id"`
				}{ID: id[0]}
				if i == 3 {
					p.Thread = ref
				} else {
					p.Turn = ref
				}
				continue
			}
			if len(v) < 2 || v[0] != '"' || !jsonscan.PlainKey(v[1:len(v)-1]) {
				ok = false
				return false
			}
			*[...]*string{&p.ThreadID, &p.TurnID, &p.ItemID}[i] = string(v[1 : len(v)-1])
		}
		return true
	}) || !ok {
		*p = ids{}
		return false
	}
	return true
}

// clone copies the state's maps and slices so that mapping never changes
// the caller's state (a restored snapshot stays valid).
func (st State) clone() State {
	c := st
	c.Turns = slices.Clone(st.Turns)
	c.Items = slices.Clone(st.Items)
	if st.ServerRequests != nil {
		c.ServerRequests = maps.Clone(st.ServerRequests)
	}
	if st.ClientRequests != nil {
		c.ClientRequests = maps.Clone(st.ClientRequests)
	}
	if st.Usage != nil {
		c.Usage = maps.Clone(st.Usage)
	}
	return c
}

func (mp *mapper) setIDs(p ids) {
	mp.thread, mp.turn, mp.item = p.ThreadID, p.TurnID, p.ItemID
	if mp.thread == "" && p.Thread != nil {
		mp.thread = p.Thread.ID
	}
	if mp.turn == "" && p.Turn != nil {
		mp.turn = p.Turn.ID
	}
	mp.env = mp.envFor(mp.thread, mp.turn, mp.item)
}

// envFor scopes turns by thread and items by thread and turn, as Codex
// does; the same scoping in the rollout adapter gives a thread, turn or
// item seen through both the same canonical id.
func (mp *mapper) envFor(thread, turn, item string) canonical.Event {
	var env canonical.Event
	ids := mp.em.IDs()
	if thread != "" {
		env.ThreadID = ids.Native(canonical.EntityThread, thread)
		env.ProviderRefs.ProviderThreadID = thread
	}
	if turn != "" {
		env.TurnID = ids.Native(canonical.EntityTurn, thread, turn)
		env.ProviderRefs.ProviderTurnID = turn
	}
	if item != "" {
		env.ItemID = ids.Native(canonical.EntityItem, thread, turn, item)
		env.ProviderRefs.ProviderItemID = item
	}
	return env
}

func (mp *mapper) params(v any) bool {
	if len(mp.m.Params) == 0 {
		return true
	}
	if err := jsonscan.Unmarshal(mp.m.Params, v); err != nil {
		mp.em.Fail(mp.env, canonical.ErrorClassValidation, "params of "+mp.m.Method+" could not be read: "+firstLine(err.Error()), nil)
		return false
	}
	return true
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// --- turns and items ---

func turnKey(thread, turn string) string { return thread + "/" + turn }

func itemKey(thread, turn, item string) string { return thread + "/" + turn + "/" + item }

func (mp *mapper) turnOpen(key string) int {
	return slices.IndexFunc(mp.st.Turns, func(t OpenTurn) bool { return t.Key == key })
}

func (mp *mapper) openTurn(env canonical.Event, p *canonical.TurnStarted) {
	key := turnKey(mp.thread, mp.turn)
	if mp.turnOpen(key) >= 0 {
		return
	}
	mp.st.Turns = append(mp.st.Turns, OpenTurn{Key: key, StartUsage: mp.st.Usage[mp.thread]})
	if p == nil {
		p = &canonical.TurnStarted{}
	}
	mp.em.Emit(env, p)
}

func (mp *mapper) itemOpen(key string) bool { return slices.Contains(mp.st.Items, key) }

// startItem opens the frame's item unless it is open; it reports whether
// it had to.
func (mp *mapper) startItem(p canonical.ItemLifecycle) bool {
	key := itemKey(mp.thread, mp.turn, mp.item)
	if mp.item == "" || mp.itemOpen(key) {
		return false
	}
	mp.st.Items = append(mp.st.Items, key)
	s := canonical.ItemStarted(p)
	mp.em.Emit(mp.env, &s)
	return true
}

func (mp *mapper) completeItem(p canonical.ItemLifecycle) {
	key := itemKey(mp.thread, mp.turn, mp.item)
	if !mp.itemOpen(key) {
		opening := p
		opening.Status, opening.Content, opening.ExitCode, opening.DurationMs = canonical.ItemStatusInProgress, nil, nil, nil
		mp.startItem(opening)
	}
	mp.st.Items = slices.DeleteFunc(mp.st.Items, func(k string) bool { return k == key })
	c := canonical.ItemCompleted(p)
	mp.em.Emit(mp.env, &c)
}

// closeTurnItems completes the items a turn leaves open (an interrupted
// turn), so that no item outlives its turn.
func (mp *mapper) closeTurnItems(status canonical.ItemStatus) {
	prefix := turnKey(mp.thread, mp.turn) + "/"
	var keep []string
	for _, k := range mp.st.Items {
		if !strings.HasPrefix(k, prefix) {
			keep = append(keep, k)
			continue
		}
		item := strings.TrimPrefix(k, prefix)
		env := mp.envFor(mp.thread, mp.turn, item)
		mp.em.Emit(env, &canonical.ItemCompleted{ItemType: canonical.ItemTypeUnknown, Status: status, Detail: "closed by the end of its turn"})
	}
	mp.st.Items = keep
}

// deltaItemTypes says what item a delta belongs to, for a delta whose
// item/started was not seen (an excerpt).
var deltaItemTypes = map[string]canonical.ItemType{
	"item/agentMessage/delta":                   canonical.ItemTypeAssistantMessage,
	"item/plan/delta":                           canonical.ItemTypePlan,
	"item/commandExecution/outputDelta":         canonical.ItemTypeCommandExecution,
	"item/commandExecution/terminalInteraction": canonical.ItemTypeCommandExecution,
	"item/fileChange/outputDelta":               canonical.ItemTypeFileChange,
	"item/fileChange/patchUpdated":              canonical.ItemTypeFileChange,
	"item/reasoning/summaryTextDelta":           canonical.ItemTypeReasoning,
	"item/reasoning/summaryPartAdded":           canonical.ItemTypeReasoning,
	"item/reasoning/textDelta":                  canonical.ItemTypeReasoning,
	"item/mcpToolCall/progress":                 canonical.ItemTypeMCPToolCall,
}

var deltaStreams = map[string]canonical.StreamKind{
	"item/agentMessage/delta":           canonical.StreamAssistantText,
	"item/plan/delta":                   canonical.StreamPlanText,
	"item/commandExecution/outputDelta": canonical.StreamCommandOutput,
	"item/fileChange/outputDelta":       canonical.StreamFileChangeOutput,
	"item/reasoning/summaryTextDelta":   canonical.StreamReasoningSummaryText,
	"item/reasoning/textDelta":          canonical.StreamReasoningText,
}

func (mp *mapper) ensureItem() {
	mp.startItem(canonical.ItemLifecycle{ItemType: deltaItemTypes[mp.m.Method], Status: canonical.ItemStatusInProgress})
}

func (mp *mapper) itemFrame(final bool) {
	var p struct {
		Item json.RawMessage `json:"item"`
	}
	if !mp.params(&p) {
		return
	}
	var it codexcommon.Item
	if err := jsonscan.Unmarshal(p.Item, &it); err != nil || it.ID == "" {
		mp.em.Fail(mp.env, canonical.ErrorClassValidation, mp.m.Method+" carries no item with an id", nil)
		return
	}
	mp.item = it.ID
	mp.env = mp.envFor(mp.thread, mp.turn, mp.item)
	lc := it.Lifecycle(p.Item, final)
	if lc.ItemType == canonical.ItemTypeUserMessage && mp.turn != "" {
		mp.keyUserMessage(it.ID, lc.Content[canonical.StreamUnknown])
	}
	if final {
		mp.completeItem(lc)
		return
	}
	if !mp.startItem(lc) {
		u := canonical.ItemUpdated(lc)
		mp.em.Emit(mp.env, &u)
	}
}

func (mp *mapper) delta() {
	var p struct {
		Delta        string `json:"delta"`
		SummaryIndex *int   `json:"summaryIndex"`
		ContentIndex *int   `json:"contentIndex"`
	}
	if !mp.params(&p) {
		return
	}
	if mp.item == "" {
		mp.em.Fail(mp.env, canonical.ErrorClassValidation, mp.m.Method+" names no item", nil)
		return
	}
	mp.ensureItem()
	mp.em.Emit(mp.env, &canonical.ContentDelta{
		StreamKind: deltaStreams[mp.m.Method], Delta: p.Delta,
		SummaryIndex: nonNeg(p.SummaryIndex), ContentIndex: nonNeg(p.ContentIndex),
	})
}

func nonNeg(v *int) *int {
	if v == nil || *v < 0 {
		return nil
	}
	return v
}

// itemUpdate maps the notifications that add to an item without text.
func (mp *mapper) itemUpdate(detail string, files []string) {
	if mp.item == "" {
		mp.em.Fail(mp.env, canonical.ErrorClassValidation, mp.m.Method+" names no item", nil)
		return
	}
	mp.ensureItem()
	mp.em.Emit(mp.env, &canonical.ItemUpdated{
		ItemType: deltaItemTypes[mp.m.Method], Status: canonical.ItemStatusInProgress,
		Detail: detail, Files: files, Data: mp.m.Params,
	})
}

type turn struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	DurationMs *int64 `json:"durationMs"`
	Error      *struct {
		Message           string          `json:"message"`
		CodexErrorInfo    json.RawMessage `json:"codexErrorInfo"`
		AdditionalDetails *string         `json:"additionalDetails"`
	} `json:"error"`
}

func (mp *mapper) turnCompleted() {
	var p struct {
		Turn turn `json:"turn"`
	}
	if !mp.params(&p) {
		return
	}
	if p.Turn.ID == "" {
		mp.em.Fail(mp.env, canonical.ErrorClassValidation, "turn/completed carries no turn.id", nil)
		return
	}
	done := &canonical.TurnCompleted{State: turnState(p.Turn.Status)}
	done.DurationMs = adapter.Measured(p.Turn.DurationMs)
	if e := p.Turn.Error; e != nil {
		done.ErrorMessage = codexcommon.Text(e.Message, "turn failed")
		if done.State == canonical.TurnStateFailed {
			mp.em.Fail(mp.env, codexcommon.ErrorClass(e.CodexErrorInfo, e.Message), done.ErrorMessage, e)
		}
	} else if done.State == canonical.TurnStateFailed {
		done.ErrorMessage = "turn failed"
		mp.em.Fail(mp.env, canonical.ErrorClassProvider, done.ErrorMessage, nil)
	}
	key := turnKey(mp.thread, mp.turn)
	i := mp.turnOpen(key)
	if i < 0 {
		mp.openTurn(mp.env, nil)
		i = mp.turnOpen(key)
	}
	done.Usage = mp.turnSoFar(i)
	status := canonical.ItemStatusCompleted
	if done.State != canonical.TurnStateCompleted {
		status = canonical.ItemStatusFailed
	}
	mp.closeTurnItems(status)
	mp.st.Turns = slices.Delete(mp.st.Turns, i, i+1)
	mp.em.Emit(mp.env, done)
}

// turnState maps TurnStatus. A turn/completed that still says inProgress
// ended without a verdict (the server shut down): interrupted.
func turnState(s string) canonical.TurnState {
	switch s {
	case "completed":
		return canonical.TurnStateCompleted
	case "failed":
		return canonical.TurnStateFailed
	}
	return canonical.TurnStateInterrupted
}

func (mp *mapper) tokenUsage() {
	var p struct {
		TokenUsage struct {
			Total              json.RawMessage `json:"total"`
			Last               json.RawMessage `json:"last"`
			ModelContextWindow *int64          `json:"modelContextWindow"`
		} `json:"tokenUsage"`
	}
	if !mp.params(&p) {
		return
	}
	total, err := codexcommon.Usage(p.TokenUsage.Total)
	if err != nil {
		mp.em.Fail(mp.env, canonical.ErrorClassValidation, "thread token usage could not be read: "+err.Error(), nil)
		return
	}
	out := &canonical.ThreadTokenUsageUpdated{Usage: total}
	if last, err := codexcommon.Usage(p.TokenUsage.Last); err == nil {
		out.Last = &last
	}
	if w := p.TokenUsage.ModelContextWindow; w != nil && *w >= 0 {
		out.ModelContextWindow = w
	}
	if mp.st.Usage == nil {
		mp.st.Usage = map[string]canonical.TokenUsage{}
	}
	mp.st.Usage[mp.thread] = total
	if i := mp.turnOpen(turnKey(mp.thread, mp.turn)); i >= 0 {
		mp.st.Turns[i].SawUsage = true
		if mp.env.TurnID != "" {
			// A tap cut off mid-turn never states it otherwise.
			out.Turn = mp.turnSoFar(i)
		}
	}
	mp.em.Emit(mp.env, out)
}

// turnSoFar is the usage of open turn i so far (the thread total's growth
// since it started), nil when no usage came during it: reported with each
// total, and the turn's own when it ends.
func (mp *mapper) turnSoFar(i int) *canonical.TokenUsage {
	ot := mp.st.Turns[i]
	if !ot.SawUsage {
		return nil
	}
	u := mp.st.Usage[mp.thread].Sub(ot.StartUsage)
	return &u
}

// keyUserMessage keys a user message by its text, as the rollout keys it
// (see codexcommon.UserMessageKey); the provider's id stays in
// providerRefs. A second message of the turn with the same text (steered
// twice alike) keeps its provider-keyed id, as the rollout gives such a
// copy an id of its own: the turn has two items, not one.
func (mp *mapper) keyUserMessage(item, text string) {
	key := codexcommon.UserMessageKey(text)
	if i := mp.turnOpen(turnKey(mp.thread, mp.turn)); i >= 0 {
		ot := &mp.st.Turns[i]
		if owner, ok := ot.UserMessages[key]; ok && owner != item {
			return
		}
		if ot.UserMessages == nil {
			ot.UserMessages = map[string]string{}
		}
		ot.UserMessages[key] = item
	}
	mp.env.ItemID = mp.em.IDs().Native(canonical.EntityItem, mp.thread, mp.turn, key)
}

// --- notifications ---

var threadStates = map[string]canonical.ThreadState{
	"idle": canonical.ThreadStateIdle, "active": canonical.ThreadStateActive,
	"systemError": canonical.ThreadStateError, "notLoaded": canonical.ThreadStateClosed,
}

// metadataKeys names the thread.metadata.updated member each thread
// notification without a canonical counterpart fills.
var metadataKeys = map[string]string{
	"thread/readState/changed":        "readState",
	"thread/reverted":                 "reverted",
	"thread/section/changed":          "section",
	"thread/attachment/updated":       "attachment",
	"thread/goal/updated":             "goal",
	"thread/goal/cleared":             "goal",
	"thread/prediction/updated":       "prediction",
	"thread/queue/changed":            "queue",
	"thread/project/updated":          "project",
	"thread/environment/connected":    "environment",
	"thread/environment/disconnected": "environment",
	"thread/settings/updated":         "settings",
	"turn/moderationMetadata":         "moderation",
}

// configKeys names the session.configured member each global
// notification about the app server's setup fills.
var configKeys = map[string]string{
	"skills/changed":               "skills",
	"project/changed":              "project",
	"app/list/updated":             "apps",
	"remoteControl/status/changed": "remoteControl",
}

// warnings are notifications that are warnings and nothing else.
var warnings = map[string]string{
	"warning":                                 "message",
	"guardianWarning":                         "message",
	"windows/worldWritableWarning":            "",
	"autoApprovalReview/strictReviewRequired": "",
	"model/verification":                      "",
	"model/safetyBuffering/updated":           "",
}

// progress are notifications about client-invoked tools (command/exec,
// process handles, searches, watches): tool.progress keyed by their handle.
var progress = map[string]string{
	"command/exec/outputDelta":         "processId",
	"process/outputDelta":              "processHandle",
	"thread/search/partial":            "requestId",
	"fs/changed":                       "watchId",
	"fuzzyFileSearch/sessionUpdated":   "sessionId",
	"fuzzyFileSearch/sessionCompleted": "sessionId",
}

func (mp *mapper) notification() bool {
	m, em, env := mp.m, mp.em, mp.env
	if k, ok := metadataKeys[m.Method]; ok {
		value := m.Params
		if m.Method == "thread/goal/cleared" {
			value = json.RawMessage(`{"cleared":true}`)
		}
		em.Emit(env, &canonical.ThreadMetadataUpdated{Metadata: map[string]json.RawMessage{k: orNull(value)}})
		return true
	}
	if k, ok := configKeys[m.Method]; ok {
		em.Emit(env, &canonical.SessionConfigured{Config: map[string]json.RawMessage{k: orNull(m.Params)}})
		return true
	}
	if k, ok := warnings[m.Method]; ok {
		msg := strings.TrimSuffix(m.Method, "Warning") + " reported"
		if k != "" {
			msg = codexcommon.Text(stringField(m.Params, k), msg)
		}
		em.Warn(env, msg, orNull(m.Params))
		return true
	}
	if k, ok := progress[m.Method]; ok {
		mp.toolProgress(k)
		return true
	}
	if _, ok := deltaStreams[m.Method]; ok {
		mp.delta()
		return true
	}
	switch m.Method {
	case "error":
		var p struct {
			Error struct {
				Message        string          `json:"message"`
				CodexErrorInfo json.RawMessage `json:"codexErrorInfo"`
			} `json:"error"`
			WillRetry bool `json:"willRetry"`
		}
		if !mp.params(&p) {
			return true
		}
		msg := codexcommon.Text(p.Error.Message, "codex reported an error")
		if p.WillRetry {
			// Codex retries: the turn goes on, so this is not a failure.
			em.Warn(env, msg, orNull(m.Params))
		} else {
			em.Fail(env, codexcommon.ErrorClass(p.Error.CodexErrorInfo, msg), msg, orNull(m.Params))
		}
	case "thread/started":
		if mp.thread == "" {
			em.Fail(env, canonical.ErrorClassValidation, "thread/started carries no thread.id", nil)
			return true
		}
		em.Emit(env, &canonical.ThreadStarted{ProviderThreadID: mp.thread})
	case "thread/status/changed":
		var p struct {
			Status struct {
				Type string `json:"type"`
			} `json:"status"`
		}
		if !mp.params(&p) {
			return true
		}
		var raw struct {
			Status json.RawMessage `json:"status"`
		}
		_ = jsonscan.Unmarshal(m.Params, &raw)
		state, ok := threadStates[p.Status.Type]
		if !ok {
			state = canonical.ThreadStateActive
		}
		em.Emit(env, &canonical.ThreadStateChanged{State: state, Detail: raw.Status})
	case "thread/archived":
		em.Emit(env, &canonical.ThreadStateChanged{State: canonical.ThreadStateArchived})
	case "thread/unarchived":
		em.Emit(env, &canonical.ThreadStateChanged{State: canonical.ThreadStateIdle, Detail: json.RawMessage(`{"type":"unarchived"}`)})
	case "thread/closed", "thread/deleted":
		em.Emit(env, &canonical.ThreadStateChanged{State: canonical.ThreadStateClosed, Detail: json.RawMessage(`{"type":"` + strings.TrimPrefix(m.Method, "thread/") + `"}`)})
	case "thread/compacted":
		em.Emit(env, &canonical.ThreadStateChanged{State: canonical.ThreadStateCompacted})
	case "thread/name/updated":
		em.Emit(env, &canonical.ThreadMetadataUpdated{Name: stringField(m.Params, "threadName")})
	case "thread/tokenUsage/updated":
		mp.tokenUsage()
	case "turn/started":
		if mp.turn == "" {
			em.Fail(env, canonical.ErrorClassValidation, "turn/started carries no turn.id", nil)
			return true
		}
		if mp.turnOpen(turnKey(mp.thread, mp.turn)) >= 0 {
			em.Warn(env, "turn/started for a turn already started", nil)
			return true
		}
		mp.openTurn(env, nil)
	case "turn/completed":
		mp.turnCompleted()
	case "turn/diff/updated":
		em.Emit(env, &canonical.TurnDiffUpdated{UnifiedDiff: stringField(m.Params, "diff")})
	case "turn/plan/updated":
		var p struct {
			Explanation string                 `json:"explanation"`
			Plan        []codexcommon.PlanStep `json:"plan"`
		}
		if mp.params(&p) {
			em.Emit(env, &canonical.TurnPlanUpdated{Explanation: p.Explanation, Plan: codexcommon.Plan(p.Plan)})
		}
	case "hook/started", "hook/completed":
		mp.hook()
	case "item/started":
		mp.itemFrame(false)
	case "item/completed":
		mp.itemFrame(true)
	case "item/autoApprovalReview/started", "item/autoApprovalReview/completed":
		mp.autoReview()
	case "item/reasoning/summaryPartAdded":
		mp.itemUpdate("reasoning summary part "+strconv.Itoa(intField(m.Params, "summaryIndex")), nil)
	case "item/commandExecution/terminalInteraction":
		mp.itemUpdate(stringField(m.Params, "stdin"), nil)
	case "item/fileChange/patchUpdated":
		var p struct {
			Changes []struct {
				Path string `json:"path"`
			} `json:"changes"`
		}
		_ = jsonscan.Unmarshal(m.Params, &p)
		var files []string
		for _, c := range p.Changes {
			files = append(files, c.Path)
		}
		mp.itemUpdate("", files)
	case "item/mcpToolCall/progress":
		if mp.item == "" {
			em.Fail(env, canonical.ErrorClassValidation, m.Method+" names no item", nil)
			return true
		}
		mp.ensureItem()
		em.Emit(env, &canonical.ToolProgress{ToolUseID: mp.item, Summary: stringField(m.Params, "message")})
	case "serverRequest/resolved":
		mp.serverRequestResolved()
	case "mcpServer/oauthLogin/completed":
		var p struct {
			Name    string  `json:"name"`
			Success bool    `json:"success"`
			Error   *string `json:"error"`
		}
		if mp.params(&p) {
			em.Emit(env, &canonical.MCPOAuthCompleted{Success: p.Success, Name: p.Name, Error: deref(p.Error)})
		}
	case "mcpServer/startupStatus/updated", "mcpServer/event/stream/notification":
		em.Emit(env, &canonical.MCPStatusUpdated{Status: orNull(m.Params)})
	case "account/updated":
		em.Emit(env, &canonical.AccountUpdated{Account: orNull(m.Params)})
	case "account/rateLimits/updated":
		var p struct {
			RateLimits json.RawMessage `json:"rateLimits"`
		}
		if mp.params(&p) {
			em.Emit(env, &canonical.AccountRateLimitsUpdated{RateLimits: orNull(p.RateLimits), Windows: codexcommon.RateLimitWindows(p.RateLimits, time.Time{})})
		}
	case "account/gatewayOAuth/changed":
		status := stringField(m.Params, "status")
		authenticating := status == "pending" || status == "inProgress" || status == "started"
		em.Emit(env, &canonical.AuthStatus{IsAuthenticating: &authenticating, Output: nonEmptyList(status), Error: stringField(m.Params, "error")})
	case "account/login/completed":
		f := false
		em.Emit(env, &canonical.AuthStatus{IsAuthenticating: &f, Error: stringField(m.Params, "error")})
	case "modelProvider/authRecoveryStarted", "modelProvider/authRecoveryCompleted":
		on := m.Method == "modelProvider/authRecoveryStarted"
		em.Emit(env, &canonical.AuthStatus{IsAuthenticating: &on, Output: nonEmptyList(stringField(m.Params, "message"))})
	case "externalAgentConfig/import/progress":
		// A task needs an id; an import without one is the import.
		em.Emit(env, &canonical.TaskProgress{TaskID: codexcommon.Text(stringField(m.Params, "importId"), "import"), Description: "importing external agent configuration"})
	case "externalAgentConfig/import/completed":
		em.Emit(env, &canonical.TaskCompleted{TaskID: codexcommon.Text(stringField(m.Params, "importId"), "import"), Status: canonical.TaskStatusCompleted})
	case "process/exited":
		status := canonical.TaskStatusCompleted
		if intField(m.Params, "exitCode") != 0 {
			status = canonical.TaskStatusFailed
		}
		em.Emit(env, &canonical.TaskCompleted{TaskID: codexcommon.Text(stringField(m.Params, "processHandle"), "process"), Status: status, Summary: stringField(m.Params, "stdout")})
	case "model/rerouted":
		var p canonical.ModelRerouted
		if mp.params(&p) {
			p.FromModel, p.ToModel, p.Reason = codexcommon.Text(p.FromModel, "unknown"), codexcommon.Text(p.ToModel, "unknown"), codexcommon.Text(p.Reason, "unknown")
			em.Emit(env, &p)
		}
	case "deprecationNotice":
		em.Emit(env, &canonical.DeprecationNotice{Summary: codexcommon.Text(stringField(m.Params, "summary"), "deprecation"), Details: stringField(m.Params, "details")})
	case "configWarning":
		var p struct {
			Summary string          `json:"summary"`
			Details *string         `json:"details"`
			Path    *string         `json:"path"`
			Range   json.RawMessage `json:"range"`
		}
		if mp.params(&p) {
			if string(p.Range) == "null" {
				p.Range = nil
			}
			em.Emit(env, &canonical.ConfigWarning{Summary: codexcommon.Text(p.Summary, "configuration warning"), Details: deref(p.Details), Path: deref(p.Path), Range: p.Range})
		}
	case "thread/realtime/started":
		em.Emit(env, &canonical.ThreadRealtimeStarted{RealtimeSessionID: stringField(m.Params, "realtimeSessionId")})
	case "thread/realtime/itemAdded", "thread/realtime/item/started", "thread/realtime/item/completed",
		"thread/realtime/item/transcript/delta", "thread/realtime/transcript/delta", "thread/realtime/transcript/done",
		"thread/realtime/sdp":
		// Realtime items live in the realtime session, not in the thread's
		// item lifecycle: each is a realtime item event, kept whole.
		em.Emit(env, &canonical.ThreadRealtimeItemAdded{Item: orNull(m.Params)})
	case "thread/realtime/outputAudio/delta":
		var p struct {
			Audio json.RawMessage `json:"audio"`
		}
		_ = jsonscan.Unmarshal(m.Params, &p)
		em.Emit(env, &canonical.ThreadRealtimeAudioDelta{Audio: orNull(p.Audio)})
	case "thread/realtime/error":
		em.Emit(env, &canonical.ThreadRealtimeError{Message: codexcommon.Text(stringField(m.Params, "message"), "realtime error")})
	case "thread/realtime/closed":
		em.Emit(env, &canonical.ThreadRealtimeClosed{Reason: stringField(m.Params, "reason")})
	case "windowsSandbox/setupCompleted":
		var p struct {
			Success bool    `json:"success"`
			Mode    string  `json:"mode"`
			Error   *string `json:"error"`
		}
		_ = jsonscan.Unmarshal(m.Params, &p)
		if p.Success {
			em.Emit(env, &canonical.SessionStateChanged{State: canonical.SessionStateReady, Reason: "windows sandbox set up", Detail: p.Mode})
		} else {
			em.Emit(env, &canonical.SessionStateChanged{State: canonical.SessionStateError, Reason: "windows sandbox setup failed", Detail: deref(p.Error)})
			em.Warn(env, codexcommon.Text(deref(p.Error), "windows sandbox setup failed"), orNull(m.Params))
		}
	default:
		return false
	}
	return true
}

func (mp *mapper) toolProgress(key string) {
	summary := strings.TrimPrefix(mp.m.Method, "/")
	var p struct {
		DeltaBase64 string `json:"deltaBase64"`
	}
	if jsonscan.Unmarshal(mp.m.Params, &p) == nil && p.DeltaBase64 != "" {
		if b, err := base64.StdEncoding.DecodeString(p.DeltaBase64); err == nil && utf8.Valid(b) {
			summary = string(b)
		}
	}
	mp.em.Emit(mp.env, &canonical.ToolProgress{ToolUseID: stringField(mp.m.Params, key), ToolName: mp.m.Method, Summary: summary})
}

func (mp *mapper) hook() {
	var p struct {
		Run struct {
			ID            string  `json:"id"`
			EventName     string  `json:"eventName"`
			HandlerType   string  `json:"handlerType"`
			SourcePath    string  `json:"sourcePath"`
			Status        string  `json:"status"`
			StatusMessage *string `json:"statusMessage"`
			DurationMs    *int64  `json:"durationMs"`
		} `json:"run"`
	}
	if !mp.params(&p) {
		return
	}
	id := codexcommon.Text(p.Run.ID, "hook")
	if mp.m.Method == "hook/started" {
		mp.em.Emit(mp.env, &canonical.HookStarted{HookID: id, HookName: codexcommon.Text(p.Run.SourcePath, codexcommon.Text(p.Run.HandlerType, "hook")), HookEvent: codexcommon.Text(p.Run.EventName, "unknown")})
		return
	}
	outcome := canonical.HookOutcomeSuccess
	switch p.Run.Status {
	case "failed", "blocked":
		outcome = canonical.HookOutcomeError
	case "stopped":
		outcome = canonical.HookOutcomeCancelled
	}
	mp.em.Emit(mp.env, &canonical.HookCompleted{HookID: id, Outcome: outcome, Output: deref(p.Run.StatusMessage), DurationMs: adapter.Measured(p.Run.DurationMs)})
}

// autoReview maps the guardian's automatic review of an approval as a
// request the guardian answers: opened on started, resolved on completed,
// keyed by the stable reviewId.
func (mp *mapper) autoReview() {
	var p struct {
		ReviewID     string  `json:"reviewId"`
		TargetItemID *string `json:"targetItemId"`
		Review       struct {
			Status    string  `json:"status"`
			Rationale *string `json:"rationale"`
		} `json:"review"`
		DecisionSource string `json:"decisionSource"`
	}
	if !mp.params(&p) {
		return
	}
	env := mp.env
	if p.ReviewID == "" {
		mp.em.Fail(env, canonical.ErrorClassValidation, mp.m.Method+" carries no reviewId", nil)
		return
	}
	env.RequestID = mp.em.IDs().Native(canonical.EntityRequest, mp.thread, "autoApprovalReview", p.ReviewID)
	env.ProviderRefs.ProviderRequestID = p.ReviewID
	key := "review:" + p.ReviewID
	if mp.m.Method == "item/autoApprovalReview/started" {
		if _, open := mp.st.ServerRequests[key]; open {
			return
		}
		mp.addPending(key, Pending{ID: env.RequestID, Type: canonical.RequestTypeUnknown, Method: mp.m.Method, Thread: mp.thread, Turn: mp.turn})
		mp.em.Emit(env, &canonical.RequestOpened{RequestType: canonical.RequestTypeUnknown, Detail: "automatic approval review", Args: orNull(mp.m.Params)})
		return
	}
	if _, open := mp.st.ServerRequests[key]; !open {
		mp.em.Emit(env, &canonical.RequestOpened{RequestType: canonical.RequestTypeUnknown, Detail: "automatic approval review", Args: orNull(mp.m.Params)})
	}
	delete(mp.st.ServerRequests, key)
	mp.em.Emit(env, &canonical.RequestResolved{RequestType: canonical.RequestTypeUnknown, Decision: p.Review.Status, Resolution: orNull(mp.m.Params)})
}

// --- requests ---

var requestTypes = map[string]canonical.RequestType{
	"item/commandExecution/requestApproval": canonical.RequestTypeCommandExecutionApproval,
	"item/fileChange/requestApproval":       canonical.RequestTypeFileChangeApproval,
	"item/permissions/requestApproval":      canonical.RequestTypeUnknown,
	"item/tool/requestUserInput":            canonical.RequestTypeToolUserInput,
	"mcpServer/elicitation/request":         canonical.RequestTypeToolUserInput,
	"item/tool/call":                        canonical.RequestTypeDynamicToolCall,
	"account/chatgptAuthTokens/refresh":     canonical.RequestTypeAuthTokensRefresh,
	"attestation/generate":                  canonical.RequestTypeUnknown,
	"applyPatchApproval":                    canonical.RequestTypeApplyPatchApproval,
	"execCommandApproval":                   canonical.RequestTypeExecCommandApproval,
}

// asksUser are the requests whose answer is the user's input.
func asksUser(method string) bool {
	return method == "item/tool/requestUserInput" || method == "mcpServer/elicitation/request"
}

func idKey(raw json.RawMessage) string {
	var s string
	if jsonscan.Unmarshal(raw, &s) == nil {
		return "s:" + s
	}
	return "n:" + string(bytes.TrimSpace(raw))
}

func idText(raw json.RawMessage) string {
	var s string
	if jsonscan.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

func (mp *mapper) addPending(key string, p Pending) {
	if mp.st.ServerRequests == nil {
		mp.st.ServerRequests = map[string]Pending{}
	}
	mp.st.ServerRequests[key] = p
}

func (mp *mapper) requestEnv(p Pending, rawID json.RawMessage) canonical.Event {
	env := mp.envFor(p.Thread, p.Turn, p.Item)
	env.RequestID = p.ID
	if rawID != nil {
		env.ProviderRefs.ProviderRequestID = idText(rawID)
	}
	return env
}

func (mp *mapper) serverRequest() {
	m := mp.m
	rt, known := requestTypes[m.Method]
	if !known {
		adapter.Unmapped(mp.em, mp.env, m.Method)
		return
	}
	var p struct {
		ConversationID string          `json:"conversationId"`
		CallID         string          `json:"callId"`
		Reason         *string         `json:"reason"`
		Command        json.RawMessage `json:"command"`
		Message        string          `json:"message"`
		Questions      json.RawMessage `json:"questions"`
		Tool           string          `json:"tool"`
	}
	_ = jsonscan.Unmarshal(m.Params, &p)
	thread := codexcommon.Text(mp.thread, p.ConversationID)
	pend := Pending{
		ID: mp.em.IDs().Derived(canonical.EntityRequest, mp.f.Ordinal, 0), Type: rt, Method: m.Method,
		Thread: thread, Turn: mp.turn, Item: mp.item,
	}
	// Requests name the item they gate; the callId of the legacy ones is
	// the item id of the call.
	if pend.Item == "" && m.Method != "item/tool/call" {
		pend.Item = p.CallID
	}
	key := idKey(m.ID)
	if _, dup := mp.st.ServerRequests[key]; dup {
		mp.em.Warn(mp.env, "server request id "+idText(m.ID)+" reused while still pending", nil)
		return
	}
	mp.addPending(key, pend)
	env := mp.requestEnv(pend, m.ID)
	detail := deref(p.Reason)
	if detail == "" {
		detail = codexcommon.Text(stringOrArgv(p.Command), codexcommon.Text(p.Message, p.Tool))
	}
	if asksUser(m.Method) {
		mp.em.Emit(env, &canonical.UserInputRequested{Questions: orNull(codexcommon.Text2(p.Questions, m.Params))})
	}
	mp.em.Emit(env, &canonical.RequestOpened{RequestType: rt, Detail: detail, Args: orNull(m.Params)})
}

func stringOrArgv(raw json.RawMessage) string {
	var s string
	if jsonscan.Unmarshal(raw, &s) == nil {
		return s
	}
	var argv []string
	if jsonscan.Unmarshal(raw, &argv) == nil {
		return strings.Join(argv, " ")
	}
	return ""
}

// clientResponse maps the client's answer to a server request.
func (mp *mapper) clientResponse() {
	key := idKey(mp.m.ID)
	pend, ok := mp.st.ServerRequests[key]
	if !ok {
		mp.em.Warn(mp.env, "client response to unknown server request "+idText(mp.m.ID), nil)
		return
	}
	delete(mp.st.ServerRequests, key)
	env := mp.requestEnv(pend, mp.m.ID)
	resolution, decision := mp.m.Result, decisionOf(mp.m.Result)
	if len(mp.m.Error) > 0 {
		resolution, decision = mp.m.Error, "error"
	}
	if asksUser(pend.Method) {
		var r struct {
			Answers json.RawMessage `json:"answers"`
			Content json.RawMessage `json:"content"`
		}
		_ = jsonscan.Unmarshal(mp.m.Result, &r)
		mp.em.Emit(env, &canonical.UserInputResolved{Answers: orNull(codexcommon.Text2(r.Answers, codexcommon.Text2(r.Content, resolution)))})
	}
	mp.em.Emit(env, &canonical.RequestResolved{RequestType: pend.Type, Decision: decision, Resolution: orNull(resolution)})
}

// decisionOf reads the decision of an approval answer: a word
// ("accept") or a tagged variant ({"acceptWithExecpolicyAmendment":...});
// an answer of another shape (tool output, tokens) has none, except its
// elicitation action.
func decisionOf(result json.RawMessage) string {
	var r struct {
		Decision json.RawMessage `json:"decision"`
		Action   string          `json:"action"`
	}
	if jsonscan.Unmarshal(result, &r) != nil {
		return ""
	}
	var s string
	if jsonscan.Unmarshal(r.Decision, &s) == nil {
		return s
	}
	var m map[string]json.RawMessage
	if jsonscan.Unmarshal(r.Decision, &m) == nil {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if len(keys) > 0 {
			return keys[0]
		}
	}
	return r.Action
}

// serverRequestResolved resolves a request the client's answer has not
// (a tap that sees only the agent's side); after the client's answer it is
// a confirmation, consumed without events.
func (mp *mapper) serverRequestResolved() {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if !mp.params(&p) || len(p.RequestID) == 0 {
		if len(p.RequestID) == 0 {
			mp.em.Fail(mp.env, canonical.ErrorClassValidation, "serverRequest/resolved carries no requestId", nil)
		}
		return
	}
	key := idKey(p.RequestID)
	pend, ok := mp.st.ServerRequests[key]
	if !ok {
		return
	}
	delete(mp.st.ServerRequests, key)
	mp.em.Emit(mp.requestEnv(pend, p.RequestID), &canonical.RequestResolved{RequestType: pend.Type, Resolution: orNull(mp.m.Params)})
}

// --- what the client sends, and the agent's answers to it ---

func (mp *mapper) clientMessage() {
	m := mp.m
	if len(m.ID) > 0 {
		if mp.st.ClientRequests == nil {
			mp.st.ClientRequests = map[string]string{}
		}
		mp.st.ClientRequests[idKey(m.ID)] = m.Method
	}
	switch m.Method {
	case "initialize":
		var p struct {
			ClientInfo struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"clientInfo"`
		}
		_ = jsonscan.Unmarshal(m.Params, &p)
		mp.em.Emit(mp.env, &canonical.SessionStarted{Message: strings.TrimSpace("initialize from " + p.ClientInfo.Name + " " + p.ClientInfo.Version)})
	case "initialized":
		mp.em.Emit(mp.env, &canonical.SessionStateChanged{State: canonical.SessionStateReady, Reason: "initialized"})
	case "thread/start", "thread/resume", "thread/fork", "turn/start":
		// What the client asks for is the configuration the thread or
		// turn runs with (cwd, model, approval policy, sandbox); the
		// user's input arrives again as a userMessage item.
		mp.em.Emit(mp.env, &canonical.SessionConfigured{Config: codexcommon.Members(m.Params, "input", "threadId")})
	case "turn/interrupt":
		mp.em.Emit(mp.env, &canonical.SessionStateChanged{State: canonical.SessionStateRunning, Reason: "interrupt requested"})
	default:
		adapter.Unmapped(mp.em, mp.env, "client:"+m.Method)
	}
}

// response maps the agent's answer to a client request, read by the
// method the request had.
func (mp *mapper) response() {
	key := idKey(mp.m.ID)
	method, ok := mp.st.ClientRequests[key]
	if !ok {
		if pend, isServer := mp.st.ServerRequests[key]; isServer {
			// A bare frame (no tap direction) answering the agent's own
			// request: the client wrote it.
			_ = pend
			mp.clientResponse()
			return
		}
		if len(mp.m.Error) > 0 {
			mp.em.Fail(mp.env, canonical.ErrorClassProvider, "error response to an unknown request: "+errorMessage(mp.m.Error), mp.m.Error)
			return
		}
		mp.em.Warn(mp.env, "response to unknown request "+idText(mp.m.ID), nil)
		return
	}
	delete(mp.st.ClientRequests, key)
	if len(mp.m.Error) > 0 {
		mp.em.Fail(mp.env, rpcErrorClass(mp.m.Error), method+" failed: "+errorMessage(mp.m.Error), mp.m.Error)
		return
	}
	var result map[string]json.RawMessage
	_ = jsonscan.Unmarshal(mp.m.Result, &result)
	switch method {
	case "initialize", "thread/start", "thread/resume", "thread/fork":
		// The answer is the effective configuration: the server's user
		// agent and home, or the thread's model, cwd, sandbox.
		cfg := codexcommon.Members(mp.m.Result, "thread")
		env := mp.env
		if t, ok := result["thread"]; ok {
			var th struct {
				ID string `json:"id"`
			}
			if jsonscan.Unmarshal(t, &th) == nil && th.ID != "" {
				env = mp.envFor(th.ID, "", "")
			}
		}
		mp.em.Emit(env, &canonical.SessionConfigured{Config: cfg})
	case "turn/start":
		mp.em.Emit(mp.env, &canonical.SessionStateChanged{State: canonical.SessionStateRunning, Reason: "turn accepted"})
	default:
		adapter.Unmapped(mp.em, mp.env, "response:"+method)
	}
}

func errorMessage(raw json.RawMessage) string {
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	_ = jsonscan.Unmarshal(raw, &e)
	return codexcommon.Text(e.Message, "error "+strconv.Itoa(e.Code))
}

// rpcErrorClass: the JSON-RPC protocol codes say the request was
// malformed; anything else is the agent's failure.
func rpcErrorClass(raw json.RawMessage) canonical.ErrorClass {
	var e struct {
		Code int `json:"code"`
	}
	_ = jsonscan.Unmarshal(raw, &e)
	if e.Code <= -32600 && e.Code >= -32700 {
		return canonical.ErrorClassValidation
	}
	return canonical.ErrorClassProvider
}

// --- helpers ---

func stringField(raw json.RawMessage, key string) string {
	var m map[string]json.RawMessage
	if jsonscan.Unmarshal(raw, &m) != nil {
		return ""
	}
	var s string
	_ = jsonscan.Unmarshal(m[key], &s)
	return s
}

func intField(raw json.RawMessage, key string) int {
	var m map[string]json.RawMessage
	if jsonscan.Unmarshal(raw, &m) != nil {
		return 0
	}
	var n int
	_ = jsonscan.Unmarshal(m[key], &n)
	return n
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nonEmptyList(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// SessionProvider implements adapter.ProviderState.
func (st State) SessionProvider() canonical.Provider { return st.Provider }
