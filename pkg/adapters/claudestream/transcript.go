package claudestream

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Transcript is the mapping state both Claude dialects share: claude-stream
// (stdout of the CLI) and claude-log (the session log the same CLI writes)
// carry the same Anthropic messages, so the turn, item, plan and usage
// bookkeeping lives here once and package claudelog uses it too. It must
// round-trip through encoding/json (adapter snapshots).
type Transcript struct {
	// Session is Claude's session id (session_id / sessionId), once seen.
	Session string `json:"session,omitempty"`
	// Model is the model the session runs on, from system:init.
	Model string `json:"model,omitempty"`
	// Turn is the canonical id of the open turn ("" between turns).
	Turn string `json:"turn,omitempty"`
	// Agent is the sub-agent run the frame being mapped is a line of, in a
	// transcript of that run's own (claude-log): a turn it opens is the
	// run's. Set for each frame, so not kept.
	Agent string `json:"-"`
	// Blocks counts, per provider message id, the content blocks seen in
	// full messages: Claude Code writes one message as several frames that
	// share message.id, one block each, so a block's index in its message
	// is the count before it.
	Blocks map[string]int `json:"blocks,omitempty"`
	// Usage is the last usage seen per provider message id in the open
	// turn; split frames of one message repeat (and refine) it, so the last
	// one counts, once.
	Usage map[string]MessageUsage `json:"usage,omitempty"`
	// StreamMsg is the provider id of the message stream_event partials
	// currently stream (from message_start).
	StreamMsg string `json:"streamMsg,omitempty"`
	// StreamModel is that message's model.
	StreamModel string `json:"streamModel,omitempty"`
	// Partials are the content blocks opened by stream_event partials and
	// not yet completed.
	Partials []Partial `json:"partials,omitempty"`
	// Tools are the tool calls started and not yet answered by a tool_result.
	Tools []Tool `json:"tools,omitempty"`
	// Done lists the provider ids of recently finished tool calls, so a
	// repeated frame does not start them again.
	Done []string `json:"done,omitempty"`
	// Plan is the current plan built from TaskCreate / TaskUpdate calls.
	Plan []PlanTask `json:"plan,omitempty"`
	// Total is the session's usage over the completed turns.
	Total canonical.TokenUsage `json:"total"`
	// Earlier are the totals of the sessions the frames moved away from,
	// the latest last (at most earlierMemory): each Claude session is a
	// thread of its own, so one that a stream or log goes on to (a
	// conversation reset, runs written one after another, a resumed log)
	// counts from zero, and one it comes back to goes on from its own.
	Earlier []SessionTotal `json:"earlier,omitempty"`
	// FirstMsg is the provider id of the open turn's first assistant
	// message. Claude gives a turn no id, so each dialect derives the
	// canonical turn id from its own frames, and a stream and the log of
	// the same run describe one turn under two ids; the first message's id
	// is what both see, so turn.completed names it as the provider's turn
	// id, and the projector counts the turn's usage once.
	FirstMsg string `json:"firstMsg,omitempty"`
	// Runs are the sub-agent runs started and not yet ended, with the turns
	// that launched them.
	Runs []Run `json:"runs,omitempty"`
}

// Run is a sub-agent run (the Task tool). One in the background
// (run_in_background) goes on after the turn that launched it ended: its
// frames still belong to that turn, and its tool calls outlive it.
type Run struct {
	// Tool is the Task call's tool_use id, its frames' parent_tool_use_id.
	Tool string `json:"tool"`
	// Turn is the canonical id of the turn that launched it.
	Turn string `json:"turn"`
}

// runMemory bounds Transcript.Runs: a run whose end is never reported is
// forgotten after this many others started.
const runMemory = 32

// MessageUsage is one assistant message's usage and model.
type MessageUsage struct {
	Model string               `json:"model,omitempty"`
	Usage canonical.TokenUsage `json:"usage"`
	// SubAgent marks a sub-agent's message inside the turn: its usage is
	// in the turn's breakdown by model, not in the turn's usage, as the
	// result's modelUsage and usage count it.
	SubAgent bool `json:"subAgent,omitempty"`
}

// Partial is a content block being streamed by stream_event partials.
type Partial struct {
	Msg   string `json:"msg"`
	Index int    `json:"index"`
	Item  string `json:"item"`
	// Block is the block type (text, thinking, tool_use, ...).
	Block string `json:"block"`
	// Text is the text streamed so far, or the full text once the complete
	// message arrived (Full).
	Text    string `json:"text,omitempty"`
	Full    bool   `json:"full,omitempty"`
	Stopped bool   `json:"stopped,omitempty"`
	// Tool is the tool_use id of a tool block.
	Tool string `json:"tool,omitempty"`
}

// Tool is an open tool call.
type Tool struct {
	ID     string             `json:"id"`
	Item   string             `json:"item"`
	Type   canonical.ItemType `json:"type"`
	Name   string             `json:"name"`
	Title  string             `json:"title,omitempty"`
	Cmd    string             `json:"cmd,omitempty"`
	Files  []string           `json:"files,omitempty"`
	Parent string             `json:"parent,omitempty"`
}

