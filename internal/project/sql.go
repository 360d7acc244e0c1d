package project

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/agentwire/agentwire/pkg/canonical"
)

// Statements are queued table by table in a fixed order and, within a
// table, by key, so that two transactions touching the same rows lock them
// in the same order and cannot deadlock.

const upsertSession = `
INSERT INTO sessions AS s (tenant_id, session_id, provider, state, state_reason, model, cli_version, config,
    started_at, ended_at, exit_kind, exit_code, exit_reason, first_event_at, last_event_at, event_count)
VALUES ($1, $2, $3, $4, $5, $6, $7, coalesce($8::jsonb, '{}'), $9, $10, $11, $12, $13, $14, $15, $16)
ON CONFLICT (tenant_id, session_id) DO UPDATE SET
    state = coalesce(EXCLUDED.state, s.state),
    state_reason = CASE WHEN EXCLUDED.state IS NULL THEN s.state_reason ELSE EXCLUDED.state_reason END,
    model = coalesce(EXCLUDED.model, s.model),
    cli_version = coalesce(EXCLUDED.cli_version, s.cli_version),
    config = s.config || EXCLUDED.config,
    started_at = coalesce(s.started_at, EXCLUDED.started_at),
    ended_at = coalesce(EXCLUDED.ended_at, s.ended_at),
    exit_kind = coalesce(EXCLUDED.exit_kind, s.exit_kind),
    exit_code = coalesce(EXCLUDED.exit_code, s.exit_code),
    exit_reason = coalesce(EXCLUDED.exit_reason, s.exit_reason),
    first_event_at = least(s.first_event_at, EXCLUDED.first_event_at),
    last_event_at = greatest(s.last_event_at, EXCLUDED.last_event_at),
    event_count = s.event_count + EXCLUDED.event_count`

var upsertThread = crossSession("t", `
INSERT INTO threads AS t (tenant_id, thread_id, session_id, provider, provider_thread_id, state, name, metadata,
    input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens, reasoning_output_tokens,
    context_window, started_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, coalesce($8::jsonb, '{}'), $9, $10, $11, $12, $13, $14, $15, $16)
ON CONFLICT (tenant_id, thread_id) DO UPDATE SET
    provider_thread_id = coalesce(EXCLUDED.provider_thread_id, t.provider_thread_id),
    state = coalesce(EXCLUDED.state, t.state),
    name = coalesce(EXCLUDED.name, t.name),
    metadata = t.metadata || EXCLUDED.metadata,
    input_tokens = coalesce(EXCLUDED.input_tokens, t.input_tokens),
    cached_input_tokens = coalesce(EXCLUDED.cached_input_tokens, t.cached_input_tokens),
    cache_write_input_tokens = coalesce(EXCLUDED.cache_write_input_tokens, t.cache_write_input_tokens),
    output_tokens = coalesce(EXCLUDED.output_tokens, t.output_tokens),
    reasoning_output_tokens = coalesce(EXCLUDED.reasoning_output_tokens, t.reasoning_output_tokens),
    context_window = coalesce(EXCLUDED.context_window, t.context_window),
    started_at = coalesce(t.started_at, EXCLUDED.started_at),
    updated_at = greatest(t.updated_at, EXCLUDED.updated_at)`)

