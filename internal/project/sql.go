package project

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
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
	// (also for uuid and jsonb, cast by value), int8, int4, numeric or
	// timestamptz.
	typ string
	// value is what is inserted, an expression over x.<name>; default
	// x.<name>.
	value string
	// merge is the column's value on conflict, over EXCLUDED and the
	// table's alias; "" leaves the column alone (keys). Tables whose rows
	// several sessions share say how with kind instead (see shared).
	merge string
	// kind is how a shared table's column merges (0: a key).
	kind mergeKind
	// provided is when a patch holds a value for the column, over x;
	// default x.<name> IS NOT NULL.
	provided string
	// rank orders the values of a column merged by kindRank.
	rank []string
	// stands names a bool column of a kindLatest column's row: a value
	// stored with it true is not replaced by one with it false (a turn's
	// own count, stated at its end, by a count reported on the way).
	stands string
}

// upsertSQL builds INSERT INTO table ... SELECT FROM unnest(...) ON
// CONFLICT (conflict) DO UPDATE SET <sets>. A column without a type is
// computed from the others (no parameter).
func upsertSQL(table, alias, conflict string, cols []column, sets []string) string {
	var names, params, xs, values []string
	for _, c := range cols {
		names = append(names, c.name)
		v := c.value
		if v == "" {
			v = "x." + c.name
		}
		values = append(values, v)
		if c.typ != "" {
			xs = append(xs, c.name)
			params = append(params, "$"+strconv.Itoa(len(params)+1)+"::"+c.typ+"[]")
		}
	}
	sql := "INSERT INTO " + table + " AS " + alias + " (" + strings.Join(names, ", ") + ")\nSELECT " + strings.Join(values, ", ") +
		"\nFROM unnest(" + strings.Join(params, ", ") + ") AS x(" + strings.Join(xs, ", ") + ")\nON CONFLICT " + conflict
	if len(sets) == 0 {
		return sql + " DO NOTHING"
	}
	return sql + " DO UPDATE SET\n    " + strings.Join(sets, ",\n    ")
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

// Rows several ingest sessions describe (a Codex thread seen through its
// app-server tap and through its rollout log has one id) merge column by
// column, whatever order the sessions are applied in; migrations/README.md
// ("Rows two sessions describe") states the rule. Mechanically:
//
//   - session_id is the smallest session that wrote the row, its owner, and
//     bit i of session_columns says whether the owner provided the i-th
//     merged column. A patch's own bits travel as the inserted row's
//     session_columns (computed from what it provides), which is all ON
//     CONFLICT can see of it.
//   - A smaller session's first write takes the row over: its values
//     replace, the previous owner's stay where it has none (now fills).
//   - The owner's value for a column it provided merges as if it were
//     alone; its first value for a column replaces a fill.
//   - A larger session fills the columns the owner never provided, merging
//     its own values there; it never touches the owner's.
//   - State and status take the most severe value, updated_at the latest,
//     whoever wrote them.
//
// With two sessions, what fills a column is always the other session's own
// value, so the result is the same in any order; with three or more, fills
// from the non-owners may interleave.
type mergeKind int

const (
	kindKey      mergeKind = iota
	kindLatest             // the latest value the session provided
	kindFirst              // the first value the session provided
	kindMap                // a JSON object, merged key by key
	kindGreatest           // the greatest value any session provided
	kindRank               // the highest ranked value any session provided
)

// shared builds the SET list of a table whose rows several sessions
// share, and adds the session_columns column, computed from what each
// row of the patch provides.
func shared(alias string, cols []column) ([]column, []string) {
	var sets, provided []string
	x, r := "EXCLUDED", alias
	for i, c := range cols {
		if c.kind == kindKey {
			continue
		}
		bit := int64(1) << len(provided)
		p := c.provided
		if p == "" {
			p = "x." + c.name + " IS NOT NULL"
		}
		provided = append(provided, fmt.Sprintf("CASE WHEN %s THEN %d ELSE 0 END", p, bit))
		X, R := x+"."+c.name, r+"."+c.name
		// fresh is the session's value if this patch has one.
		fresh := fmt.Sprintf("CASE WHEN (%s.session_columns & %d) <> 0 THEN %s ELSE %s END", x, bit, X, R)
		var merge string
		switch c.kind {
		case kindLatest:
			merge = fresh
			if c.stands != "" {
				merge = fmt.Sprintf("CASE WHEN %s.%s IS TRUE AND %s.%s IS NOT TRUE THEN %s ELSE %s END", r, c.stands, x, c.stands, R, fresh)
			}
		case kindFirst:
			merge = fmt.Sprintf("coalesce(%s, %s)", R, X)
		case kindMap:
			merge = fmt.Sprintf("CASE WHEN (%s.session_columns & %d) <> 0 THEN %s || %s ELSE %s END", x, bit, R, X, R)
		case kindGreatest:
			sets = append(sets, fmt.Sprintf("%s = greatest(%s, %s)", c.name, R, X))
			continue
		case kindRank:
			rank := func(v string) string {
				var b strings.Builder
				b.WriteString("CASE " + v)
				for i, s := range c.rank {
					fmt.Fprintf(&b, " WHEN '%s' THEN %d", s, i)
				}
				b.WriteString(" ELSE -1 END")
				return b.String()
			}
			// Ties (two states of one rank) go to the greater text, so the
			// order the sessions came in does not matter.
			sets = append(sets, fmt.Sprintf("%s = CASE WHEN %s IS NULL OR (%s IS NOT NULL AND (%s, %s) > (%s, %s)) THEN %s ELSE %s END",
				c.name, R, X, rank(X), X, rank(R), R, X, R))
			continue
		case kindKey:
			panic(fmt.Sprintf("shared: column %d (%s) is a key", i, c.name))
		}
		owned := fmt.Sprintf("(%s.session_columns & %d) <> 0", r, bit)
		sets = append(sets, fmt.Sprintf(
			"%s = CASE WHEN %s.session_id < %s.session_id THEN %s WHEN %s.session_id > %s.session_id THEN CASE WHEN %s THEN %s ELSE %s END "+
				"WHEN %s THEN %s ELSE %s END",
			c.name, x, r, fresh, x, r, owned, R, merge, owned, merge, fresh))
	}
	if len(provided) > 63 {
		panic("shared: more merged columns than session_columns has bits")
	}
	cols = append(cols, column{name: "session_columns", value: strings.Join(provided, " | ")})
	sets = append(sets,
		fmt.Sprintf("session_columns = CASE WHEN %[1]s.session_id < %[2]s.session_id THEN %[1]s.session_columns "+
			"WHEN %[1]s.session_id = %[2]s.session_id THEN %[2]s.session_columns | %[1]s.session_columns ELSE %[2]s.session_columns END", x, r),
		fmt.Sprintf("session_id = least(%s.session_id, %s.session_id)", x, r))
	return cols, sets
}

// columnBit is the session_columns bit of a shared table's column.
func columnBit(cols []column, name string) int64 {
	n := 0
	for _, c := range cols {
		if c.kind == kindKey {
			continue
		}
		if c.name == name {
			return int64(1) << n
		}
		n++
	}
	panic("columnBit: no merged column " + name)
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
	{name: "dialect", typ: "text", merge: first("s", "dialect")},
}

var upsertSessions = upsertSQL("sessions", "s", "(tenant_id, session_id)", sessionCols, ownSets(sessionCols))

// usageColumns are the token columns of threads and turns, merged as k
// (and stands, see column).
func usageColumns(k mergeKind, stands string) []column {
	var out []column
	for _, n := range []string{"input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens", "reasoning_output_tokens"} {
		out = append(out, column{name: n, typ: "int8", kind: k, stands: stands})
	}
	return out
}

func keyCol(name, typ, value string) column { return column{name: name, typ: typ, value: value} }

var threadCols, threadSets = shared("t", slices.Concat([]column{
	keyCol("tenant_id", "text", ""),
	keyCol("thread_id", "text", "x.thread_id::uuid"),
	keyCol("session_id", "text", "x.session_id::uuid"),
	keyCol("provider", "text", ""),
	{name: "provider_thread_id", typ: "text", kind: kindLatest},
	{name: "state", typ: "text", kind: kindLatest},
	{name: "name", typ: "text", kind: kindLatest},
	{name: "metadata", typ: "text", value: "coalesce(x.metadata::jsonb, '{}')", kind: kindMap},
	// A thread's usage is a running count, which only grows: each session
	// saw all of it or the part up to where it stopped (a resumed codex
	// exec run counts the runs before it; a cut log, less than its
	// stream). The greatest any session saw is the thread's.
}, usageColumns(kindGreatest, ""), []column{
	{name: "context_window", typ: "int8", kind: kindLatest},
	{name: "started_at", typ: "timestamptz", kind: kindFirst},
	{name: "updated_at", typ: "timestamptz", kind: kindGreatest},
	// Appended only: a column's session_columns bit is its position.
	{name: "preview", typ: "text", kind: kindFirst},
}))

var upsertThreads = upsertSQL("threads", "t", "(tenant_id, thread_id)", threadCols, threadSets)

// turnStates and itemStatuses rank what a session may report, from least
// to most severe.
var (
	turnStates   = []string{"in_progress", "completed", "cancelled", "interrupted", "aborted", "failed"}
	itemStatuses = []string{"inProgress", "completed", "declined", "failed"}
)

var turnCols, turnSets = shared("t", slices.Concat([]column{
	keyCol("tenant_id", "text", ""),
	keyCol("turn_id", "text", "x.turn_id::uuid"),
	keyCol("session_id", "text", "x.session_id::uuid"),
	{name: "thread_id", typ: "text", value: "x.thread_id::uuid", kind: kindLatest},
	keyCol("provider", "text", ""),
	{name: "state", typ: "text", value: "coalesce(x.state, 'in_progress')", kind: kindRank, rank: turnStates},
	{name: "model", typ: "text", kind: kindFirst},
	{name: "effort", typ: "text", kind: kindLatest},
	{name: "started_at", typ: "timestamptz", kind: kindFirst},
	{name: "ended_at", typ: "timestamptz", kind: kindLatest},
	{name: "stop_reason", typ: "text", kind: kindLatest},
	{name: "error_message", typ: "text", kind: kindLatest},
	{name: "error_class", typ: "text", kind: kindLatest},
	// A turn's usage is its own count when its end states one, else the
	// latest count reported on the way (a log cut off mid-turn, a Codex
	// turn interrupted); a report after the end never replaces the own.
}, usageColumns(kindLatest, "usage_final"), []column{
	{name: "cost_usd", typ: "numeric", kind: kindLatest},
	{name: "duration_ms", typ: "int8", kind: kindLatest},
	{name: "plan", typ: "text", value: "x.plan::jsonb", kind: kindLatest},
	{name: "plan_explanation", typ: "text", kind: kindLatest},
	{name: "diff", typ: "text", kind: kindLatest},
	{name: "updated_at", typ: "timestamptz", kind: kindGreatest},
	// Appended only: a column's session_columns bit is its position.
	{name: "provider_turn_id", typ: "text", kind: kindLatest},
	// Set with the times they qualify, so taken from the same session.
	{name: "started_at_ingested", typ: "bool", kind: kindFirst},
	{name: "ended_at_ingested", typ: "bool", kind: kindLatest},
	// Provided with the usage, so taken from the same session.
	{name: "usage_final", typ: "bool", kind: kindLatest, stands: "usage_final"},
	{name: "agent_id", typ: "text", kind: kindFirst},
}))

var upsertTurns = upsertSQL("turns", "t", "(tenant_id, turn_id)", turnCols, turnSets)

// textColumns are the item text columns in streamIndex order.
var textColumns = [numStreams]string{
	"text_assistant", "text_reasoning", "text_reasoning_summary", "text_plan",
	"text_command_output", "text_file_change", "text_unknown",
}

// Item texts: a text that replaces its column (lifecycle content) is
// written by the upsert. A batch's deltas of an item (concatenated) are
// stored as a part of its text (insertItemTextParts) until the batch that
// completes the item folds the session's parts into the column at once
// (flushItemText): Postgres rewrites a whole value to change it, so
// appending each batch's deltas to the column rewrote the text once per
// batch, quadratic when a live stream brings one delta per batch
// (migrations/013_item_text_parts.up.sql).
var itemCols, itemSets = shared("i", func() []column {
	cols := []column{
		keyCol("tenant_id", "text", ""),
		keyCol("item_id", "text", "x.item_id::uuid"),
		keyCol("session_id", "text", "x.session_id::uuid"),
		{name: "thread_id", typ: "text", value: "x.thread_id::uuid", kind: kindLatest},
		{name: "turn_id", typ: "text", value: "x.turn_id::uuid", kind: kindLatest},
		keyCol("provider", "text", ""),
		{name: "item_type", typ: "text", value: "coalesce(x.item_type, 'unknown')", kind: kindLatest},
		{name: "status", typ: "text", kind: kindRank, rank: itemStatuses},
		{name: "title", typ: "text", kind: kindLatest},
		{name: "detail", typ: "text", kind: kindLatest},
		{name: "tool_name", typ: "text", kind: kindLatest},
		{name: "command", typ: "text", kind: kindLatest},
		{name: "exit_code", typ: "int4", kind: kindLatest},
		// An array per row does not survive unnest (it flattens): files
		// travel as a JSON array.
		{name: "files", typ: "text", value: "CASE WHEN x.files IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_array_elements_text(x.files::jsonb)) END",
			kind: kindLatest},
		{name: "parent_item_id", typ: "text", value: "x.parent_item_id::uuid", kind: kindLatest},
	}
	for _, c := range textColumns {
		cols = append(cols, column{name: c, typ: "text", kind: kindLatest})
	}
	return append(cols,
		column{name: "started_at", typ: "timestamptz", kind: kindFirst},
		column{name: "completed_at", typ: "timestamptz", kind: kindLatest},
		column{name: "updated_at", typ: "timestamptz", kind: kindGreatest},
		// Appended only: a column's session_columns bit is its position.
		column{name: "duration_ms", typ: "int8", kind: kindLatest},
		column{name: "started_at_ingested", typ: "bool", kind: kindFirst},
		column{name: "completed_at_ingested", typ: "bool", kind: kindLatest},
		column{name: "by_user", typ: "bool", kind: kindLatest},
	)
}())

var upsertItems = upsertSQL("items", "i", "(tenant_id, item_id)", itemCols, itemSets)

// flushItemText folds a session's text parts of the items it completes in
// this batch, followed by the batch's own deltas, into the item texts, on
// the rows the upsert just wrote, and deletes them; of an item whose
// column the batch's lifecycle content replaced (the drop bits, by
// stream), it deletes the session's parts of that column, which the
// content supersedes. The owner's first text for a column replaces what
// another session filled in, its next ones extend it. Another session's
// text fills a column the owner never provided, extending that fill, and
// is left out of one it did (see shared): the row is the same whichever
// session was applied first, since a session applied first owned the row
// and built the same text. The parameters are tenant, item, session,
// flush (1 for an item completed in the batch), drop, then the batch's
// deltas per stream.
var flushItemText = func() string {
	var sets, params, names, parts, texts, given, bits []string
	for i, c := range textColumns {
		v := "x.c" + strconv.Itoa(i)
		bit := columnBit(itemCols, c)
		sets = append(sets, fmt.Sprintf("%[1]s = CASE WHEN %[2]s IS NULL THEN i.%[1]s "+
			"WHEN i.session_id <> x.s::uuid THEN CASE WHEN (i.session_columns & %[3]d) <> 0 THEN i.%[1]s ELSE coalesce(i.%[1]s, '') || %[2]s END "+
			"WHEN (i.session_columns & %[3]d) <> 0 THEN coalesce(i.%[1]s, '') || %[2]s ELSE %[2]s END",
			c, v, bit))
		bits = append(bits, fmt.Sprintf("CASE WHEN %s IS NULL OR i.session_id <> x.s::uuid THEN 0 ELSE %d END", v, bit))
		params = append(params, "$"+strconv.Itoa(i+6)+"::text[]")
		names = append(names, "c"+strconv.Itoa(i))
		parts = append(parts, fmt.Sprintf("string_agg(text, '' ORDER BY seq) FILTER (WHERE stream = %d) AS p%d", i, i))
		texts = append(texts, fmt.Sprintf("CASE WHEN p.p%[1]d IS NULL THEN x.c%[1]d WHEN x.c%[1]d IS NULL THEN p.p%[1]d ELSE p.p%[1]d || x.c%[1]d END AS c%[1]d", i))
		given = append(given, v)
	}
	sets = append(sets, "session_columns = i.session_columns | "+strings.Join(bits, " | "))
	xs := "t, id, s, flush, drop, " + strings.Join(names, ", ")
	return "WITH x AS (SELECT " + xs + " FROM unnest($1::text[], $2::text[], $3::text[], $4::int4[], $5::int4[], " + strings.Join(params, ", ") +
		") AS x(" + xs + ")),\n" +
		"gone AS (DELETE FROM item_text_parts p USING x\n" +
		"    WHERE p.tenant_id = x.t AND p.item_id = x.id::uuid AND p.session_id = x.s::uuid AND (x.flush = 1 OR (x.drop >> p.stream) & 1 = 1)\n" +
		"    RETURNING p.tenant_id, p.item_id, p.session_id, p.stream, p.seq, p.text, x.drop),\n" +
		"p AS (SELECT tenant_id, item_id, session_id, " + strings.Join(parts, ", ") +
		"\n    FROM gone WHERE (drop >> stream) & 1 = 0 GROUP BY 1, 2, 3),\n" +
		"y AS (SELECT x.t, x.id, x.s, " + strings.Join(texts, ", ") +
		"\n    FROM x LEFT JOIN p ON p.tenant_id = x.t AND p.item_id = x.id::uuid AND p.session_id = x.s::uuid)\n" +
		"UPDATE items AS i SET " + strings.Join(sets, ", ") +
		"\nFROM y AS x WHERE i.tenant_id = x.t AND i.item_id = x.id::uuid AND num_nonnulls(" + strings.Join(given, ", ") + ") > 0"
}()

// insertItemTextParts stores a batch's deltas of the items it does not
// complete, one part per item, session and stream.
const insertItemTextParts = `INSERT INTO item_text_parts (tenant_id, item_id, session_id, stream, text)
SELECT x.t, x.id::uuid, x.s::uuid, x.k, x.v FROM unnest($1::text[], $2::text[], $3::text[], $4::int4[], $5::text[]) AS x(t, id, s, k, v)`

var requestCols, requestSets = shared("r", []column{
	keyCol("tenant_id", "text", ""),
	keyCol("request_id", "text", "x.request_id::uuid"),
	keyCol("session_id", "text", "x.session_id::uuid"),
	{name: "thread_id", typ: "text", value: "x.thread_id::uuid", kind: kindLatest},
	{name: "turn_id", typ: "text", value: "x.turn_id::uuid", kind: kindLatest},
	{name: "item_id", typ: "text", value: "x.item_id::uuid", kind: kindLatest},
	keyCol("provider", "text", ""),
	{name: "request_type", typ: "text", value: "coalesce(x.request_type, 'unknown')", kind: kindLatest},
	{name: "detail", typ: "text", kind: kindLatest},
	{name: "args", typ: "text", value: "x.args::jsonb", kind: kindLatest},
	{name: "opened_at", typ: "timestamptz", kind: kindFirst},
	{name: "resolved_at", typ: "timestamptz", kind: kindLatest},
	{name: "decision", typ: "text", kind: kindLatest},
	{name: "resolution", typ: "text", value: "x.resolution::jsonb", kind: kindLatest},
	// Appended only: a column's session_columns bit is its position.
	{name: "opened_at_ingested", typ: "bool", kind: kindFirst},
	{name: "resolved_at_ingested", typ: "bool", kind: kindLatest},
})

var upsertRequests = upsertSQL("requests", "r", "(tenant_id, request_id)", requestCols, requestSets)

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

var upsertTasks = upsertSQL("tasks", "t", "(tenant_id, session_id, task_id)", taskCols, ownSets(taskCols))

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
	{name: "command", typ: "text", merge: keep("h", "command")},
	{name: "duration_ms", typ: "int8", merge: keep("h", "duration_ms")},
	// Merged as the times they qualify, so taken with them.
	{name: "started_at_ingested", typ: "bool", merge: first("h", "started_at_ingested")},
	{name: "completed_at_ingested", typ: "bool", merge: keep("h", "completed_at_ingested")},
}