// PlanTask is a step of a TaskCreate / TaskUpdate plan.
type PlanTask struct {
	ID     string                   `json:"id"`
	Step   string                   `json:"step"`
	Status canonical.PlanStepStatus `json:"status"`
}

const doneMemory = 256

// Message is an Anthropic message as both dialects carry it.
type Message struct {
	ID         string          `json:"id"`
	Model      string          `json:"model"`
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	StopReason *string         `json:"stop_reason"`
	Usage      json.RawMessage `json:"usage"`
}

// Block is a content block of a message.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	// ServerName is set on mcp_tool_use blocks.
	ServerName string `json:"server_name"`
}

// Blocks decodes a message's content: an array of blocks, or a bare string
// (a user prompt), which is one text block.
func (m Message) Blocks() ([]Block, []json.RawMessage, error) {
	c := bytes.TrimSpace(m.Content)
	if len(c) == 0 || string(c) == "null" {
		return nil, nil, nil
	}
	if c[0] == '"' {
		var s string
		if err := jsonscan.Unmarshal(c, &s); err != nil {
			return nil, nil, err
		}
		return []Block{{Type: "text", Text: s}}, []json.RawMessage{c}, nil
	}
	raws, ok := jsonscan.Elements(c)
	if !ok {
		if err := jsonscan.Unmarshal(c, &raws); err != nil {
			return nil, nil, err
		}
	}
	blocks := make([]Block, len(raws))
	for i, r := range raws {
		if b, ok := scanBlock(r); ok {
			blocks[i] = b
			continue
		}
		if err := jsonscan.Unmarshal(r, &blocks[i]); err != nil {
			return nil, nil, err
		}
	}
	return blocks, raws, nil
}

// Envelope is the envelope every event of the transcript carries: the
// Claude session as the thread (native id, so a stream and the log of the
// same session share it), the open turn, and the provider refs.
func (t *Transcript) Envelope(em *adapter.Emitter) canonical.Event {
	env := canonical.Event{TurnID: t.Turn}
	if t.Session != "" {
		env.ThreadID = em.IDs().Native(canonical.EntityThread, t.Session)
		env.ProviderRefs.ProviderSessionID = t.Session
		env.ProviderRefs.ProviderThreadID = t.Session
	}
	return env
}

// SessionTotal is a session's usage over its completed turns.
type SessionTotal struct {
	Session string               `json:"session"`
	Total   canonical.TokenUsage `json:"total"`
}

// earlierMemory bounds Transcript.Earlier: frames that come back to a
// session after this many others count its thread from zero again, and
// the projector keeps the thread's greatest count.
const earlierMemory = 16

// SetSession records Claude's session id. A new one is another thread:
// its usage total is its own, not added to the previous session's. The
// first id named keeps what was counted before it, which was its own.
func (t *Transcript) SetSession(id string) {
	if id == "" || id == t.Session {
		return
	}
	if t.Session != "" {
		if t.Total != (canonical.TokenUsage{}) {
			t.Earlier = append(t.Earlier, SessionTotal{Session: t.Session, Total: t.Total})
			if len(t.Earlier) > earlierMemory {
				t.Earlier = slices.Delete(t.Earlier, 0, len(t.Earlier)-earlierMemory)
			}
		}
		t.Total = canonical.TokenUsage{}
		if i := slices.IndexFunc(t.Earlier, func(s SessionTotal) bool { return s.Session == id }); i >= 0 {
			t.Total = t.Earlier[i].Total
			t.Earlier = slices.Delete(t.Earlier, i, i+1)
		}
	}
	t.Session = id
}

// OpenTurn opens a turn derived from the frame being mapped (Claude has no
// turn id: a turn runs from a user input to its result), closing nothing.
func (t *Transcript) OpenTurn(em *adapter.Emitter, env canonical.Event) canonical.Event {
	t.Turn = em.IDs().Derived(canonical.EntityTurn, em.Frame().Ordinal, 0)
	t.Blocks, t.Usage, t.Plan, t.FirstMsg = nil, nil, nil, ""
	env.TurnID = t.Turn
	em.Emit(env, &canonical.TurnStarted{Model: t.Model, AgentID: t.Agent})
	return env
}

// EnsureTurn opens an implicit turn when none is open: `claude -p` does not
// echo the prompt, so the first assistant frame is where the turn shows.
func (t *Transcript) EnsureTurn(em *adapter.Emitter, env canonical.Event) canonical.Event {
	if t.Turn == "" {
		return t.OpenTurn(em, env)
	}
	env.TurnID = t.Turn
	return env
}

// startRun records a sub-agent run (tool is its Task call's id) that the
// open turn launched.
func (t *Transcript) startRun(tool string) {
	if tool == "" || t.Turn == "" {
		return
	}
	t.endRun(tool)
	t.Runs = append(t.Runs, Run{Tool: tool, Turn: t.Turn})
	if len(t.Runs) > runMemory {
		t.Runs = slices.Delete(t.Runs, 0, len(t.Runs)-runMemory)
	}
}

// endRun forgets a sub-agent run that ended.
func (t *Transcript) endRun(tool string) {
	t.Runs = slices.DeleteFunc(t.Runs, func(r Run) bool { return r.Tool == tool })
}

