package claudestream

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Dialect is this adapter's dialect name.
const Dialect = "claude-stream"

// MappingVersion is bumped with every change of what the adapter emits.
const MappingVersion = "claude-stream/15"

// Raw sources: SDK messages, and the permission flow (can_use_tool and the
// host's answer to it).
const (
	SourceMessage    = "claude.sdk.message"
	SourcePermission = "claude.sdk.permission"
)

// Adapter is the claude-stream adapter.
type Adapter struct{}

// Dialect implements adapter.Adapter.
func (Adapter) Dialect() string { return Dialect }

// Provider implements adapter.Adapter.
func (Adapter) Provider() canonical.Provider { return canonical.ProviderClaude }

// MappingVersion implements adapter.Adapter.
func (Adapter) MappingVersion() string { return MappingVersion }

// Rules implements adapter.Adapter.
func (Adapter) Rules() adapter.Rules { return rules.WithDiagnostics() }

// Kinds implements adapter.Adapter.
func (Adapter) Kinds(f adapter.Frame) []string {
	msg, _, ok := f.Unwrap()
	if !ok {
		return nil
	}
	var h header
	if jsonscan.Unmarshal(msg, &h) != nil || h.Type == "" {
		return nil
	}
	return h.kinds()
}

// NewSession implements adapter.Adapter.
func (Adapter) NewSession(p canonical.Provider) adapter.Session {
	if p == "" {
		p = canonical.ProviderClaude
	}
	return adapter.NewSession(State{Provider: p}, Map)
}

// State is what the adapter remembers between frames.
type State struct {
	// Provider is the provider events are attributed to.
	Provider canonical.Provider `json:"provider"`
	// T is the transcript bookkeeping shared with claude-log.
	T Transcript `json:"t"`
	// Requests are the CLI's control requests awaiting the host's answer.
	Requests []Request `json:"requests,omitempty"`
	// Host are the host's control requests awaiting the CLI's answer
	// (request_id → subtype).
	Host map[string]string `json:"host,omitempty"`
	// Cost and Models are the session's cumulative cost and per-model usage
	// as the last result reported them: results of a stream-json input
	// session report both cumulatively, so a turn's share is the
	// difference.
	Cost   float64                         `json:"cost,omitempty"`
	Models map[string]canonical.ModelUsage `json:"models,omitempty"`
	// CostSession is the Claude session Cost and Models count for: a
	// result of another session (two runs' output in one file) starts
	// counting anew.
	CostSession string `json:"costSession,omitempty"`
	// Threads lists the Claude sessions thread.started was emitted for.
	Threads []string `json:"threads,omitempty"`
	// Deferred are the turns awaiting a result that Claude Code writes
	// after the next turn started, oldest first.
	Deferred []DeferredTurn `json:"deferred,omitempty"`
	// NotifiedIn is the turn, answered and awaiting its result, in which
	// the last sub-agent run's end (task_notification) came: a query that
	// starts in it is the notification's own. Turn ids are never reused,
	// so once that turn ends the value matches no open turn.
	NotifiedIn string `json:"notifiedIn,omitempty"`
}

// deferredMemory bounds State.Deferred: a turn whose result never comes is
// given up after this many others.
const deferredMemory = 8

// Request is an open CLI→host control request.
type Request struct {
	ID      string                `json:"id"`
	Subtype string                `json:"subtype"`
	Type    canonical.RequestType `json:"type"`
	Tool    string                `json:"tool,omitempty"`
}

type header struct {
	Type     string `json:"type"`
	Subtype  string `json:"subtype"`
	IsReplay bool   `json:"isReplay"`
	Request  *struct {
		Subtype string `json:"subtype"`
	} `json:"request"`
	Response *struct {
		Subtype  string `json:"subtype"`
		Response *struct {
			Behavior string `json:"behavior"`
		} `json:"response"`
	} `json:"response"`
}

