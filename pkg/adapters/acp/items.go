package acp

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// contentBlock is an ACP ContentBlock (text, image, audio, resource_link,
// resource).
type contentBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	URI      string `json:"uri,omitempty"`
	Resource *struct {
		Text string `json:"text"`
		URI  string `json:"uri"`
	} `json:"resource,omitempty"`
}

func (b contentBlock) text() string {
	switch b.Type {
	case "text":
		return b.Text
	case "resource":
		if b.Resource != nil {
			return b.Resource.Text
		}
	}
	return ""
}

// textKinds are the streamed text updates: item type and stream kind.
var textKinds = map[string]struct {
	item   canonical.ItemType
	stream canonical.StreamKind
}{
	"agent_message_chunk":   {canonical.ItemTypeAssistantMessage, canonical.StreamAssistantText},
	"agent_thought_chunk":   {canonical.ItemTypeReasoning, canonical.StreamReasoningText},
	"user_message_chunk":    {canonical.ItemTypeUserMessage, canonical.StreamUnknown},
	"session_message_chunk": {canonical.ItemTypeUnknown, canonical.StreamUnknown},
	"session_message":       {canonical.ItemTypeUnknown, canonical.StreamUnknown},
}

// chunk streams text into the session's open text item. An item runs over
// consecutive chunks of one kind (and one messageId, when the agent sends
// them); anything else that is an item, or the turn's end, completes it.
// whole is true for session_message, whose content replaces the text.
func (m *mapper) chunk(sid, kind string, u json.RawMessage, whole bool) {
	var c struct {
		Content   json.RawMessage `json:"content"`
		MessageID string          `json:"messageId"`
	}
	_ = jsonscan.Unmarshal(u, &c) // a chunk without content is an empty chunk
	var blocks []contentBlock
	if bytes.HasPrefix(bytes.TrimSpace(c.Content), []byte("[")) {
		_ = jsonscan.Unmarshal(c.Content, &blocks) // unreadable content adds nothing
	} else {
		var b contentBlock
		if jsonscan.Unmarshal(c.Content, &b) == nil {
			blocks = []contentBlock{b}
		}
	}
	s := m.sess(sid)
	if t := s.Text; t != nil && (t.Kind != kind || t.Turn != s.Turn || (c.MessageID != "" && t.MessageID != "" && c.MessageID != t.MessageID)) {
		m.closeText(sid)
		s = m.sess(sid)
	}
	tk := textKinds[kind]
	env := m.env(sid)
	if s.Text == nil {
		s.Text = &text{ID: m.ids.Derived(canonical.EntityItem, m.em.Frame().Ordinal, 0), Kind: kind, MessageID: c.MessageID, Turn: s.Turn, Type: tk.item}
		env.ItemID = s.Text.ID
		env.ProviderRefs.ProviderItemID = c.MessageID
		m.em.Emit(env, &canonical.ItemStarted{ItemType: tk.item, Status: canonical.ItemStatusInProgress})
	}
	env.ItemID = s.Text.ID
	env.ProviderRefs.ProviderItemID = s.Text.MessageID
	if whole {
		var all []string
		for _, b := range blocks {
			all = append(all, b.text())
		}
		s.Text.Text = strings.Join(all, "")
		u := canonical.ItemUpdated{ItemType: tk.item, Status: canonical.ItemStatusInProgress, Data: u}
		m.em.Emit(env, &u)
		m.put(sid, s)
		return
	}
	for _, b := range blocks {
		if b.Type == "text" || b.Type == "" {
			s.Text.Text += b.Text
			m.em.Emit(env, &canonical.ContentDelta{StreamKind: tk.stream, Delta: b.Text})
			continue
		}
		// Images, audio and resources are not text: they are reported as
		// progress of the item, the block as data.
		up := canonical.ItemUpdated{ItemType: tk.item, Status: canonical.ItemStatusInProgress, Data: rawJSON(b)}
		m.em.Emit(env, &up)
	}
	if len(blocks) == 0 {
		m.em.Emit(env, &canonical.ContentDelta{StreamKind: tk.stream, Delta: ""})
	}
	m.put(sid, s)
}

