package project

import (
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentwire/agentwire/pkg/canonical"
)

// Patches are keyed by session too: a thread, turn or item with a native
// id can be seen by several sessions (a Codex app-server tap and the
// rollout log), and each session's view is written on its own (see
// crossSession).
//
// A batch's events are folded in memory into one patch per touched row
// (session, thread, turn, item, request, task, hook, unmapped kind); the
// patches are then written table by table (sql.go). A patch's nil fields
// leave the row's value alone; content deltas of an item are concatenated
// in a builder, so a batch of n deltas costs O(total text), not O(n²).

type key struct{ tenant, id string }

type key3 struct{ tenant, session, id string }

type sessionPatch struct {
	provider             string
	state, stateReason   *string
	model, cliVersion    *string
	config               map[string]json.RawMessage
	startedAt, endedAt   *time.Time
	exitKind, exitReason *string
	exitCode             *int
	first, last          time.Time
	count                int64
	// dialect is what the session's frames were mapped from (the part of
	// the mapping version before its slash).
	dialect *string
}

type threadPatch struct {
	session, provider string
	providerThreadID  *string
	state, name       *string
	metadata          map[string]json.RawMessage
	usage             *canonical.TokenUsage
	contextWindow     *int64
	startedAt         *time.Time
	updatedAt         time.Time
	// preview is the start of the first thing the user said in the
	// thread (previewRunes at most): what it is about, when the provider
	// names it not.
	preview *string
}

// ranked is the higher ranked of the state cur (nil: none yet) and v in
// ranks (turnStates, itemStatuses), ties going to the greater text: what
// the table keeps of the states sessions report (kindRank), a batch must
// keep of its events' states, or the row would depend on where batches
// end. A Codex turn interrupted is turn.aborted then turn.completed
// {interrupted}: in one batch it was interrupted, in two aborted.
func ranked(cur *string, v string, ranks []string) *string {
	if cur == nil {
		return &v
	}
	rc, rv := slices.Index(ranks, *cur), slices.Index(ranks, v)
	if rv > rc || (rv == rc && v > *cur) {
		return &v
	}
	return cur
}

// greatestUsage is the greatest of each count in a and b (a may be nil).
// A thread's usage column holds the greatest count any event reported
// (threadCols), so a batch must write the greatest of its events, not
// the last: a running count that went down (a resumed Codex process
// counting from 0 again, the total of a Claude result) otherwise made the
// row depend on where batches ended, which differs after a restart.
func greatestUsage(a *canonical.TokenUsage, b canonical.TokenUsage) canonical.TokenUsage {
	if a == nil {
		return b
	}
	return canonical.TokenUsage{
		InputTokens:           max(a.InputTokens, b.InputTokens),
		CachedInputTokens:     max(a.CachedInputTokens, b.CachedInputTokens),
		CacheWriteInputTokens: max(a.CacheWriteInputTokens, b.CacheWriteInputTokens),
		OutputTokens:          max(a.OutputTokens, b.OutputTokens),
		ReasoningOutputTokens: max(a.ReasoningOutputTokens, b.ReasoningOutputTokens),
	}
}

// prompted notes the user's message p of event e in its thread's
// preview, when it is the thread's first: a top-level user_message the
// CLI did not inject.
func (w *writes) prompted(e *canonical.Event, p *canonical.ItemLifecycle) {
	if p.ItemType != canonical.ItemTypeUserMessage || p.Title != "" || p.ParentItemID != "" || e.ThreadID == "" {
		return
	}
	t := w.thread(e)
	if t.preview != nil {
		return // the batch's first prompt is the one kept
	}
	if text := request(p.Content[canonical.StreamUnknown]); text != "" {
		t.preview = new(firstRunes(text, previewRunes))
	}
}

