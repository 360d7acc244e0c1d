package project

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentwire/agentwire/pkg/canonical"
)

// A batch is written with one statement per table, not one per row: the
// rows of a table travel as one array per column and are unnested into an
// INSERT ... ON CONFLICT DO UPDATE. Per-row statements were what the
// projector spent most of its Postgres time on (parse, plan and execute
// for every touched row). One statement cannot update a row twice, so when
// a batch holds several patches of one row (several sessions describing
// the same thread, turn, item or request) they go in successive statements
// ("rounds").
//
// Workers apply different sessions in parallel, and sessions may share
// rows (threads, turns, items, requests, the usage ledger, unmapped
// kinds), so two transactions can want the same rows. They cannot
// deadlock: tables are written in one fixed order, and within a table the
// rows are fed to Postgres sorted by primary key (the statements below
// that resolve a key in SQL sort there), so every transaction locks the
// rows it shares in the same global order. A later round only touches
// rows an earlier one locked. Sorting by session first, as this once did,
// let one worker lock thread B then A (its sessions 1 and 3) while another
// locked A then B (its session 2): Postgres found the cycle and one batch
// was retried.

// column is one column of a set-based upsert.
type column struct {
	name string
	// typ is the element type of the column's parameter array: text
	// (also for uuid and jsonb, cast by value), int8, int4, float8 or
	// timestamptz.
	typ string
	// value is what is inserted, an expression over x.<name>; default
	// x.<name>.
	value string
	// merge is the column's value on conflict, over EXCLUDED and the
	// table's alias; "" leaves the column alone (keys).
	merge string
}

// upsertSQL builds INSERT INTO table ... SELECT FROM unnest(...) ON
// CONFLICT (conflict) DO UPDATE SET <merges> [WHERE where].
func upsertSQL(table, alias, conflict string, cols []column, sets []string, where string) string {
	var names, params, values []string
	for i, c := range cols {
		names = append(names, c.name)
		params = append(params, "$"+strconv.Itoa(i+1)+"::"+c.typ+"[]")
		v := c.value
		if v == "" {
			v = "x." + c.name
		}
		values = append(values, v)
	}
	sql := "INSERT INTO " + table + " AS " + alias + " (" + strings.Join(names, ", ") + ")\nSELECT " + strings.Join(values, ", ") +
		"\nFROM unnest(" + strings.Join(params, ", ") + ") AS x(" + strings.Join(names, ", ") + ")\nON CONFLICT " + conflict
	if len(sets) == 0 {
		return sql + " DO NOTHING"
	}
	sql += " DO UPDATE SET\n    " + strings.Join(sets, ",\n    ")
	if where != "" {
		sql += "\nWHERE " + where
	}
	return sql
}

// ownSets is the SET list of a table whose rows belong to one session.
func ownSets(cols []column) []string {
	var sets []string
	for _, c := range cols {
		if c.merge != "" {
			sets = append(sets, c.name+" = "+c.merge)
		}
	}
	return sets
}

// crossSession makes an upsert of a row that several sessions may touch
// deterministic whatever the order the sessions are applied in (they are
// applied in parallel): the same Codex thread, turn or item seen through an
// app-server tap and through its rollout log has one id. The row belongs to
// the smallest session id that wrote it: that session's writes merge as
// written, a smaller session's first write replaces the row, a larger
// session's writes are ignored.
func crossSession(alias string, cols []column) (sets []string, where string) {
	for _, c := range cols {
		if c.merge == "" {
			continue
		}
		sets = append(sets, fmt.Sprintf("%s = CASE WHEN EXCLUDED.session_id < %s.session_id THEN EXCLUDED.%s ELSE %s END", c.name, alias, c.name, c.merge))
	}
	sets = append(sets, "session_id = EXCLUDED.session_id")
	return sets, "EXCLUDED.session_id <= " + alias + ".session_id"
}

func keep(alias, name string) string {
	return "coalesce(EXCLUDED." + name + ", " + alias + "." + name + ")"
}

func first(alias, name string) string {
	return "coalesce(" + alias + "." + name + ", EXCLUDED." + name + ")"
}

