package codexrollout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/adapters/codexcommon"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Dialect is this adapter's dialect name.
const Dialect = "codex-rollout"

// MappingVersion is bumped with every change of what the adapter emits.
const MappingVersion = "codex-rollout/17"

const rawSource = "codex.eventmsg"

// Adapter is the codex-rollout adapter.
type Adapter struct{}

// Dialect implements adapter.Adapter.
func (Adapter) Dialect() string { return Dialect }

// Provider implements adapter.Adapter.
func (Adapter) Provider() canonical.Provider { return canonical.ProviderCodex }

// MappingVersion implements adapter.Adapter.
func (Adapter) MappingVersion() string { return MappingVersion }

// Rules implements adapter.Adapter.
func (Adapter) Rules() adapter.Rules { return rules.WithDiagnostics() }

// line is one rollout line.
type line struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

type typed struct {
	Type string `json:"type"`
}

// Kinds implements adapter.Adapter: an event_msg line is its EventMsg
// type (as INVENTORY.tsv names them), a response_item line
// "response_item:<type>", any other line its type.
func (Adapter) Kinds(f adapter.Frame) []string {
	k, ok := kindOf(f.Bytes)
	if !ok {
		return nil
	}
	return []string{k}
}

func kindOf(b []byte) (string, bool) {
	d, err := decodeLine(b)
	if err != nil || d.kind == "" {
		return "", false
	}
	return d.kind, true
}

// NewSession implements adapter.Adapter.
func (Adapter) NewSession(p canonical.Provider) adapter.Session {
	if p == "" {
		p = canonical.ProviderCodex
	}
	return codexcommon.NewSession(State{Provider: p}, step)
}

type mapper struct {
	st   *State
	em   *adapter.Emitter
	f    adapter.Frame
	env  canonical.Event
	kind string
	at   time.Time
}

// Map maps one line; it is the adapter's pure core. Sessions step their
// own state in place instead (step), which spares the copy.
func Map(st State, f adapter.Frame) (State, []canonical.Event, error) {
	st = st.clone()
	events := step(&st, f)
	return st, events, nil
}

// step maps one line by updating st.
func step(st *State, f adapter.Frame) []canonical.Event {
	d, err := decodeLine(f.Bytes)
	if err != nil {
		return adapter.Undecodable(f, st.Provider, MappingVersion, rawSource, err)
	}
	l, e, r, derr, kind := d.line, d.ev, d.resp, d.err, d.kind
	raw := canonical.NewRawChecked(rawSource, "", strings.TrimPrefix(kind, "response_item:"), f.Bytes, d.check)
	if err := adapter.CheckDepth(f, raw, d.check); err != nil {
		return adapter.Undecodable(f, st.Provider, MappingVersion, rawSource, err)
	}
	if d.at >= 0 {
		// The payload is a span of the frame: share the Raw's copy of it.
		end := d.at + len(l.Payload)
		if raw.Encoding == canonical.RawJSON {
			l.Payload = raw.Payload[d.at:end:end]
		} else {
			l.Payload = bytes.Clone(l.Payload)
		}
	}
	em := adapter.NewEmitter(f, st.Provider, MappingVersion, raw)
	mp := &mapper{st: st, em: em, f: f, kind: kind}
	mp.at = em.SetTimeOn(&st.Clock, adapter.ParseTime(l.Timestamp))
	mp.setEnv()
	switch l.Type {
	case "session_meta":
		mp.sessionMeta(l.Payload)
	case "turn_context":
		mp.em.Emit(mp.env, &canonical.SessionConfigured{Config: codexcommon.Members(l.Payload)})
	case "world_state":
		mp.em.Emit(mp.env, &canonical.SessionConfigured{Config: map[string]json.RawMessage{"worldState": orEmpty(l.Payload)}})
	case "compacted":
		mp.em.Emit(mp.env, &canonical.ThreadStateChanged{State: canonical.ThreadStateCompacted})
	case "token_usage_record":
		mp.usageRecord(l.Payload)
	case "inter_agent_communication_metadata":
		mp.em.Emit(mp.env, &canonical.ThreadMetadataUpdated{Metadata: map[string]json.RawMessage{"interAgentCommunication": orEmpty(l.Payload)}})
	case "response_item":
		mp.decodedResponseItem(r, derr, l.Payload)
	case "event_msg":
		if !mp.eventMsg(kind, e, derr, l.Payload) {
			adapter.Unmapped(em, mp.env, kind)
		}
	default:
		adapter.Unmapped(em, mp.env, l.Type)
	}
	return em.Events()
}

