package claudelog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/adapters/claudestream"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Dialect is this adapter's dialect name.
const Dialect = "claude-log"

// MappingVersion is bumped with every change of what the adapter emits.
const MappingVersion = "claude-log/17"

// Source is the raw source of session-log lines.
const Source = "claude.session-log"

// Adapter is the claude-log adapter.
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
	var l line
	if jsonscan.Unmarshal(f.Bytes, &l) != nil || l.Type == "" {
		return nil
	}
	return []string{l.kind()}
}

// NewSession implements adapter.Adapter.
func (Adapter) NewSession(p canonical.Provider) adapter.Session {
	if p == "" {
		p = canonical.ProviderClaude
	}
	return adapter.NewSession(State{Provider: p}, Map)
}

// State is what the adapter remembers between lines.
type State struct {
	// Provider is the provider events are attributed to.
	Provider canonical.Provider `json:"provider"`
	// Clock keeps the frames that carry no time on the provider's time line.
	Clock adapter.Clock `json:"clock,omitzero"`
	// T is the transcript bookkeeping shared with claude-stream.
	T claudestream.Transcript `json:"t"`
	// ClosedTurn and ClosedMsg are the turn a terminal assistant line just
	// ended and that line's message id: further lines of the same message
	// (a final message split over lines) still belong to that turn.
	ClosedTurn string `json:"closedTurn,omitempty"`
	ClosedMsg  string `json:"closedMsg,omitempty"`
	// Side says the open turn was opened by a sidechain line (a prompt, or
	// any line when no turn was open): the log is a sub-agent's own
	// transcript, whose lines are its main line.
	Side bool `json:"side,omitempty"`
	// LocalCommands says the CLI's caveat before local commands came, and
	// no prompt or assistant line since: a <command-name> line is one.
	LocalCommands bool `json:"localCommands,omitempty"`
	// Version and Model are the CLI version and the main conversation's
	// model last reported as the session's configuration. Not T.Model:
	// that one opens each turn, and a log names a turn's model only after
	// the turn opened, so after /model it would stamp the old one on it.
	Version string `json:"version,omitempty"`
	Model   string `json:"model,omitempty"`
	// HookTool and HookEvent are the tool use id and event of the last
	// hook run: a stop_hook_summary names its hooks' commands, not their
	// event (Stop, SubagentStop), and follows their runs.
	HookTool  string `json:"hookTool,omitempty"`
	HookEvent string `json:"hookEvent,omitempty"`
	// Leaf is the uuid of the last message line, and Titles the
	// summaries whose leaf the log has not reached (oldest first, at most
	// maxTitles): a summary names the conversation its leafUuid ends, and
	// the CLI writes those of other conversations into a log too.
	Leaf   string  `json:"leaf,omitempty"`
	Titles []Title `json:"titles,omitempty"`
}

// Title is a summary waiting for the line it titles the conversation of.
type Title struct {
	Leaf    string `json:"leaf"`
	Summary string `json:"summary"`
}

// maxTitles bounds the summaries kept waiting for their leaf: a log that
// opens with summaries of a project's other conversations keeps the
// latest.
const maxTitles = 64

// line is the union of the members of a session-log line the mapping reads.
type line struct {
	Type              string          `json:"type"`
	Subtype           string          `json:"subtype"`
	SessionID         string          `json:"sessionId"`
	UUID              string          `json:"uuid"`
	Timestamp         string          `json:"timestamp"`
	IsSidechain       bool            `json:"isSidechain"`
	IsMeta            bool            `json:"isMeta"`
	IsCompactSummary  bool            `json:"isCompactSummary"`
	IsAPIErrorMessage bool            `json:"isApiErrorMessage"`
	Error             json.RawMessage `json:"error"`
	Message           json.RawMessage `json:"message"`
	ToolUseResult     json.RawMessage `json:"toolUseResult"`
	Data              json.RawMessage `json:"data"`
	ToolUseID         string          `json:"toolUseID"`
	ParentToolUseID   string          `json:"parentToolUseID"`
	Summary           string          `json:"summary"`
	CustomTitle       string          `json:"customTitle"`
	Content           json.RawMessage `json:"content"`
	DurationMs        *int64          `json:"durationMs"`
	CompactMetadata   json.RawMessage `json:"compactMetadata"`
	Level             string          `json:"level"`
	HookErrors        []string        `json:"hookErrors"`
	Prevented         bool            `json:"preventedContinuation"`
	RetryAttempt      int             `json:"retryAttempt"`
	MaxRetries        int             `json:"maxRetries"`
	Snapshot          json.RawMessage `json:"snapshot"`
	IsSnapshotUpdate  bool            `json:"isSnapshotUpdate"`
	Version           string          `json:"version"`
	Cwd               string          `json:"cwd"`
	GitBranch         string          `json:"gitBranch"`
	HookInfos         json.RawMessage `json:"hookInfos"`
	Attachment        json.RawMessage `json:"attachment"`
	LeafUUID          string          `json:"leafUuid"`
	AgentID           string          `json:"agentId"`
}