type turnPatch struct {
	session, provider        string
	thread                   *string
	state, model, effort     *string
	started, ended           stamp
	stopReason               *string
	errorMessage, errorClass *string
	usage                    *canonical.TokenUsage
	cost                     *float64
	durationMs               *int64
	plan                     json.RawMessage
	planExplanation          *string
	diff                     *string
	updatedAt                time.Time
	// providerTurn is the provider's turn id (Claude's: its first
	// message's), by which the views count a turn two sessions describe
	// under two ids once.
	providerTurn *string
	// agent is the sub-agent run the turn belongs to (TurnStarted.AgentID):
	// usage_counted leaves its ledger rows out where the launching turn's
	// counted rows include the run's.
	agent *string
	// counted says the turn's end in this batch stated its own usage,
	// which no report of the usage so far replaces (turns.usage_final).
	counted bool
}

// usageFinal is the value of turns.usage_final: NULL without a usage.
func (t *turnPatch) usageFinal() *bool {
	switch {
	case t.usage == nil:
		return nil
	case t.counted:
		return &yes
	}
	return &no
}

// numStreams is the number of text columns of an item, one per StreamKind.
const numStreams = 7

type itemPatch struct {
	session, provider         string
	thread, turn              *string
	itemType, status, title   *string
	detail, toolName, command *string
	exitCode                  *int
	durationMs                *int64
	byUser                    *bool
	files                     []string
	parent                    *string
	// content is the last lifecycle content of a stream, which replaces
	// its column; text its deltas since (all of them, if none). An item
	// that stays open keeps the deltas as a part of its text, whether they
	// followed content in the same batch or not (sql.go). late holds the
	// deltas that came after the item completed in this batch: kept as a
	// part, as they would be had the batch been cut after the completion,
	// until a later completion folds them in.
	content            [numStreams]*string
	text, late         [numStreams]*strings.Builder
	started, completed stamp
	updatedAt          time.Time
}

type requestPatch struct {
	session, provider   string
	thread, turn, item  *string
	requestType, detail *string
	args, resolution    json.RawMessage
	opened, resolved    stamp
	decision            *string
}

type taskPatch struct {
	provider                  string
	thread, turn              *string
	description, taskType     *string
	status, summary, lastTool *string
	usage                     json.RawMessage
	startedAt, completedAt    *time.Time
	updatedAt                 time.Time
}

type hookPatch struct {
	provider               string
	turn                   *string
	name, event, outcome   *string
	command                *string
	output, stdout, stderr *string
	exitCode               *int
	durationMs             *int64
	started, completed     stamp
}

// stamp is one end of a span: its time, and whether that is only when
// ingest read a log written earlier (canonical.Event.CreatedAtIngested),
// which makes the span no duration. One value, so that the two are set,
// and merged, together.
type stamp struct {
	at       *time.Time
	ingested bool
}

func stampOf(e *canonical.Event) stamp {
	return stamp{at: new(e.CreatedAt), ingested: e.CreatedAtIngested}
}

var yes, no = true, false

// flag is the value of the time's _ingested column: NULL without a time.
func (s stamp) flag() *bool {
	switch {
	case s.at == nil:
		return nil
	case s.ingested:
		return &yes
	}
	return &no
}

type rateRow struct {
	tenant, event, window, session, provider string
	at                                       time.Time
	usedPercent                              *float64
	windowMinutes                            *int64
	resetsAt                                 *time.Time
	status                                   *string
	snapshot                                 json.RawMessage
}

type ledgerRow struct {
	tenant, turn, model, provider, session string
	thread                                 *string
	// providerTurn is the provider's turn id: rows of two sessions with
	// the same one in the same thread are one turn (upsertLedger).
	providerTurn string
	at           time.Time
	usage        canonical.TokenUsage
	cost         *float64
	// turnModel and sessionModel are the models this batch stated of the
	// row's turn and session before the count, for a count that names
	// none (ledgerSource).
	turnModel, sessionModel *string
}

type ledgerKey struct{ tenant, session, turn, model string }

type unmappedKey struct{ tenant, provider, session, dialect, kind string }

type unmappedPatch struct {
	count       int64
	first, last time.Time
}