// closeText completes the session's open text item with its whole text.
func (m *mapper) closeText(sid string) {
	s := m.sess(sid)
	t := s.Text
	if t == nil {
		return
	}
	env := m.env(sid)
	env.TurnID, env.ItemID, env.ProviderRefs.ProviderItemID = t.Turn, t.ID, t.MessageID
	p := canonical.ItemCompleted{ItemType: t.Type, Status: canonical.ItemStatusCompleted}
	if t.Text != "" {
		p.Content = map[canonical.StreamKind]string{textKinds[t.Kind].stream: t.Text}
	}
	m.em.Emit(env, &p)
	s.Text = nil
	m.put(sid, s)
}

// toolUpdate is the part of ToolCall / ToolCallUpdate the mapping reads.
type toolUpdate struct {
	ToolCallID string          `json:"toolCallId"`
	Title      *string         `json:"title"`
	Kind       *string         `json:"kind"`
	Status     *string         `json:"status"`
	RawInput   json.RawMessage `json:"rawInput"`
	RawOutput  json.RawMessage `json:"rawOutput"`
	Content    []struct {
		Type       string       `json:"type"`
		Content    contentBlock `json:"content"`
		Path       string       `json:"path"`
		TerminalID string       `json:"terminalId"`
	} `json:"content"`
	Locations []struct {
		Path string `json:"path"`
	} `json:"locations"`
	Meta struct {
		ClaudeCode struct {
			ToolName string `json:"toolName"`
		} `json:"claudeCode"`
	} `json:"_meta"`
}

// itemTypes maps ACP tool kinds to canonical item types.
var itemTypes = map[string]canonical.ItemType{
	"execute": canonical.ItemTypeCommandExecution,
	"edit":    canonical.ItemTypeFileChange,
	"delete":  canonical.ItemTypeFileChange,
	"move":    canonical.ItemTypeFileChange,
}

// requestTypes maps ACP tool kinds to the approval a permission asks for.
var requestTypes = map[string]canonical.RequestType{
	"execute": canonical.RequestTypeCommandExecutionApproval,
	"edit":    canonical.RequestTypeFileChangeApproval,
	"delete":  canonical.RequestTypeFileChangeApproval,
	"move":    canonical.RequestTypeFileChangeApproval,
}

// merge applies an update to what is known of a tool call.
func (tc *toolCall) merge(u toolUpdate) {
	if u.Kind != nil && *u.Kind != "" {
		tc.Kind = *u.Kind
	}
	tc.Item.ItemType = canonical.ItemTypeDynamicToolCall
	if t, ok := itemTypes[tc.Kind]; ok {
		tc.Item.ItemType = t
	}
	if u.Title != nil && *u.Title != "" {
		tc.Item.Title = *u.Title
	}
	if n := u.Meta.ClaudeCode.ToolName; n != "" {
		tc.Item.ToolName = n
	} else if tc.Item.ToolName == "" {
		tc.Item.ToolName = tc.Kind
	}
	var in struct {
		Command  string `json:"command"`
		FilePath string `json:"file_path"`
	}
	if present(u.RawInput) && jsonscan.Unmarshal(u.RawInput, &in) == nil {
		if in.Command != "" && tc.Item.ItemType == canonical.ItemTypeCommandExecution {
			tc.Item.Command = in.Command
		}
		if in.FilePath != "" {
			tc.addFile(in.FilePath)
		}
	}
	for _, l := range u.Locations {
		if tc.Item.ItemType == canonical.ItemTypeFileChange && l.Path != "" {
			tc.addFile(l.Path)
		}
	}
	for _, c := range u.Content {
		if c.Type == "diff" && c.Path != "" {
			tc.addFile(c.Path)
		}
	}
}

func (tc *toolCall) addFile(p string) {
	if slices.Contains(tc.Item.Files, p) {
		return
	}
	tc.Item.Files = append(tc.Item.Files, p)
}