// time is the provider's time of the line, zero when it has none. A
// file-history snapshot has no timestamp of its own but the snapshot's:
// the time it was taken, within milliseconds of the prompt line that
// follows, and usually a log's first line, before any line that has one.
// An update of a snapshot carries the original's time, minutes back:
// none of its own.
func (l line) time() time.Time {
	if l.Timestamp != "" || l.Type != "file-history-snapshot" || l.IsSnapshotUpdate {
		return adapter.ParseTime(l.Timestamp)
	}
	var snap struct {
		Timestamp string `json:"timestamp"`
	}
	if jsonscan.Unmarshal(l.Snapshot, &snap) != nil {
		return time.Time{}
	}
	return adapter.ParseTime(snap.Timestamp)
}

func (l line) kind() string {
	switch l.Type {
	case "system":
		return "system:" + l.Subtype
	case "progress":
		var d struct {
			Type string `json:"type"`
		}
		_ = jsonscan.Unmarshal(l.Data, &d) // an untyped progress record is plain "progress:"
		return "progress:" + d.Type
	}
	return l.Type
}

var terminalStops = map[string]bool{"end_turn": true, "stop_sequence": true, "max_tokens": true, "refusal": true}

// Map maps one session-log line; it is the adapter's core, a function of
// its input but for one thing: the transcript's maps and slices are
// updated in place, not copied on every line, so the state passed in is
// the returned state's and must not be used again.
func Map(st State, f adapter.Frame) (State, []canonical.Event, error) {
	l, info, ok := scanLine(f.Bytes)
	var err error
	if !ok {
		err = jsonscan.Unmarshal(f.Bytes, &l)
	}
	if err == nil && l.Type == "" {
		err = fmt.Errorf("no type member")
	}
	if err != nil {
		return st, adapter.Undecodable(f, st.Provider, MappingVersion, Source, err), nil
	}
	kind := l.kind()
	raw := canonical.NewRawChecked(Source, "", kind, f.Bytes, info)
	if err := adapter.CheckDepth(f, raw, info); err != nil {
		return st, adapter.Undecodable(f, st.Provider, MappingVersion, Source, err), nil
	}
	em := adapter.NewEmitter(f, st.Provider, MappingVersion, raw)
	em.SetTimeOn(&st.Clock, l.time())
	st.T.SetSession(l.SessionID)
	env := st.T.Envelope(em)
	t := &st.T
	before := t.Turn
	t.Agent = ""
	if l.IsSidechain {
		t.Agent = l.AgentID
	}
	switch l.Type {
	case "user":
		st.ClosedTurn, st.ClosedMsg = "", ""
		m, err := claudestream.DecodeMessage(l.Message)
		if err != nil {
			em.Fail(env, canonical.ErrorClassValidation, "user message could not be decoded: "+err.Error(), nil)
			break
		}
		blocks, _, berr := m.Blocks()
		text := onlyText(blocks, berr, l)
		if kind := localCommandLine(text, l, st.LocalCommands); kind != notLocal {
			// Written as user lines before the CLI wrote system:local_command
			// lines; mapped alike. The user is back at the prompt: an open
			// turn ended (older logs write no stop reason), and none opens.
			if t.Turn != "" {
				env = closeTurn(em, t, env, canonical.TurnStateCompleted, "", "")
			}
			st.LocalCommands = true
			if kind == localCaveat {
				t.User(em, env, m, claudestream.UserOptions{UUID: l.UUID, Meta: true, Outside: true})
			} else {
				claudestream.LocalCommand(em, env, text)
			}
			break
		}
		st.LocalCommands = false
		if isInterruption(text, l) {
			// The CLI's record that the user stopped the turn: it ends the
			// open turn, interrupted, and opens none (after a turn that
			// ended, it belongs to no turn). The marker's words are the
			// turn's reason, so failure reports tell a stop during a tool
			// call from one during the answer, as Codex's reasons do.
			open := t.Turn != ""
			t.User(em, env, m, claudestream.UserOptions{UUID: l.UUID, Meta: true, Outside: true})
			if open {
				closeTurn(em, t, env, canonical.TurnStateInterrupted, strings.Trim(text, "[]"), "")
			}
			break
		}
		prompt := isPrompt(blocks, berr, l) && (!l.IsSidechain || t.Turn == "")
		if prompt && t.Turn != "" {
			// A new prompt while a turn is open: older logs write no stop
			// reason, so the next prompt is where the previous turn ends.
			env = closeTurn(em, t, env, canonical.TurnStateCompleted, "", "")
		}
		// A sidechain prompt is what the launching conversation asked its
		// sub-agent, and a task notification what the CLI tells the model
		// of a background run's end (it starts a turn, as a prompt does):
		// neither is what the user wrote, so both are injected, as isMeta
		// text is.
		injected := l.IsMeta || (prompt && l.IsSidechain) || isNotification(text)
		t.User(em, env, m, claudestream.UserOptions{UUID: l.UUID, Prompt: prompt, Meta: injected, Compaction: l.IsCompactSummary, ToolUseResult: l.ToolUseResult})
	case "assistant":
		mapAssistant(em, &st, env, l)
	case "summary":
		mapSummary(em, &st, env, l, f.Bytes)
	case "custom-title":
		em.Emit(env, &canonical.ThreadMetadataUpdated{Name: l.CustomTitle})
	case "system":
		mapSystem(em, &st, env, l, f.Bytes)
	case "progress":
		mapProgress(em, &st, env, l, kind)
	case "attachment":
		if !mapHookAttachment(em, env, l) {
			em.Emit(env, &canonical.ThreadMetadataUpdated{Metadata: map[string]json.RawMessage{metadataKey(l): json.RawMessage(f.Bytes)}})
		}
	case "file-history-snapshot", "queue-operation", "last-prompt", "agent-name", "tag", "pr-link", "worktree-state":
		// Bookkeeping the CLI keeps beside the conversation (rewind
		// snapshots, the input queue, the resume pointer, context
		// attachments): thread metadata, the record in raw.
		em.Emit(env, &canonical.ThreadMetadataUpdated{Metadata: map[string]json.RawMessage{metadataKey(l): json.RawMessage(f.Bytes)}})
	default:
		adapter.Unmapped(em, env, kind)
	}
	message := l.Type == "user" || l.Type == "assistant"
	if message && t.Turn != "" && t.Turn != before {
		// The line that opened the turn says whose it is: a prompt, or
		// any line when none was open (a sub-agent's own transcript may
		// open with hook context or a compaction's instructions, which
		// are no prompt; taken for a sub-agent inside another turn, its
		// usage would not be its turn's).
		st.Side = l.IsSidechain
	}
	if message && l.Version != "" && l.Version != st.Version {
		// The log states no configuration of its own; its lines name the
		// CLI that wrote them (the session's version, for the drift radar).
		// Last, so that the line's other events keep their ids.
		st.Version = l.Version
		cfg := map[string]json.RawMessage{"claude_code_version": jsonString(l.Version)}
		if l.Cwd != "" {
			cfg["cwd"] = jsonString(l.Cwd)
		}
		if l.GitBranch != "" {
			cfg["gitBranch"] = jsonString(l.GitBranch)
		}
		em.Emit(env, &canonical.SessionConfigured{Config: cfg})
	}
	if message && l.UUID != "" {
		st.Leaf = l.UUID
		if i := slices.IndexFunc(st.Titles, func(t Title) bool { return t.Leaf == l.UUID }); i >= 0 {
			// The conversation a summary titles goes on in this log.
			// Last, so that the line's other events keep their ids.
			em.Emit(st.T.Envelope(em), &canonical.ThreadMetadataUpdated{Name: st.Titles[i].Summary})
			st.Titles = slices.Delete(st.Titles, i, i+1)
		}
	}
	return st, em.Events(), nil
}