// decoded is a line decoded for mapping.
type decoded struct {
	line line
	// at is where line.Payload starts in the frame when it is a span of
	// it (-1 when it is a copy).
	at int
	// ev or resp is the payload of an event_msg or response_item line,
	// decoded, or err why it is not.
	ev   ev
	resp respItem
	err  error
	// kind is the line's kind, as Kinds names it.
	kind string
	// check is the line's validation when it was only validated, reused
	// for its raw copy (canonical.NewRawChecked); zero otherwise.
	check jsonscan.Info
}

// decodeLine decodes a line once: its members are found by a scan, an
// event_msg or response_item line is decoded with its payload's struct in
// one pass (the kind is that struct's type member), other lines are only
// validated. Lines the scan cannot read exactly as encoding/json would are
// decoded as before, member by member (decodeSlow). An error means the
// line is not a rollout line.
func decodeLine(b []byte) (decoded, error) {
	if d, ok := decodeFast(b); ok {
		return d, nil
	}
	return decodeSlow(b)
}

var lineMembers = [...]string{"timestamp", "type", "payload"}

func decodeFast(b []byte) (decoded, bool) {
	d := decoded{at: -1}
	var span [len(lineMembers)][2]int
	var seen [len(lineMembers)]bool
	ok := true
	if !jsonscan.EachMemberAt(b, func(k []byte, start, end int) bool {
		if !jsonscan.PlainKey(k) {
			ok = false
			return false
		}
		for i, name := range lineMembers {
			if bytes.EqualFold(k, []byte(name)) {
				if string(k) != name || seen[i] {
					ok = false
					return false
				}
				seen[i], span[i] = true, [2]int{start, end}
			}
		}
		return true
	}) || !ok || !seen[1] {
		return d, false
	}
	str := func(i int) (string, bool) {
		if !seen[i] {
			return "", true
		}
		v := b[span[i][0]:span[i][1]]
		if string(v) == "null" {
			return "", true
		}
		if len(v) < 2 || v[0] != '"' || !jsonscan.PlainKey(v[1:len(v)-1]) {
			return "", false
		}
		return string(v[1 : len(v)-1]), true
	}
	typ, ok := str(1)
	if !ok || typ == "" {
		return d, false
	}
	if !seen[2] && (typ == "event_msg" || typ == "response_item") {
		return d, false // no payload to decode: an error decodeSlow reports
	}
	switch typ {
	case "event_msg":
		var l struct {
			Timestamp string `json:"timestamp"`
			Type      string `json:"type"`
			Payload   *ev    `json:"payload"`
		}
		if jsonscan.Unmarshal(b, &l) != nil {
			return d, false
		}
		if l.Payload != nil {
			d.ev = *l.Payload
		}
		d.line.Timestamp, d.kind = l.Timestamp, d.ev.Type
	case "response_item":
		var l struct {
			Timestamp string    `json:"timestamp"`
			Type      string    `json:"type"`
			Payload   *respItem `json:"payload"`
		}
		if jsonscan.Unmarshal(b, &l) != nil {
			return d, false
		}
		if l.Payload != nil {
			d.resp = *l.Payload
		}
		d.line.Timestamp, d.kind = l.Timestamp, "response_item:"+d.resp.Type
	default:
		ts, ok := str(0)
		if !ok {
			return d, false
		}
		if d.check = jsonscan.Check(b); !d.check.Valid {
			return d, false
		}
		d.line.Timestamp, d.kind = ts, typ
	}
	d.line.Type = typ
	if seen[2] {
		d.at = span[2][0]
		d.line.Payload = b[span[2][0]:span[2][1]:span[2][1]]
	}
	return d, true
}