var upsertTurn = crossSession("t", `
INSERT INTO turns AS t (tenant_id, turn_id, session_id, thread_id, provider, state, model, effort, started_at, ended_at,
    stop_reason, error_message, error_class, input_tokens, cached_input_tokens, cache_write_input_tokens,
    output_tokens, reasoning_output_tokens, cost_usd, duration_ms, plan, plan_explanation, diff, updated_at)
VALUES ($1, $2, $3, $4, $5, coalesce($6, 'in_progress'), $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18,
    $19, $20, $21, $22, $23, $24)
ON CONFLICT (tenant_id, turn_id) DO UPDATE SET
    thread_id = coalesce(EXCLUDED.thread_id, t.thread_id),
    state = CASE WHEN $6::text IS NULL THEN t.state ELSE EXCLUDED.state END,
    model = coalesce(t.model, EXCLUDED.model),
    effort = coalesce(EXCLUDED.effort, t.effort),
    started_at = coalesce(t.started_at, EXCLUDED.started_at),
    ended_at = coalesce(EXCLUDED.ended_at, t.ended_at),
    stop_reason = coalesce(EXCLUDED.stop_reason, t.stop_reason),
    error_message = coalesce(EXCLUDED.error_message, t.error_message),
    error_class = coalesce(EXCLUDED.error_class, t.error_class),
    input_tokens = coalesce(EXCLUDED.input_tokens, t.input_tokens),
    cached_input_tokens = coalesce(EXCLUDED.cached_input_tokens, t.cached_input_tokens),
    cache_write_input_tokens = coalesce(EXCLUDED.cache_write_input_tokens, t.cache_write_input_tokens),
    output_tokens = coalesce(EXCLUDED.output_tokens, t.output_tokens),
    reasoning_output_tokens = coalesce(EXCLUDED.reasoning_output_tokens, t.reasoning_output_tokens),
    cost_usd = coalesce(EXCLUDED.cost_usd, t.cost_usd),
    duration_ms = coalesce(EXCLUDED.duration_ms, t.duration_ms),
    plan = coalesce(EXCLUDED.plan, t.plan),
    plan_explanation = coalesce(EXCLUDED.plan_explanation, t.plan_explanation),
    diff = coalesce(EXCLUDED.diff, t.diff),
    updated_at = greatest(t.updated_at, EXCLUDED.updated_at)`)

// crossSession makes an upsert of a row that several sessions may touch
// deterministic whatever the order the sessions are applied in (they are
// applied in parallel): the same Codex thread, turn or item seen through an
// app-server tap and through its rollout log has one id. The row belongs to
// the smallest session id that wrote it: that session's writes merge as
// written, a smaller session's first write replaces the row, a larger
// session's writes are ignored.
func crossSession(alias, sql string) string {
	head, sets, ok := strings.Cut(sql, "DO UPDATE SET")
	if !ok {
		panic("crossSession: no DO UPDATE SET")
	}
	var out []string
	for _, set := range setSplit.Split(strings.TrimSpace(sets), -1) {
		col, expr, _ := strings.Cut(set, " = ")
		out = append(out, fmt.Sprintf("%s = CASE WHEN EXCLUDED.session_id < %s.session_id THEN EXCLUDED.%s ELSE %s END", col, alias, col, expr))
	}
	out = append(out, "session_id = EXCLUDED.session_id")
	return head + "DO UPDATE SET\n    " + strings.Join(out, ",\n    ") + "\nWHERE EXCLUDED.session_id <= " + alias + ".session_id"
}

var setSplit = regexp.MustCompile(`,\s*\n\s*`)

// textColumns are the item text columns in streamIndex order.
var textColumns = [numStreams]string{
	"text_assistant", "text_reasoning", "text_reasoning_summary", "text_plan",
	"text_command_output", "text_file_change", "text_unknown",
}