// metadataKey is the thread metadata key of a bookkeeping line: its type,
// or for a sub-agent's line (its own transcript's) the type under the
// run's id. The run shares the thread; keyed apart, its records do not
// take the place of the conversation's own, whichever log is read first.
func metadataKey(l line) string {
	if l.IsSidechain && l.AgentID != "" {
		return "agent " + l.AgentID + " " + l.Type
	}
	return l.Type
}

// mapSummary maps a summary line: the title of the conversation that ends
// at its leafUuid. That is this log's thread when the leaf is the line
// before it, and when a later line is the leaf (a resumed conversation
// copied into the log); the CLI also writes summaries of a project's
// other conversations into a log, which title nothing here. Until its
// leaf comes, the summary is thread metadata, the record in raw.
func mapSummary(em *adapter.Emitter, st *State, env canonical.Event, l line, frame []byte) {
	if l.LeafUUID == "" || l.LeafUUID == st.Leaf {
		em.Emit(env, &canonical.ThreadMetadataUpdated{Name: l.Summary})
		return
	}
	em.Emit(env, &canonical.ThreadMetadataUpdated{Metadata: map[string]json.RawMessage{l.Type: json.RawMessage(frame)}})
	st.Titles = slices.DeleteFunc(st.Titles, func(t Title) bool { return t.Leaf == l.LeafUUID })
	if len(st.Titles) == maxTitles {
		st.Titles = slices.Delete(st.Titles, 0, 1)
	}
	st.Titles = append(st.Titles, Title{Leaf: l.LeafUUID, Summary: l.Summary})
}