// decodeSlow decodes the line, then its payload: the mapping as first
// written, for the lines decodeFast leaves.
func decodeSlow(b []byte) (decoded, error) {
	d := decoded{at: -1}
	if err := jsonscan.Unmarshal(b, &d.line); err != nil {
		return d, err //nolint:wrapcheck // the caller says what failed
	}
	l := d.line
	if l.Type == "" {
		return d, fmt.Errorf("no type member")
	}
	d.kind = l.Type
	switch l.Type {
	case "event_msg":
		if d.err = jsonscan.Unmarshal(l.Payload, &d.ev); d.err == nil {
			d.kind = d.ev.Type
		} else {
			d.kind = payloadType(l.Payload)
		}
	case "response_item":
		if d.err = jsonscan.Unmarshal(l.Payload, &d.resp); d.err == nil {
			d.kind = "response_item:" + d.resp.Type
		} else {
			d.kind = "response_item:" + payloadType(l.Payload)
		}
	}
	return d, nil
}

// payloadType is the payload's type member as kindOf reads it, for a
// payload that does not decode as its type's struct.
func payloadType(raw json.RawMessage) string {
	var p typed
	_ = jsonscan.Unmarshal(raw, &p)
	return p.Type
}

func (mp *mapper) setEnv() {
	var env canonical.Event
	if mp.st.Thread != "" {
		env.ThreadID = mp.em.IDs().Native(canonical.EntityThread, mp.st.Thread)
		env.ProviderRefs.ProviderThreadID = mp.st.Thread
	}
	env.TurnID = mp.st.TurnID
	if mp.st.TurnID != "" && mp.st.Turn != "" {
		env.ProviderRefs.ProviderTurnID = mp.st.Turn
	}
	mp.env = env
}

// marksNoTurns says whether a Codex CLI version writes rollouts without
// task_started: 0.40 and before.
func marksNoTurns(version string) bool {
	major, rest, ok := strings.Cut(version, ".")
	if !ok || major != "0" {
		return false
	}
	minor, _, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(minor)
	return err == nil && n <= 40
}

func orEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	return raw
}

func (mp *mapper) sessionMeta(raw json.RawMessage) {
	var p struct {
		ID        string `json:"id"`
		SessionID string `json:"session_id"`
	}
	if v, ok := codexcommon.StringMembers(raw, "id", "session_id"); ok {
		p.ID, p.SessionID = v[0], v[1]
	} else {
		_ = jsonscan.Unmarshal(raw, &p)
	}
	cfg := codexcommon.Members(raw, "base_instructions", "instructions", "id", "session_id", "timestamp")
	if p.ID == "" || p.ID == mp.st.Thread {
		mp.em.Emit(mp.env, &canonical.SessionConfigured{Config: cfg})
		return
	}
	first := mp.st.Thread == ""
	if first {
		var version string
		mp.st.Unmarked = jsonscan.Unmarshal(cfg["cli_version"], &version) == nil && marksNoTurns(version)
	}
	mp.st.Thread = p.ID
	mp.setEnv()
	env := mp.env
	env.ProviderRefs.ProviderSessionID = p.SessionID
	if first {
		mp.em.Emit(env, &canonical.SessionStarted{})
	}
	mp.em.Emit(env, &canonical.ThreadStarted{ProviderThreadID: p.ID})
	mp.em.Emit(env, &canonical.SessionConfigured{Config: cfg})
}

// --- turns ---

