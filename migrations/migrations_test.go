package migrations_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentwire/agentwire/internal/dbtest"
	"github.com/agentwire/agentwire/migrations"
)

// TestUp applies every migration to an empty schema, then again (nothing
// left to apply), and checks what the lz4 migration promises: long columns
// of the event log and the projections compress with lz4 when the server
// has it.
func TestUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := dbtest.Schema(t)
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	applied, err := migrations.UpPool(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != len(all) {
		t.Fatalf("applied %v, want all %d", applied, len(all))
	}
	again, err := migrations.UpPool(ctx, pool)
	if err != nil || len(again) != 0 {
		t.Fatalf("second run applied %v (%v), want nothing", again, err)
	}

	var lz4 bool
	if err := pool.QueryRow(ctx, `SELECT count(*) = 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)`).Scan(&lz4); err != nil {
		t.Fatal(err)
	}
	if !lz4 {
		t.Skip("this server has no lz4")
	}
	for _, col := range []struct{ table, column string }{
		{"events", "data"}, {"sessions", "config"}, {"threads", "metadata"}, {"turns", "diff"}, {"items", "text_assistant"},
	} {
		var method string
		err := pool.QueryRow(ctx, `SELECT coalesce(nullif(attcompression, ''), '-') FROM pg_attribute
			WHERE attrelid = to_regclass($1) AND attname = $2`, col.table, col.column).Scan(&method)
		if err != nil {
			t.Fatalf("%s.%s: %v", col.table, col.column, err)
		}
		if method != "l" {
			t.Errorf("%s.%s compresses with %q, want lz4 (l)", col.table, col.column, method)
		}
	}
}