// runTurn is the turn that launched the sub-agent run whose frames name
// parent as their parent_tool_use_id, when that turn is not the open one
// (a background run going on after it): "" when the frame belongs to the
// open turn.
func (t *Transcript) runTurn(parent string) string {
	if parent == "" {
		return ""
	}
	for _, r := range t.Runs {
		if r.Tool == parent && r.Turn != t.Turn {
			return r.Turn
		}
	}
	return ""
}

// inRun says whether a tool call was made by a sub-agent run still going.
func (t *Transcript) inRun(em *adapter.Emitter, tool Tool) bool {
	if tool.Parent == "" {
		return false
	}
	for _, r := range t.Runs {
		if t.ToolItemID(em, r.Tool) == tool.Parent {
			return true
		}
	}
	return false
}

// TurnUsage sums the usage of the open turn's distinct messages (each
// counted once) and breaks it down by model.
func (t *Transcript) TurnUsage() (canonical.TokenUsage, map[string]canonical.ModelUsage) {
	return turnUsage(t.Usage)
}

// mainModel is the model of every message of usage that is not a
// sub-agent's, or "" when there is none or more than one.
func mainModel(usage map[string]MessageUsage) string {
	model := ""
	for _, mu := range usage {
		switch {
		case mu.SubAgent || mu.Model == "" || strings.HasPrefix(mu.Model, "<"):
		case model == "":
			model = mu.Model
		case model != mu.Model:
			return ""
		}
	}
	return model
}

func turnUsage(usage map[string]MessageUsage) (canonical.TokenUsage, map[string]canonical.ModelUsage) {
	var u canonical.TokenUsage
	var models map[string]canonical.ModelUsage
	for _, mu := range usage {
		if !mu.SubAgent {
			u = u.Add(mu.Usage)
		}
		if mu.Model == "" || strings.HasPrefix(mu.Model, "<") {
			continue // "<synthetic>" error messages cost nothing
		}
		if models == nil {
			models = map[string]canonical.ModelUsage{}
		}
		m := models[mu.Model]
		m.TokenUsage = m.Add(mu.Usage)
		models[mu.Model] = m
	}
	return u, models
}

// ReportUsage reports the open turn's usage so far, with the thread's
// total including it: a log cut off mid-turn has no turn.completed to
// count it. It names the turn's provider id as turn.completed will, so
// the projector replaces this count with the turn's own. last is the
// latest message's usage, when reported on its own.
func (t *Transcript) ReportUsage(em *adapter.Emitter, env canonical.Event, last *canonical.TokenUsage) {
	turn, models := t.TurnUsage()
	p := &canonical.ThreadTokenUsageUpdated{Usage: t.Total.Add(turn), Last: last}
	if t.Turn != "" {
		env.TurnID = t.Turn
		env.ProviderRefs.ProviderTurnID = t.FirstMsg
		p.Turn, p.TurnModelUsage = &turn, models
	}
	em.Emit(env, p)
}

// CloseTurn ends the open turn (opening one first if none is open, so a
// turn.completed always pairs with a turn.started). Items still open are
// completed first: a turn's items do not outlive it. When p.Usage is set
// the session total grows by it and thread.token-usage.updated follows.
func (t *Transcript) CloseTurn(em *adapter.Emitter, env canonical.Event, p *canonical.TurnCompleted) canonical.Event {
	env = t.EnsureTurn(em, env)
	t.closeOpenItems(em, env, p.State)
	t.endTurn(em, env, t.FirstMsg, p)
	t.Turn, t.Blocks, t.Usage, t.Partials, t.StreamMsg, t.StreamModel, t.FirstMsg = "", nil, nil, nil, "", "", ""
	env.TurnID = ""
	return env
}

// DeferredTurn is a turn set aside for a result that comes after the next
// turn started (Transcript.deferTurn).
type DeferredTurn struct {
	// Session is the Claude session the turn is of.
	Session  string                  `json:"session,omitempty"`
	Turn     string                  `json:"turn"`
	FirstMsg string                  `json:"firstMsg,omitempty"`
	Usage    map[string]MessageUsage `json:"usage,omitempty"`
}

// deferTurn sets the open turn aside, still open, until its result comes:
// the frames that follow are the next turn's. Its items are complete (its
// model has answered), but for the tool calls of its background runs.
func (t *Transcript) deferTurn(em *adapter.Emitter, env canonical.Event) DeferredTurn {
	env.TurnID = t.Turn
	t.closeOpenItems(em, env, canonical.TurnStateCompleted)
	d := DeferredTurn{Session: t.Session, Turn: t.Turn, FirstMsg: t.FirstMsg, Usage: t.Usage}
	t.Turn, t.Blocks, t.Usage, t.Partials, t.StreamMsg, t.StreamModel, t.FirstMsg = "", nil, nil, nil, "", "", ""
	return d
}

// closeDeferred ends a turn deferTurn set aside, leaving the open one open.
func (t *Transcript) closeDeferred(em *adapter.Emitter, env canonical.Event, d DeferredTurn, p *canonical.TurnCompleted) {
	env.TurnID = d.Turn
	t.endTurn(em, env, d.FirstMsg, p)
}