// writes is everything a batch changes, folded.
type writes struct {
	sessions map[key]*sessionPatch
	threads  map[key3]*threadPatch
	turns    map[key3]*turnPatch
	items    map[key3]*itemPatch
	requests map[key3]*requestPatch
	tasks    map[key3]*taskPatch
	hooks    map[key3]*hookPatch
	rates    []rateRow
	ledger   map[ledgerKey]*ledgerRow
	// soFar holds the usage of turns not ended, per session's turn: the
	// rows of its last report, written as provisional ledger rows.
	soFar    map[key3][]ledgerRow
	unmapped map[unmappedKey]*unmappedPatch
}

func newWrites() *writes {
	return &writes{
		sessions: map[key]*sessionPatch{}, threads: map[key3]*threadPatch{}, turns: map[key3]*turnPatch{},
		items: map[key3]*itemPatch{}, requests: map[key3]*requestPatch{}, tasks: map[key3]*taskPatch{},
		hooks: map[key3]*hookPatch{}, ledger: map[ledgerKey]*ledgerRow{}, soFar: map[key3][]ledgerRow{}, unmapped: map[unmappedKey]*unmappedPatch{},
	}
}

// later is the later of two times: updated_at is the latest event time
// seen, whatever the batch boundaries.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// str returns nil for "", so that an absent value leaves the column alone.
func str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func streamIndex(k canonical.StreamKind) int {
	switch k {
	case canonical.StreamAssistantText:
		return 0
	case canonical.StreamReasoningText:
		return 1
	case canonical.StreamReasoningSummaryText:
		return 2
	case canonical.StreamPlanText:
		return 3
	case canonical.StreamCommandOutput:
		return 4
	case canonical.StreamFileChangeOutput:
		return 5
	case canonical.StreamUnknown:
		return 6
	}
	return 6
}

func (w *writes) session(e *canonical.Event) *sessionPatch {
	k := key{e.Tenant, e.SessionID}
	s := w.sessions[k]
	if s == nil {
		s = &sessionPatch{provider: string(e.Provider), first: e.CreatedAt, last: e.CreatedAt}
		w.sessions[k] = s
	}
	return s
}

func (w *writes) thread(e *canonical.Event) *threadPatch {
	k := key3{e.Tenant, e.SessionID, e.ThreadID}
	t := w.threads[k]
	if t == nil {
		t = &threadPatch{session: e.SessionID, provider: string(e.Provider)}
		w.threads[k] = t
	}
	t.updatedAt = later(t.updatedAt, e.CreatedAt)
	return t
}

func (w *writes) turn(e *canonical.Event) *turnPatch {
	k := key3{e.Tenant, e.SessionID, e.TurnID}
	t := w.turns[k]
	if t == nil {
		t = &turnPatch{session: e.SessionID, provider: string(e.Provider)}
		w.turns[k] = t
	}
	if e.ThreadID != "" {
		t.thread = new(e.ThreadID)
	}
	t.updatedAt = later(t.updatedAt, e.CreatedAt)
	return t
}

func (w *writes) item(e *canonical.Event) *itemPatch {
	k := key3{e.Tenant, e.SessionID, e.ItemID}
	it := w.items[k]
	if it == nil {
		it = &itemPatch{session: e.SessionID, provider: string(e.Provider), started: stampOf(e)}
		w.items[k] = it
	}
	if e.ThreadID != "" {
		it.thread = new(e.ThreadID)
	}
	if e.TurnID != "" {
		it.turn = new(e.TurnID)
	}
	it.updatedAt = later(it.updatedAt, e.CreatedAt)
	return it
}

func (w *writes) request(e *canonical.Event) *requestPatch {
	k := key3{e.Tenant, e.SessionID, e.RequestID}
	r := w.requests[k]
	if r == nil {
		r = &requestPatch{session: e.SessionID, provider: string(e.Provider)}
		w.requests[k] = r
	}
	if e.ThreadID != "" {
		r.thread = new(e.ThreadID)
	}
	if e.TurnID != "" {
		r.turn = new(e.TurnID)
	}
	if e.ItemID != "" {
		r.item = new(e.ItemID)
	}
	return r
}