// upsertItem: $16 is the replace mask; a text replaces its column when its
// bit is set and extends it otherwise (one concatenation per batch).
var upsertItem = func() string {
	var set strings.Builder
	for i, c := range textColumns {
		set.WriteString(",\n    " + c + " = CASE WHEN EXCLUDED." + c + " IS NULL THEN i." + c +
			" WHEN ($16::int & " + strconv.Itoa(1<<i) + ") <> 0 THEN EXCLUDED." + c + " ELSE coalesce(i." + c + ", '') || EXCLUDED." + c + " END")
	}
	return crossSession("i", `
INSERT INTO items AS i (tenant_id, item_id, session_id, thread_id, turn_id, provider, item_type, status, title, detail,
    tool_name, command, exit_code, files, parent_item_id, `+strings.Join(textColumns[:], ", ")+`,
    started_at, completed_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, coalesce($7, 'unknown'), $8, $9, $10, $11, $12, $13, $14, $15,
    $17, $18, $19, $20, $21, $22, $23, $24, $25, $26)
ON CONFLICT (tenant_id, item_id) DO UPDATE SET
    thread_id = coalesce(EXCLUDED.thread_id, i.thread_id),
    turn_id = coalesce(EXCLUDED.turn_id, i.turn_id),
    item_type = CASE WHEN $7::text IS NULL THEN i.item_type ELSE EXCLUDED.item_type END,
    status = coalesce(EXCLUDED.status, i.status),
    title = coalesce(EXCLUDED.title, i.title),
    detail = coalesce(EXCLUDED.detail, i.detail),
    tool_name = coalesce(EXCLUDED.tool_name, i.tool_name),
    command = coalesce(EXCLUDED.command, i.command),
    exit_code = coalesce(EXCLUDED.exit_code, i.exit_code),
    files = coalesce(EXCLUDED.files, i.files),
    parent_item_id = coalesce(EXCLUDED.parent_item_id, i.parent_item_id),
    started_at = coalesce(i.started_at, EXCLUDED.started_at),
    completed_at = coalesce(EXCLUDED.completed_at, i.completed_at),
    updated_at = greatest(i.updated_at, EXCLUDED.updated_at)`+set.String())
}()

var upsertRequest = crossSession("r", `
INSERT INTO requests AS r (tenant_id, request_id, session_id, thread_id, turn_id, item_id, provider, request_type,
    detail, args, opened_at, resolved_at, decision, resolution)
VALUES ($1, $2, $3, $4, $5, $6, $7, coalesce($8, 'unknown'), $9, $10, $11, $12, $13, $14)
ON CONFLICT (tenant_id, request_id) DO UPDATE SET
    thread_id = coalesce(EXCLUDED.thread_id, r.thread_id),
    turn_id = coalesce(EXCLUDED.turn_id, r.turn_id),
    item_id = coalesce(EXCLUDED.item_id, r.item_id),
    request_type = CASE WHEN $8::text IS NULL THEN r.request_type ELSE EXCLUDED.request_type END,
    detail = coalesce(EXCLUDED.detail, r.detail),
    args = coalesce(EXCLUDED.args, r.args),
    opened_at = coalesce(r.opened_at, EXCLUDED.opened_at),
    resolved_at = coalesce(EXCLUDED.resolved_at, r.resolved_at),
    decision = coalesce(EXCLUDED.decision, r.decision),
    resolution = coalesce(EXCLUDED.resolution, r.resolution)`)

const upsertTask = `
INSERT INTO tasks AS t (tenant_id, session_id, task_id, provider, thread_id, turn_id, description, task_type, status,
    summary, last_tool_name, usage, started_at, completed_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
ON CONFLICT (tenant_id, session_id, task_id) DO UPDATE SET
    thread_id = coalesce(EXCLUDED.thread_id, t.thread_id),
    turn_id = coalesce(EXCLUDED.turn_id, t.turn_id),
    description = coalesce(EXCLUDED.description, t.description),
    task_type = coalesce(EXCLUDED.task_type, t.task_type),
    status = coalesce(EXCLUDED.status, t.status),
    summary = coalesce(EXCLUDED.summary, t.summary),
    last_tool_name = coalesce(EXCLUDED.last_tool_name, t.last_tool_name),
    usage = coalesce(EXCLUDED.usage, t.usage),
    started_at = coalesce(t.started_at, EXCLUDED.started_at),
    completed_at = coalesce(EXCLUDED.completed_at, t.completed_at),
    updated_at = greatest(t.updated_at, EXCLUDED.updated_at)`

const upsertHook = `
INSERT INTO hooks AS h (tenant_id, session_id, hook_id, provider, turn_id, hook_name, hook_event, outcome, output,
    stdout, stderr, exit_code, started_at, completed_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
ON CONFLICT (tenant_id, session_id, hook_id) DO UPDATE SET
    turn_id = coalesce(EXCLUDED.turn_id, h.turn_id),
    hook_name = coalesce(EXCLUDED.hook_name, h.hook_name),
    hook_event = coalesce(EXCLUDED.hook_event, h.hook_event),
    outcome = coalesce(EXCLUDED.outcome, h.outcome),
    output = coalesce(EXCLUDED.output, h.output),
    stdout = coalesce(EXCLUDED.stdout, h.stdout),
    stderr = coalesce(EXCLUDED.stderr, h.stderr),
    exit_code = coalesce(EXCLUDED.exit_code, h.exit_code),
    started_at = coalesce(h.started_at, EXCLUDED.started_at),
    completed_at = coalesce(EXCLUDED.completed_at, h.completed_at)`