// endTurn says that env's turn ended, and grows the session total by its
// usage.
func (t *Transcript) endTurn(em *adapter.Emitter, env canonical.Event, firstMsg string, p *canonical.TurnCompleted) {
	done := env
	done.ProviderRefs.ProviderTurnID = firstMsg
	em.Emit(done, p)
	if p.Usage != nil {
		t.Total = t.Total.Add(*p.Usage)
		last := *p.Usage
		em.Emit(env, &canonical.ThreadTokenUsageUpdated{Usage: t.Total, Last: &last})
	}
}

func (t *Transcript) closeOpenItems(em *adapter.Emitter, env canonical.Event, state canonical.TurnState) {
	for _, p := range t.Partials {
		if p.Block == "tool_use" || p.Block == "server_tool_use" || p.Block == "mcp_tool_use" {
			continue // closed with the tool below
		}
		e := env
		e.ItemID = p.Item
		it, kind := blockItem(p.Block)
		c := canonical.ItemCompleted{ItemType: it, Status: canonical.ItemStatusCompleted}
		if p.Text != "" {
			c.Content = map[canonical.StreamKind]string{kind: p.Text}
		}
		em.Emit(e, &c)
	}
	t.Partials = nil
	status := canonical.ItemStatusFailed
	if state == canonical.TurnStateInterrupted || state == canonical.TurnStateCancelled {
		status = canonical.ItemStatusDeclined
	}
	kept := t.Tools[:0]
	for _, tool := range t.Tools {
		if state == canonical.TurnStateCompleted && t.inRun(em, tool) {
			// A background run's call: the run goes on after the turn.
			kept = append(kept, tool)
			continue
		}
		e := env
		e.ItemID, e.ProviderRefs.ProviderItemID = tool.Item, tool.ID
		c := canonical.ItemCompleted{
			ItemType: tool.Type, Status: status, Title: tool.Title, ToolName: tool.Name, Command: tool.Cmd,
			Files: tool.Files, ParentItemID: tool.Parent, Detail: "the turn ended before the tool returned",
		}
		em.Emit(e, &c)
		t.remember(tool.ID)
	}
	t.Tools = kept
}

func (t *Transcript) remember(toolID string) {
	t.Done = append(t.Done, toolID)
	if len(t.Done) > doneMemory {
		t.Done = append([]string(nil), t.Done[len(t.Done)-doneMemory:]...)
	}
}

// BlockItemID is the canonical id of block index of message msg: native,
// so the partial and the full message, and a stream and its session log,
// agree on it.
func (t *Transcript) BlockItemID(em *adapter.Emitter, msg string, index int) string {
	return em.IDs().Native(canonical.EntityItem, t.Session, msg, strconv.Itoa(index))
}

// ToolItemID is the canonical id of the tool call with tool_use id id.
func (t *Transcript) ToolItemID(em *adapter.Emitter, id string) string {
	return em.IDs().Native(canonical.EntityItem, t.Session, "tool", id)
}

// ParentItem is the canonical item id of the tool call a sub-agent runs
// under (parent_tool_use_id), or "".
func (t *Transcript) ParentItem(em *adapter.Emitter, parentToolUseID string) string {
	if parentToolUseID == "" {
		return ""
	}
	return t.ToolItemID(em, parentToolUseID)
}

func blockItem(block string) (canonical.ItemType, canonical.StreamKind) {
	switch block {
	case "thinking", "redacted_thinking":
		return canonical.ItemTypeReasoning, canonical.StreamReasoningText
	default:
		return canonical.ItemTypeAssistantMessage, canonical.StreamAssistantText
	}
}

// AssistantOptions says what an assistant frame carries besides its message.
type AssistantOptions struct {
	// Parent is the parent_tool_use_id of sub-agent output.
	Parent string
	// Failed marks a synthetic API error message (error / isApiErrorMessage).
	Failed bool
	// ErrorCode is the frame's error field.
	ErrorCode string
	// FinalUsage says the message's usage is final (session logs write the
	// finished message); stream frames carry message_start's usage only.
	FinalUsage bool
	// ReportUsage reports the turn's usage so far (Transcript.ReportUsage)
	// when the message changes it: not for a message that ends the turn,
	// whose turn.completed states it.
	ReportUsage bool
	// SubAgent says the message is a sub-agent's, inside the open turn
	// (MessageUsage.SubAgent).
	SubAgent bool
	// Turn is the turn a background sub-agent's message belongs to when
	// it is not the open one (Transcript.runTurn): the message opens no
	// turn and adds nothing to the open turn's usage.
	Turn string
}

