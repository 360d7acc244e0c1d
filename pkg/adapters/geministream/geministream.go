package geministream

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Dialect is this adapter's dialect name.
const Dialect = "gemini-stream"

// MappingVersion is bumped with every change of what the adapter emits.
const MappingVersion = "gemini-stream/5"

const rawSource = "gemini.stream-json"

// Adapter is the gemini-stream adapter.
type Adapter struct{}

// Dialect implements adapter.Adapter.
func (Adapter) Dialect() string { return Dialect }

// Provider implements adapter.Adapter.
func (Adapter) Provider() canonical.Provider { return canonical.ProviderGemini }

// MappingVersion implements adapter.Adapter.
func (Adapter) MappingVersion() string { return MappingVersion }

// Rules implements adapter.Adapter.
func (Adapter) Rules() adapter.Rules { return rules.WithDiagnostics() }

// Kinds implements adapter.Adapter: a stream-json event is of the kind its
// type says.
func (Adapter) Kinds(f adapter.Frame) []string {
	var ev struct {
		Type string `json:"type"`
	}
	if jsonscan.Unmarshal(f.Bytes, &ev) != nil || ev.Type == "" {
		return nil
	}
	return []string{ev.Type}
}

// NewSession implements adapter.Adapter.
func (Adapter) NewSession(p canonical.Provider) adapter.Session {
	if p == "" {
		p = canonical.ProviderGemini
	}
	return adapter.NewSession(State{Provider: p}, Map)
}

// State is what the adapter remembers between frames.
type State struct {
	// Provider is the provider events are attributed to.
	Provider canonical.Provider `json:"provider"`
	// Clock keeps the frames that carry no time on the provider's time line.
	Clock adapter.Clock `json:"clock,omitzero"`
	// Thread is Gemini's session id from the last init ("" before one).
	Thread string `json:"thread,omitempty"`
	// Threads lists the session ids thread.started was emitted for: a
	// second process resuming the same session (--resume) continues the
	// thread rather than starting it again.
	Threads []string `json:"threads,omitempty"`
	// Model is the model the last init named.
	Model string `json:"model,omitempty"`
	// Turn is the canonical id of the open turn ("" between turns).
	Turn string `json:"turn,omitempty"`
	// Message is the open assistant message, if any.
	Message *message `json:"message,omitempty"`
	// Tools are the tool calls of the open turn, in start order.
	Tools []tool `json:"tools,omitempty"`
	// Total is the thread's usage so far in this stream.
	Total canonical.TokenUsage `json:"total"`
}

type message struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

type tool struct {
	ID     string `json:"id"`
	ItemID string `json:"itemId"`
	// Item is what tool_use said (type, title, command, files), without
	// the arguments, so the completion can repeat it.
	Item canonical.ItemLifecycle `json:"item"`
	Done bool                    `json:"done,omitempty"`
}