func (w *writes) task(e *canonical.Event, id string) *taskPatch {
	k := key3{e.Tenant, e.SessionID, id}
	t := w.tasks[k]
	if t == nil {
		t = &taskPatch{provider: string(e.Provider)}
		w.tasks[k] = t
	}
	if e.ThreadID != "" {
		t.thread = new(e.ThreadID)
	}
	if e.TurnID != "" {
		t.turn = new(e.TurnID)
	}
	t.updatedAt = later(t.updatedAt, e.CreatedAt)
	return t
}

func (w *writes) hook(e *canonical.Event, id string) *hookPatch {
	k := key3{e.Tenant, e.SessionID, id}
	h := w.hooks[k]
	if h == nil {
		h = &hookPatch{provider: string(e.Provider)}
		w.hooks[k] = h
	}
	if e.TurnID != "" {
		h.turn = new(e.TurnID)
	}
	return h
}

// lifecycle folds an item.started/updated/completed payload.
func (it *itemPatch) lifecycle(p *canonical.ItemLifecycle) {
	if p.ItemType != "" {
		it.itemType = new(string(p.ItemType))
	}
	if p.Status != "" {
		it.status = ranked(it.status, string(p.Status), itemStatuses)
	}
	it.title, it.detail, it.toolName = orKeep(it.title, p.Title), orKeep(it.detail, p.Detail), orKeep(it.toolName, p.ToolName)
	it.command, it.parent = orKeep(it.command, p.Command), orKeep(it.parent, p.ParentItemID)
	it.exitCode, it.durationMs = orKeepCopy(it.exitCode, p.ExitCode), orKeepCopy(it.durationMs, p.DurationMs)
	if p.ByUser {
		// Only ever said, never unsaid: an event that does not say
		// leaves it.
		it.byUser = new(true)
	}
	if p.Files != nil {
		it.files = p.Files
	}
	for k, v := range p.Content {
		i := streamIndex(k)
		it.content[i], it.text[i], it.late[i] = &v, nil, nil
	}
}

func (it *itemPatch) appendText(k canonical.StreamKind, s string) {
	if i := streamIndex(k); it.completed.at != nil {
		extend(&it.late[i], s)
	} else {
		extend(&it.text[i], s)
	}
}

// extend appends s to the text b holds, made on first use.
func extend(b **strings.Builder, s string) {
	if *b == nil {
		*b = &strings.Builder{}
	}
	_, _ = (*b).WriteString(s)
}

// completes folds an item.completed in: the deltas that came late, after
// an earlier completion in this batch, join the text it completes.
func (it *itemPatch) completes(p *canonical.ItemCompleted, at stamp) {
	for i, l := range it.late {
		if l != nil {
			extend(&it.text[i], l.String())
			it.late[i] = nil
		}
	}
	if p.Status == "" {
		it.status = ranked(it.status, string(canonical.ItemStatusCompleted), itemStatuses)
	}
	it.lifecycle((*canonical.ItemLifecycle)(p))
	it.completed = at
}

var userAgentVersion = regexp.MustCompile(`^[^/\s]+/([0-9][^\s]*)`)

// cliVersion finds the agent CLI's version in a session configuration:
// Claude's claude_code_version, Codex rollout's cli_version, an ACP
// agentInfo.version, or the version in Codex's user agent.
func cliVersion(cfg map[string]json.RawMessage) string {
	for _, k := range []string{"claude_code_version", "cli_version", "cliVersion", "version"} {
		var s string
		if json.Unmarshal(cfg[k], &s) == nil && s != "" {
			return s
		}
	}
	var info struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(cfg["agentInfo"], &info) == nil && info.Version != "" {
		return info.Version
	}
	var ua string
	if json.Unmarshal(cfg["userAgent"], &ua) == nil {
		if m := userAgentVersion.FindStringSubmatch(ua); m != nil {
			return m[1]
		}
	}
	return ""
}