func (h header) kinds() []string {
	switch h.Type {
	case "system", "result":
		return []string{h.Type + ":" + h.Subtype}
	case "user":
		if h.IsReplay {
			return []string{"user:replay"}
		}
	case "control_request":
		if h.Request != nil {
			k := []string{"control_request:" + h.Request.Subtype}
			if h.Request.Subtype == "can_use_tool" {
				k = append(k, "canUseTool")
			}
			return k
		}
	case "control_response":
		if h.Response != nil {
			k := []string{"control_response:" + h.Response.Subtype}
			if r := h.Response.Response; r != nil && (r.Behavior == "allow" || r.Behavior == "deny") {
				k = append(k, "permission_result:"+r.Behavior)
			}
			return k
		}
	}
	return []string{h.Type}
}

// frame is the union of the members the mapping reads.
type frame struct {
	Type            string          `json:"type"`
	Subtype         string          `json:"subtype"`
	SessionID       string          `json:"session_id"`
	UUID            string          `json:"uuid"`
	ParentToolUseID string          `json:"parent_tool_use_id"`
	Message         json.RawMessage `json:"message"`
	Error           json.RawMessage `json:"error"`
	IsReplay        bool            `json:"isReplay"`
	ToolUseResult   json.RawMessage `json:"tool_use_result"`
	Event           json.RawMessage `json:"event"`
	RequestID       string          `json:"request_id"`
	Request         json.RawMessage `json:"request"`
	Response        json.RawMessage `json:"response"`
}

// header is the frame's header, read from the members decoded with it
// rather than by decoding the frame again: only a control message's
// request or response is decoded, as header would decode it.
func (fr frame) header() header {
	h := header{Type: fr.Type, Subtype: fr.Subtype, IsReplay: fr.IsReplay}
	if fr.scanHeader(&h) {
		return h
	}
	h = header{Type: fr.Type, Subtype: fr.Subtype, IsReplay: fr.IsReplay}
	switch {
	case fr.Type == "control_request" && len(fr.Request) > 0:
		_ = jsonscan.Unmarshal(fr.Request, &h.Request) // as in a whole-frame decode, a bad request is no kind
	case fr.Type == "control_response" && len(fr.Response) > 0:
		_ = jsonscan.Unmarshal(fr.Response, &h.Response) // as above
	}
	return h
}

