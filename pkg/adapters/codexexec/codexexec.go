package codexexec

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/adapters/codexcommon"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Dialect is this adapter's dialect name.
const Dialect = "codex-exec"

// MappingVersion is bumped with every change of what the adapter emits.
const MappingVersion = "codex-exec/8"

const rawSource = "codex.sdk.thread-event"

// Adapter is the codex-exec adapter.
type Adapter struct{}

// Dialect implements adapter.Adapter.
func (Adapter) Dialect() string { return Dialect }

// Provider implements adapter.Adapter.
func (Adapter) Provider() canonical.Provider { return canonical.ProviderCodex }

// MappingVersion implements adapter.Adapter.
func (Adapter) MappingVersion() string { return MappingVersion }

// Rules implements adapter.Adapter.
func (Adapter) Rules() adapter.Rules { return rules.WithDiagnostics() }

// Kinds implements adapter.Adapter.
func (Adapter) Kinds(f adapter.Frame) []string {
	var ev struct {
		Type string `json:"type"`
		Item struct {
			Type string `json:"type"`
		} `json:"item"`
	}
	if jsonscan.Unmarshal(f.Bytes, &ev) != nil || ev.Type == "" {
		return nil
	}
	if ev.Item.Type != "" {
		return []string{ev.Type, "item:" + ev.Item.Type}
	}
	return []string{ev.Type}
}

// NewSession implements adapter.Adapter.
func (Adapter) NewSession(p canonical.Provider) adapter.Session {
	if p == "" {
		p = canonical.ProviderCodex
	}
	return adapter.NewSession(State{Provider: p}, Map)
}

// State is what the adapter remembers between frames.
type State struct {
	// Provider is the provider events are attributed to.
	Provider canonical.Provider `json:"provider"`
	// Thread is Codex's thread id, once thread.started was seen.
	Thread string `json:"thread,omitempty"`
	// Turn is the canonical id of the open turn ("" between turns).
	Turn string `json:"turn,omitempty"`
	// Started lists the provider ids of the items started in the open turn.
	Started []string `json:"started,omitempty"`
	// Total is Thread's usage so far, as far as this session saw it.
	Total canonical.TokenUsage `json:"total"`
	// Reported is the usage codex last reported for Thread: its running
	// count, which a resumed thread carries over from the runs before it
	// (reportedTurn).
	Reported canonical.TokenUsage `json:"reported"`
}