// Assistant maps the content blocks of a (possibly split) assistant
// message: text and thinking blocks are complete items, tool_use blocks
// open tool items that a later tool_result completes. Blocks already
// opened by stream_event partials are updated or completed instead, so
// their text is never counted twice.
func (t *Transcript) Assistant(em *adapter.Emitter, env canonical.Event, m Message, o AssistantOptions) {
	if o.Turn != "" {
		env.TurnID = o.Turn
	} else {
		env = t.EnsureTurn(em, env)
		if t.FirstMsg == "" && !o.SubAgent {
			t.FirstMsg = m.ID
		}
	}
	blocks, raws, err := m.Blocks()
	if err != nil {
		em.Fail(env, canonical.ErrorClassValidation, "assistant content could not be decoded: "+err.Error(), nil)
		return
	}
	if len(blocks) == 0 {
		// Not seen from Claude, but a frame must yield an event: with a
		// turn open already, it would otherwise yield none. Its usage, if
		// any, still counts below.
		em.Warn(env, "assistant message without content blocks", nil)
	}
	if o.Turn == "" && m.ID != "" && len(m.Usage) > 0 && string(m.Usage) != "null" {
		if u, err := canonical.FoldUsage(m.Usage, canonical.AnthropicUsage); err == nil {
			if t.Usage == nil {
				t.Usage = map[string]MessageUsage{}
			}
			prev, ok := t.Usage[m.ID]
			if now := (MessageUsage{Model: m.Model, Usage: u, SubAgent: o.SubAgent || prev.SubAgent}); !ok || o.FinalUsage || prev.Usage.OutputTokens <= u.OutputTokens {
				t.Usage[m.ID] = now
				defer func() {
					// After the message's items, as a log line reads.
					if o.ReportUsage && (!ok || now != prev) {
						t.ReportUsage(em, env, nil)
					}
				}()
			}
		}
	}
	base := 0
	if m.ID != "" {
		if t.Blocks == nil {
			t.Blocks = map[string]int{}
		}
		base = t.Blocks[m.ID]
		t.Blocks[m.ID] = base + len(blocks)
	}
	parent := t.ParentItem(em, o.Parent)
	for i, b := range blocks {
		idx := base + i
		e := env
		switch b.Type {
		case "tool_use", "server_tool_use", "mcp_tool_use":
			t.toolUse(em, e, m.ID, idx, b, raws[i], parent)
		case "tool_result", "web_search_tool_result", "mcp_tool_result", "web_fetch_tool_result":
			t.ToolResult(em, e, b, raws[i], nil)
		default:
			e.ItemID = t.BlockItemID(em, m.ID, idx)
			if m.ID == "" {
				e.ItemID = em.IDs().Derived(canonical.EntityItem, em.Frame().Ordinal, i)
			}
			e.ProviderRefs.ProviderItemID = m.ID
			it, kind := blockItem(b.Type)
			text := b.Text
			if b.Type == "thinking" {
				text = b.Thinking
			}
			p := canonical.ItemLifecycle{ItemType: it, Status: canonical.ItemStatusCompleted, ParentItemID: parent, Data: raws[i]}
			if text != "" {
				p.Content = map[canonical.StreamKind]string{kind: text}
			}
			if o.Failed {
				p.Status, p.Detail = canonical.ItemStatusFailed, o.ErrorCode
			}
			if pi := t.partial(m.ID, idx); pi >= 0 {
				// The block streamed already: the full message is its
				// authoritative text, and content_block_stop (before or
				// after) ends it.
				if t.Partials[pi].Stopped {
					c := canonical.ItemCompleted(p)
					em.Emit(e, &c)
					t.Partials = append(t.Partials[:pi], t.Partials[pi+1:]...)
				} else {
					t.Partials[pi].Text, t.Partials[pi].Full = text, true
					u := canonical.ItemUpdated(p)
					u.Status = canonical.ItemStatusInProgress
					em.Emit(e, &u)
				}
				continue
			}
			em.Finished(e, p)
		}
	}
	if em.Len() == 0 {
		// Only calls that finished already (a result came first, or the
		// frame repeats): a frame must yield an event, and one that
		// restarted the finished items would undo their completion.
		em.Warn(env, "assistant message repeats tool calls that already finished", nil)
	}
}

func (t *Transcript) partial(msg string, index int) int {
	for i, p := range t.Partials {
		if p.Msg == msg && p.Index == index {
			return i
		}
	}
	return -1
}

func (t *Transcript) openTool(id string) int {
	for i, tool := range t.Tools {
		if tool.ID == id {
			return i
		}
	}
	return -1
}

// ToolType classifies a tool by name into the canonical item type.
func ToolType(name, block string) canonical.ItemType {
	switch {
	case block == "mcp_tool_use" || strings.HasPrefix(name, "mcp__"):
		return canonical.ItemTypeMCPToolCall
	case block == "server_tool_use" && (name == "web_search" || name == "web_fetch"):
		return canonical.ItemTypeWebSearch
	}
	switch name {
	case "Bash":
		return canonical.ItemTypeCommandExecution
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		return canonical.ItemTypeFileChange
	case "WebSearch", "WebFetch":
		return canonical.ItemTypeWebSearch
	case "TodoWrite", "TaskCreate", "TaskUpdate":
		return canonical.ItemTypePlan
	case "Task", "Agent":
		return canonical.ItemTypeCollabAgentToolCall
	}
	return canonical.ItemTypeDynamicToolCall
}