// TestTenantScoped: every table of the schema but the runner's own and the
// projector's lease has tenant_id, row-level security and a policy, and
// every tenant policy reads visible_tenants(); a table a migration adds
// without them would show analysts every tenant's rows, or none.
func TestTenantScoped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := migrated(t)
	rows, err := pool.Query(ctx, `SELECT c.relname::text, c.relrowsecurity,
			EXISTS (SELECT FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped),
			coalesce((SELECT string_agg(p.policyname || ': ' || p.qual, '; ') FROM pg_policies p
			          WHERE p.schemaname = current_schema() AND p.tablename = c.relname), '')
		FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
		  AND c.relname NOT IN ('schema_migrations', 'projector_leases')
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var table, policies string
		var rls, tenantID bool
		if err := rows.Scan(&table, &rls, &tenantID, &policies); err != nil {
			t.Fatal(err)
		}
		n++
		switch {
		case !tenantID:
			t.Errorf("%s has no tenant_id", table)
		case !rls:
			t.Errorf("%s has no row-level security", table)
		case table == "tenant_members":
			if !strings.HasPrefix(policies, "own_bindings: ") || !strings.Contains(policies, "SESSION_USER") || !strings.Contains(policies, "CURRENT_USER") {
				t.Errorf("tenant_members: policies %q, want own_bindings on the role", policies)
			}
		case !strings.HasPrefix(policies, "tenant_isolation: ") || !strings.Contains(policies, "visible_tenants()") || strings.Contains(policies, ";"):
			t.Errorf("%s: policies %q, want tenant_isolation reading visible_tenants()", table, policies)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 12 {
		t.Fatalf("checked %d tables, want the dozen the migrations make", n)
	}
}

// TestLogIndexes: the two ways the event log is read without knowing
// event ids, a session's events in order and a time window, and a
// tenant's requests that wait, each find their index (the planner told to
// avoid reading the whole table).
func TestLogIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := migrated(t)
	for _, q := range []struct{ query, index string }{
		{`SELECT * FROM events WHERE tenant_id = 'acme' AND session_id = '00000000-0000-0000-0000-000000000001' ORDER BY runtime_seq`, "events_session_idx"},
		{`SELECT * FROM events WHERE created_at >= '2026-01-01' AND created_at < '2026-01-02'`, "events_created_brin"},
		// The inbox of a tenant reads the requests that wait, not all.
		{`SELECT * FROM requests_waiting WHERE tenant_id = 'acme' ORDER BY opened_at`, "requests_waiting_idx"},
	} {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
			t.Fatal(err)
		}
		rows, err := tx.Query(ctx, "EXPLAIN "+q.query)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		_ = tx.Rollback(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if plan := strings.Join(lines, "\n"); !strings.Contains(plan, q.index) {
			t.Errorf("%s\nuses no %s:\n%s", q.query, q.index, plan)
		}
	}
}

// TestLogTimeIndexByVacuum: the log's BRIN asks autovacuum for nothing as
// ranges fill (its requests overflowed at high rates, each lost one a line
// in the server's log), and VACUUM summarizes the ranges (all but the one
// still filling), after which a time window reads only the ranges that may
// hold it.
func TestLogTimeIndexByVacuum(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := migrated(t)
	var options []string
	if err := pool.QueryRow(ctx, `SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = to_regclass('events_created_brin')`).Scan(&options); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(options, "autosummarize=off") {
		t.Errorf("events_created_brin options %v, want autosummarize=off", options)
	}
	var version int
	if err := pool.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if version >= 130000 {
		if err := pool.QueryRow(ctx, `SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = to_regclass('events')`).Scan(&options); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(options, "autovacuum_vacuum_insert_scale_factor=0.02") {
			t.Errorf("events options %v, want autovacuum_vacuum_insert_scale_factor=0.02", options)
		}
	}

	// Ten days of events in time order, over several ranges of 128 pages.
	_, err := pool.Exec(ctx, `INSERT INTO events (tenant_id, event_id, type, provider, session_id, created_at, runtime_seq, data)
		SELECT 'acme', gen_random_uuid(), 'item.completed', 'codex', '00000000-0000-0000-0000-000000000001',
		       timestamptz '2026-01-01' + i * interval '10 days' / 40000, i, jsonb_build_object('pad', repeat('x', 100))
		FROM generate_series(1, 40000) AS i`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `VACUUM events`); err != nil {
		t.Fatal(err)
	}
	var fresh int
	if err := pool.QueryRow(ctx, `SELECT brin_summarize_new_values('events_created_brin')`).Scan(&fresh); err != nil {
		t.Fatal(err)
	}
	// VACUUM leaves the last range, still filling, to the next one.
	if fresh > 1 {
		t.Errorf("VACUUM left %d ranges of the log's time index unsummarized, want at most the last", fresh)
	}

	// One day of ten: the bitmap scan reads the ranges that may hold it,
	// not all of them.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	var plan string
	err = tx.QueryRow(ctx, `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON)
		SELECT count(*) FROM events WHERE created_at >= '2026-01-05' AND created_at < '2026-01-06'`).Scan(&plan)
	if err != nil {
		t.Fatal(err)
	}
	var pages, total int
	if err := tx.QueryRow(ctx, `SELECT pg_relation_size('events') / current_setting('block_size')::int`).Scan(&total); err != nil {
		t.Fatal(err)
	}
	pages = heapBlocks(t, plan)
	if pages == 0 || pages > total/2 {
		t.Errorf("one day of ten read %d of the log's %d pages:\n%s", pages, total, plan)
	}
}

// heapBlocks is the heap blocks a bitmap heap scan in an EXPLAIN (ANALYZE,
// FORMAT JSON) plan read, exactly or lossily.
func heapBlocks(t *testing.T, plan string) int {
	t.Helper()
	var doc []struct {
		Plan json.RawMessage `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(plan), &doc); err != nil || len(doc) != 1 {
		t.Fatalf("EXPLAIN output: %v\n%s", err, plan)
	}
	var walk func(raw json.RawMessage) int
	walk = func(raw json.RawMessage) int {
		var node struct {
			Type  string            `json:"Node Type"`
			Exact int               `json:"Exact Heap Blocks"`
			Lossy int               `json:"Lossy Heap Blocks"`
			Plans []json.RawMessage `json:"Plans"`
		}
		if err := json.Unmarshal(raw, &node); err != nil {
			t.Fatal(err)
		}
		n := 0
		if node.Type == "Bitmap Heap Scan" {
			n = node.Exact + node.Lossy
		}
		for _, p := range node.Plans {
			n += walk(p)
		}
		return n
	}
	return walk(doc[0].Plan)
}