// Map maps one frame; it is the adapter's core, a function of its input but
// for one thing: the maps and slices of st are updated in place, not
// copied on every frame, so the state passed in is the returned state's
// and must not be used again.
func Map(st State, f adapter.Frame) (State, []canonical.Event, error) {
	check := jsonscan.Check(f.Bytes)
	msg, dir, fr, scanned := scanFrame(f, check)
	var err error
	if !scanned {
		var ok bool
		msg, dir, ok = f.Unwrap()
		if !ok {
			err = fmt.Errorf("malformed tap line")
		} else {
			err = jsonscan.Unmarshal(msg, &fr)
		}
	}
	if err == nil && fr.Type == "" {
		err = fmt.Errorf("no type member")
	}
	if err != nil {
		return st, adapter.Undecodable(f, st.Provider, MappingVersion, SourceMessage, err), nil
	}
	kinds := fr.header().kinds()
	source := SourceMessage
	if contains(kinds, "canUseTool") || strings.HasPrefix(kindAt(kinds, 1), "permission_result:") {
		source = SourcePermission
	}
	raw := canonical.NewRawChecked(source, "", kinds[0], f.Bytes, check)
	if err := adapter.CheckDepth(f, raw, check); err != nil {
		return st, adapter.Undecodable(f, st.Provider, MappingVersion, source, err), nil
	}
	em := adapter.NewEmitter(f, st.Provider, MappingVersion, raw)
	// The stream's clock is when each frame arrived. A few messages (tool
	// results) carry the CLI's own timestamp, most carry none: an item
	// started at one clock and completed at the other had a duration of the
	// two clocks' difference, negative when the CLI's was behind, and days
	// for a saved stream ingested later. The timestamp stays in raw.
	sameSession := fr.SessionID == "" || fr.SessionID == st.T.Session
	st.T.SetSession(fr.SessionID)
	env := st.T.Envelope(em)
	if fr.Type == "system" && fr.Subtype == "init" && sameSession && st.T.Turn != "" && st.NotifiedIn == st.T.Turn {
		// A query starts while the last one, which the model has answered,
		// awaits its result: `claude -p` holds a turn's result while its
		// background sub-agents run, and the turn their notification
		// starts comes first. What follows is that next turn's.
		st.Deferred = append(st.Deferred, st.T.deferTurn(em, env))
		if len(st.Deferred) > deferredMemory {
			st.Deferred = slices.Delete(st.Deferred, 0, len(st.Deferred)-deferredMemory)
		}
		env = st.T.Envelope(em)
	}
	switch fr.Type {
	case "assistant":
		mapAssistant(em, &st, env, fr)
	case "user":
		mapUser(em, &st, env, fr, dir)
	case "result":
		mapResult(em, &st, env, msg, fr)
	case "system":
		mapSystem(em, &st, env, msg, fr)
	case "stream_event":
		mapStreamEvent(em, &st, env, fr)
	case "control_request", "control_response", "control_cancel_request":
		mapControl(em, &st, env, fr, dir)
	case "keep_alive":
		// Nothing to say: documented as producing no events.
	case "tool_progress":
		var p struct {
			ToolUseID string   `json:"tool_use_id"`
			ToolName  string   `json:"tool_name"`
			Elapsed   *float64 `json:"elapsed_time_seconds"`
		}
		_ = jsonscan.Unmarshal(msg, &p) // optional members
		e := env
		if p.ToolUseID != "" && st.T.openTool(p.ToolUseID) >= 0 {
			e.ItemID, e.ProviderRefs.ProviderItemID = st.T.ToolItemID(em, p.ToolUseID), p.ToolUseID
		}
		em.Emit(e, &canonical.ToolProgress{ToolUseID: p.ToolUseID, ToolName: p.ToolName, ElapsedSeconds: nonNegF(p.Elapsed)})
	case "tool_use_summary":
		var p struct {
			Summary string   `json:"summary"`
			IDs     []string `json:"preceding_tool_use_ids"`
		}
		_ = jsonscan.Unmarshal(msg, &p) // optional members
		em.Emit(env, &canonical.ToolSummary{Summary: firstNonEmpty(p.Summary, "(no summary)"), PrecedingToolUseIDs: p.IDs})
	case "auth_status":
		var p struct {
			IsAuthenticating *bool    `json:"isAuthenticating"`
			Output           []string `json:"output"`
			Error            string   `json:"error"`
		}
		_ = jsonscan.Unmarshal(msg, &p) // optional members
		em.Emit(env, &canonical.AuthStatus{IsAuthenticating: p.IsAuthenticating, Output: p.Output, Error: p.Error})
	case "rate_limit_event":
		mapRateLimit(em, env, msg)
	case "prompt_suggestion":
		var p struct {
			Suggestion string `json:"suggestion"`
		}
		_ = jsonscan.Unmarshal(msg, &p) // optional member
		em.Emit(env, &canonical.ThreadMetadataUpdated{Metadata: map[string]json.RawMessage{"promptSuggestion": mustJSON(p.Suggestion)}})
	case "conversation_reset":
		var p struct {
			New string `json:"new_conversation_id"`
		}
		_ = jsonscan.Unmarshal(msg, &p) // optional member
		if st.T.Turn != "" {
			env = st.T.CloseTurn(em, env, &canonical.TurnCompleted{State: canonical.TurnStateCancelled, ErrorMessage: "conversation reset"})
		}
		em.Emit(env, &canonical.ThreadStateChanged{State: canonical.ThreadStateClosed, Detail: msg})
		if p.New != "" {
			st.T.SetSession(p.New)
			env = st.T.Envelope(em)
			em.Emit(env, &canonical.ThreadStarted{ProviderThreadID: p.New})
		}
	case "active_goal":
		em.Emit(env, &canonical.ThreadMetadataUpdated{Metadata: map[string]json.RawMessage{"activeGoal": msg}})
	default:
		adapter.Unmapped(em, env, kinds[0])
	}
	return st, em.Events(), nil
}