func (mp *mapper) startTurn(turnID string, p *canonical.TurnStarted) {
	if mp.st.TurnID != "" {
		mp.endTurn(&canonical.TurnCompleted{State: canonical.TurnStateInterrupted, ErrorMessage: "a new turn started"})
	}
	mp.st.Turn = turnID
	if turnID != "" && !slices.Contains(mp.st.UsedTurns, mp.st.Thread+"/"+turnID) {
		mp.st.UsedTurns = append(mp.st.UsedTurns, mp.st.Thread+"/"+turnID)
		mp.st.TurnID = mp.em.IDs().Native(canonical.EntityTurn, mp.st.Thread, turnID)
	} else {
		mp.st.TurnID = mp.em.IDs().Derived(canonical.EntityTurn, mp.f.Ordinal, 0)
	}
	mp.st.TurnStart, mp.st.TurnUsage = mp.st.thread(), false
	mp.setEnv()
	mp.em.Emit(mp.env, p)
}

// turnEnd is the completion of the open turn that ended as Codex meant
// it to (task_complete, or a prompt in a rollout that marks no turns):
// failed if an error ended it, else completed.
func (mp *mapper) turnEnd(durationMs *int64) *canonical.TurnCompleted {
	if mp.st.TurnError != "" {
		return &canonical.TurnCompleted{State: canonical.TurnStateFailed, ErrorMessage: mp.st.TurnError, DurationMs: durationMs}
	}
	return &canonical.TurnCompleted{State: canonical.TurnStateCompleted, DurationMs: durationMs}
}

func (mp *mapper) endTurn(p *canonical.TurnCompleted) {
	status := canonical.ItemStatusCompleted
	if p.State != canonical.TurnStateCompleted {
		status = canonical.ItemStatusFailed
	}
	mp.closeAll(status)
	p.Usage = mp.turnSoFar()
	mp.em.Emit(mp.env, p)
	mp.st.Turn, mp.st.TurnID, mp.st.TurnUsage, mp.st.TurnError = "", "", false, ""
	mp.setEnv()
}

// ensureTurn opens a turn for a line that ends one never started (an
// excerpt).
func (mp *mapper) ensureTurn(turnID string) {
	if mp.st.TurnID == "" {
		mp.startTurn(turnID, &canonical.TurnStarted{})
	}
}

// --- usage ---

type tokenInfo struct {
	Total              json.RawMessage `json:"total_token_usage"`
	Last               json.RawMessage `json:"last_token_usage"`
	ModelContextWindow *int64          `json:"model_context_window"`
}

// tokenCount maps token_count, which is cumulative: the thread total is
// replaced, never added to; a snapshot identical to the last one carries
// no last usage, so repeated snapshots are not counted twice; the turn's
// usage is the difference across the turn.
func (mp *mapper) tokenCount(raw json.RawMessage) {
	var p struct {
		Info       *tokenInfo      `json:"info"`
		RateLimits json.RawMessage `json:"rate_limits"`
	}
	if err := jsonscan.Unmarshal(raw, &p); err != nil {
		mp.em.Fail(mp.env, canonical.ErrorClassValidation, "token_count could not be read: "+err.Error(), nil)
		return
	}
	emitted := false
	if p.Info != nil && len(p.Info.Total) > 0 && string(p.Info.Total) != "null" {
		total, err := codexcommon.Usage(p.Info.Total)
		if err != nil {
			mp.em.Fail(mp.env, canonical.ErrorClassValidation, "token_count usage could not be read: "+err.Error(), nil)
			return
		}
		out := &canonical.ThreadTokenUsageUpdated{}
		if total != mp.st.Total {
			if last, err := codexcommon.Usage(p.Info.Last); err == nil {
				out.Last = &last
			}
		}
		if w := p.Info.ModelContextWindow; w != nil && *w >= 0 {
			out.ModelContextWindow = w
		}
		mp.setTotal(total)
		out.Usage, out.Turn = mp.st.thread(), mp.turnSoFar()
		mp.em.Emit(mp.env, out)
		emitted = true
	}
	if len(p.RateLimits) > 0 && string(p.RateLimits) != "null" {
		mp.em.Emit(mp.env, &canonical.AccountRateLimitsUpdated{RateLimits: p.RateLimits, Windows: codexcommon.RateLimitWindows(p.RateLimits, mp.at)})
		emitted = true
	}
	if !emitted {
		mp.em.Emit(mp.env, &canonical.ThreadTokenUsageUpdated{Usage: mp.st.thread()})
	}
}