var upsertHooks = upsertSQL("hooks", "h", "(tenant_id, session_id, hook_id)", hookCols, ownSets(hookCols))

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

var insertRates = upsertSQL("rate_limit_observations", "o", "", rateCols, nil)

// upsertLedger resolves a turn's model when turn.completed had no
// breakdown by model: the turn's, else the session's, else "unknown".
// A row's usage_key is the turn as every session sees it (turn_key,
// migration 005: from the thread and the provider's turn id when the
// event names one; a Claude stream and its session log give one turn two
// canonical ids and the same provider turn id), else the canonical turn
// id. Several sessions may report one
// key and model, in one batch or across batches: the row is one session's
// (ledgerWins: the one that counts the most tokens, of equal counts the
// smallest), so a turn's tokens are counted once, and its cost is that
// session's if it states one, else the next session's that does (Claude's
// stream states costs, its session log does not). Within a batch the
// window picks that cost before DISTINCT ON keeps the winning row; across
// batches the conflict rule does the same, so the order the sessions come
// in does not matter.
var upsertLedger = `
INSERT INTO usage_ledger AS u (tenant_id, usage_key, turn_id, model, provider, session_id, thread_id, occurred_at,
    input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens, reasoning_output_tokens, cost_usd)
SELECT DISTINCT ON (y.t, y.usage_key, y.model) y.t, y.usage_key, y.turn, y.model, y.p, y.s, y.th, y.at,
    y.i, y.ci, y.cw, y.o, y.r,
    first_value(y.c) OVER (PARTITION BY y.t, y.usage_key, y.model ORDER BY y.c IS NULL, y.n DESC, y.s)
FROM (` + ledgerSource + `) y
ORDER BY y.t, y.usage_key, y.model, y.n DESC, y.s
ON CONFLICT (tenant_id, usage_key, model) DO UPDATE SET
` + ledgerOwned + `,
    cost_usd = CASE WHEN ` + ledgerWins + ` THEN coalesce(EXCLUDED.cost_usd, u.cost_usd)
        ELSE coalesce(u.cost_usd, EXCLUDED.cost_usd) END,
    provisional = false`