type event struct {
	Type       string          `json:"type"`
	Timestamp  string          `json:"timestamp"`
	SessionID  string          `json:"session_id"`
	Model      string          `json:"model"`
	Role       string          `json:"role"`
	Content    *string         `json:"content"`
	Delta      bool            `json:"delta"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Output     *string         `json:"output"`
	Error      json.RawMessage `json:"error"`
	Severity   string          `json:"severity"`
	Message    string          `json:"message"`
	Stats      json.RawMessage `json:"stats"`
}

type errorObject struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Map maps one frame; it is the adapter's core, a function of its input but
// for one thing: the slices of st are updated in place, not copied on
// every frame, so the state passed in is the returned state's and must not
// be used again.
func Map(st State, f adapter.Frame) (State, []canonical.Event, error) {
	ev, info, ok := scanEvent(f.Bytes)
	var err error
	if !ok {
		err = jsonscan.Unmarshal(f.Bytes, &ev)
	}
	if err != nil || ev.Type == "" {
		if err == nil {
			err = fmt.Errorf("no type member")
		}
		return st, adapter.Undecodable(f, st.Provider, MappingVersion, rawSource, err), nil
	}
	raw := canonical.NewRawChecked(rawSource, "", ev.Type, f.Bytes, info)
	if err := adapter.CheckDepth(f, raw, info); err != nil {
		return st, adapter.Undecodable(f, st.Provider, MappingVersion, rawSource, err), nil
	}
	em := adapter.NewEmitter(f, st.Provider, MappingVersion, raw)
	em.SetTimeOn(&st.Clock, adapter.ParseTime(ev.Timestamp))
	m := mapper{em: em, st: &st, ids: em.IDs(), thread: &threadID{}}
	switch ev.Type {
	case "init":
		m.init(ev)
	case "message":
		m.message(ev)
	case "tool_use":
		m.toolUse(ev)
	case "tool_result":
		m.toolResult(ev)
	case "error":
		env := m.env()
		msg := nonEmpty(ev.Message, "gemini reported an error")
		if ev.Severity == "warning" {
			em.Warn(env, msg, map[string]string{"severity": ev.Severity})
		} else {
			em.Fail(env, canonical.ErrorClassProvider, msg, map[string]string{"severity": ev.Severity})
		}
	case "result":
		m.result(ev)
	default:
		adapter.Unmapped(em, m.env(), ev.Type)
	}
	return st, em.Events(), nil
}

type mapper struct {
	em     *adapter.Emitter
	st     *State
	ids    canonical.IDSpace
	thread *threadID
}

// threadID is the canonical id of the frame's thread, made once for the
// events of a frame (an init may change the thread).
type threadID struct{ of, id string }

// env is the envelope of events in the current thread and turn.
func (m mapper) env() canonical.Event {
	ev := canonical.Event{TurnID: m.st.Turn}
	if m.st.Thread != "" {
		if m.thread.of != m.st.Thread {
			m.thread.of, m.thread.id = m.st.Thread, m.ids.Native(canonical.EntityThread, m.st.Thread)
		}
		ev.ThreadID = m.thread.id
		ev.ProviderRefs.ProviderSessionID = m.st.Thread
		ev.ProviderRefs.ProviderThreadID = m.st.Thread
	}
	return ev
}

func (m mapper) init(ev event) {
	// A new init is a new process: whatever it left open never ends.
	if m.st.Turn != "" {
		m.endTurn(&canonical.TurnCompleted{State: canonical.TurnStateFailed, ErrorMessage: "the gemini process ended without a result"})
	}
	m.st.Thread, m.st.Model = ev.SessionID, ev.Model
	env := m.env()
	started := &canonical.SessionStarted{}
	resumed := ev.SessionID != "" && slices.Contains(m.st.Threads, ev.SessionID)
	if resumed {
		started.Resume = mustJSON(map[string]string{"session_id": ev.SessionID})
	}
	m.em.Emit(env, started)
	if ev.SessionID != "" && !resumed {
		m.st.Threads = append(m.st.Threads, ev.SessionID)
		m.em.Emit(env, &canonical.ThreadStarted{ProviderThreadID: ev.SessionID})
	}
	cfg := map[string]json.RawMessage{}
	if ev.Model != "" {
		cfg["model"] = mustJSON(ev.Model)
	}
	if ev.SessionID != "" {
		cfg["session_id"] = mustJSON(ev.SessionID)
	}
	m.em.Emit(env, &canonical.SessionConfigured{Config: cfg})
}

// openTurn starts a turn if none is open; the frame that needs it names it.
func (m mapper) openTurn() {
	if m.st.Turn != "" {
		return
	}
	m.st.Turn = m.ids.Derived(canonical.EntityTurn, m.em.Frame().Ordinal, 0)
	m.em.Emit(m.env(), &canonical.TurnStarted{Model: m.st.Model})
}

func (m mapper) message(ev event) {
	text := ""
	if ev.Content != nil {
		text = *ev.Content
	}
	if ev.Role == "user" {
		// The user's prompt opens the turn; a second user message in an
		// open turn is a follow-up inside it.
		m.closeMessage()
		m.openTurn()
		env := m.env()
		env.ItemID = m.ids.Derived(canonical.EntityItem, m.em.Frame().Ordinal, 0)
		p := canonical.ItemLifecycle{ItemType: canonical.ItemTypeUserMessage, Status: canonical.ItemStatusCompleted}
		if text != "" {
			// A user message is not assistant text: unknown is the only
			// neutral stream kind (as the Codex and Claude adapters do).
			p.Content = map[canonical.StreamKind]string{canonical.StreamUnknown: text}
		}
		m.em.Finished(env, p)
		return
	}
	m.openTurn()
	if m.st.Message == nil {
		m.st.Message = &message{ID: m.ids.Derived(canonical.EntityItem, m.em.Frame().Ordinal, 0)}
		s := canonical.ItemStarted{ItemType: canonical.ItemTypeAssistantMessage, Status: canonical.ItemStatusInProgress}
		m.em.Emit(m.msgEnv(), &s)
	}
	if ev.Delta {
		m.st.Message.Text += text
		m.em.Emit(m.msgEnv(), &canonical.ContentDelta{StreamKind: canonical.StreamAssistantText, Delta: text})
		return
	}
	// A message without delta is the whole message: it replaces what was
	// streamed and ends the item.
	m.st.Message.Text = text
	m.closeMessage()
}

func (m mapper) msgEnv() canonical.Event {
	env := m.env()
	env.ItemID = m.st.Message.ID
	return env
}

// closeMessage completes the open assistant message with its full text.
func (m mapper) closeMessage() {
	if m.st.Message == nil {
		return
	}
	p := canonical.ItemCompleted{ItemType: canonical.ItemTypeAssistantMessage, Status: canonical.ItemStatusCompleted}
	if m.st.Message.Text != "" {
		p.Content = map[canonical.StreamKind]string{canonical.StreamAssistantText: m.st.Message.Text}
	}
	m.em.Emit(m.msgEnv(), &p)
	m.st.Message = nil
}

func (m mapper) toolIndex(id string) int {
	return slices.IndexFunc(m.st.Tools, func(t tool) bool { return t.ID == id })
}

func (m mapper) toolEnv(t tool) canonical.Event {
	env := m.env()
	env.ItemID = t.ItemID
	env.ProviderRefs.ProviderItemID = t.ID
	return env
}

func (m mapper) toolUse(ev event) {
	m.closeMessage()
	m.openTurn()
	p := toolItem(ev.ToolName, ev.Parameters)
	p.Status = canonical.ItemStatusInProgress
	if i := m.toolIndex(ev.ToolID); i >= 0 {
		// The same tool_id again: one item, started once.
		t := m.st.Tools[i]
		if t.Done {
			m.em.Warn(m.toolEnv(t), "tool_use for a tool call that already has its result", map[string]string{"tool_id": ev.ToolID})
			return
		}
		u := canonical.ItemUpdated(p)
		m.em.Emit(m.toolEnv(t), &u)
		return
	}
	t := tool{ID: ev.ToolID, ItemID: m.toolItemID(ev.ToolID), Item: p}
	t.Item.Data, t.Item.Status = nil, ""
	m.st.Tools = append(m.st.Tools, t)
	s := canonical.ItemStarted(p)
	m.em.Emit(m.toolEnv(t), &s)
	if ev.ToolName == "write_todos" {
		m.plan(ev.Parameters)
	}
}

// plan reports write_todos' list as the turn's plan.
func (m mapper) plan(params json.RawMessage) {
	var args struct {
		Todos []struct {
			Description string `json:"description"`
			Status      string `json:"status"`
		} `json:"todos"`
	}
	if jsonscan.Unmarshal(params, &args) != nil {
		return
	}
	p := &canonical.TurnPlanUpdated{Plan: []canonical.PlanStep{}}
	for _, td := range args.Todos {
		status := canonical.PlanStepPending
		switch td.Status {
		case "in_progress":
			status = canonical.PlanStepInProgress
		case "completed":
			status = canonical.PlanStepCompleted
		}
		p.Plan = append(p.Plan, canonical.PlanStep{Step: td.Description, Status: status})
	}
	m.em.Emit(m.env(), p)
}

// toolItemID scopes tool ids by the Gemini session: they are only unique
// within it (a name and a millisecond timestamp). Without a session (an
// excerpt) they are scoped by the ingest session.
func (m mapper) toolItemID(toolID string) string {
	if m.st.Thread != "" {
		return m.ids.Native(canonical.EntityItem, m.st.Thread, toolID)
	}
	return m.ids.Native(canonical.EntityItem, "ingest:"+m.ids.SessionKey, toolID)
}

func (m mapper) toolResult(ev event) {
	m.closeMessage()
	m.openTurn()
	i := m.toolIndex(ev.ToolID)
	if i >= 0 && m.st.Tools[i].Done {
		m.em.Warn(m.toolEnv(m.st.Tools[i]), "a second tool_result for one tool call", map[string]string{"tool_id": ev.ToolID})
		return
	}
	if i < 0 {
		// A result for a call the stream never showed (an excerpt): open it first.
		t := tool{ID: ev.ToolID, ItemID: m.toolItemID(ev.ToolID), Item: canonical.ItemLifecycle{ItemType: canonical.ItemTypeDynamicToolCall}}
		m.st.Tools = append(m.st.Tools, t)
		s := canonical.ItemStarted{ItemType: canonical.ItemTypeDynamicToolCall, Status: canonical.ItemStatusInProgress}
		m.em.Emit(m.toolEnv(t), &s)
		i = len(m.st.Tools) - 1
	}
	t := &m.st.Tools[i]
	t.Done = true
	p := t.Item
	p.Status = canonical.ItemStatusCompleted
	if ev.Status == "error" {
		p.Status = canonical.ItemStatusFailed
	}
	var eo errorObject
	if len(ev.Error) > 0 && jsonscan.Unmarshal(ev.Error, &eo) == nil {
		p.Detail = eo.Message
	}
	if ev.Output != nil && *ev.Output != "" {
		k := canonical.StreamUnknown
		if p.ItemType == canonical.ItemTypeCommandExecution {
			k = canonical.StreamCommandOutput
		}
		p.Content = map[canonical.StreamKind]string{k: *ev.Output}
	}
	p.Data = mustJSON(map[string]any{"tool_id": ev.ToolID, "status": ev.Status, "output": ev.Output, "error": ev.Error})
	c := canonical.ItemCompleted(p)
	m.em.Emit(m.toolEnv(*t), &c)
}

// toolItem maps a Gemini CLI tool name to a canonical item.
func toolItem(name string, params json.RawMessage) canonical.ItemLifecycle {
	var args struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
		Query    string `json:"query"`
		Desc     string `json:"description"`
	}
	if len(params) > 0 {
		_ = jsonscan.Unmarshal(params, &args) // arguments are optional detail
	}
	p := canonical.ItemLifecycle{ItemType: canonical.ItemTypeDynamicToolCall, ToolName: name, Title: name, Data: params}
	switch {
	case name == "run_shell_command":
		p.ItemType, p.Command, p.Title = canonical.ItemTypeCommandExecution, args.Command, nonEmpty(args.Command, name)
	case name == "write_file" || name == "replace" || name == "edit":
		p.ItemType = canonical.ItemTypeFileChange
		if args.FilePath != "" {
			p.Files, p.Title = []string{args.FilePath}, args.FilePath
		}
	case name == "google_web_search" || name == "web_search":
		p.ItemType, p.Title = canonical.ItemTypeWebSearch, nonEmpty(args.Query, name)
	case name == "write_todos":
		p.ItemType = canonical.ItemTypePlan
	case strings.Contains(name, "__"):
		// MCP tools are named server__tool.
		p.ItemType = canonical.ItemTypeMCPToolCall
	}
	p.Detail = args.Desc
	return p
}

func (m mapper) result(ev event) {
	m.closeMessage()
	m.openTurn()
	p := &canonical.TurnCompleted{State: canonical.TurnStateCompleted}
	if ev.Status != "" && ev.Status != "success" {
		p.State = canonical.TurnStateFailed
		var eo errorObject
		if len(ev.Error) > 0 {
			_ = jsonscan.Unmarshal(ev.Error, &eo) // a malformed error still fails the turn
		}
		p.ErrorMessage = nonEmpty(eo.Message, "gemini run failed")
		m.em.Fail(m.env(), canonical.ErrorClassProvider, p.ErrorMessage, ev.Error)
	}
	var usageErr error
	if len(ev.Stats) > 0 && string(ev.Stats) != "null" {
		usageErr = foldStats(ev.Stats, p)
	}
	if usageErr != nil {
		m.em.Fail(m.env(), canonical.ErrorClassValidation, "result stats could not be read: "+usageErr.Error(), nil)
	}
	m.endTurn(p)
	if p.Usage != nil {
		m.st.Total = m.st.Total.Add(*p.Usage)
		last := *p.Usage
		m.em.Emit(m.env(), &canonical.ThreadTokenUsageUpdated{Usage: m.st.Total, Last: &last})
	}
}

// endTurn closes the open tool calls and the turn.
func (m mapper) endTurn(p *canonical.TurnCompleted) {
	m.closeMessage()
	for i := range m.st.Tools {
		t := &m.st.Tools[i]
		if t.Done {
			continue
		}
		t.Done = true
		c := t.Item
		c.Status = canonical.ItemStatusFailed
		c.Detail = "the turn ended before the tool call's result"
		done := canonical.ItemCompleted(c)
		m.em.Emit(m.toolEnv(*t), &done)
	}
	m.em.Emit(m.env(), p)
	m.st.Turn, m.st.Tools = "", nil
}

// statsTokens is one stats object (the run's, or one model's) of a result.
type statsTokens struct {
	Total  *int64 `json:"total_tokens"`
	Prompt *int64 `json:"input_tokens"`
	Output *int64 `json:"output_tokens"`
	Cached *int64 `json:"cached"`
	Input  *int64 `json:"input"`
	// Thoughts is not in 0.61's stream-json, but the CLI's other stats name it.
	Thoughts *int64 `json:"thoughts"`
}

// fold turns a stats object into canonical usage. Gemini reports both the
// whole prompt (input_tokens) and its uncached part (input), so only one
// of them is read; thoughts are not reported apart, but total_tokens
// counts them, so what total_tokens has beyond prompt and output is taken
// as reasoning (and, as Gemini bills it, as output).
func (s statsTokens) fold() (canonical.TokenUsage, error) {
	fields := map[string]int64{}
	switch {
	case s.Prompt != nil:
		fields["input_tokens"] = *s.Prompt
	case s.Input != nil:
		fields["input_tokens"] = *s.Input + deref(s.Cached)
	}
	if s.Cached != nil {
		fields["cached"] = *s.Cached
	}
	if s.Output != nil {
		fields["output_tokens"] = *s.Output
	}
	switch {
	case s.Thoughts != nil:
		fields["thoughts"] = *s.Thoughts
	case s.Total != nil && s.Prompt != nil && s.Output != nil && *s.Total > *s.Prompt+*s.Output:
		fields["thoughts"] = *s.Total - *s.Prompt - *s.Output
	}
	if u, ok := foldGemini(fields); ok {
		return u, nil
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return canonical.TokenUsage{}, err
	}
	return canonical.FoldUsage(b, canonical.GeminiUsage)
}

// foldGemini is canonical.FoldUsage (Gemini convention) of the fields fold
// names, without encoding them to decode them again. ok is false for a
// count FoldUsage would reject (negative or too large), so that its error
// is the one reported.
func foldGemini(fields map[string]int64) (canonical.TokenUsage, bool) {
	for _, v := range fields {
		if v < 0 || v > 1<<53 {
			return canonical.TokenUsage{}, false
		}
	}
	u := canonical.TokenUsage{
		CachedInputTokens: fields["cached"], OutputTokens: fields["output_tokens"], ReasoningOutputTokens: fields["thoughts"],
	}
	u.InputTokens = max(fields["input_tokens"]-u.CachedInputTokens, 0)
	u.OutputTokens += u.ReasoningOutputTokens
	return u, true
}

func foldStats(raw json.RawMessage, p *canonical.TurnCompleted) error {
	var stats struct {
		statsTokens
		DurationMs *int64                 `json:"duration_ms"`
		Models     map[string]statsTokens `json:"models"`
	}
	if err := jsonscan.Unmarshal(raw, &stats); err != nil {
		return err
	}
	u, err := stats.fold()
	if err != nil {
		return err
	}
	p.Usage = &u
	p.DurationMs = adapter.Measured(stats.DurationMs)
	names := make([]string, 0, len(stats.Models))
	for name := range stats.Models {
		if name != "" { // a model without a name is no model the canonical usage can name
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		mu, err := stats.Models[name].fold()
		if err != nil {
			return fmt.Errorf("model %s: %w", name, err)
		}
		if p.ModelUsage == nil {
			p.ModelUsage = map[string]canonical.ModelUsage{}
		}
		p.ModelUsage[name] = canonical.ModelUsage{TokenUsage: mu}
	}
	return nil
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func nonEmpty(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// mustJSON encodes v; the values passed here (strings, maps of strings and
// raw JSON) always encode.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

// SessionProvider implements adapter.ProviderState.
func (st State) SessionProvider() canonical.Provider { return st.Provider }