// isPrompt says whether a user line is a user input: text, not a tool
// result, not text the CLI injected. blocks are its content, read once
// for all the checks (err when they could not be).
func isPrompt(blocks []claudestream.Block, err error, l line) bool {
	if l.IsMeta || l.IsCompactSummary {
		return false
	}
	if err != nil || len(blocks) == 0 {
		return false
	}
	for _, b := range blocks {
		if b.Type == "tool_result" {
			return false
		}
	}
	return true
}

// isNotification says whether a user line is the CLI's notice that a
// background run (a sub-agent, a shell command) ended. 2.1.197 names it in
// origin.kind too; every CLI opens its text with the tag.
func isNotification(text string) bool {
	return strings.HasPrefix(text, "<task-notification>")
}

// isInterruption says whether a main-line user line is the marker the CLI
// writes when the user interrupts a turn ("[Request interrupted by user]",
// "... for tool use]"): text the user did not type, which older logs
// give no isMeta.
func isInterruption(text string, l line) bool {
	if l.IsMeta {
		return false
	}
	return strings.HasPrefix(text, "[Request interrupted by user") && strings.HasSuffix(text, "]")
}

// onlyText is the text of a main-line user message that is one text block
// (or a string), else "": what a marker or a local command's line is.
func onlyText(blocks []claudestream.Block, err error, l line) string {
	if l.IsSidechain || err != nil || len(blocks) != 1 || blocks[0].Type != "text" {
		return ""
	}
	return blocks[0].Text
}

type localLine int

const (
	notLocal localLine = iota
	localCaveat
	localCommandName
	localOutput
)

// localCommandLine says which part of a local slash command (/clear,
// /model, /mcp: run by the CLI, not the model) a main-line user line is,
// as CLI versions before system:local_command wrote them: the caveat the
// CLI puts first (isMeta), the command (<command-name>, only after that
// caveat: a prompt command such as /init writes one too, and is a prompt)
// and its output (<local-command-stdout>).
func localCommandLine(text string, l line, afterCaveat bool) localLine {
	switch {
	case l.IsMeta:
		if strings.HasPrefix(text, "<local-command-caveat>") ||
			strings.HasPrefix(text, "Caveat: The messages below were generated by the user while running local commands") {
			return localCaveat
		}
	case strings.HasPrefix(text, "<local-command-stdout>"), strings.HasPrefix(text, "<local-command-stderr>"):
		return localOutput
	case afterCaveat && strings.HasPrefix(text, "<command-name>"):
		return localCommandName
	}
	return notLocal
}