// dialectOf is the dialect a mapping version names ("codex-exec/7"), or
// nil for the diagnostic frames ingest adds to every dialect's sessions
// (adapter.DiagnosticVersion) and for a version without one.
func dialectOf(mappingVersion string) *string {
	d, _, ok := strings.Cut(mappingVersion, "/")
	if !ok || d == "" || strings.HasPrefix(d, "agentwire-") {
		return nil
	}
	return &d
}

// fold applies one event to the batch's patches. Every payload type is a
// case and there is no default: a new payload type fails lint here.
func (w *writes) fold(e *canonical.Event) {
	s := w.session(e)
	s.count++
	if s.dialect == nil {
		s.dialect = dialectOf(e.MappingVersion)
	}
	if e.CreatedAt.Before(s.first) {
		s.first = e.CreatedAt
	}
	if e.CreatedAt.After(s.last) {
		s.last = e.CreatedAt
	}
	if e.ThreadID != "" {
		w.thread(e)
	}
	if e.TurnID != "" {
		w.turn(e)
	}
	at := e.CreatedAt
	switch p := e.Payload.(type) {
	case *canonical.SessionStarted:
		if s.startedAt == nil {
			s.startedAt = new(at)
		}
	case *canonical.SessionConfigured:
		if s.config == nil {
			s.config = map[string]json.RawMessage{}
		}
		maps.Copy(s.config, p.Config)
		var model string
		if json.Unmarshal(p.Config["model"], &model) == nil && model != "" {
			s.model = &model
			// A turn's own settings (Codex writes turn_context after the
			// turn started) name the turn's model when turn.started did
			// not.
			if e.TurnID != "" {
				if t := w.turn(e); t.model == nil {
					t.model = &model
				}
			}
		}
		if v := cliVersion(p.Config); v != "" {
			s.cliVersion = &v
		}
	case *canonical.SessionStateChanged:
		s.state, s.stateReason = new(string(p.State)), str(p.Reason)
	case *canonical.SessionExited:
		s.endedAt, s.exitReason, s.exitKind = new(at), orKeep(s.exitReason, p.Reason), orKeep(s.exitKind, string(p.ExitKind))
		s.exitCode = orKeepCopy(s.exitCode, p.ExitCode)
		state := "stopped"
		if p.ExitKind == canonical.ExitError {
			state = "error"
		}
		s.state, s.stateReason = &state, str(p.Reason)
	case *canonical.ThreadStarted:
		if e.ThreadID != "" {
			t := w.thread(e)
			t.providerThreadID = orKeep(t.providerThreadID, p.ProviderThreadID)
			if t.startedAt == nil {
				t.startedAt = new(at)
			}
		}
	case *canonical.ThreadStateChanged:
		if e.ThreadID != "" {
			w.thread(e).state = new(string(p.State))
		}
	case *canonical.ThreadMetadataUpdated:
		if e.ThreadID != "" {
			t := w.thread(e)
			t.name = orKeep(t.name, p.Name)
			if len(p.Metadata) > 0 {
				if t.metadata == nil {
					t.metadata = map[string]json.RawMessage{}
				}
				maps.Copy(t.metadata, p.Metadata)
			}
		}
	case *canonical.ThreadTokenUsageUpdated:
		if e.ThreadID != "" {
			t := w.thread(e)
			t.usage = new(greatestUsage(t.usage, p.Usage))
			t.contextWindow = orKeepCopy(t.contextWindow, p.ModelContextWindow)
		}
		if e.TurnID != "" && p.Turn != nil {
			w.turnUsageSoFar(e, p)
		}
	case *canonical.ThreadRealtimeStarted, *canonical.ThreadRealtimeItemAdded, *canonical.ThreadRealtimeAudioDelta,
		*canonical.ThreadRealtimeError, *canonical.ThreadRealtimeClosed:
		// In the event log only.
	case *canonical.TurnStarted:
		if e.TurnID != "" {
			t := w.turn(e)
			if t.started.at == nil {
				t.started = stampOf(e)
			}
			t.state = ranked(t.state, "in_progress", turnStates)
			// As the table keeps them: the first model, the latest effort
			// stated; an event that states none leaves them be.
			if t.model == nil {
				t.model = str(p.Model)
			}
			t.effort = orKeep(t.effort, p.Effort)
			t.agent = orKeep(t.agent, p.AgentID)
		}
	case *canonical.TurnCompleted:
		if e.TurnID != "" {
			w.turnCompleted(e, p)
		}
	case *canonical.TurnAborted:
		if e.TurnID != "" {
			t := w.turn(e)
			t.state, t.ended, t.errorMessage = ranked(t.state, "aborted", turnStates), stampOf(e), orKeep(t.errorMessage, p.Reason)
		}
	case *canonical.TurnPlanUpdated:
		if e.TurnID != "" {
			t := w.turn(e)
			t.plan, _ = json.Marshal(p.Plan) //nolint:errchkjson // plan steps are strings
			t.planExplanation = orKeep(t.planExplanation, p.Explanation)
		}
	case *canonical.TurnDiffUpdated:
		if e.TurnID != "" {
			w.turn(e).diff = new(p.UnifiedDiff)
		}
	case *canonical.ItemStarted:
		if e.ItemID != "" {
			it := w.item(e)
			it.lifecycle((*canonical.ItemLifecycle)(p))
			w.prompted(e, (*canonical.ItemLifecycle)(p))
			if it.status == nil {
				it.status = new(string(canonical.ItemStatusInProgress))
			}
		}
	case *canonical.ItemUpdated:
		if e.ItemID != "" {
			w.item(e).lifecycle((*canonical.ItemLifecycle)(p))
		}
	case *canonical.ItemCompleted:
		if e.ItemID != "" {
			w.item(e).completes(p, stampOf(e))
			w.prompted(e, (*canonical.ItemLifecycle)(p))
		}
	case *canonical.ContentDelta:
		if e.ItemID != "" {
			w.item(e).appendText(p.StreamKind, p.Delta)
		}
	case *canonical.RequestOpened:
		if e.RequestID != "" {
			r := w.request(e)
			r.requestType, r.detail, r.args = new(string(p.RequestType)), orKeep(r.detail, p.Detail), orKeepJSON(r.args, p.Args)
			if r.opened.at == nil {
				r.opened = stampOf(e)
			}
		}
	case *canonical.RequestResolved:
		if e.RequestID != "" {
			r := w.request(e)
			r.requestType, r.decision, r.resolution = new(string(p.RequestType)), orKeep(r.decision, p.Decision), orKeepJSON(r.resolution, p.Resolution)
			r.resolved = stampOf(e)
		}
	case *canonical.UserInputRequested:
		if e.RequestID != "" {
			r := w.request(e)
			r.requestType, r.args = new("user_input"), orKeepJSON(r.args, p.Questions)
			if r.opened.at == nil {
				r.opened = stampOf(e)
			}
		}
	case *canonical.UserInputResolved:
		if e.RequestID != "" {
			r := w.request(e)
			r.requestType, r.decision, r.resolution = new("user_input"), new("answered"), orKeepJSON(r.resolution, p.Answers)
			r.resolved = stampOf(e)
		}
	case *canonical.TaskStarted:
		t := w.task(e, p.TaskID)
		t.description, t.taskType = orKeep(t.description, p.Description), orKeep(t.taskType, p.TaskType)
		if t.startedAt == nil {
			t.startedAt = new(at)
		}
	case *canonical.TaskProgress:
		t := w.task(e, p.TaskID)
		t.lastTool, t.usage = orKeep(t.lastTool, p.LastToolName), orKeepJSON(t.usage, p.Usage)
	case *canonical.TaskCompleted:
		t := w.task(e, p.TaskID)
		t.status, t.summary, t.completedAt = new(string(p.Status)), orKeep(t.summary, p.Summary), new(at)
		t.usage = orKeepJSON(t.usage, p.Usage)
	case *canonical.HookStarted:
		h := w.hook(e, p.HookID)
		h.name, h.event, h.command = orKeep(h.name, p.HookName), orKeep(h.event, p.HookEvent), orKeep(h.command, p.Command)
		if h.started.at == nil {
			h.started = stampOf(e)
		}
	case *canonical.HookProgress:
		h := w.hook(e, p.HookID)
		h.output, h.stdout, h.stderr = orKeep(h.output, p.Output), orKeep(h.stdout, p.Stdout), orKeep(h.stderr, p.Stderr)
	case *canonical.HookCompleted:
		h := w.hook(e, p.HookID)
		h.outcome, h.completed = new(string(p.Outcome)), stampOf(e)
		h.output, h.stdout, h.stderr = orKeep(h.output, p.Output), orKeep(h.stdout, p.Stdout), orKeep(h.stderr, p.Stderr)
		h.exitCode, h.durationMs = orKeepCopy(h.exitCode, p.ExitCode), orKeepCopy(h.durationMs, p.DurationMs)
	case *canonical.AccountRateLimitsUpdated:
		w.rateLimits(e, p)
	case *canonical.RuntimeWarning:
		var d struct {
			Kind    string `json:"kind"`
			Dialect string `json:"dialect"`
		}
		if json.Unmarshal(p.Detail, &d) == nil && d.Kind != "" {
			k := unmappedKey{e.Tenant, string(e.Provider), e.SessionID, d.Dialect, d.Kind}
			u := w.unmapped[k]
			if u == nil {
				u = &unmappedPatch{first: at, last: at}
				w.unmapped[k] = u
			}
			u.count++
			if at.Before(u.first) {
				u.first = at
			}
			if at.After(u.last) {
				u.last = at
			}
		}
	case *canonical.RuntimeError:
		// A frame agentwire could not read is not the turn's failure:
		// it stays in the event log.
		if e.TurnID != "" && p.Class != canonical.ErrorClassValidation {
			t := w.turn(e)
			t.errorMessage, t.errorClass = orKeep(t.errorMessage, p.Message), orKeep(t.errorClass, string(p.Class))
		}
	case *canonical.ToolProgress, *canonical.ToolSummary, *canonical.AuthStatus, *canonical.AccountUpdated,
		*canonical.MCPStatusUpdated, *canonical.MCPOAuthCompleted, *canonical.ModelRerouted,
		*canonical.ConfigWarning, *canonical.DeprecationNotice, *canonical.FilesPersisted:
		// In the event log only.
	}
}