// ledgerWins says whether a turn's count (EXCLUDED) takes over the ledger
// row of its turn and model from the count there (u): it replaces a
// report of the turn (provisional) and a count its own session stated
// before; of two sessions' counts, the one with more tokens is kept, and
// of equal ones the smallest session's. Two sessions count one turn
// alike, or one saw more of it: a Claude stream's result counts what the
// turn's sub-agents used, which the session log of the same run leaves
// out (it writes their lines to transcripts of their own), so with the
// smallest session's row kept, a run whose log's id was the smaller lost
// its sub-agents' tokens on the main model when their transcripts were
// not ingested.
var ledgerWins = `(u.provisional OR EXCLUDED.session_id = u.session_id
        OR (` + ledgerTotal("EXCLUDED") + `, u.session_id) > (` + ledgerTotal("u") + `, EXCLUDED.session_id))`

// ledgerTotal is a ledger row's total, the row named by alias: its tokens
// as the views' total_tokens and TokenUsage.TotalTokens count them (the
// output includes the reasoning), summed as numeric, since each count may
// be as large as a frame says and four of them overflow int8.
func ledgerTotal(alias string) string {
	return fmt.Sprintf("(%[1]s.input_tokens::numeric + %[1]s.cached_input_tokens + %[1]s.cache_write_input_tokens + %[1]s.output_tokens)", alias)
}