// ApprovalType is the request type of a permission prompt for a tool.
func ApprovalType(name string) canonical.RequestType {
	switch ToolType(name, "tool_use") { //nolint:exhaustive // only two tool kinds have a dedicated approval type
	case canonical.ItemTypeCommandExecution:
		return canonical.RequestTypeCommandExecutionApproval
	case canonical.ItemTypeFileChange:
		return canonical.RequestTypeFileChangeApproval
	}
	if name == "AskUserQuestion" {
		return canonical.RequestTypeToolUserInput
	}
	return canonical.RequestTypeUnknown
}

type toolInput struct {
	Command      string `json:"command"`
	Description  string `json:"description"`
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Query        string `json:"query"`
	URL          string `json:"url"`
	SubagentType string `json:"subagent_type"`
	Subject      string `json:"subject"`
	TaskID       string `json:"taskId"`
	Status       string `json:"status"`
	Todos        []struct {
		Content string `json:"content"`
		Status  string `json:"status"`
	} `json:"todos"`
}

// describeTool fills the item payload of a tool call from its input.
func describeTool(p *canonical.ItemLifecycle, name, server string, input json.RawMessage) toolInput {
	var in toolInput
	_ = jsonscan.Unmarshal(input, &in) // a partial block has no input yet; the fields stay empty
	p.ToolName, p.Title = name, name
	switch p.ItemType { //nolint:exhaustive // the other tool types have no structured input
	case canonical.ItemTypeCommandExecution:
		p.Command = in.Command
		p.Title = firstNonEmpty(in.Description, in.Command, name)
	case canonical.ItemTypeFileChange:
		if f := firstNonEmpty(in.FilePath, in.NotebookPath); f != "" {
			p.Files, p.Title = []string{f}, f
		}
	case canonical.ItemTypeMCPToolCall:
		if server != "" {
			p.Title = server + "/" + name
		} else if parts := strings.SplitN(strings.TrimPrefix(name, "mcp__"), "__", 2); len(parts) == 2 {
			p.Title = parts[0] + "/" + parts[1]
		}
	case canonical.ItemTypeWebSearch:
		p.Title = firstNonEmpty(in.Query, in.URL, name)
	case canonical.ItemTypeCollabAgentToolCall:
		p.Title = firstNonEmpty(in.Description, in.SubagentType, name)
	}
	return in
}

func (t *Transcript) toolUse(em *adapter.Emitter, env canonical.Event, msg string, idx int, b Block, raw json.RawMessage, parent string) {
	env.ItemID, env.ProviderRefs.ProviderItemID = t.ToolItemID(em, b.ID), b.ID
	p := canonical.ItemLifecycle{ItemType: ToolType(b.Name, b.Type), Status: canonical.ItemStatusInProgress, ParentItemID: parent, Data: raw}
	in := describeTool(&p, b.Name, b.ServerName, b.Input)
	switch {
	case t.partial(msg, idx) >= 0:
		// Streamed already: the full input is known now.
		pi := t.partial(msg, idx)
		if t.Partials[pi].Stopped {
			t.Partials = append(t.Partials[:pi], t.Partials[pi+1:]...)
		} else {
			t.Partials[pi].Full = true
		}
		u := canonical.ItemUpdated(p)
		em.Emit(env, &u)
		t.updateTool(b.ID, p)
	case t.openTool(b.ID) >= 0:
		u := canonical.ItemUpdated(p)
		em.Emit(env, &u)
		t.updateTool(b.ID, p)
	case contains(t.Done, b.ID):
		// A repeated frame of a finished call: nothing new to say but the
		// input again, which its item.completed already carried.
		return
	default:
		s := canonical.ItemStarted(p)
		em.Emit(env, &s)
		t.Tools = append(t.Tools, Tool{ID: b.ID, Item: env.ItemID, Type: p.ItemType, Name: b.Name, Title: p.Title, Cmd: p.Command, Files: p.Files, Parent: parent})
	}
	if p.ItemType == canonical.ItemTypePlan {
		t.plan(em, env, b.Name, in)
	}
}

func (t *Transcript) updateTool(id string, p canonical.ItemLifecycle) {
	if i := t.openTool(id); i >= 0 {
		t.Tools[i].Title, t.Tools[i].Cmd, t.Tools[i].Files = p.Title, p.Command, p.Files
	}
}

func planStatus(s string) canonical.PlanStepStatus {
	switch s {
	case "in_progress":
		return canonical.PlanStepInProgress
	case "completed":
		return canonical.PlanStepCompleted
	}
	return canonical.PlanStepPending
}

// plan emits turn.plan.updated for a plan tool call: TodoWrite sends the
// whole list; TaskCreate adds a task (Claude Code numbers them from 1) and
// TaskUpdate changes one, so their plan is kept in state.
func (t *Transcript) plan(em *adapter.Emitter, env canonical.Event, name string, in toolInput) {
	env.ItemID, env.ProviderRefs.ProviderItemID = "", ""
	steps := []canonical.PlanStep{}
	switch name {
	case "TodoWrite":
		for _, td := range in.Todos {
			steps = append(steps, canonical.PlanStep{Step: td.Content, Status: planStatus(td.Status)})
		}
	case "TaskCreate":
		t.Plan = append(t.Plan, PlanTask{ID: strconv.Itoa(len(t.Plan) + 1), Step: in.Subject, Status: planStatus(in.Status)})
	case "TaskUpdate":
		for i := range t.Plan {
			if t.Plan[i].ID != in.TaskID {
				continue
			}
			if in.Status == "deleted" {
				t.Plan = append(t.Plan[:i], t.Plan[i+1:]...)
				break
			}
			if in.Status != "" {
				t.Plan[i].Status = planStatus(in.Status)
			}
			if in.Subject != "" {
				t.Plan[i].Step = in.Subject
			}
			break
		}
	}
	if name != "TodoWrite" {
		for _, pt := range t.Plan {
			steps = append(steps, canonical.PlanStep{Step: pt.Step, Status: pt.Status})
		}
	}
	em.Emit(env, &canonical.TurnPlanUpdated{Plan: steps})
}

