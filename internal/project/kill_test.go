package project_test

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/project"
)

const (
	childEnv     = "AGENTWIRE_PROJECT_TEST_CHILD"
	childNATSEnv = "AGENTWIRE_PROJECT_TEST_NATS"
	childDBEnv   = "AGENTWIRE_PROJECT_TEST_DB"
)

// runChild is the projector process TestKilled kills: small batches that
// stay open a while, so a kill lands mid-batch.
func runChild() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	pool, err := pgxpool.New(ctx, os.Getenv(childDBEnv))
	if err != nil {
		return 3
	}
	defer pool.Close()
	nc, js, err := bus.Connect(ctx, os.Getenv(childNATSEnv), "project-child", quiet())
	if err != nil {
		return 4
	}
	defer nc.Close()
	layout, err := bus.Ensure(ctx, js, bus.Config{})
	if err != nil {
		return 5
	}
	p := project.New(pool, layout, project.Config{BatchSize: 8, Workers: 2, BeforeCommit: func(int) { time.Sleep(15 * time.Millisecond) }}, quiet())
	if err := p.Run(ctx); err != nil {
		return 6
	}
	return 0
}

// TestKilled SIGKILLs a projector process mid-batch six times, then lets
// another finish: the tables are those of an uninterrupted run.
func TestKilled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(recordings(t, "acme"), 1)
	exe, err := os.Executable()
	require.NoError(t, err)
	ctx := context.Background()
	applied := func() int {
		var n int
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&n))
		return n
	}
	var total int
	require.NoError(t, func() error {
		st, err := e.layout.JS.Stream(ctx, bus.RuntimeStream)
		if err == nil {
			total = int(st.CachedInfo().State.Msgs) //nolint:gosec // a test's message count
		}
		return err
	}())
	kills := 0
	for kills < 6 {
		before := applied()
		require.Less(t, before, total, "the run finished after %d kills; slow the child down", kills)
		cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=1", childNATSEnv+"="+e.srv.ClientURL(), childDBEnv+"="+e.databaseURL())
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool { return applied() > before }, 30*time.Second, 5*time.Millisecond, "the child applied nothing")
		time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		kills++
	}
	require.Less(t, applied(), total, "the last kill came after the end")
	e.start(project.Config{})
	e.waitApplied("")
	requireGolden(t, e.dump())
}