// ledgerSource is a batch's ledger rows with their usage_key and model
// resolved (see upsertLedger), and their total (n, as ledgerTotal), as y.
const ledgerSource = `
    SELECT x.t, k.usage_key, x.turn::uuid AS turn, m.model, x.p, x.s::uuid AS s, x.th::uuid AS th, x.at,
        x.i, x.ci, x.cw, x.o, x.r, x.c, x.i::numeric + x.ci + x.cw + x.o AS n
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[],
        $8::int8[], $9::int8[], $10::int8[], $11::int8[], $12::int8[], $13::numeric[], $14::text[], $15::text[], $16::text[])
        AS x(t, turn, mo, p, s, th, at, i, ci, cw, o, r, c, pt, tm, sm)
    CROSS JOIN LATERAL (SELECT turn_key(x.t, x.th::uuid, x.pt, x.turn::uuid) AS usage_key) k
    CROSS JOIN LATERAL (SELECT coalesce(nullif(x.mo, ''),
            (SELECT model FROM turns WHERE tenant_id = x.t AND turn_id = x.turn::uuid), x.tm, x.sm,
            (SELECT model FROM sessions WHERE tenant_id = x.t AND session_id = x.s::uuid), 'unknown') AS model) m`

// The usage a turn reported before it ended is kept as provisional rows
// (migration 016): per usage_key, the rows of the smallest session that
// reported one, from its latest report, and only while no session has
// written the turn's own count. Each statement below is a separate one:
// a statement does not see its own deletions.
//
// lockUsageKeys serializes the ledger writes of a turn. A worker writing a
// turn's own rows and another writing a report of the same turn (a Claude
// stream and its log applied by two workers) would each miss what the
// other had not committed yet, and a report under another model would
// stay beside the turn's own count. Taken in a statement of its own, so
// that the statements after it see what the other committed; in key
// order.
const lockUsageKeys = `
SELECT pg_advisory_xact_lock(k.h) FROM (
    SELECT DISTINCT hashtextextended(y.t || '/' || y.usage_key::text, 0) AS h FROM (` + ledgerKeys + `) y ORDER BY 1
) k`

