package claudestream

import (
	"encoding/json"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

type streamEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		ID    string          `json:"id"`
		Model string          `json:"model"`
		Usage json.RawMessage `json:"usage"`
	} `json:"message"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage json.RawMessage `json:"usage"`
}

// mapStreamEvent maps a partial: blocks open items from message id +
// index (tool blocks from their tool_use id), deltas are content.delta, and
// the complete assistant message that also arrives (before or after
// content_block_stop) carries the authoritative text without a second
// copy of it.
func mapStreamEvent(em *adapter.Emitter, st *State, env canonical.Event, fr frame) {
	var ev streamEvent
	if err := jsonscan.Unmarshal(fr.Event, &ev); err != nil {
		em.Fail(env, canonical.ErrorClassValidation, "stream_event could not be decoded: "+err.Error(), nil)
		return
	}
	t := &st.T
	if ev.Type == "message_stop" {
		return // framing only: blocks and usage were reported already (documented as silent)
	}
	// A sub-agent's message inside the turn, as mapAssistant tells it.
	sub := fr.ParentToolUseID != "" && t.Turn != ""
	env = t.EnsureTurn(em, env)
	parent := t.ParentItem(em, fr.ParentToolUseID)
	switch ev.Type {
	case "message_start":
		detail := ""
		if m := ev.Message; m != nil {
			t.StreamMsg = m.ID
			detail = m.Model
			t.StreamModel = m.Model
			if t.FirstMsg == "" && !sub {
				// The turn's provider id, as the result's turn.completed
				// will name it: a report of the turn's usage (message_delta)
				// can come before the full message does.
				t.FirstMsg = m.ID
			}
		}
		em.Emit(env, &canonical.SessionStateChanged{State: canonical.SessionStateRunning, Reason: "message_start", Detail: detail})
	case "content_block_start":
		var b Block
		if err := jsonscan.Unmarshal(ev.ContentBlock, &b); err != nil {
			em.Fail(env, canonical.ErrorClassValidation, "content_block could not be decoded: "+err.Error(), nil)
			return
		}
		p := Partial{Msg: t.StreamMsg, Index: ev.Index, Block: b.Type}
		e := env
		switch b.Type {
		case "tool_use", "server_tool_use", "mcp_tool_use":
			p.Tool, p.Item = b.ID, t.ToolItemID(em, b.ID)
			e.ItemID, e.ProviderRefs.ProviderItemID = p.Item, b.ID
			lp := canonical.ItemLifecycle{ItemType: ToolType(b.Name, b.Type), Status: canonical.ItemStatusInProgress, ParentItemID: parent, Data: ev.ContentBlock}
			describeTool(&lp, b.Name, b.ServerName, nil)
			if t.openTool(b.ID) >= 0 || contains(t.Done, b.ID) {
				u := canonical.ItemUpdated(lp)
				em.Emit(e, &u)
				break
			}
			s := canonical.ItemStarted(lp)
			em.Emit(e, &s)
			t.Tools = append(t.Tools, Tool{ID: b.ID, Item: p.Item, Type: lp.ItemType, Name: b.Name, Title: lp.Title, Parent: parent})
		case "tool_result", "web_search_tool_result", "mcp_tool_result", "web_fetch_tool_result":
			// Server tool results arrive whole; the full message completes the call.
			e.ItemID = t.ToolItemID(em, b.ToolUseID)
			if t.openTool(b.ToolUseID) >= 0 {
				em.Emit(e, &canonical.ItemUpdated{ItemType: canonical.ItemTypeWebSearch, Status: canonical.ItemStatusInProgress, Data: ev.ContentBlock})
			} else {
				em.Emit(env, &canonical.SessionStateChanged{State: canonical.SessionStateRunning, Reason: "content_block_start", Detail: b.Type})
			}
			return
		default:
			p.Item = t.BlockItemID(em, t.StreamMsg, ev.Index)
			e.ItemID, e.ProviderRefs.ProviderItemID = p.Item, t.StreamMsg
			it, _ := blockItem(b.Type)
			if t.partial(t.StreamMsg, ev.Index) >= 0 {
				em.Emit(e, &canonical.ItemUpdated{ItemType: it, Status: canonical.ItemStatusInProgress, ParentItemID: parent})
				return
			}
			em.Emit(e, &canonical.ItemStarted{ItemType: it, Status: canonical.ItemStatusInProgress, ParentItemID: parent})
		}
		if t.partial(p.Msg, p.Index) < 0 {
			t.Partials = append(t.Partials, p)
		}
	case "content_block_delta":
		pi := t.partial(t.StreamMsg, ev.Index)
		if pi < 0 || ev.Delta == nil {
			em.Emit(env, &canonical.SessionStateChanged{State: canonical.SessionStateRunning, Reason: "content_block_delta", Detail: "delta for a block that was not started"})
			return
		}
		p := &t.Partials[pi]
		e := env
		e.ItemID = p.Item
		if p.Tool != "" {
			e.ProviderRefs.ProviderItemID = p.Tool
		} else {
			e.ProviderRefs.ProviderItemID = p.Msg
		}
		switch ev.Delta.Type {
		case "text_delta":
			if !p.Full {
				p.Text += ev.Delta.Text
			}
			em.Emit(e, &canonical.ContentDelta{StreamKind: canonical.StreamAssistantText, Delta: ev.Delta.Text})
		case "thinking_delta":
			if !p.Full {
				p.Text += ev.Delta.Thinking
			}
			em.Emit(e, &canonical.ContentDelta{StreamKind: canonical.StreamReasoningText, Delta: ev.Delta.Thinking})
		case "input_json_delta":
			// The tool's input as it is generated; the full message
			// carries the parsed input.
			em.Emit(e, &canonical.ContentDelta{StreamKind: canonical.StreamUnknown, Delta: ev.Delta.PartialJSON})
		default: // signature_delta, citations_delta: nothing to append
			it, _ := blockItem(p.Block)
			if ti := t.openTool(p.Tool); p.Tool != "" && ti >= 0 {
				it = t.Tools[ti].Type
			}
			em.Emit(e, &canonical.ItemUpdated{ItemType: it, Status: canonical.ItemStatusInProgress, Detail: ev.Delta.Type})
		}
	case "content_block_stop":
		pi := t.partial(t.StreamMsg, ev.Index)
		if pi < 0 {
			em.Emit(env, &canonical.SessionStateChanged{State: canonical.SessionStateRunning, Reason: "content_block_stop"})
			return
		}
		p := t.Partials[pi]
		e := env
		e.ItemID = p.Item
		if p.Tool != "" {
			// The call's input is complete; its tool_result ends it.
			e.ProviderRefs.ProviderItemID = p.Tool
			it := canonical.ItemTypeDynamicToolCall
			if ti := t.openTool(p.Tool); ti >= 0 {
				it = t.Tools[ti].Type
			}
			if p.Full || t.openTool(p.Tool) < 0 {
				t.Partials = append(t.Partials[:pi], t.Partials[pi+1:]...)
			} else {
				t.Partials[pi].Stopped = true
			}
			if t.openTool(p.Tool) < 0 {
				em.Emit(env, &canonical.SessionStateChanged{State: canonical.SessionStateRunning, Reason: "content_block_stop"})
				return
			}
			em.Emit(e, &canonical.ItemUpdated{ItemType: it, Status: canonical.ItemStatusInProgress})
			return
		}
		e.ProviderRefs.ProviderItemID = p.Msg
		it, kind := blockItem(p.Block)
		if !p.Full {
			// The complete message has not arrived yet; it will end the item.
			t.Partials[pi].Stopped = true
			em.Emit(e, &canonical.ItemUpdated{ItemType: it, Status: canonical.ItemStatusInProgress})
			return
		}
		c := &canonical.ItemCompleted{ItemType: it, Status: canonical.ItemStatusCompleted, ParentItemID: parent}
		if p.Text != "" {
			c.Content = map[canonical.StreamKind]string{kind: p.Text}
		}
		em.Emit(e, c)
		t.Partials = append(t.Partials[:pi], t.Partials[pi+1:]...)
	case "message_delta":
		// The message's final usage: the session's running total so far.
		if len(ev.Usage) > 0 && t.StreamMsg != "" {
			if u, err := canonical.FoldUsage(ev.Usage, canonical.AnthropicUsage); err == nil {
				if t.Usage == nil {
					t.Usage = map[string]MessageUsage{}
				}
				mu := t.Usage[t.StreamMsg]
				mu.Usage, mu.SubAgent = u, mu.SubAgent || sub
				if mu.Model == "" {
					mu.Model = t.StreamModel
				}
				t.Usage[t.StreamMsg] = mu
				t.ReportUsage(em, env, &u)
				return
			}
		}
		reason := "message_delta"
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			reason = ev.Delta.StopReason
		}
		em.Emit(env, &canonical.SessionStateChanged{State: canonical.SessionStateRunning, Reason: reason})
	default:
		adapter.Unmapped(em, env, "stream_event:"+ev.Type)
	}
}