// ToolResult completes the tool call a tool_result block answers (failed
// when is_error). toolUseResult is the CLI's structured result, kept in
// the item's data when present.
func (t *Transcript) ToolResult(em *adapter.Emitter, env canonical.Event, b Block, raw, toolUseResult json.RawMessage) {
	env.ItemID, env.ProviderRefs.ProviderItemID = t.ToolItemID(em, b.ToolUseID), b.ToolUseID
	status := canonical.ItemStatusCompleted
	if b.IsError {
		status = canonical.ItemStatusFailed
	}
	data := raw
	if len(toolUseResult) > 0 {
		data = mustJSON(map[string]json.RawMessage{"tool_result": raw, "tool_use_result": toolUseResult})
	}
	text := ResultText(b.Content)
	i := t.openTool(b.ToolUseID)
	var tool Tool
	if i >= 0 {
		tool = t.Tools[i]
		t.Tools = append(t.Tools[:i], t.Tools[i+1:]...)
	} else {
		// A result for a call this mapping never saw start (a log or a
		// stream cut before it): open it, so the item still pairs up.
		tool = Tool{ID: b.ToolUseID, Item: env.ItemID, Type: canonical.ItemTypeDynamicToolCall}
		if b.Type == "web_search_tool_result" || b.Type == "web_fetch_tool_result" {
			tool.Type = canonical.ItemTypeWebSearch
		}
		if contains(t.Done, b.ToolUseID) {
			return
		}
		em.Emit(env, &canonical.ItemStarted{ItemType: tool.Type, Status: canonical.ItemStatusInProgress})
	}
	t.remember(b.ToolUseID)
	c := canonical.ItemCompleted{
		ItemType: tool.Type, Status: status, Title: tool.Title, ToolName: tool.Name, Command: tool.Cmd,
		Files: tool.Files, ParentItemID: tool.Parent, Data: data, DurationMs: resultDuration(toolUseResult),
	}
	if text != "" {
		switch tool.Type { //nolint:exhaustive // only commands and file changes have an output stream kind
		case canonical.ItemTypeCommandExecution:
			c.Content = map[canonical.StreamKind]string{canonical.StreamCommandOutput: text}
		case canonical.ItemTypeFileChange:
			c.Content = map[canonical.StreamKind]string{canonical.StreamFileChangeOutput: text}
		default:
			c.Detail = truncate(text, 500)
		}
	}
	em.Emit(env, &c)
}

// resultDuration is how long a tool ran as its structured result says:
// durationMs (Glob, Grep, WebFetch), totalDurationMs (Task, a sub-agent's
// whole run) or durationSeconds (WebSearch). Bash and most others say
// nothing, and a saved stream, placed at its arrival, has no other
// measure of them.
func resultDuration(toolUseResult json.RawMessage) *int64 {
	if len(toolUseResult) == 0 || toolUseResult[0] != '{' {
		return nil
	}
	var r struct {
		DurationMs      *float64 `json:"durationMs"`
		TotalDurationMs *float64 `json:"totalDurationMs"`
		DurationSeconds *float64 `json:"durationSeconds"`
	}
	if jsonscan.Unmarshal(toolUseResult, &r) != nil {
		return nil
	}
	ms := r.DurationMs
	if ms == nil {
		ms = r.TotalDurationMs
	}
	if ms == nil && r.DurationSeconds != nil {
		ms = new(*r.DurationSeconds * 1000)
	}
	if ms == nil || *ms < 0 || *ms > 1e15 {
		return nil
	}
	return new(int64(math.Round(*ms)))
}

