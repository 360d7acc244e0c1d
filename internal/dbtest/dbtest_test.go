package dbtest_test

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/dbtest"
)

// undefinedTable is the SQLSTATE Postgres returns for an unknown relation.
const undefinedTable = "42P01"

func TestPoolAnswers(t *testing.T) {
	t.Parallel()

	pool := dbtest.Pool(t)

	var one int
	require.NoError(t, pool.QueryRow(t.Context(), "select 1").Scan(&one))
	require.Equal(t, 1, one)
}

func TestSchemaSetsSearchPath(t *testing.T) {
	t.Parallel()

	pool, schema := dbtest.Schema(t)

	var current string
	require.NoError(t, pool.QueryRow(t.Context(), "select current_schema()").Scan(&current))
	require.Equal(t, schema, current)
}

func TestSchemaIsolation(t *testing.T) {
	t.Parallel()

	a, schemaA := dbtest.Schema(t)
	b, schemaB := dbtest.Schema(t)
	require.NotEqual(t, schemaA, schemaB)

	ctx := t.Context()
	_, err := a.Exec(ctx, "create table frames (id int primary key)")
	require.NoError(t, err)
	_, err = a.Exec(ctx, "insert into frames values (1)")
	require.NoError(t, err)

	var n int
	require.NoError(t, a.QueryRow(ctx, "select count(*) from frames").Scan(&n))
	require.Equal(t, 1, n)

	_, err = b.Exec(ctx, "select count(*) from frames")
	requireSQLState(t, err, undefinedTable)

	// The same name is free in the other schema.
	_, err = b.Exec(ctx, "create table frames (id int primary key)")
	require.NoError(t, err)
	require.NoError(t, b.QueryRow(ctx, "select count(*) from frames").Scan(&n))
	require.Zero(t, n)
}

// The subtests here are sequential on purpose: their cleanups must have run
// when t.Run returns, so the parent can check what they left behind.

func TestSchemaDroppedAtCleanup(t *testing.T) { //nolint:tparallel // subtest is sequential, see above
	t.Parallel()

	var schema string
	t.Run("create", func(t *testing.T) {
		var pool *pgxpool.Pool
		pool, schema = dbtest.Schema(t)
		_, err := pool.Exec(t.Context(), "create table frames (id int)")
		require.NoError(t, err)
	})

	var exists bool
	err := dbtest.Pool(t).QueryRow(t.Context(),
		"select exists (select 1 from pg_namespace where nspname = $1)", schema).Scan(&exists)
	require.NoError(t, err)
	require.False(t, exists, "schema %s survived its test", schema)
}

func TestTxRollbackDiscardsWrites(t *testing.T) { //nolint:tparallel // subtest is sequential, see above
	t.Parallel()

	pool, schema := dbtest.Schema(t)
	ctx := t.Context()
	_, err := pool.Exec(ctx, "create table frames (id int primary key)")
	require.NoError(t, err)
	table := pgx.Identifier{schema, "frames"}.Sanitize()

	t.Run("write", func(t *testing.T) {
		tx := dbtest.Tx(t)
		_, err := tx.Exec(t.Context(), "insert into "+table+" values (1), (2)")
		require.NoError(t, err)

		var n int
		require.NoError(t, tx.QueryRow(t.Context(), "select count(*) from "+table).Scan(&n))
		require.Equal(t, 2, n, "the transaction sees its own writes")
		require.NoError(t, pool.QueryRow(t.Context(), "select count(*) from frames").Scan(&n))
		require.Zero(t, n, "other connections do not see uncommitted writes")
	})

	var n int
	require.NoError(t, pool.QueryRow(ctx, "select count(*) from frames").Scan(&n))
	require.Zero(t, n)
}

func TestTxRollbackDiscardsDDL(t *testing.T) { //nolint:tparallel // subtest is sequential, see above
	t.Parallel()

	_, schema := dbtest.Schema(t)
	table := pgx.Identifier{schema, "frames"}.Sanitize()

	t.Run("create", func(t *testing.T) {
		tx := dbtest.Tx(t)
		_, err := tx.Exec(t.Context(), "create table "+table+" (id int)")
		require.NoError(t, err)
	})

	var reg *string
	err := dbtest.Pool(t).QueryRow(t.Context(), "select to_regclass($1)::text", table).Scan(&reg)
	require.NoError(t, err)
	require.Nil(t, reg, "table created inside the rolled back transaction exists")
}

func requireSQLState(t *testing.T, err error, code string) {
	t.Helper()

	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr, "want Postgres error %s", code)
	require.Equal(t, code, pgErr.Code)
}

// TestCluster: a test's own cluster answers, survives a crash with what
// was committed, and restarts cleanly.
func TestCluster(t *testing.T) {
	t.Parallel()
	c := dbtest.StartCluster(t)
	ctx := t.Context()
	exec := func(sql string) {
		t.Helper()
		conn, err := pgx.Connect(ctx, c.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = conn.Close(ctx) }()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		t.Helper()
		conn, err := pgx.Connect(ctx, c.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = conn.Close(ctx) }()
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM kept`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	exec(`CREATE TABLE kept (n int); SET synchronous_commit = on; INSERT INTO kept VALUES (1)`)
	c.Crash()
	if conn, err := pgx.Connect(ctx, c.URL()); err == nil {
		_ = conn.Close(ctx)
		t.Fatal("the cluster still answers after Crash")
	}
	c.Start()
	if n := count(); n != 1 {
		t.Fatalf("after a crash the table holds %d rows, want the 1 committed", n)
	}
	c.Stop()
	c.Start()
	if n := count(); n != 1 {
		t.Fatalf("after a restart the table holds %d rows, want 1", n)
	}
}