var sessionCols = []column{
	{name: "tenant_id", typ: "text"},
	{name: "session_id", typ: "text", value: "x.session_id::uuid"},
	{name: "provider", typ: "text"},
	{name: "state", typ: "text", merge: keep("s", "state")},
	{name: "state_reason", typ: "text", merge: "CASE WHEN EXCLUDED.state IS NULL THEN s.state_reason ELSE EXCLUDED.state_reason END"},
	{name: "model", typ: "text", merge: keep("s", "model")},
	{name: "cli_version", typ: "text", merge: keep("s", "cli_version")},
	// A configuration is long (model and tool lists): left alone, its
	// stored value is kept as it is, not rewritten by every batch.
	{name: "config", typ: "text", value: "coalesce(x.config::jsonb, '{}')",
		merge: "CASE WHEN EXCLUDED.config = '{}' THEN s.config ELSE s.config || EXCLUDED.config END"},
	{name: "started_at", typ: "timestamptz", merge: first("s", "started_at")},
	{name: "ended_at", typ: "timestamptz", merge: keep("s", "ended_at")},
	{name: "exit_kind", typ: "text", merge: keep("s", "exit_kind")},
	{name: "exit_code", typ: "int4", merge: keep("s", "exit_code")},
	{name: "exit_reason", typ: "text", merge: keep("s", "exit_reason")},
	{name: "first_event_at", typ: "timestamptz", merge: "least(s.first_event_at, EXCLUDED.first_event_at)"},
	{name: "last_event_at", typ: "timestamptz", merge: "greatest(s.last_event_at, EXCLUDED.last_event_at)"},
	{name: "event_count", typ: "int8", merge: "s.event_count + EXCLUDED.event_count"},
}

var upsertSessions = upsertSQL("sessions", "s", "(tenant_id, session_id)", sessionCols, ownSets(sessionCols), "")

// usageCols are the token columns of threads, turns and the ledger.
func usageColumns(alias string) []column {
	var out []column
	for _, n := range []string{"input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens", "reasoning_output_tokens"} {
		out = append(out, column{name: n, typ: "int8", merge: keep(alias, n)})
	}
	return out
}

var threadCols = slices.Concat([]column{
	{name: "tenant_id", typ: "text"},
	{name: "thread_id", typ: "text", value: "x.thread_id::uuid"},
	{name: "session_id", typ: "text", value: "x.session_id::uuid"},
	{name: "provider", typ: "text"},
	{name: "provider_thread_id", typ: "text", merge: keep("t", "provider_thread_id")},
	{name: "state", typ: "text", merge: keep("t", "state")},
	{name: "name", typ: "text", merge: keep("t", "name")},
	{name: "metadata", typ: "text", value: "coalesce(x.metadata::jsonb, '{}')",
		merge: "CASE WHEN EXCLUDED.metadata = '{}' THEN t.metadata ELSE t.metadata || EXCLUDED.metadata END"},
}, usageColumns("t"), []column{
	{name: "context_window", typ: "int8", merge: keep("t", "context_window")},
	{name: "started_at", typ: "timestamptz", merge: first("t", "started_at")},
	{name: "updated_at", typ: "timestamptz", merge: "greatest(t.updated_at, EXCLUDED.updated_at)"},
})

var upsertThreads = func() string {
	sets, where := crossSession("t", threadCols)
	return upsertSQL("threads", "t", "(tenant_id, thread_id)", threadCols, sets, where)
}()

// A column with a default (a turn's state, an item's or a request's type)
// cannot say "not in this patch" with NULL: the default is inserted, and
// only the inserted row reaches ON CONFLICT. The default itself therefore
// never replaces a value: a turn that is known to have ended is not put
// back in progress, a known item type is not overwritten with unknown.
func unlessDefault(alias, name, def string) string {
	return "CASE WHEN EXCLUDED." + name + " = '" + def + "' THEN " + alias + "." + name + " ELSE EXCLUDED." + name + " END"
}