type event struct {
	Type     string          `json:"type"`
	ThreadID string          `json:"thread_id"`
	Item     json.RawMessage `json:"item"`
	Usage    json.RawMessage `json:"usage"`
	Message  string          `json:"message"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type item struct {
	ID               string                  `json:"id"`
	Type             string                  `json:"type"`
	Text             string                  `json:"text"`
	Command          string                  `json:"command"`
	AggregatedOutput string                  `json:"aggregated_output"`
	ExitCode         *int                    `json:"exit_code"`
	Status           string                  `json:"status"`
	Changes          []struct{ Path string } `json:"changes"`
	Server           string                  `json:"server"`
	Tool             string                  `json:"tool"`
	Query            string                  `json:"query"`
	Message          string                  `json:"message"`
	Items            []struct {
		Text      string `json:"text"`
		Completed bool   `json:"completed"`
	} `json:"items"`
}

// Map maps one frame; it is the adapter's pure core.
func Map(st State, f adapter.Frame) (State, []canonical.Event, error) {
	var ev event
	if err := jsonscan.Unmarshal(f.Bytes, &ev); err != nil || ev.Type == "" {
		if err == nil {
			err = fmt.Errorf("no type member")
		}
		return st, adapter.Undecodable(f, st.Provider, MappingVersion, rawSource, err), nil
	}
	raw := canonical.NewRaw(rawSource, "", ev.Type, f.Bytes)
	if err := adapter.CheckDepth(f, raw, jsonscan.Info{}); err != nil {
		return st, adapter.Undecodable(f, st.Provider, MappingVersion, rawSource, err), nil
	}
	em := adapter.NewEmitter(f, st.Provider, MappingVersion, raw)
	ids := em.IDs()
	env := canonical.Event{TurnID: st.Turn}
	if st.Thread != "" {
		env.ThreadID = ids.Native(canonical.EntityThread, st.Thread)
		env.ProviderRefs.ProviderThreadID = st.Thread
	}
	switch ev.Type {
	case "thread.started":
		// Item ids restart with every run: forget the previous thread's.
		// Its usage total is kept only if this run resumes that thread.
		if ev.ThreadID != st.Thread {
			st.Total, st.Reported = canonical.TokenUsage{}, canonical.TokenUsage{}
		}
		// A run starts: a turn the run before left open was cut with it,
		// and ends nowhere; this run's items are not its.
		st.Thread, st.Turn, st.Started = ev.ThreadID, "", nil
		env.TurnID = ""
		env.ThreadID = ids.Native(canonical.EntityThread, ev.ThreadID)
		env.ProviderRefs.ProviderThreadID = ev.ThreadID
		em.Emit(env, &canonical.ThreadStarted{ProviderThreadID: ev.ThreadID})
	case "turn.started":
		st.Turn, st.Started = ids.Derived(canonical.EntityTurn, f.Ordinal, 0), nil
		env.TurnID = st.Turn
		em.Emit(env, &canonical.TurnStarted{})
	case "turn.completed":
		p := &canonical.TurnCompleted{State: canonical.TurnStateCompleted}
		if len(ev.Usage) > 0 {
			if u, err := codexcommon.Usage(ev.Usage); err == nil {
				p.Usage = new(reportedTurn(st.Reported, u))
				st.Reported = u
			} else {
				em.Warn(env, "turn usage could not be read: "+err.Error(), nil)
			}
		}
		env = closeTurn(em, &st, env, p)
		if p.Usage != nil {
			st.Total = st.Total.Add(*p.Usage)
			em.Emit(env, &canonical.ThreadTokenUsageUpdated{Usage: st.Total, Last: new(*p.Usage)})
		}
	case "turn.failed":
		msg := "turn failed"
		if ev.Error != nil && ev.Error.Message != "" {
			msg = ev.Error.Message
		}
		em.Fail(env, codexcommon.ErrorClass(nil, msg), msg, nil)
		closeTurn(em, &st, env, &canonical.TurnCompleted{State: canonical.TurnStateFailed, ErrorMessage: msg})
	case "error":
		if codexcommon.IsRetrying(ev.Message) {
			em.Warn(env, ev.Message, map[string]bool{"willRetry": true})
		} else {
			em.Fail(env, canonical.ErrorClassProvider, nonEmpty(ev.Message, "codex reported an error"), nil)
		}
	case "item.started", "item.updated", "item.completed":
		var it item
		if err := jsonscan.Unmarshal(ev.Item, &it); err != nil || it.ID == "" {
			if err == nil {
				err = fmt.Errorf("item has no id")
			}
			return st, adapter.Undecodable(f, st.Provider, MappingVersion, rawSource, err), nil
		}
		mapItem(em, &st, env, ev.Type, it, ev.Item)
	default:
		adapter.Unmapped(em, env, ev.Type)
	}
	return st, em.Events(), nil
}

// reportedTurn is a turn's usage from what codex exec reports at its end:
// the thread's running count (total_token_usage), not the turn's own. A
// thread's first run reports its one turn; a run that resumes the thread
// (`codex exec resume`) reports every earlier run's tokens too, so within
// a session that saw the earlier count (prev), the turn used the
// difference. A count that fell in some bucket is not a continuation (a
// CLI that started counting anew): it is the turn's own.
func reportedTurn(prev, total canonical.TokenUsage) canonical.TokenUsage {
	if total.Behind(prev) {
		return total
	}
	return total.Sub(prev)
}

// openTurn returns env in the open turn, opening one first when none is:
// a line that only happens inside a turn (an item, a turn's end) from a
// log that starts mid-turn. The turn's id is derived from this frame, as
// turn.started's is.
func openTurn(em *adapter.Emitter, st *State, env canonical.Event) canonical.Event {
	if st.Turn == "" {
		st.Turn = em.IDs().Derived(canonical.EntityTurn, em.Frame().Ordinal, 0)
		env.TurnID = st.Turn
		em.Emit(env, &canonical.TurnStarted{})
	}
	env.TurnID = st.Turn
	return env
}

// closeTurn ends the open turn (opening it first when it never started).
func closeTurn(em *adapter.Emitter, st *State, env canonical.Event, p *canonical.TurnCompleted) canonical.Event {
	env = openTurn(em, st, env)
	em.Emit(env, p)
	st.Turn, st.Started = "", nil
	env.TurnID = ""
	return env
}

func mapItem(em *adapter.Emitter, st *State, env canonical.Event, kind string, it item, data json.RawMessage) {
	// Exec reports items only inside a turn: the first outside any opens
	// it, so the turn.completed ahead ends the turn that holds its items,
	// and its duration runs from its first item seen.
	env = openTurn(em, st, env)
	env.ItemID = em.IDs().Native(canonical.EntityItem, st.Thread, st.Turn, it.ID)
	env.ProviderRefs.ProviderItemID = it.ID
	// One item type table for the three Codex dialects.
	itemType, _ := codexcommon.ItemType(it.Type)
	p := canonical.ItemLifecycle{
		ItemType: itemType,
		Status:   itemStatus(it.Status, kind),
		Command:  it.Command,
		ExitCode: it.ExitCode,
		Data:     data,
	}
	switch it.Type {
	case "mcp_tool_call":
		p.ToolName, p.Title = it.Tool, strings.Trim(it.Server+"/"+it.Tool, "/")
	case "web_search":
		p.Title = it.Query
	case "command_execution":
		p.Title = it.Command
	case "error":
		p.Detail = it.Message
	}
	for _, c := range it.Changes {
		p.Files = append(p.Files, c.Path)
	}
	if kind == "item.completed" {
		p.Content = content(it)
	}

	started := false
	for _, id := range st.Started {
		started = started || id == it.ID
	}
	if !started {
		if kind != "item.started" {
			// Exec reports many items only on completion: open them first.
			opening := p
			opening.Status, opening.Content, opening.ExitCode = canonical.ItemStatusInProgress, nil, nil
			s := canonical.ItemStarted(opening)
			em.Emit(env, &s)
		}
		st.Started = append(st.Started, it.ID)
	}
	switch kind {
	case "item.started":
		if started {
			u := canonical.ItemUpdated(p)
			em.Emit(env, &u)
		} else {
			s := canonical.ItemStarted(p)
			em.Emit(env, &s)
		}
	case "item.updated":
		u := canonical.ItemUpdated(p)
		em.Emit(env, &u)
	default:
		c := canonical.ItemCompleted(p)
		em.Emit(env, &c)
	}
	if it.Type == "todo_list" {
		plan := &canonical.TurnPlanUpdated{Plan: []canonical.PlanStep{}}
		for _, step := range it.Items {
			status := canonical.PlanStepPending
			if step.Completed {
				status = canonical.PlanStepCompleted
			}
			plan.Plan = append(plan.Plan, canonical.PlanStep{Step: step.Text, Status: status})
		}
		planEnv := env
		planEnv.ItemID, planEnv.ProviderRefs.ProviderItemID = "", ""
		em.Emit(planEnv, plan)
	}
}

func itemStatus(s, kind string) canonical.ItemStatus {
	switch s {
	case "in_progress":
		return canonical.ItemStatusInProgress
	case "completed":
		return canonical.ItemStatusCompleted
	case "failed":
		return canonical.ItemStatusFailed
	case "declined":
		return canonical.ItemStatusDeclined
	}
	if kind == "item.completed" {
		return canonical.ItemStatusCompleted
	}
	return canonical.ItemStatusInProgress
}

func content(it item) map[canonical.StreamKind]string {
	var k canonical.StreamKind
	text := it.Text
	switch it.Type {
	case "agent_message":
		k = canonical.StreamAssistantText
	case "reasoning":
		k = canonical.StreamReasoningText
	case "command_execution":
		k, text = canonical.StreamCommandOutput, it.AggregatedOutput
	default:
		return nil
	}
	if text == "" {
		return nil
	}
	return map[canonical.StreamKind]string{k: text}
}

func nonEmpty(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// SessionProvider implements adapter.ProviderState.
func (st State) SessionProvider() canonical.Provider { return st.Provider }