func kindAt(k []string, i int) string {
	if i < len(k) {
		return k[i]
	}
	return ""
}

func nonNegF(p *float64) *float64 {
	if p == nil || *p < 0 || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return nil
	}
	return p
}

func errorCode(raw json.RawMessage) string {
	var s string
	if jsonscan.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if jsonscan.Unmarshal(raw, &o) == nil {
		return firstNonEmpty(o.Type, o.Message)
	}
	return ""
}

func mapAssistant(em *adapter.Emitter, st *State, env canonical.Event, fr frame) {
	m, err := DecodeMessage(fr.Message)
	if err != nil {
		em.Fail(env, canonical.ErrorClassValidation, "assistant message could not be decoded: "+err.Error(), nil)
		return
	}
	code := errorCode(fr.Error)
	st.T.Assistant(em, env, m, AssistantOptions{
		Parent: fr.ParentToolUseID, Failed: code != "", ErrorCode: code, ReportUsage: true,
		SubAgent: fr.ParentToolUseID != "" && st.T.Turn != "", Turn: st.T.runTurn(fr.ParentToolUseID),
	})
}

func mapUser(em *adapter.Emitter, st *State, env canonical.Event, fr frame, dir adapter.Direction) {
	m, err := DecodeMessage(fr.Message)
	if err != nil {
		em.Fail(env, canonical.ErrorClassValidation, "user message could not be decoded: "+err.Error(), nil)
		return
	}
	// The host's own prompt (a tap line from the client) starts a turn; so
	// does a top-level replayed prompt when no turn is open. A message sent
	// while a turn runs joins it.
	prompt := st.T.Turn == "" && fr.ParentToolUseID == "" && (dir == adapter.FromClient || fr.IsReplay)
	st.T.User(em, env, m, UserOptions{UUID: fr.UUID, Parent: fr.ParentToolUseID, Prompt: prompt, ToolUseResult: fr.ToolUseResult, Turn: st.T.runTurn(fr.ParentToolUseID)})
}

type result struct {
	Subtype      string          `json:"subtype"`
	IsError      bool            `json:"is_error"`
	Result       string          `json:"result"`
	Errors       []string        `json:"errors"`
	StopReason   string          `json:"stop_reason"`
	DurationMs   *int64          `json:"duration_ms"`
	TotalCostUSD *float64        `json:"total_cost_usd"`
	Usage        json.RawMessage `json:"usage"`
	ModelUsage   json.RawMessage `json:"modelUsage"`
	APIError     *int            `json:"api_error_status"`
}