// ledgerKeys is the turns of a batch's ledger rows, as y: their tenant,
// usage_key and session, all that locking and deleting by turn need (no
// model is resolved for them).
const ledgerKeys = `
    SELECT x.t, turn_key(x.t, x.th::uuid, x.pt, x.turn::uuid) AS usage_key, x.s::uuid AS s
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS x(t, turn, th, pt, s)`

// keyTypes are the parameter types of ledgerKeys.
var keyTypes = []string{"text", "text", "text", "text", "text"}

func (r *rows) addKey(l *ledgerRow) { r.add(l.tenant, l.turn, l.thread, l.providerTurn, l.session) }

// dropProvisional removes a turn's provisional rows when its own rows are
// written (queued with the same rows, before upsertLedger).
const dropProvisional = `
DELETE FROM usage_ledger u USING (` + ledgerKeys + `) y
WHERE u.provisional AND u.tenant_id = y.t AND u.usage_key = y.usage_key`

// replaceProvisional removes the provisional rows of the batch's turns that
// a later report, or a smaller session's, replaces; insertProvisional then
// writes the smallest session's report where no row of the turn is left.
// Rows whose model is resolved here are all replaced, so a turn whose
// model became known between reports is not counted under two models.
const replaceProvisional = `
DELETE FROM usage_ledger u USING (` + ledgerKeys + `) y
WHERE u.provisional AND u.tenant_id = y.t AND u.usage_key = y.usage_key AND u.session_id >= y.s`