var turnCols = slices.Concat([]column{
	{name: "tenant_id", typ: "text"},
	{name: "turn_id", typ: "text", value: "x.turn_id::uuid"},
	{name: "session_id", typ: "text", value: "x.session_id::uuid"},
	{name: "thread_id", typ: "text", value: "x.thread_id::uuid", merge: keep("t", "thread_id")},
	{name: "provider", typ: "text"},
	{name: "state", typ: "text", value: "coalesce(x.state, 'in_progress')", merge: unlessDefault("t", "state", "in_progress")},
	{name: "model", typ: "text", merge: first("t", "model")},
	{name: "effort", typ: "text", merge: keep("t", "effort")},
	{name: "started_at", typ: "timestamptz", merge: first("t", "started_at")},
	{name: "ended_at", typ: "timestamptz", merge: keep("t", "ended_at")},
	{name: "stop_reason", typ: "text", merge: keep("t", "stop_reason")},
	{name: "error_message", typ: "text", merge: keep("t", "error_message")},
	{name: "error_class", typ: "text", merge: keep("t", "error_class")},
}, usageColumns("t"), []column{
	{name: "cost_usd", typ: "float8", merge: keep("t", "cost_usd")},
	{name: "duration_ms", typ: "int8", merge: keep("t", "duration_ms")},
	{name: "plan", typ: "text", value: "x.plan::jsonb", merge: keep("t", "plan")},
	{name: "plan_explanation", typ: "text", merge: keep("t", "plan_explanation")},
	{name: "diff", typ: "text", merge: keep("t", "diff")},
	{name: "updated_at", typ: "timestamptz", merge: "greatest(t.updated_at, EXCLUDED.updated_at)"},
})

var upsertTurns = func() string {
	sets, where := crossSession("t", turnCols)
	return upsertSQL("turns", "t", "(tenant_id, turn_id)", turnCols, sets, where)
}()

// textColumns are the item text columns in streamIndex order.
var textColumns = [numStreams]string{
	"text_assistant", "text_reasoning", "text_reasoning_summary", "text_plan",
	"text_command_output", "text_file_change", "text_unknown",
}

// Item texts: a text that replaces its column (lifecycle content) is
// written by the upsert; one that extends it (the batch's deltas,
// concatenated) by appendItemText right after, which can read the row the
// upsert left (ON CONFLICT sees only the inserted row, not whether its
// text was meant to replace or extend).
var itemCols = func() []column {
	cols := []column{
		{name: "tenant_id", typ: "text"},
		{name: "item_id", typ: "text", value: "x.item_id::uuid"},
		{name: "session_id", typ: "text", value: "x.session_id::uuid"},
		{name: "thread_id", typ: "text", value: "x.thread_id::uuid", merge: keep("i", "thread_id")},
		{name: "turn_id", typ: "text", value: "x.turn_id::uuid", merge: keep("i", "turn_id")},
		{name: "provider", typ: "text"},
		{name: "item_type", typ: "text", value: "coalesce(x.item_type, 'unknown')", merge: unlessDefault("i", "item_type", "unknown")},
		{name: "status", typ: "text", merge: keep("i", "status")},
		{name: "title", typ: "text", merge: keep("i", "title")},
		{name: "detail", typ: "text", merge: keep("i", "detail")},
		{name: "tool_name", typ: "text", merge: keep("i", "tool_name")},
		{name: "command", typ: "text", merge: keep("i", "command")},
		{name: "exit_code", typ: "int4", merge: keep("i", "exit_code")},
		// An array per row does not survive unnest (it flattens): files
		// travel as a JSON array.
		{name: "files", typ: "text", value: "CASE WHEN x.files IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(x.files::jsonb)) END",
			merge: keep("i", "files")},
		{name: "parent_item_id", typ: "text", value: "x.parent_item_id::uuid", merge: keep("i", "parent_item_id")},
	}
	for _, c := range textColumns {
		cols = append(cols, column{name: c, typ: "text", merge: keep("i", c)})
	}
	return append(cols,
		column{name: "started_at", typ: "timestamptz", merge: first("i", "started_at")},
		column{name: "completed_at", typ: "timestamptz", merge: keep("i", "completed_at")},
		column{name: "updated_at", typ: "timestamptz", merge: "greatest(i.updated_at, EXCLUDED.updated_at)"},
	)
}()