// orKeep is v, or old when v is empty: an event that states nothing of a
// column leaves what an earlier event of the batch stated, as the upsert
// leaves what an earlier batch wrote (keep, kindLatest), so that the row
// does not depend on where batches end.
func orKeep(old *string, v string) *string {
	if v == "" {
		return old
	}
	return &v
}

// orKeepJSON is v, or old when v is empty, as orKeep.
func orKeepJSON(old, v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return old
	}
	return v
}

// orKeepCopy is a copy of *v, or old when v is nil, as orKeep: the patch
// keeps no pointer into the event.
func orKeepCopy[T any](old, v *T) *T {
	if v == nil {
		return old
	}
	return new(*v)
}

func (w *writes) turnCompleted(e *canonical.Event, p *canonical.TurnCompleted) {
	t := w.turn(e)
	t.state, t.ended, t.stopReason = ranked(t.state, string(p.State), turnStates), stampOf(e), orKeep(t.stopReason, p.StopReason)
	t.errorMessage = orKeep(t.errorMessage, p.ErrorMessage)
	if p.Usage != nil {
		t.usage, t.counted = new(*p.Usage), true
	}
	t.cost, t.durationMs = orKeepCopy(t.cost, p.TotalCostUSD), orKeepCopy(t.durationMs, p.DurationMs)
	if id := e.ProviderRefs.ProviderTurnID; id != "" {
		t.providerTurn = &id
	}
	t.soleModel(p.ModelUsage)
	if p.Usage != nil || len(p.ModelUsage) > 0 {
		// The turn's own count replaces what was reported on the way.
		delete(w.soFar, key3{e.Tenant, e.SessionID, e.TurnID})
	}
	row := func(model string, u canonical.TokenUsage, cost *float64) {
		r := w.ledgerRow(e, t, model, u)
		r.cost = cost
		w.ledger[ledgerKey{e.Tenant, e.SessionID, e.TurnID, model}] = &r
	}
	switch {
	case len(p.ModelUsage) > 0:
		for m, mu := range p.ModelUsage {
			cost := mu.CostUSD
			if cost == nil && len(p.ModelUsage) == 1 {
				cost = p.TotalCostUSD
			}
			row(m, mu.TokenUsage, cost)
		}
	case p.Usage != nil:
		// A count that names no model is the turn's, else the
		// session's, as known when it came (ledgerRow).
		row("", *p.Usage, p.TotalCostUSD)
	}
}