const insertRate = `
INSERT INTO rate_limit_observations (tenant_id, event_id, window_name, session_id, provider, observed_at,
    used_percent, window_minutes, resets_at, status, snapshot)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT DO NOTHING`

// upsertLedger resolves a turn's model when turn.completed had no
// breakdown by model: the turn's, else the session's, else "unknown".
const upsertLedger = `
INSERT INTO usage_ledger AS u (tenant_id, turn_id, model, provider, session_id, thread_id, occurred_at,
    input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens, reasoning_output_tokens, cost_usd)
SELECT $1, $2::uuid, coalesce(nullif($3, ''),
        (SELECT model FROM turns WHERE tenant_id = $1 AND turn_id = $2::uuid),
        (SELECT model FROM sessions WHERE tenant_id = $1 AND session_id = $5::uuid), 'unknown'),
    $4, $5::uuid, $6::uuid, $7, $8, $9, $10, $11, $12, $13
ON CONFLICT (tenant_id, turn_id, model) DO UPDATE SET
    session_id = EXCLUDED.session_id, provider = EXCLUDED.provider, thread_id = EXCLUDED.thread_id,
    occurred_at = EXCLUDED.occurred_at,
    input_tokens = EXCLUDED.input_tokens, cached_input_tokens = EXCLUDED.cached_input_tokens,
    cache_write_input_tokens = EXCLUDED.cache_write_input_tokens, output_tokens = EXCLUDED.output_tokens,
    reasoning_output_tokens = EXCLUDED.reasoning_output_tokens, cost_usd = EXCLUDED.cost_usd
WHERE EXCLUDED.session_id <= u.session_id`

const upsertUnmapped = `
INSERT INTO unmapped_kinds AS k (tenant_id, provider, cli_version, dialect, kind, count, first_seen, last_seen)
SELECT $1, $2, coalesce((SELECT cli_version FROM sessions WHERE tenant_id = $1 AND session_id = $3::uuid), ''),
    $4, $5, $6, $7, $8
ON CONFLICT (tenant_id, provider, cli_version, dialect, kind) DO UPDATE SET
    count = k.count + EXCLUDED.count,
    first_seen = least(k.first_seen, EXCLUDED.first_seen),
    last_seen = greatest(k.last_seen, EXCLUDED.last_seen)`

func sortedKeys[K comparable, V any](m map[K]V, less func(a, b K) int) []K {
	ks := slices.Collect(maps.Keys(m))
	slices.SortFunc(ks, less)
	return ks
}

func cmpKey(a, b key) int { return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.id, b.id)) }

func cmpKey3(a, b key3) int {
	return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.session, b.session), cmp.Compare(a.id, b.id))
}

func jsonMap(m map[string]json.RawMessage) []byte {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m) //nolint:errchkjson // values are raw JSON already validated by decoding
	return b
}

func rawJSON(m json.RawMessage) []byte {
	if len(m) == 0 {
		return nil
	}
	return m
}

type usageCols struct{ in, cached, write, out, reasoning *int64 }

func usageOf(u *canonical.TokenUsage) usageCols {
	if u == nil {
		return usageCols{}
	}
	return usageCols{new(u.InputTokens), new(u.CachedInputTokens), new(u.CacheWriteInputTokens), new(u.OutputTokens), new(u.ReasoningOutputTokens)}
}