var upsertItems = func() string {
	sets, where := crossSession("i", itemCols)
	return upsertSQL("items", "i", "(tenant_id, item_id)", itemCols, sets, where)
}()

// appendItemText extends the item texts with a batch's deltas, on the rows
// the upsert just wrote, if they still belong to the session (a smaller
// session's row ignores a larger one's writes, see crossSession).
var appendItemText = func() string {
	var sets, params, names []string
	for i, c := range textColumns {
		sets = append(sets, c+" = CASE WHEN x.c"+strconv.Itoa(i)+" IS NULL THEN i."+c+" ELSE coalesce(i."+c+", '') || x.c"+strconv.Itoa(i)+" END")
		params = append(params, "$"+strconv.Itoa(i+4)+"::text[]")
		names = append(names, "c"+strconv.Itoa(i))
	}
	return "UPDATE items AS i SET " + strings.Join(sets, ", ") +
		"\nFROM unnest($1::text[], $2::text[], $3::text[], " + strings.Join(params, ", ") + ") AS x(t, id, s, " + strings.Join(names, ", ") + ")" +
		"\nWHERE i.tenant_id = x.t AND i.item_id = x.id::uuid AND i.session_id = x.s::uuid"
}()

var requestCols = []column{
	{name: "tenant_id", typ: "text"},
	{name: "request_id", typ: "text", value: "x.request_id::uuid"},
	{name: "session_id", typ: "text", value: "x.session_id::uuid"},
	{name: "thread_id", typ: "text", value: "x.thread_id::uuid", merge: keep("r", "thread_id")},
	{name: "turn_id", typ: "text", value: "x.turn_id::uuid", merge: keep("r", "turn_id")},
	{name: "item_id", typ: "text", value: "x.item_id::uuid", merge: keep("r", "item_id")},
	{name: "provider", typ: "text"},
	{name: "request_type", typ: "text", value: "coalesce(x.request_type, 'unknown')", merge: unlessDefault("r", "request_type", "unknown")},
	{name: "detail", typ: "text", merge: keep("r", "detail")},
	{name: "args", typ: "text", value: "x.args::jsonb", merge: keep("r", "args")},
	{name: "opened_at", typ: "timestamptz", merge: first("r", "opened_at")},
	{name: "resolved_at", typ: "timestamptz", merge: keep("r", "resolved_at")},
	{name: "decision", typ: "text", merge: keep("r", "decision")},
	{name: "resolution", typ: "text", value: "x.resolution::jsonb", merge: keep("r", "resolution")},
}

var upsertRequests = func() string {
	sets, where := crossSession("r", requestCols)
	return upsertSQL("requests", "r", "(tenant_id, request_id)", requestCols, sets, where)
}()

var taskCols = []column{
	{name: "tenant_id", typ: "text"},
	{name: "session_id", typ: "text", value: "x.session_id::uuid"},
	{name: "task_id", typ: "text"},
	{name: "provider", typ: "text"},
	{name: "thread_id", typ: "text", value: "x.thread_id::uuid", merge: keep("t", "thread_id")},
	{name: "turn_id", typ: "text", value: "x.turn_id::uuid", merge: keep("t", "turn_id")},
	{name: "description", typ: "text", merge: keep("t", "description")},
	{name: "task_type", typ: "text", merge: keep("t", "task_type")},
	{name: "status", typ: "text", merge: keep("t", "status")},
	{name: "summary", typ: "text", merge: keep("t", "summary")},
	{name: "last_tool_name", typ: "text", merge: keep("t", "last_tool_name")},
	{name: "usage", typ: "text", value: "x.usage::jsonb", merge: keep("t", "usage")},
	{name: "started_at", typ: "timestamptz", merge: first("t", "started_at")},
	{name: "completed_at", typ: "timestamptz", merge: keep("t", "completed_at")},
	{name: "updated_at", typ: "timestamptz", merge: "greatest(t.updated_at, EXCLUDED.updated_at)"},
}