// mapResult ends the turn. Usage is the turn's (per-turn in stream-json
// input sessions), total_cost_usd and modelUsage are the session's so far:
// the turn gets the difference from the previous result. A result that
// comes after the next turn started ends the turn set aside for it.
func mapResult(em *adapter.Emitter, st *State, env canonical.Event, msg json.RawMessage, fr frame) {
	var deferred *DeferredTurn
	for len(st.Deferred) > 0 && fr.SessionID != "" && st.Deferred[0].Session != fr.SessionID {
		// Another session's result (a conversation reset, another run's
		// output): the turns set aside will never get theirs.
		st.Deferred = st.Deferred[1:]
	}
	if len(st.Deferred) > 0 {
		d := st.Deferred[0]
		st.Deferred = st.Deferred[1:]
		deferred = &d
	}
	closeTurn := func(p *canonical.TurnCompleted) {
		if deferred != nil {
			st.T.closeDeferred(em, env, *deferred, p)
			return
		}
		st.T.CloseTurn(em, env, p)
	}
	var r result
	if err := jsonscan.Unmarshal(msg, &r); err != nil {
		em.Fail(env, canonical.ErrorClassValidation, "result could not be decoded: "+err.Error(), nil)
		closeTurn(&canonical.TurnCompleted{State: canonical.TurnStateFailed, ErrorMessage: "undecodable result"})
		return
	}
	p := &canonical.TurnCompleted{State: canonical.TurnStateCompleted, StopReason: r.StopReason, DurationMs: nonNegI(r.DurationMs)}
	if len(r.Usage) > 0 && string(r.Usage) != "null" {
		if u, err := canonical.FoldUsage(r.Usage, canonical.AnthropicUsage); err == nil {
			p.Usage = &u
		} else {
			em.Fail(env, canonical.ErrorClassValidation, "result usage could not be read: "+err.Error(), nil)
		}
	}
	switch {
	case p.Usage != nil:
	case deferred != nil && len(deferred.Usage) > 0:
		u, _ := turnUsage(deferred.Usage)
		p.Usage = &u
	case deferred == nil && len(st.T.Usage) > 0:
		u, _ := st.T.TurnUsage()
		p.Usage = &u
	}
	if fr.SessionID != "" && fr.SessionID != st.CostSession {
		st.Cost, st.Models, st.CostSession = 0, nil, fr.SessionID
	}
	if models := FoldModelUsage(r.ModelUsage); models != nil {
		main := ""
		if deferred != nil && p.Usage != nil {
			main = mainModel(deferred.Usage)
		}
		p.ModelUsage = map[string]canonical.ModelUsage{}
		for _, name := range SortedKeys(models) {
			cum := models[name]
			turn := cum
			prev, ok := st.Models[name]
			// Counts below the previous result's are a count that
			// started over (another run's output): the turn's share is
			// all of it.
			if ok && !cum.Behind(prev.TokenUsage) {
				turn.TokenUsage = cum.Sub(prev.TokenUsage)
				turn.CostUSD, turn.WebSearchRequests = nil, nil
				if cum.CostUSD != nil && prev.CostUSD != nil && *cum.CostUSD >= *prev.CostUSD {
					c := roundCost(*cum.CostUSD - *prev.CostUSD)
					turn.CostUSD = &c
				}
				if cum.WebSearchRequests != nil && prev.WebSearchRequests != nil && *cum.WebSearchRequests >= *prev.WebSearchRequests {
					w := *cum.WebSearchRequests - *prev.WebSearchRequests
					turn.WebSearchRequests = &w
				}
			} else {
				prev = canonical.ModelUsage{}
			}
			if name == main {
				// The count was read when the result was written, after
				// the next turn had started on the same model: of what it
				// grew by, the turn's own requests are its usage, and the
				// rest goes to the next turn. The cost cannot be split
				// without prices: neither turn states that model's, and
				// the views price both at the list prices Claude charges.
				own := capUsage(*p.Usage, turn.TokenUsage)
				turn.TokenUsage, turn.CostUSD, turn.WebSearchRequests = own, nil, nil
				next := cum
				next.TokenUsage, next.CostUSD, next.WebSearchRequests = prev.Add(own), nil, prev.WebSearchRequests
				models[name] = next
			}
			p.ModelUsage[name] = turn
		}
		st.Models = models
	}
	if c := nonNegF(r.TotalCostUSD); c != nil {
		turn := roundCost(*c)
		if *c >= st.Cost {
			turn = roundCost(*c - st.Cost)
		}
		p.TotalCostUSD = &turn
		st.Cost = *c
	}
	if r.Subtype != "success" || r.IsError {
		msgText := firstNonEmpty(strings.Join(r.Errors, "; "), r.Result, "turn failed: "+r.Subtype)
		class := canonical.ErrorClassProvider
		if r.APIError != nil && (*r.APIError == 401 || *r.APIError == 403) {
			class = canonical.ErrorClassPermission
		}
		em.Fail(env, class, msgText, map[string]any{"subtype": r.Subtype, "errors": r.Errors, "apiErrorStatus": r.APIError})
		p.State, p.ErrorMessage = canonical.TurnStateFailed, msgText
	}
	closeTurn(p)
}

