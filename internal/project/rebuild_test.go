package project_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/project"
)

// TestRebuild: projections a buggy projector got wrong (rows changed,
// rows missing, a stray row) are rebuilt from RUNTIME into exactly what
// a projector that was always right writes. The rebuild waits while
// another projector is active, touching nothing.
func TestRebuild(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(recordings(t, "acme"), 1)
	cfg := project.Config{BatchSize: 32}
	_, stop := e.run(cfg)
	e.waitApplied("")
	want := e.dump()

	ctx := context.Background()
	for _, q := range []string{
		`UPDATE items SET text_assistant = 'what a bug wrote' WHERE text_assistant IS NOT NULL`,
		`DELETE FROM turns WHERE state = 'completed'`,
		`INSERT INTO unmapped_kinds VALUES ('acme', 'codex', '0.0.0', 'codex-exec', 'stray', 1, now(), now())`,
	} {
		tag, err := e.pool.Exec(ctx, q)
		require.NoError(t, err, q)
		require.Positive(t, tag.RowsAffected(), q)
	}
	wrong := e.dump()
	require.NotEqual(t, want, wrong)

	r := project.New(e.pool, e.layout, cfg, quiet())
	type prepared struct {
		last uint64
		err  error
	}
	done := make(chan prepared, 1)
	go func() {
		last, err := r.PrepareRebuild(ctx)
		done <- prepared{last, err}
	}()
	select {
	case p := <-done:
		t.Fatalf("the rebuild did not wait for the active projector: %+v", p)
	case <-time.After(1500 * time.Millisecond):
	}
	require.Equal(t, wrong, e.dump(), "the rebuild touched the tables while another projector was active")

	stop()
	p := <-done
	require.NoError(t, p.err)
	st, err := e.layout.JS.Stream(ctx, bus.RuntimeStream)
	require.NoError(t, err)
	require.Equal(t, st.CachedInfo().State.LastSeq, p.last)
	var n int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&n))
	require.Zero(t, n, "the event log is emptied too")

	_, stop = e.run(cfg)
	defer stop()
	e.waitApplied("")
	floor, err := r.AckFloor(ctx)
	require.NoError(t, err)
	require.Equal(t, p.last, floor)
	require.Equal(t, want, e.dump())
}

// TestRebuildRefused: when RUNTIME lost its first events, a rebuild could
// not bring back what they built: it says so and changes nothing.
func TestRebuildRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(recordings(t, "acme"), 1)
	_, stop := e.run(project.Config{})
	e.waitApplied("")
	stop()
	before := e.dump()

	ctx := context.Background()
	st, err := e.layout.JS.Stream(ctx, bus.RuntimeStream)
	require.NoError(t, err)
	require.NoError(t, st.Purge(ctx, jetstream.WithPurgeSequence(5)))
	p := project.New(e.pool, e.layout, project.Config{}, quiet())
	_, err = p.PrepareRebuild(ctx)
	require.ErrorIs(t, err, project.ErrRuntimeIncomplete)
	require.Contains(t, err.Error(), "starts at sequence 5")
	require.ErrorIs(t, p.Health(), project.ErrRuntimeIncomplete, "/healthz says the projector is not running")
	require.Equal(t, before, e.dump())
	_, err = e.layout.JS.Consumer(ctx, bus.RuntimeStream, bus.ProjectConsumer)
	require.NoError(t, err, "the consumer was deleted")
}

// TestRebuildTables: a rebuild empties every table of the schema but the
// migrations' own and project.KeptTables; a table added by a migration
// and forgotten in project.Tables would keep rows of the old projections.
func TestRebuildTables(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rows, err := e.pool.Query(context.Background(), `SELECT relname::text FROM pg_class
		WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p') AND relname <> 'schema_migrations'`)
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		tables = append(tables, name)
	}
	require.NoError(t, rows.Err())
	slices.Sort(tables)
	want := slices.Concat(project.Tables, project.KeptTables)
	slices.Sort(want)
	require.Equal(t, want, tables)
}