var upsertTasks = upsertSQL("tasks", "t", "(tenant_id, session_id, task_id)", taskCols, ownSets(taskCols), "")

var hookCols = []column{
	{name: "tenant_id", typ: "text"},
	{name: "session_id", typ: "text", value: "x.session_id::uuid"},
	{name: "hook_id", typ: "text"},
	{name: "provider", typ: "text"},
	{name: "turn_id", typ: "text", value: "x.turn_id::uuid", merge: keep("h", "turn_id")},
	{name: "hook_name", typ: "text", merge: keep("h", "hook_name")},
	{name: "hook_event", typ: "text", merge: keep("h", "hook_event")},
	{name: "outcome", typ: "text", merge: keep("h", "outcome")},
	{name: "output", typ: "text", merge: keep("h", "output")},
	{name: "stdout", typ: "text", merge: keep("h", "stdout")},
	{name: "stderr", typ: "text", merge: keep("h", "stderr")},
	{name: "exit_code", typ: "int4", merge: keep("h", "exit_code")},
	{name: "started_at", typ: "timestamptz", merge: first("h", "started_at")},
	{name: "completed_at", typ: "timestamptz", merge: keep("h", "completed_at")},
}

var upsertHooks = upsertSQL("hooks", "h", "(tenant_id, session_id, hook_id)", hookCols, ownSets(hookCols), "")

var rateCols = []column{
	{name: "tenant_id", typ: "text"},
	{name: "event_id", typ: "text", value: "x.event_id::uuid"},
	{name: "window_name", typ: "text"},
	{name: "session_id", typ: "text", value: "x.session_id::uuid"},
	{name: "provider", typ: "text"},
	{name: "observed_at", typ: "timestamptz"},
	{name: "used_percent", typ: "float8"},
	{name: "window_minutes", typ: "int8"},
	{name: "resets_at", typ: "timestamptz"},
	{name: "status", typ: "text"},
	{name: "snapshot", typ: "text", value: "x.snapshot::jsonb"},
}

var insertRates = upsertSQL("rate_limit_observations", "o", "", rateCols, nil, "")

// upsertLedger resolves a turn's model when turn.completed had no
// breakdown by model: the turn's, else the session's, else "unknown".
// Resolved, two rows of a batch may name the same turn and model (two
// sessions describing one turn): the smallest session's is kept, as the
// conflict rule keeps it across batches.
const upsertLedger = `
INSERT INTO usage_ledger AS u (tenant_id, turn_id, model, provider, session_id, thread_id, occurred_at,
    input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens, reasoning_output_tokens, cost_usd)
SELECT DISTINCT ON (x.t, x.turn::uuid, m.model) x.t, x.turn::uuid, m.model, x.p, x.s::uuid, x.th::uuid, x.at,
    x.i, x.ci, x.cw, x.o, x.r, x.c
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[],
    $8::int8[], $9::int8[], $10::int8[], $11::int8[], $12::int8[], $13::float8[]) AS x(t, turn, mo, p, s, th, at, i, ci, cw, o, r, c)
CROSS JOIN LATERAL (SELECT coalesce(nullif(x.mo, ''),
        (SELECT model FROM turns WHERE tenant_id = x.t AND turn_id = x.turn::uuid),
        (SELECT model FROM sessions WHERE tenant_id = x.t AND session_id = x.s::uuid), 'unknown') AS model) m
ORDER BY x.t, x.turn::uuid, m.model, x.s::uuid
ON CONFLICT (tenant_id, turn_id, model) DO UPDATE SET
    session_id = EXCLUDED.session_id, provider = EXCLUDED.provider, thread_id = EXCLUDED.thread_id,
    occurred_at = EXCLUDED.occurred_at,
    input_tokens = EXCLUDED.input_tokens, cached_input_tokens = EXCLUDED.cached_input_tokens,
    cache_write_input_tokens = EXCLUDED.cache_write_input_tokens, output_tokens = EXCLUDED.output_tokens,
    reasoning_output_tokens = EXCLUDED.reasoning_output_tokens, cost_usd = EXCLUDED.cost_usd
WHERE EXCLUDED.session_id <= u.session_id`