// ResultText is the text of a tool_result's content: a string, or the
// text blocks of an array.
func ResultText(c json.RawMessage) string {
	c = bytes.TrimSpace(c)
	if len(c) == 0 {
		return ""
	}
	var s string
	if jsonscan.Unmarshal(c, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if jsonscan.Unmarshal(c, &parts) != nil {
		return ""
	}
	var out []string
	for _, p := range parts {
		if p.Type == "text" {
			out = append(out, p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// UserOptions says what a user frame is besides its message.
type UserOptions struct {
	// UUID is the message's uuid, when it has one.
	UUID string
	// Parent is the parent_tool_use_id of a sub-agent's prompt.
	Parent string
	// Prompt says the frame is a user input that starts a turn.
	Prompt bool
	// Meta marks text the CLI injected (isMeta, compaction summaries).
	Meta bool
	// Compaction marks a compaction summary.
	Compaction bool
	// Outside says the message belongs to no turn: when none is open, it
	// opens none (a text-only message; tool results need their turn).
	Outside bool
	// ToolUseResult is the CLI's structured tool result (tool_use_result).
	ToolUseResult json.RawMessage
	// Turn is as AssistantOptions.Turn.
	Turn string
}

// User maps a user message: tool_result blocks complete tool items, and
// text is a user_message item. A prompt opens a turn (closing the open
// one first when closePrev says how it ended).
func (t *Transcript) User(em *adapter.Emitter, env canonical.Event, m Message, o UserOptions) {
	blocks, raws, err := m.Blocks()
	if err != nil {
		em.Fail(env, canonical.ErrorClassValidation, "user content could not be decoded: "+err.Error(), nil)
		return
	}
	switch {
	case o.Turn != "":
		env.TurnID = o.Turn
	case o.Prompt:
		env = t.OpenTurn(em, env)
	case o.Outside && t.Turn == "":
		env.TurnID = ""
	default:
		env = t.EnsureTurn(em, env)
	}
	var texts []string
	results := false
	for i, b := range blocks {
		switch b.Type {
		case "tool_result":
			results = true
			t.ToolResult(em, env, b, raws[i], o.ToolUseResult)
		case "text":
			texts = append(texts, b.Text)
		}
	}
	if len(texts) == 0 {
		if results && em.Len() > 0 {
			return
		}
		texts = append(texts, "") // an image-only or empty message is still a message
	}
	e := env
	if o.UUID != "" {
		e.ItemID = em.IDs().Native(canonical.EntityItem, t.Session, "user", o.UUID)
		e.ProviderRefs.ProviderItemID = o.UUID
	} else {
		e.ItemID = em.IDs().Derived(canonical.EntityItem, em.Frame().Ordinal, 0)
	}
	it := canonical.ItemTypeUserMessage
	if o.Compaction {
		it = canonical.ItemTypeContextCompaction
	}
	p := canonical.ItemLifecycle{ItemType: it, Status: canonical.ItemStatusCompleted, ParentItemID: t.ParentItem(em, o.Parent)}
	if o.Meta {
		p.Title = "injected by the CLI"
	}
	if text := strings.Join(texts, "\n"); text != "" {
		p.Content = map[canonical.StreamKind]string{canonical.StreamUnknown: text}
	}
	em.Finished(e, p)
}

// FoldModelUsage reads a result's modelUsage (camelCase Anthropic counts
// plus costUSD, contextWindow, webSearchRequests) per model.
func FoldModelUsage(raw json.RawMessage) map[string]canonical.ModelUsage {
	var byModel map[string]json.RawMessage
	if jsonscan.Unmarshal(raw, &byModel) != nil || len(byModel) == 0 {
		return nil
	}
	out := map[string]canonical.ModelUsage{}
	for name, r := range byModel {
		u, err := canonical.FoldUsage(r, canonical.AnthropicUsage)
		if err != nil || name == "" { // a model without a name is no model the canonical usage can name
			continue
		}
		var extra struct {
			CostUSD           *float64 `json:"costUSD"`
			ContextWindow     *int64   `json:"contextWindow"`
			WebSearchRequests *int64   `json:"webSearchRequests"`
		}
		_ = jsonscan.Unmarshal(r, &extra) // counts were read above; these are optional
		mu := canonical.ModelUsage{TokenUsage: u, ContextWindow: nonNeg(extra.ContextWindow), WebSearchRequests: nonNeg(extra.WebSearchRequests)}
		if extra.CostUSD != nil && *extra.CostUSD >= 0 && !math.IsInf(*extra.CostUSD, 0) {
			c := roundCost(*extra.CostUSD)
			mu.CostUSD = &c
		}
		out[name] = mu
	}
	return out
}

func nonNeg(p *int64) *int64 {
	if p == nil || *p < 0 {
		return nil
	}
	return p
}

// SortedKeys returns a map's keys in order, for deterministic output.
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(s []string, v string) bool { return slices.Contains(s, v) }

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// mustJSON encodes a value that always encodes (maps of raw JSON).
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// ConfigOf turns a JSON object into session.configured's config map,
// leaving out the envelope members, and a member with an empty name:
// canonical map keys are never empty (it stays in raw).
func ConfigOf(raw json.RawMessage, drop ...string) map[string]json.RawMessage {
	drop = append(drop, "")
	// What decoding into a map gives (the last member of each key), by a
	// scan of a copy: the values are kept in events.
	c := bytes.Clone(raw)
	out := map[string]json.RawMessage{}
	plain := true
	if jsonscan.EachMember(c, func(key, val []byte) bool {
		plain = plain && utf8.Valid(key) && bytes.IndexByte(key, '\\') < 0
		out[string(key)] = val
		return plain
	}) && plain {
		for _, d := range drop {
			delete(out, d)
		}
		return out
	}
	var m map[string]json.RawMessage
	if jsonscan.Unmarshal(raw, &m) != nil {
		return map[string]json.RawMessage{}
	}
	for _, d := range drop {
		delete(m, d)
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	return m
}