const insertProvisional = `
INSERT INTO usage_ledger (tenant_id, usage_key, turn_id, model, provider, session_id, thread_id, occurred_at,
    input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens, reasoning_output_tokens, provisional)
SELECT DISTINCT ON (y.t, y.usage_key, y.model) y.t, y.usage_key, y.turn, y.model, y.p, y.s, y.th, y.at,
    y.i, y.ci, y.cw, y.o, y.r, true
FROM (SELECT z.t, z.usage_key, z.turn, z.model, z.p, z.s, z.th, z.at, z.i, z.ci, z.cw, z.o, z.r,
        first_value(z.s) OVER (PARTITION BY z.t, z.usage_key ORDER BY z.s) AS first
    FROM (` + ledgerSource + `) z) y
WHERE y.s = y.first AND NOT EXISTS (SELECT FROM usage_ledger f WHERE f.tenant_id = y.t AND f.usage_key = y.usage_key)
ORDER BY y.t, y.usage_key, y.model, y.turn
ON CONFLICT DO NOTHING`

// ledgerTypes are the parameter types of ledgerSource.
var ledgerTypes = []string{"text", "text", "text", "text", "text", "text", "timestamptz", "int8", "int8", "int8", "int8", "int8", "numeric", "text", "text", "text"}

func (r *rows) addLedger(l *ledgerRow) {
	r.add(l.tenant, l.turn, l.model, l.provider, l.session, l.thread, l.at,
		l.usage.InputTokens, l.usage.CachedInputTokens, l.usage.CacheWriteInputTokens, l.usage.OutputTokens,
		l.usage.ReasoningOutputTokens, l.cost, l.providerTurn, l.turnModel, l.sessionModel)
}