// upsertUnmapped sums a batch's counts per row: sessions of one CLI
// version share a row, and the version is the session's, resolved here.
const upsertUnmapped = `
INSERT INTO unmapped_kinds AS k (tenant_id, provider, cli_version, dialect, kind, count, first_seen, last_seen)
SELECT x.t, x.p, coalesce(s.cli_version, ''), x.d, x.k, sum(x.n), min(x.f), max(x.l)
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int8[], $7::timestamptz[], $8::timestamptz[])
    AS x(t, p, sid, d, k, n, f, l)
LEFT JOIN sessions s ON s.tenant_id = x.t AND s.session_id = x.sid::uuid
GROUP BY 1, 2, 3, 4, 5
ORDER BY 1, 2, 3, 4, 5
ON CONFLICT (tenant_id, provider, cli_version, dialect, kind) DO UPDATE SET
    count = k.count + EXCLUDED.count,
    first_seen = least(k.first_seen, EXCLUDED.first_seen),
    last_seen = greatest(k.last_seen, EXCLUDED.last_seen)`

// rows accumulates the parameter arrays of one set-based statement, one
// array per column; a nil or nil-pointer value is NULL.
type rows struct {
	typs []string
	cols []any
	n    int
}

func newRows(cols []column) *rows {
	r := &rows{}
	for _, c := range cols {
		r.typs = append(r.typs, c.typ)
	}
	r.reset()
	return r
}

func newRowsOf(typs ...string) *rows {
	r := &rows{typs: typs}
	r.reset()
	return r
}

func (r *rows) reset() {
	r.n = 0
	r.cols = make([]any, len(r.typs))
	for i, t := range r.typs {
		switch t {
		case "text":
			r.cols[i] = []*string{}
		case "int8":
			r.cols[i] = []*int64{}
		case "int4":
			r.cols[i] = []*int32{}
		case "float8":
			r.cols[i] = []*float64{}
		case "timestamptz":
			r.cols[i] = []*time.Time{}
		default:
			panic("rows: no array of " + t)
		}
	}
}

// add appends a row; values are in column order.
func (r *rows) add(vals ...any) {
	if len(vals) != len(r.cols) {
		panic(fmt.Sprintf("rows: %d values for %d columns", len(vals), len(r.cols)))
	}
	for i, v := range vals {
		switch a := r.cols[i].(type) {
		case []*string:
			r.cols[i] = append(a, asString(v))
		case []*int64:
			r.cols[i] = append(a, asInt64(v))
		case []*int32:
			r.cols[i] = append(a, asInt32(v))
		case []*float64:
			r.cols[i] = append(a, asFloat(v))
		case []*time.Time:
			r.cols[i] = append(a, asTime(v))
		}
	}
	r.n++
}

func asString(v any) *string {
	switch s := v.(type) {
	case string:
		return &s
	case *string:
		return s
	case []byte:
		if s == nil {
			return nil
		}
		t := string(s)
		return &t
	case json.RawMessage:
		if len(s) == 0 {
			return nil
		}
		t := string(s)
		return &t
	case nil:
		return nil
	}
	panic(fmt.Sprintf("rows: %T is not text", v))
}

func asInt64(v any) *int64 {
	switch n := v.(type) {
	case int64:
		return &n
	case *int64:
		return n
	case nil:
		return nil
	}
	panic(fmt.Sprintf("rows: %T is not int8", v))
}

func asInt32(v any) *int32 {
	switch n := v.(type) {
	case int:
		m := int32(n) //nolint:gosec // exit codes fit
		return &m
	case *int:
		if n == nil {
			return nil
		}
		m := int32(*n) //nolint:gosec // exit codes fit
		return &m
	case nil:
		return nil
	}
	panic(fmt.Sprintf("rows: %T is not int4", v))
}

func asFloat(v any) *float64 {
	switch f := v.(type) {
	case float64:
		return &f
	case *float64:
		return f
	case nil:
		return nil
	}
	panic(fmt.Sprintf("rows: %T is not float8", v))
}