func mapAssistant(em *adapter.Emitter, st *State, env canonical.Event, l line) {
	t := &st.T
	st.LocalCommands = false
	m, err := claudestream.DecodeMessage(l.Message)
	if err != nil {
		em.Fail(env, canonical.ErrorClassValidation, "assistant message could not be decoded: "+err.Error(), nil)
		return
	}
	code := ""
	if len(l.Error) > 0 {
		_ = jsonscan.Unmarshal(l.Error, &code) // an error object keeps code empty; isApiErrorMessage still marks it
		if code == "" {
			code = "error"
		}
	}
	failed := l.IsAPIErrorMessage || code != ""
	side := l.IsSidechain && !st.Side
	opts := claudestream.AssistantOptions{Failed: failed, ErrorCode: code, FinalUsage: true}
	if t.Turn == "" && st.ClosedMsg != "" && m.ID == st.ClosedMsg {
		// Another line of the message that ended the turn.
		t.Turn = st.ClosedTurn
		env.TurnID = t.Turn
		t.Assistant(em, env, m, opts)
		t.Turn = ""
		return
	}
	st.ClosedTurn, st.ClosedMsg = "", ""
	if side && t.Turn != "" {
		// Sub-agent lines run inside the main turn (CLIs before 2.0 wrote
		// them into the main log; later ones write each sub-agent's own
		// file). Their usage is in the turn's breakdown by model, not in
		// its usage, as the stream's result counts them: left out, the
		// sub-agents' spend was missing from the ledger.
		opts.SubAgent, opts.ReportUsage = true, true
		t.Assistant(em, env, m, opts)
		return
	}
	ends := !side && m.StopReason != nil && terminalStops[*m.StopReason]
	// The turn's usage so far: a log cut off before the turn ends never
	// states it otherwise.
	opts.ReportUsage = !side && !ends
	t.Assistant(em, env, m, opts)
	if !side && m.Model != "" && !strings.HasPrefix(m.Model, "<") && m.Model != st.Model {
		// The main conversation's model, as a stream's init states it:
		// the session's, and the open turn's when nothing named it.
		st.Model = m.Model
		e := env
		e.TurnID = t.Turn
		// Last, so that the line's other events keep their ids.
		defer em.Emit(e, &canonical.SessionConfigured{Config: map[string]json.RawMessage{"model": jsonString(m.Model)}})
	}
	if !ends {
		return
	}
	env = t.Envelope(em)
	state, msg := canonical.TurnStateCompleted, ""
	if failed {
		state, msg = canonical.TurnStateFailed, claudestream.ResultText(m.Content)
		msg = firstNonEmpty(msg, code, "API error")
		em.Fail(env, canonical.ErrorClassProvider, msg, map[string]any{"error": code})
	}
	st.ClosedTurn, st.ClosedMsg = t.Turn, m.ID
	closeTurn(em, t, env, state, msg, *m.StopReason)
}

// closeTurn ends the open turn with the usage of its distinct messages:
// a session log has no result, so usage is summed, each message once.
func closeTurn(em *adapter.Emitter, t *claudestream.Transcript, env canonical.Event, state canonical.TurnState, msg, stop string) canonical.Event {
	p := &canonical.TurnCompleted{State: state, ErrorMessage: msg, StopReason: stop}
	if len(t.Usage) > 0 {
		u, models := t.TurnUsage()
		p.Usage, p.ModelUsage = &u, models
	}
	return t.CloseTurn(em, env, p)
}