// queue adds the batch's statements to b.
func (w *writes) queue(b *pgx.Batch) {
	for _, k := range sortedKeys(w.sessions, cmpKey) {
		s := w.sessions[k]
		b.Queue(upsertSession, k.tenant, k.id, s.provider, s.state, s.stateReason, s.model, s.cliVersion, jsonMap(s.config),
			s.startedAt, s.endedAt, s.exitKind, s.exitCode, s.exitReason, s.first, s.last, s.count)
	}
	for _, k := range sortedKeys(w.threads, cmpKey3) {
		t := w.threads[k]
		u := usageOf(t.usage)
		b.Queue(upsertThread, k.tenant, k.id, k.session, t.provider, t.providerThreadID, t.state, t.name, jsonMap(t.metadata),
			u.in, u.cached, u.write, u.out, u.reasoning, t.contextWindow, t.startedAt, t.updatedAt)
	}
	for _, k := range sortedKeys(w.turns, cmpKey3) {
		t := w.turns[k]
		u := usageOf(t.usage)
		b.Queue(upsertTurn, k.tenant, k.id, k.session, t.thread, t.provider, t.state, t.model, t.effort, t.startedAt, t.endedAt,
			t.stopReason, t.errorMessage, t.errorClass, u.in, u.cached, u.write, u.out, u.reasoning, t.cost, t.durationMs,
			rawJSON(t.plan), t.planExplanation, t.diff, t.updatedAt)
	}
	for _, k := range sortedKeys(w.items, cmpKey3) {
		it := w.items[k]
		args := []any{k.tenant, k.id, k.session, it.thread, it.turn, it.provider, it.itemType, it.status, it.title, it.detail,
			it.toolName, it.command, it.exitCode, it.files, it.parent, it.replace}
		for _, t := range it.text {
			if t == nil {
				args = append(args, nil)
				continue
			}
			args = append(args, t.String())
		}
		args = append(args, it.startedAt, it.completedAt, it.updatedAt)
		b.Queue(upsertItem, args...)
	}
	for _, k := range sortedKeys(w.requests, cmpKey3) {
		r := w.requests[k]
		b.Queue(upsertRequest, k.tenant, k.id, k.session, r.thread, r.turn, r.item, r.provider, r.requestType, r.detail,
			rawJSON(r.args), r.openedAt, r.resolvedAt, r.decision, rawJSON(r.resolution))
	}
	for _, k := range sortedKeys(w.tasks, cmpKey3) {
		t := w.tasks[k]
		b.Queue(upsertTask, k.tenant, k.session, k.id, t.provider, t.thread, t.turn, t.description, t.taskType, t.status,
			t.summary, t.lastTool, rawJSON(t.usage), t.startedAt, t.completedAt, t.updatedAt)
	}
	for _, k := range sortedKeys(w.hooks, cmpKey3) {
		h := w.hooks[k]
		b.Queue(upsertHook, k.tenant, k.session, k.id, h.provider, h.turn, h.name, h.event, h.outcome, h.output,
			h.stdout, h.stderr, h.exitCode, h.startedAt, h.completedAt)
	}
	for _, r := range w.rates {
		b.Queue(insertRate, r.tenant, r.event, r.window, r.session, r.provider, r.at, r.usedPercent, r.windowMinutes,
			r.resetsAt, r.status, rawJSON(r.snapshot))
	}
	for _, k := range sortedKeys(w.ledger, func(a, b ledgerKey) int {
		return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.session, b.session), cmp.Compare(a.turn, b.turn), cmp.Compare(a.model, b.model))
	}) {
		l := w.ledger[k]
		b.Queue(upsertLedger, l.tenant, l.turn, l.model, l.provider, l.session, l.thread, l.at,
			l.usage.InputTokens, l.usage.CachedInputTokens, l.usage.CacheWriteInputTokens, l.usage.OutputTokens,
			l.usage.ReasoningOutputTokens, l.cost)
	}
	for _, k := range sortedKeys(w.unmapped, func(a, b unmappedKey) int {
		return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.provider, b.provider), cmp.Compare(a.session, b.session),
			cmp.Compare(a.dialect, b.dialect), cmp.Compare(a.kind, b.kind))
	}) {
		u := w.unmapped[k]
		b.Queue(upsertUnmapped, k.tenant, k.provider, k.session, k.dialect, k.kind, u.count, u.first, u.last)
	}
}