// migrated is a pool on a new schema with every migration applied.
func migrated(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, _ := dbtest.Schema(t)
	if _, err := migrations.UpPool(t.Context(), pool); err != nil {
		t.Fatal(err)
	}
	return pool
}

// schemaConn is a connection on a new, empty schema, released when the
// test ends.
func schemaConn(t *testing.T) *pgxpool.Conn {
	t.Helper()
	pool, _ := dbtest.Schema(t)
	c, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Release)
	return c
}

// TestServerVersion: this suite's server is new enough; one older than a
// version asked for is refused with what to do, naming its version.
func TestServerVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := schemaConn(t)
	if err := migrations.CheckServer(ctx, c, migrations.MinServerVersion); err != nil {
		t.Fatal(err)
	}
	var version string
	if err := c.QueryRow(ctx, `SHOW server_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	err := migrations.CheckServer(ctx, c, 990000)
	if !errors.Is(err, migrations.ErrServerTooOld) || !strings.Contains(err.Error(), "PostgreSQL "+version+",") ||
		!strings.Contains(err.Error(), "need 99 or newer") {
		t.Fatalf("a server older than asked for: %v", err)
	}
}

// TestTurnUsageFinal: migration 034 says of each turn projected before
// it whether its usage columns are its own count, from the ledger, which
// holds that count as rows that are not provisional; a count reported on
// the way is provisional there, and a turn without usage has NULL.
func TestTurnUsageFinal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := schemaConn(t)
	if _, err := migrations.UpTo(ctx, conn, 33); err != nil {
		t.Fatal(err)
	}
	const session = "00000000-0000-0000-0000-00000000000a"
	for _, turn := range []struct {
		id, ledger string // ledger: "" none, else whether provisional
		usage      bool
	}{
		{"00000000-0000-0000-0000-000000000001", "false", true},
		{"00000000-0000-0000-0000-000000000002", "true", true},
		{"00000000-0000-0000-0000-000000000003", "", false},
	} {
		var tokens *int64
		if turn.usage {
			tokens = new(int64(7))
		}
		if _, err := conn.Exec(ctx, `INSERT INTO turns (tenant_id, turn_id, session_id, provider, updated_at, input_tokens)
			VALUES ('acme', $1, $2, 'codex', now(), $3)`, turn.id, session, tokens); err != nil {
			t.Fatal(err)
		}
		if turn.ledger == "" {
			continue
		}
		if _, err := conn.Exec(ctx, `INSERT INTO usage_ledger (tenant_id, usage_key, turn_id, model, provider, session_id, occurred_at,
				input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens, reasoning_output_tokens, provisional)
			VALUES ('acme', $1, $1, 'gpt-5', 'codex', $2, now(), 7, 0, 0, 0, 0, $3)`, turn.id, session, turn.ledger); err != nil {
			t.Fatal(err)
		}
	}
	applied, err := migrations.Up(ctx, conn)
	if err != nil || !slices.Contains(applied, 34) {
		t.Fatalf("applied %v (%v), want 034 among them", applied, err)
	}
	rows, err := conn.Query(ctx, `SELECT coalesce(usage_final::text, 'NULL') FROM turns ORDER BY turn_id`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"true", "false", "NULL"}; !slices.Equal(got, want) {
		t.Fatalf("usage_final %v, want %v", got, want)
	}
}