// setTotal takes the running count of the process that writes the
// rollout, as it reports it. A count that fell in some bucket is a new
// process's: a resumed thread counts from zero again, in the same file.
// The earlier processes' counts are kept (Base), so that the thread's
// total is all of its usage and the open turn's goes on from where it
// was.
func (mp *mapper) setTotal(reported canonical.TokenUsage) {
	st := mp.st
	if reported.Behind(st.Total) {
		st.Base = st.Base.Add(st.Total)
	}
	st.Total = reported
	if st.TurnID != "" {
		st.TurnUsage = true
	}
}

// usageRecord maps token_usage_record (0.171+): one model response's
// usage. It advances the thread total by that response, so the following
// token_count with the same total adds nothing.
func (mp *mapper) usageRecord(raw json.RawMessage) {
	var p struct {
		Usage json.RawMessage `json:"usage"`
	}
	_ = jsonscan.Unmarshal(raw, &p)
	u, err := codexcommon.Usage(orEmpty(p.Usage))
	if err != nil {
		mp.em.Fail(mp.env, canonical.ErrorClassValidation, "token_usage_record usage could not be read: "+err.Error(), nil)
		return
	}
	mp.setTotal(mp.st.Total.Add(u))
	mp.em.Emit(mp.env, &canonical.ThreadTokenUsageUpdated{Usage: mp.st.thread(), Last: &u, Turn: mp.turnSoFar()})
}

// turnSoFar is the open turn's usage so far (the thread total's growth
// since it started), nil when no usage came during it: reported with
// each total, as a rollout cut off mid-turn never states it otherwise,
// and the turn's own when it ends.
func (mp *mapper) turnSoFar() *canonical.TokenUsage {
	if mp.st.TurnID == "" || !mp.st.TurnUsage {
		return nil
	}
	u := mp.st.thread().Sub(mp.st.TurnStart)
	return &u
}

// --- requests ---

func (mp *mapper) openRequest(call string, t canonical.RequestType, detail string, args json.RawMessage, questions json.RawMessage) {
	env := mp.env
	key := "call:" + call
	if i := slices.IndexFunc(mp.st.Open, func(o OpenItem) bool { return o.Key == key }); i >= 0 {
		env.ItemID = mp.st.Open[i].ID
	}
	id := mp.em.IDs().Derived(canonical.EntityRequest, mp.f.Ordinal, 0)
	env.RequestID = id
	env.ProviderRefs.ProviderRequestID = call
	if questions != nil {
		mp.em.Emit(env, &canonical.UserInputRequested{Questions: orEmpty(questions)})
	}
	mp.em.Emit(env, &canonical.RequestOpened{RequestType: t, Detail: detail, Args: orEmpty(args)})
	mp.st.Requests = append(mp.st.Requests, OpenRequest{Call: call, ID: id, Type: t, Item: env.ItemID})
}

// resolveRequest resolves the request gating a call when the call goes on:
// the rollout does not record the answer, only that the call ran.
func (mp *mapper) resolveRequest(call, decision string) {
	i := slices.IndexFunc(mp.st.Requests, func(r OpenRequest) bool { return r.Call == call && call != "" })
	if i < 0 {
		return
	}
	r := mp.st.Requests[i]
	mp.st.Requests = slices.Delete(mp.st.Requests, i, i+1)
	env := mp.env
	env.RequestID, env.ItemID = r.ID, r.Item
	env.ProviderRefs.ProviderRequestID = call
	mp.em.Emit(env, &canonical.RequestResolved{RequestType: r.Type, Decision: decision})
}