// turnUsageSoFar keeps the usage a turn has reported so far (before its
// end, or after an end that stated no count), for the ledger's
// provisional rows: per model when the report breaks it down, else one
// row of the turn's or the session's model (ledgerRow).
func (w *writes) turnUsageSoFar(e *canonical.Event, p *canonical.ThreadTokenUsageUpdated) {
	t := w.turn(e)
	// The provider's id of the turn, as its end will say it: a log cut off
	// mid-turn (Claude names turns by their first message) still pairs
	// with the stream of the same run in the views.
	if id := e.ProviderRefs.ProviderTurnID; id != "" {
		t.providerTurn = &id
	}
	t.soleModel(p.TurnModelUsage)
	if t.counted {
		// Its end in this batch stated its own count, which stands (as
		// the upsert keeps it, turns.usage_final); what else the report
		// says counts as in a later batch. A report after an end that
		// stated none (Codex counts after turn_aborted) is the latest
		// count there is.
		return
	}
	t.usage = new(*p.Turn)
	var rows []ledgerRow
	for _, m := range slices.Sorted(maps.Keys(p.TurnModelUsage)) {
		rows = append(rows, w.ledgerRow(e, t, m, p.TurnModelUsage[m].TokenUsage))
	}
	if len(rows) == 0 {
		rows = append(rows, w.ledgerRow(e, t, "", *p.Turn))
	}
	w.soFar[key3{e.Tenant, e.SessionID, e.TurnID}] = rows
}