// ledgerOwned sets the ledger's columns that are the winning session's
// alone (ledgerWins).
var ledgerOwned = func() string {
	var sets []string
	for _, c := range []string{"turn_id", "session_id", "provider", "thread_id", "occurred_at", "input_tokens",
		"cached_input_tokens", "cache_write_input_tokens", "output_tokens", "reasoning_output_tokens"} {
		// A turn's own count replaces a report of it (dropProvisional
		// removes those first; this is the same rule where one remains).
		sets = append(sets, fmt.Sprintf("    %[1]s = CASE WHEN %[2]s THEN EXCLUDED.%[1]s ELSE u.%[1]s END", c, ledgerWins))
	}
	return strings.Join(sets, ",\n")
}()

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
		if c.typ != "" {
			r.typs = append(r.typs, c.typ)
		}
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
		case "float8", "numeric":
			r.cols[i] = []*float64{}
		case "timestamptz":
			r.cols[i] = []*time.Time{}
		case "bool":
			r.cols[i] = []*bool{}
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
			r.cols[i] = append(a, ptr[int64](v))
		case []*int32:
			r.cols[i] = append(a, asInt32(v))
		case []*float64:
			r.cols[i] = append(a, ptr[float64](v))
		case []*time.Time:
			r.cols[i] = append(a, ptr[time.Time](v))
		case []*bool:
			r.cols[i] = append(a, ptr[bool](v))
		}
	}
	r.n++
}

// asString is v as a text parameter, as Postgres stores it: a string as
// text (storableText), a []byte or json.RawMessage as a JSON document for
// a jsonb column (storableJSON).
func asString(v any) *string {
	switch s := v.(type) {
	case string:
		s = storableText(s)
		return &s
	case *string:
		if s == nil {
			return nil
		}
		if t := storableText(*s); t != *s {
			return &t
		}
		return s
	case []byte:
		if s == nil {
			return nil
		}
		t := string(storableJSON(s))
		return &t
	case json.RawMessage:
		if len(s) == 0 {
			return nil
		}
		t := string(storableJSON(s))
		return &t
	case nil:
		return nil
	}
	panic(fmt.Sprintf("rows: %T is not text", v))
}

// ptr is v as a column element: a T or a *T as is, nil as NULL.
func ptr[T any](v any) *T {
	switch x := v.(type) {
	case nil:
		return nil
	case *T:
		return x
	case T:
		return &x
	}
	var zero T
	panic(fmt.Sprintf("rows: %T is not %T", v, zero))
}