// capUsage is u with each count at most limit's.
func capUsage(u, limit canonical.TokenUsage) canonical.TokenUsage {
	return canonical.TokenUsage{
		InputTokens:           min(u.InputTokens, limit.InputTokens),
		CachedInputTokens:     min(u.CachedInputTokens, limit.CachedInputTokens),
		CacheWriteInputTokens: min(u.CacheWriteInputTokens, limit.CacheWriteInputTokens),
		OutputTokens:          min(u.OutputTokens, limit.OutputTokens),
		ReasoningOutputTokens: min(u.ReasoningOutputTokens, limit.ReasoningOutputTokens),
	}
}

// roundCost rounds a cost to a billionth of a dollar. Claude Code sums its
// costs in floating point and prints the noise (0.009479999999999999), and
// the difference of two cumulative costs adds its own; rounded, the shares
// add up in Postgres's numeric columns to what the provider meant. A cost
// too large for that (c*1e9 would be infinite) has no such noise to take
// off: it is kept.
func roundCost(c float64) float64 {
	if r := math.Round(c*1e9) / 1e9; !math.IsInf(r, 0) {
		return r
	}
	return c
}

func nonNegI(p *int64) *int64 {
	if p == nil || *p < 0 {
		return nil
	}
	return p
}

func mapRateLimit(em *adapter.Emitter, env canonical.Event, msg json.RawMessage) {
	var p struct {
		Info json.RawMessage `json:"rate_limit_info"`
	}
	_ = jsonscan.Unmarshal(msg, &p) // checked below
	var info struct {
		Status        string   `json:"status"`
		ResetsAt      *float64 `json:"resetsAt"`
		RateLimitType string   `json:"rateLimitType"`
		Utilization   *float64 `json:"utilization"`
		OverageStatus string   `json:"overageStatus"`
		OverageResets *float64 `json:"overageResetsAt"`
	}
	if len(p.Info) == 0 || jsonscan.Unmarshal(p.Info, &info) != nil {
		p.Info = json.RawMessage(`{}`)
	}
	w := canonical.RateLimitWindow{Name: firstNonEmpty(info.RateLimitType, "unknown"), Status: info.Status, ResetsAt: epoch(info.ResetsAt)}
	if m := windowMinutes[info.RateLimitType]; m > 0 {
		w.WindowMinutes = &m
	}
	if u := nonNegF(info.Utilization); u != nil {
		// utilization is a fraction (0..1) in the SDK; canonical is percent.
		pct := *u
		if pct <= 1 {
			pct *= 100
		}
		w.UsedPercent = &pct
	}
	out := &canonical.AccountRateLimitsUpdated{RateLimits: p.Info, Windows: []canonical.RateLimitWindow{w}}
	if info.OverageStatus != "" {
		out.Windows = append(out.Windows, canonical.RateLimitWindow{Name: "overage", Status: info.OverageStatus, ResetsAt: epoch(info.OverageResets)})
	}
	em.Emit(env, out)
}

// windowMinutes are the lengths of the SDK's rate-limit windows.
var windowMinutes = map[string]int64{"five_hour": 300, "seven_day": 10080, "seven_day_opus": 10080, "seven_day_sonnet": 10080, "seven_day_overage_included": 10080}

// epoch reads resetsAt, which the SDK gives in Unix seconds.
func epoch(s *float64) *time.Time {
	if s == nil || *s <= 0 || *s > 1e11 || math.IsNaN(*s) {
		return nil
	}
	t := time.Unix(int64(*s), 0).UTC()
	return &t
}

// SessionProvider implements adapter.ProviderState.
func (st State) SessionProvider() canonical.Provider { return st.Provider }