// soleModel names the turn's model after its usage when one model used
// it all and nothing named one.
func (t *turnPatch) soleModel(usage map[string]canonical.ModelUsage) {
	if t.model == nil && len(usage) == 1 {
		for m := range usage {
			t.model = new(m)
		}
	}
}

// ledgerRow is a ledger row of e's turn t. A count that names no model is
// the turn's model's, else the session's, as known when e came: what this
// batch stated before e is kept with the row (the statements read the
// tables as earlier batches left them), so that a model stated after e in
// its batch does not name it, as it does not when a later batch states it.
func (w *writes) ledgerRow(e *canonical.Event, t *turnPatch, model string, u canonical.TokenUsage) ledgerRow {
	r := ledgerRow{
		tenant: e.Tenant, turn: e.TurnID, model: model, provider: string(e.Provider), session: e.SessionID,
		thread: str(e.ThreadID), providerTurn: e.ProviderRefs.ProviderTurnID, at: e.CreatedAt, usage: u,
	}
	if model == "" {
		r.turnModel, r.sessionModel = t.model, w.session(e).model
	}
	return r
}

func (w *writes) rateLimits(e *canonical.Event, p *canonical.AccountRateLimitsUpdated) {
	base := rateRow{tenant: e.Tenant, event: e.EventID, session: e.SessionID, provider: string(e.Provider), at: e.CreatedAt}
	if len(p.Windows) == 0 {
		r := base
		r.snapshot = p.RateLimits
		w.rates = append(w.rates, r)
		return
	}
	seen := map[string]bool{}
	for _, win := range p.Windows {
		if seen[win.Name] {
			continue
		}
		seen[win.Name] = true
		r := base
		r.window, r.usedPercent, r.windowMinutes, r.resetsAt, r.status = win.Name, win.UsedPercent, win.WindowMinutes, win.ResetsAt, str(win.Status)
		r.snapshot = p.RateLimits
		w.rates = append(w.rates, r)
	}
}