// output is the text a tool call's content and rawOutput carry.
func (u toolUpdate) output() string {
	var texts []string
	for _, c := range u.Content {
		if c.Type == "content" {
			if t := c.Content.text(); t != "" {
				texts = append(texts, t)
			}
		}
	}
	if len(texts) == 0 && present(u.RawOutput) {
		var s string
		if jsonscan.Unmarshal(u.RawOutput, &s) == nil {
			texts = append(texts, s)
		}
	}
	return strings.Join(texts, "\n")
}

func itemStatus(s string) canonical.ItemStatus {
	switch s {
	case "completed":
		return canonical.ItemStatusCompleted
	case "failed":
		return canonical.ItemStatusFailed
	}
	return canonical.ItemStatusInProgress
}

func (m *mapper) toolEnv(sid, id string, tc toolCall) canonical.Event {
	env := m.env(sid)
	env.TurnID, env.ItemID, env.ProviderRefs.ProviderItemID = tc.Turn, tc.ItemID, id
	return env
}

// tool maps tool_call and tool_call_update (and the toolCall of a
// permission request): one item per toolCallId, started once, however
// often the agent announces it.
func (m *mapper) tool(sid string, u toolUpdate, data json.RawMessage) (toolCall, bool) {
	m.closeText(sid)
	s := m.sess(sid)
	if s.Tools == nil {
		s.Tools = map[string]toolCall{}
	}
	tc, seen := s.Tools[u.ToolCallID]
	if seen && tc.Done {
		m.em.Warn(m.toolEnv(sid, u.ToolCallID, tc), "an update of a tool call that already ended", map[string]string{"toolCallId": u.ToolCallID})
		return tc, false
	}
	if !seen {
		s.Seq++
		tc = toolCall{ItemID: m.ids.Native(canonical.EntityItem, sid, u.ToolCallID), Turn: s.Turn, Seq: s.Seq}
	}
	tc.merge(u)
	status := ""
	if u.Status != nil {
		status = *u.Status
	}
	p := tc.Item
	p.Status = canonical.ItemStatusInProgress
	p.Data = data
	env := m.toolEnv(sid, u.ToolCallID, tc)
	if !seen {
		st := canonical.ItemStarted(p)
		m.em.Emit(env, &st)
	}
	switch final := itemStatus(status); {
	case final != canonical.ItemStatusInProgress:
		if final == canonical.ItemStatusFailed && tc.Declined {
			final = canonical.ItemStatusDeclined
		}
		p.Status = final
		if out := u.output(); out != "" {
			k := canonical.StreamUnknown
			if p.ItemType == canonical.ItemTypeCommandExecution {
				k = canonical.StreamCommandOutput
			}
			p.Content = map[canonical.StreamKind]string{k: out}
		}
		done := canonical.ItemCompleted(p)
		m.em.Emit(env, &done)
		tc.Done = true
	case seen:
		up := canonical.ItemUpdated(p)
		m.em.Emit(env, &up)
	}
	s.Tools[u.ToolCallID] = tc
	m.put(sid, s)
	return tc, true
}

// endTurn completes a turn: its open text and tool items, then the turn.
func (m *mapper) endTurn(sid, turn string, p *canonical.TurnCompleted) {
	s := m.sess(sid)
	if s.Text != nil && s.Text.Turn == turn {
		m.closeText(sid)
		s = m.sess(sid)
	}
	ids := make([]string, 0, len(s.Tools))
	for id, tc := range s.Tools {
		if !tc.Done && tc.Turn == turn {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return s.Tools[ids[i]].Seq < s.Tools[ids[j]].Seq })
	for _, id := range ids {
		tc := s.Tools[id]
		c := canonical.ItemCompleted(tc.Item)
		switch {
		case tc.Declined:
			c.Status = canonical.ItemStatusDeclined
		case p.State != canonical.TurnStateCompleted:
			c.Status = canonical.ItemStatusFailed
		default:
			// The agent never said how the call ended.
			c.Detail = "the turn ended before the agent reported the tool call's end"
		}
		m.em.Emit(m.toolEnv(sid, id, tc), &c)
		tc.Done = true
		s.Tools[id] = tc
	}
	if s.Turn == turn {
		s.Turn = ""
	}
	m.put(sid, s)
	env := m.env(sid)
	env.TurnID = turn
	m.em.Emit(env, p)
}