// asInt32 is an int4 column's value. The int4 columns hold exit codes.
// Windows gives them as 32-bit unsigned numbers (0xC0000005 is
// 3221225477): those are kept as the signed number of the same bits,
// which is how Windows reads them too (-1073741819); a value outside 32
// bits, which no process exits with, is NULL. The event log keeps the
// number as it came either way. A plain conversion wrapped such values
// silently into unrelated ones.
func asInt32(v any) *int32 {
	var n int
	switch x := v.(type) {
	case int:
		n = x
	case *int:
		if x == nil {
			return nil
		}
		n = *x
	case nil:
		return nil
	default:
		panic(fmt.Sprintf("rows: %T is not int4", v))
	}
	switch {
	case n >= math.MinInt32 && n <= math.MaxInt32:
		m := int32(n)
		return &m
	case n > math.MaxInt32 && n <= math.MaxUint32:
		m := int32(uint32(n)) //nolint:gosec // the same 32 bits, read signed
		return &m
	}
	return nil
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

// jsonMap encodes an object whose values are raw JSON a decoder already
// checked, as they are: json.Marshal would compact and check every value
// again, which was a twentieth of the projector's own CPU.
func jsonMap(m map[string]json.RawMessage) []byte {
	if m == nil {
		return nil
	}
	n := 2
	for k, v := range m {
		n += len(k) + len(v) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = jsontext.AppendQuote(b, k) // a key decoded from JSON is valid UTF-8
		b = append(b, ':')
		if v := m[k]; len(v) > 0 {
			b = append(b, v...)
		} else {
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
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
	// The ledger first: a count that names no model reads the turn's and
	// the session's as earlier batches left them (ledgerRow). Every turn
	// the batch writes ledger rows of is locked first (see lockUsageKeys),
	// by every batch before any row of the tables below.
	own, ownKeys := newRowsOf(ledgerTypes...), newRowsOf(keyTypes...)
	soFar, soFarKeys := newRowsOf(ledgerTypes...), newRowsOf(keyTypes...)
	locks := newRowsOf(keyTypes...)
	for _, k := range sortedKeys(w.ledger, func(a, b ledgerKey) int {
		return cmp.Or(cmp.Compare(a.tenant, b.tenant), cmp.Compare(a.turn, b.turn), cmp.Compare(a.model, b.model), cmp.Compare(a.session, b.session))
	}) {
		own.addLedger(w.ledger[k])
		ownKeys.addKey(w.ledger[k])
		locks.addKey(w.ledger[k])
	}
	for _, k := range sortedKeys(w.soFar, cmpShared) {
		// A report's rows share their turn: one key each.
		soFarKeys.addKey(&w.soFar[k][0])
		locks.addKey(&w.soFar[k][0])
		for i := range w.soFar[k] {
			soFar.addLedger(&w.soFar[k][i])
		}
	}
	locks.queueTo(b, lockUsageKeys)
	ownKeys.queueTo(b, dropProvisional)
	own.queueTo(b, upsertLedger)
	soFarKeys.queueTo(b, replaceProvisional)
	soFar.queueTo(b, insertProvisional)

	rs := newRows(sessionCols)
	for _, k := range sortedKeys(w.sessions, cmpKey) {
		s := w.sessions[k]
		rs.add(k.tenant, k.id, s.provider, s.state, s.stateReason, s.model, s.cliVersion, jsonMap(s.config),
			s.startedAt, s.endedAt, s.exitKind, s.exitCode, s.exitReason, s.first, s.last, s.count, s.dialect)
	}
	rs.queueTo(b, upsertSessions)

	for _, round := range rounds(sortedKeys(w.threads, cmpShared)) {
		rs := newRows(threadCols)
		for _, k := range round {
			t := w.threads[k]
			u := usageOf(t.usage)
			rs.add(k.tenant, k.id, k.session, t.provider, t.providerThreadID, t.state, t.name, jsonMap(t.metadata),
				u.in, u.cached, u.write, u.out, u.reasoning, t.contextWindow, t.startedAt, t.updatedAt, t.preview)
		}
		rs.queueTo(b, upsertThreads)
	}

	for _, round := range rounds(sortedKeys(w.turns, cmpShared)) {
		rs := newRows(turnCols)
		for _, k := range round {
			t := w.turns[k]
			u := usageOf(t.usage)
			rs.add(k.tenant, k.id, k.session, t.thread, t.provider, t.state, t.model, t.effort, t.started.at, t.ended.at,
				t.stopReason, t.errorMessage, t.errorClass, u.in, u.cached, u.write, u.out, u.reasoning, t.cost, t.durationMs,
				rawJSON(t.plan), t.planExplanation, t.diff, t.updatedAt, t.providerTurn, t.started.flag(), t.ended.flag(), t.usageFinal(),
				t.agent)
		}
		rs.queueTo(b, upsertTurns)
	}

	for _, round := range rounds(sortedKeys(w.items, cmpShared)) {
		rs := newRows(itemCols)
		flushes := newRowsOf(slices.Concat([]string{"text", "text", "text", "int4", "int4"}, slices.Repeat([]string{"text"}, numStreams))...)
		parts := newRowsOf("text", "text", "text", "int4", "text")
		for _, k := range round {
			it := w.items[k]
			vals := []any{k.tenant, k.id, k.session, it.thread, it.turn, it.provider, it.itemType, it.status, it.title, it.detail,
				it.toolName, it.command, it.exitCode, filesJSON(it.files), it.parent}
			// tenant, item, session, flush, drop, then the deltas folded in
			// per stream (flushItemText)
			flush := make([]any, 5, 5+numStreams)
			flush[0], flush[1], flush[2], flush[3] = k.tenant, k.id, k.session, 0
			completes, replaced := it.completed.at != nil, 0
			if completes {
				flush[3] = 1
			}
			for i, t := range it.text {
				var content, deltas any
				c := it.content[i]
				if c != nil {
					content, replaced = c, replaced|1<<i
				}
				switch {
				case t == nil:
				case completes && c != nil:
					content = *c + t.String() // the text as the item ends
				case completes:
					deltas = t.String()
				default:
					parts.add(k.tenant, k.id, k.session, i, t.String())
				}
				if l := it.late[i]; l != nil {
					parts.add(k.tenant, k.id, k.session, i, l.String())
				}
				vals, flush = append(vals, content), append(flush, deltas)
			}
			rs.add(append(vals, it.started.at, it.completed.at, it.updatedAt, it.durationMs, it.started.flag(), it.completed.flag(), it.byUser)...)
			if completes || replaced != 0 {
				flush[4] = replaced
				flushes.add(flush...)
			}
		}
		rs.queueTo(b, upsertItems)
		flushes.queueTo(b, flushItemText)
		parts.queueTo(b, insertItemTextParts)
	}

	for _, round := range rounds(sortedKeys(w.requests, cmpShared)) {
		rs := newRows(requestCols)
		for _, k := range round {
			r := w.requests[k]
			rs.add(k.tenant, k.id, k.session, r.thread, r.turn, r.item, r.provider, r.requestType, r.detail,
				rawJSON(r.args), r.opened.at, r.resolved.at, r.decision, rawJSON(r.resolution), r.opened.flag(), r.resolved.flag())
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
			h.stdout, h.stderr, h.exitCode, h.started.at, h.completed.at, h.command, h.durationMs, h.started.flag(), h.completed.flag())
	}
	rs.queueTo(b, upsertHooks)

	rs = newRows(rateCols)
	for _, r := range w.rates {
		rs.add(r.tenant, r.event, r.window, r.session, r.provider, r.at, r.usedPercent, r.windowMinutes,
			r.resetsAt, r.status, rawJSON(r.snapshot))
	}
	rs.queueTo(b, insertRates)

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