func mapSystem(em *adapter.Emitter, st *State, env canonical.Event, l line, raw []byte) {
	t := &st.T
	content := claudestream.ResultText(l.Content)
	switch l.Subtype {
	case "compact_boundary":
		em.Emit(env, &canonical.ThreadStateChanged{State: canonical.ThreadStateCompacted, Detail: nullable(l.CompactMetadata)})
	case "turn_duration":
		if t.Turn != "" {
			env = t.EnsureTurn(em, env)
			p := &canonical.TurnCompleted{State: canonical.TurnStateCompleted, DurationMs: l.DurationMs}
			if len(t.Usage) > 0 {
				u, models := t.TurnUsage()
				p.Usage, p.ModelUsage = &u, models
			}
			t.CloseTurn(em, env, p)
			return
		}
		env.TurnID = st.ClosedTurn
		em.Emit(env, &canonical.ThreadMetadataUpdated{Metadata: map[string]json.RawMessage{"turnDuration": json.RawMessage(raw)}})
	case "stop_hook_summary":
		mapStopHooks(em, st, env, l)
	case "api_error":
		em.Warn(env, fmt.Sprintf("API request failed, retrying: attempt %d of %d", l.RetryAttempt, l.MaxRetries), json.RawMessage(raw))
	case "local_command":
		claudestream.LocalCommand(em, env, content)
	case "informational":
		if l.Level == "warning" || l.Level == "error" {
			em.Warn(env, firstNonEmpty(content, "warning"), json.RawMessage(raw))
			return
		}
		em.Emit(env, &canonical.SessionStateChanged{State: canonical.SessionStateRunning, Reason: "informational", Detail: content})
	default:
		adapter.Unmapped(em, env, "system:"+l.Subtype)
	}
}

func mapProgress(em *adapter.Emitter, st *State, env canonical.Event, l line, kind string) {
	var d struct {
		Type      string   `json:"type"`
		HookEvent string   `json:"hookEvent"`
		HookName  string   `json:"hookName"`
		Command   string   `json:"command"`
		Output    string   `json:"output"`
		Elapsed   *float64 `json:"elapsedTimeSeconds"`
		TaskDesc  string   `json:"taskDescription"`
	}
	_ = jsonscan.Unmarshal(l.Data, &d) // every member is optional
	if d.Type == "hook_progress" {
		// The line the CLI writes as it runs a hook: one per command, all
		// of an event's commands (and a tool's PreToolUse and PostToolUse
		// hooks) under one toolUseID, so the run's id is derived from all
		// three. Only Stop hooks are reported as ended (stop_hook_summary).
		id := firstNonEmpty(l.UUID, em.IDs().Derived(canonical.EntityEvent, em.Frame().Ordinal, 99))
		if l.ToolUseID != "" {
			id = hookRun(em, l.ToolUseID, d.HookEvent, d.Command)
		}
		st.HookTool, st.HookEvent = l.ToolUseID, d.HookEvent
		em.Emit(env, &canonical.HookStarted{HookID: id, HookName: firstNonEmpty(d.HookName, d.HookEvent, "hook"), HookEvent: firstNonEmpty(d.HookEvent, "unknown"), Command: d.Command})
		return
	}
	tool := firstNonEmpty(l.ParentToolUseID, l.ToolUseID)
	p := &canonical.ToolProgress{ToolUseID: tool, Summary: firstNonEmpty(d.TaskDesc, d.Type, kind)}
	p.ElapsedSeconds = adapter.Measured(d.Elapsed)
	em.Emit(env, p)
}

// hookRun is the id of the run of command for event under a tool use id.
func hookRun(em *adapter.Emitter, toolUseID, event, command string) string {
	return em.IDs().Native(canonical.EntityHook, toolUseID, event, command)
}