func asTime(v any) *time.Time {
	switch t := v.(type) {
	case time.Time:
		return &t
	case *time.Time:
		return t
	case nil:
		return nil
	}
	panic(fmt.Sprintf("rows: %T is not timestamptz", v))
}

// queueTo queues the statement with the rows, if any.
func (r *rows) queueTo(b *pgx.Batch, sql string) {
	if r.n > 0 {
		b.Queue(sql, r.cols...)
	}
}

func sortedKeys[K comparable, V any](m map[K]V, less func(a, b K) int) []K {
	ks := slices.Collect(maps.Keys(m))
	slices.SortFunc(ks, less)
	return ks
}

func cmpKey(a, b key) int { return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.id, b.id)) }

// cmpShared orders the patches of a table several sessions share (keyed
// by tenant and id) by that key, then session: the order their rows are
// locked in.
func cmpShared(a, b key3) int {
	return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.id, b.id), cmp.Compare(a.session, b.session))
}

// cmpOwn orders the patches of a table keyed by tenant, session and id.
func cmpOwn(a, b key3) int {
	return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.session, b.session), cmp.Compare(a.id, b.id))
}

// rounds splits the keys of a table whose rows several sessions share into
// statements that touch each row at most once, keeping their order.
func rounds(keys []key3) [][]key3 {
	var out [][]key3
	seen := map[key]int{}
	for _, k := range keys {
		pk := key{k.tenant, k.id}
		r := seen[pk]
		seen[pk] = r + 1
		if r == len(out) {
			out = append(out, nil)
		}
		out[r] = append(out[r], k)
	}
	return out
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

func filesJSON(files []string) []byte {
	if files == nil {
		return nil
	}
	b, _ := json.Marshal(files) //nolint:errchkjson // strings always encode
	return b
}

type usageVals struct{ in, cached, write, out, reasoning *int64 }

func usageOf(u *canonical.TokenUsage) usageVals {
	if u == nil {
		return usageVals{}
	}
	return usageVals{new(u.InputTokens), new(u.CachedInputTokens), new(u.CacheWriteInputTokens), new(u.OutputTokens), new(u.ReasoningOutputTokens)}
}

// queue adds the batch's statements to b, table by table in a fixed order.
func (w *writes) queue(b *pgx.Batch) {
	rs := newRows(sessionCols)
	for _, k := range sortedKeys(w.sessions, cmpKey) {
		s := w.sessions[k]
		rs.add(k.tenant, k.id, s.provider, s.state, s.stateReason, s.model, s.cliVersion, jsonMap(s.config),
			s.startedAt, s.endedAt, s.exitKind, s.exitCode, s.exitReason, s.first, s.last, s.count)
	}
	rs.queueTo(b, upsertSessions)

	for _, round := range rounds(sortedKeys(w.threads, cmpShared)) {
		rs := newRows(threadCols)
		for _, k := range round {
			t := w.threads[k]
			u := usageOf(t.usage)
			rs.add(k.tenant, k.id, k.session, t.provider, t.providerThreadID, t.state, t.name, jsonMap(t.metadata),
				u.in, u.cached, u.write, u.out, u.reasoning, t.contextWindow, t.startedAt, t.updatedAt)
		}
		rs.queueTo(b, upsertThreads)
	}

	for _, round := range rounds(sortedKeys(w.turns, cmpShared)) {
		rs := newRows(turnCols)
		for _, k := range round {
			t := w.turns[k]
			u := usageOf(t.usage)
			rs.add(k.tenant, k.id, k.session, t.thread, t.provider, t.state, t.model, t.effort, t.startedAt, t.endedAt,
				t.stopReason, t.errorMessage, t.errorClass, u.in, u.cached, u.write, u.out, u.reasoning, t.cost, t.durationMs,
				rawJSON(t.plan), t.planExplanation, t.diff, t.updatedAt)
		}
		rs.queueTo(b, upsertTurns)
	}

	for _, round := range rounds(sortedKeys(w.items, cmpShared)) {
		rs := newRows(itemCols)
		appends := newRowsOf(slices.Repeat([]string{"text"}, 3+numStreams)...)
		for _, k := range round {
			it := w.items[k]
			vals := []any{k.tenant, k.id, k.session, it.thread, it.turn, it.provider, it.itemType, it.status, it.title, it.detail,
				it.toolName, it.command, it.exitCode, filesJSON(it.files), it.parent}
			app := []any{k.tenant, k.id, k.session}
			extends := false
			for i, t := range it.text {
				switch {
				case t == nil:
					vals, app = append(vals, nil), append(app, nil)
				case it.replace&(1<<i) != 0:
					vals, app = append(vals, t.String()), append(app, nil)
				default:
					vals, app = append(vals, nil), append(app, t.String())
					extends = true
				}
			}
			rs.add(append(vals, it.startedAt, it.completedAt, it.updatedAt)...)
			if extends {
				appends.add(app...)
			}
		}
		rs.queueTo(b, upsertItems)
		appends.queueTo(b, appendItemText)
	}

	for _, round := range rounds(sortedKeys(w.requests, cmpShared)) {
		rs := newRows(requestCols)
		for _, k := range round {
			r := w.requests[k]
			rs.add(k.tenant, k.id, k.session, r.thread, r.turn, r.item, r.provider, r.requestType, r.detail,
				rawJSON(r.args), r.openedAt, r.resolvedAt, r.decision, rawJSON(r.resolution))
		}
		rs.queueTo(b, upsertRequests)
	}

	rs = newRows(taskCols)
	for _, k := range sortedKeys(w.tasks, cmpOwn) {
		t := w.tasks[k]
		rs.add(k.tenant, k.session, k.id, t.provider, t.thread, t.turn, t.description, t.taskType, t.status,
			t.summary, t.lastTool, rawJSON(t.usage), t.startedAt, t.completedAt, t.updatedAt)
	}
	rs.queueTo(b, upsertTasks)

	rs = newRows(hookCols)
	for _, k := range sortedKeys(w.hooks, cmpOwn) {
		h := w.hooks[k]
		rs.add(k.tenant, k.session, k.id, h.provider, h.turn, h.name, h.event, h.outcome, h.output,
			h.stdout, h.stderr, h.exitCode, h.startedAt, h.completedAt)
	}
	rs.queueTo(b, upsertHooks)

	rs = newRows(rateCols)
	for _, r := range w.rates {
		rs.add(r.tenant, r.event, r.window, r.session, r.provider, r.at, r.usedPercent, r.windowMinutes,
			r.resetsAt, r.status, rawJSON(r.snapshot))
	}
	rs.queueTo(b, insertRates)

	rs = newRowsOf("text", "text", "text", "text", "text", "text", "timestamptz", "int8", "int8", "int8", "int8", "int8", "float8")
	for _, k := range sortedKeys(w.ledger, func(a, b ledgerKey) int {
		return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.turn, b.turn), cmp.Compare(a.model, b.model), cmp.Compare(a.session, b.session))
	}) {
		l := w.ledger[k]
		rs.add(l.tenant, l.turn, l.model, l.provider, l.session, l.thread, l.at,
			l.usage.InputTokens, l.usage.CachedInputTokens, l.usage.CacheWriteInputTokens, l.usage.OutputTokens,
			l.usage.ReasoningOutputTokens, l.cost)
	}
	rs.queueTo(b, upsertLedger)

	rs = newRowsOf("text", "text", "text", "text", "text", "int8", "timestamptz", "timestamptz")
	for _, k := range sortedKeys(w.unmapped, func(a, b unmappedKey) int {
		return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.provider, b.provider), cmp.Compare(a.session, b.session),
			cmp.Compare(a.dialect, b.dialect), cmp.Compare(a.kind, b.kind))
	}) {
		u := w.unmapped[k]
		rs.add(k.tenant, k.provider, k.session, k.dialect, k.kind, u.count, u.first, u.last)
	}
	rs.queueTo(b, upsertUnmapped)
}