// mapStopHooks ends each hook run a stop_hook_summary lists. Its errors
// are strings: one that names a hook's command is that hook's; one that
// names none is charged to every hook without one of its own, as the log
// does not say which failed (with one hook, that one).
func mapStopHooks(em *adapter.Emitter, st *State, env canonical.Event, l line) {
	var infos []struct {
		Command    string `json:"command"`
		DurationMs *int64 `json:"durationMs"`
	}
	_ = jsonscan.Unmarshal(l.HookInfos, &infos) // absent or unreadable: the summary's outcome alone
	if len(infos) == 0 || l.ToolUseID == "" {
		out := canonical.HookOutcomeSuccess
		if len(l.HookErrors) > 0 {
			out = canonical.HookOutcomeError
		}
		id := firstNonEmpty(l.ToolUseID, em.IDs().Derived(canonical.EntityEvent, em.Frame().Ordinal, 99))
		em.Emit(env, &canonical.HookCompleted{HookID: id, Outcome: out, Output: joinLines(l.HookErrors)})
		return
	}
	event := "Stop"
	if st.HookTool == l.ToolUseID && st.HookEvent != "" {
		event = st.HookEvent
	}
	named := make([][]string, len(infos))
	var unnamed []string
	for _, e := range l.HookErrors {
		found := false
		for i, h := range infos {
			if h.Command != "" && strings.Contains(e, h.Command) {
				named[i], found = append(named[i], e), true
			}
		}
		if !found {
			unnamed = append(unnamed, e)
		}
	}
	for i, h := range infos {
		errs := named[i]
		if len(errs) == 0 {
			errs = unnamed
		}
		p := &canonical.HookCompleted{HookID: hookRun(em, l.ToolUseID, event, h.Command), Outcome: canonical.HookOutcomeSuccess, DurationMs: adapter.Measured(h.DurationMs)}
		if len(errs) > 0 {
			p.Outcome, p.Output = canonical.HookOutcomeError, joinLines(errs)
		}
		em.Emit(env, p)
	}
}

// hookEnds are the attachments a CLI writes when a hook run ends, and the
// outcome each says.
var hookEnds = map[string]canonical.HookOutcome{
	"hook_success":                canonical.HookOutcomeSuccess,
	"hook_non_blocking_error":     canonical.HookOutcomeError,
	"hook_blocking_error":         canonical.HookOutcomeError,
	"hook_error_during_execution": canonical.HookOutcomeError,
	"hook_cancelled":              canonical.HookOutcomeCancelled,
}

// mapHookAttachment ends the hook run an attachment reports, by the id its
// hook_progress line started it under, and says whether it was one. Newer
// CLIs attach a hook's end (its outcome, output and exit code); the other
// attachments (context a hook added, skill listings, ...) are metadata.
func mapHookAttachment(em *adapter.Emitter, env canonical.Event, l line) bool {
	var a struct {
		Type          string          `json:"type"`
		HookName      string          `json:"hookName"`
		HookEvent     string          `json:"hookEvent"`
		ToolUseID     string          `json:"toolUseID"`
		Command       string          `json:"command"`
		Content       json.RawMessage `json:"content"`
		Stdout        string          `json:"stdout"`
		Stderr        string          `json:"stderr"`
		ExitCode      *int            `json:"exitCode"`
		DurationMs    *int64          `json:"durationMs"`
		BlockingError json.RawMessage `json:"blockingError"`
	}
	if jsonscan.Unmarshal(l.Attachment, &a) != nil {
		return false
	}
	outcome, ok := hookEnds[a.Type]
	tool := firstNonEmpty(a.ToolUseID, l.ToolUseID)
	if !ok || tool == "" {
		return false
	}
	p := &canonical.HookCompleted{Outcome: outcome, Stdout: a.Stdout, Stderr: a.Stderr, ExitCode: a.ExitCode, DurationMs: adapter.Measured(a.DurationMs)}
	// A blocking error is the reason the hook gave, with its command: a
	// string in some versions, {blockingError, command} in others.
	var blocked struct {
		BlockingError string `json:"blockingError"`
		Command       string `json:"command"`
	}
	if jsonscan.Unmarshal(a.BlockingError, &blocked.BlockingError) != nil {
		_ = jsonscan.Unmarshal(a.BlockingError, &blocked) // neither: no reason stated
	}
	var content string // text, or lines of it in some attachments: those stay in raw
	_ = jsonscan.Unmarshal(a.Content, &content)
	p.Output = firstNonEmpty(blocked.BlockingError, content)
	event, _, _ := strings.Cut(a.HookName, ":")
	p.HookID = hookRun(em, tool, firstNonEmpty(a.HookEvent, event), firstNonEmpty(a.Command, blocked.Command))
	em.Emit(env, p)
	return true
}

func nullable(r json.RawMessage) json.RawMessage {
	if len(r) == 0 || string(r) == "null" {
		return nil
	}
	return r
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s) //nolint:errchkjson // a string always encodes
	return b
}

func joinLines(s []string) string { return strings.Join(s, "\n") }

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// SessionProvider implements adapter.ProviderState.
func (st State) SessionProvider() canonical.Provider { return st.Provider }
