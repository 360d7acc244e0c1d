package project_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/dbtest"
	"github.com/agentwire/agentwire/internal/natstest"
	"github.com/agentwire/agentwire/internal/project"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// updating reports whether -update (defined by adaptertest) was given.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestGolden projects every recording and compares the tables with the
// reviewed golden dump, then checks the numbers against what the
// providers themselves said.
func TestGolden(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	recs := recordings(t, "acme")
	e.publish(recs, 1)
	e.start(project.Config{})
	e.waitApplied("")
	got := e.dump()
	if updating() {
		require.NoError(t, os.WriteFile(goldenPath, []byte(got), 0o644)) //nolint:gosec // a test fixture
	}
	requireGolden(t, got)

	ctx := context.Background()
	var modelless int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM turns t WHERE t.model IS NULL AND EXISTS (
		SELECT 1 FROM events e WHERE e.tenant_id = t.tenant_id AND e.turn_id = t.turn_id
		AND e.type = 'session.configured' AND e.data->'payload'->'config' ? 'model')`).Scan(&modelless))
	require.Zero(t, modelless, "turns whose own settings name a model have it")

	checked := 0
	for _, r := range recs {
		var result struct {
			Type         string                       `json:"type"`
			Result       string                       `json:"result"`
			TotalCostUSD float64                      `json:"total_cost_usd"`
			ModelUsage   map[string]claudeModelCounts `json:"modelUsage"`
			IsError      bool                         `json:"is_error"`
		}
		if !strings.HasPrefix(r.name, "claude-stream") && !strings.HasPrefix(r.name, "claude-control") {
			continue
		}
		if len(r.lines) == 0 || json.Unmarshal(r.lines[len(r.lines)-1], &result) != nil || result.Type != "result" || result.IsError {
			continue
		}
		sid := r.events[0].SessionID
		// The final assistant text is the provider's.
		var text string
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT text_assistant FROM items WHERE tenant_id = 'acme' AND session_id = $1
			AND item_type = 'assistant_message' ORDER BY completed_at DESC, updated_at DESC LIMIT 1`, sid).Scan(&text), r.name)
		require.Equal(t, result.Result, text, r.name)
		// Usage sums are the provider's totals: Claude's result frame
		// reports modelUsage and total_cost_usd cumulated over the session.
		for model, mu := range result.ModelUsage {
			var in, cached, write, out int64
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT coalesce(sum(input_tokens), 0), coalesce(sum(cached_input_tokens), 0),
				coalesce(sum(cache_write_input_tokens), 0), coalesce(sum(output_tokens), 0)
				FROM usage_ledger WHERE tenant_id = 'acme' AND session_id = $1 AND model = $2`, sid, model).Scan(&in, &cached, &write, &out), r.name)
			require.Equal(t, []int64{mu.Input, mu.CacheRead, mu.CacheWrite, mu.Output}, []int64{in, cached, write, out}, r.name)
		}
		var cost float64
		// A row whose cost Claude does not state (a turn whose result
		// came after the next turn's, on one model) is priced.
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT coalesce(sum(coalesce(cost_usd, priced_cost_usd)), 0) FROM usage_priced
			WHERE tenant_id = 'acme' AND session_id = $1`, sid).Scan(&cost))
		require.InDelta(t, result.TotalCostUSD, cost, 1e-9, r.name)
		checked++
	}
	require.GreaterOrEqual(t, checked, 5, "too few recordings with a result frame checked")

	// codex exec reports the thread's running count at every turn's end,
	// carried over by `exec resume`: an exec run's ledger sums to its last.
	// Every exec recording has its rollout beside it (codex-rollout/exec-*):
	// what counts usage and turns counts each of the thread's turns once,
	// priced with the model the rollout names.
	threads := 0
	for _, r := range recs {
		if !strings.HasPrefix(r.name, "codex-exec") {
			continue
		}
		canonicalThread := map[string]string{}
		for _, ev := range r.events {
			if ev.ProviderRefs.ProviderThreadID != "" {
				canonicalThread[ev.ProviderRefs.ProviderThreadID] = ev.ThreadID
			}
		}
		last, turns := map[string]canonical.TokenUsage{}, map[string]int{}
		thread := ""
		for _, l := range r.lines {
			var ev struct {
				Type     string          `json:"type"`
				ThreadID string          `json:"thread_id"`
				Usage    json.RawMessage `json:"usage"`
			}
			require.NoError(t, json.Unmarshal(l, &ev), r.name)
			switch ev.Type {
			case "thread.started":
				thread = canonicalThread[ev.ThreadID]
			case "turn.completed":
				u, err := canonical.FoldUsage(ev.Usage, canonical.OpenAIUsage)
				require.NoError(t, err, r.name)
				require.NotEmpty(t, thread, r.name)
				last[thread] = u
				turns[thread]++
			}
		}
		for thread, want := range last {
			sum := func(from, where string, args ...any) canonical.TokenUsage {
				var got canonical.TokenUsage
				require.NoError(t, e.pool.QueryRow(ctx, `SELECT coalesce(sum(input_tokens), 0), coalesce(sum(cached_input_tokens), 0),
					coalesce(sum(output_tokens), 0), coalesce(sum(reasoning_output_tokens), 0)
					FROM `+from+` WHERE tenant_id = 'acme' AND thread_id = $1`+where, args...).Scan(
					&got.InputTokens, &got.CachedInputTokens, &got.OutputTokens, &got.ReasoningOutputTokens), r.name)
				return got
			}
			require.Equal(t, want, sum("usage_ledger", " AND session_id = $2", thread, r.events[0].SessionID), "%s: the exec run's ledger sums to codex's own count", r.name)
			require.Equal(t, want, sum("usage_priced", "", thread), "%s: with its rollout, each turn's usage counts once", r.name)
			var unpriced, once int
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE estimated_cost_usd IS NULL) FROM usage_priced
				WHERE tenant_id = 'acme' AND thread_id = $1`, thread).Scan(&unpriced))
			require.Zero(t, unpriced, "%s: the rollout names the model", r.name)
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM turns_once WHERE tenant_id = 'acme' AND thread_id = $1`, thread).Scan(&once))
			require.Equal(t, turns[thread], once, "%s: each turn once", r.name)
			threads++
		}
	}
	require.GreaterOrEqual(t, threads, 4, "too few codex exec threads checked")

	// Approvals: decision and latency, for every recording that has one.
	rows, err := e.pool.Query(ctx, `SELECT r.decision, r.latency_ms,
		(EXTRACT(EPOCH FROM (SELECT max(created_at) FROM events v WHERE v.tenant_id = r.tenant_id AND v.request_id = r.request_id AND v.type = 'request.resolved')
		 - (SELECT min(created_at) FROM events v WHERE v.tenant_id = r.tenant_id AND v.request_id = r.request_id AND v.type = 'request.opened')) * 1000)::bigint
		FROM requests r WHERE r.tenant_id = 'acme' AND r.resolved_at IS NOT NULL`)
	require.NoError(t, err)
	decisions := map[string]int{}
	for rows.Next() {
		var d *string
		var lat, want *int64
		require.NoError(t, rows.Scan(&d, &lat, &want))
		require.NotNil(t, lat)
		require.Equal(t, *want, *lat)
		if d != nil {
			decisions[*d]++
		}
	}
	require.NoError(t, rows.Err())
	require.NotEmpty(t, decisions)
	t.Logf("approval decisions: %v", decisions)

	// The plan and diff of a turn are the last ones sent.
	var plans int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM turns t WHERE t.plan IS NOT NULL AND t.plan = (
		SELECT v.data->'payload'->'plan' FROM events v WHERE v.tenant_id = t.tenant_id AND v.turn_id = t.turn_id
		AND v.type = 'turn.plan.updated' ORDER BY v.runtime_seq DESC LIMIT 1)`).Scan(&plans))
	var allPlans int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM turns WHERE plan IS NOT NULL`).Scan(&allPlans))
	require.Positive(t, allPlans)
	require.Equal(t, allPlans, plans)
	var badDiffs int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM turns t WHERE t.diff IS DISTINCT FROM (
		SELECT v.data->'payload'->>'unifiedDiff' FROM events v WHERE v.tenant_id = t.tenant_id AND v.turn_id = t.turn_id
		AND v.type = 'turn.diff.updated' ORDER BY v.runtime_seq DESC LIMIT 1)`).Scan(&badDiffs))
	require.Zero(t, badDiffs)

	// Every completed item's text is item.completed's where it says one.
	var mismatched int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM items i JOIN LATERAL (
		SELECT v.data->'payload'->'content'->>'assistant_text' AS txt FROM events v
		WHERE v.tenant_id = i.tenant_id AND v.item_id = i.item_id AND v.type = 'item.completed'
		ORDER BY v.runtime_seq DESC LIMIT 1) c ON c.txt IS NOT NULL WHERE i.text_assistant IS DISTINCT FROM c.txt`).Scan(&mismatched))
	require.Zero(t, mismatched)
}

// TestDeliveredTwice: every event is in RUNTIME twice, and the whole
// stream is then delivered again from the start: the tables are those of
// one clean run.
func TestDeliveredTwice(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(recordings(t, "acme"), 2)
	p := e.start(project.Config{BatchSize: 32})
	e.waitApplied("")
	requireGolden(t, e.dump())
	require.Positive(t, p.Stats().Skipped.Load())

	_, err := e.layout.JS.ResetConsumerToSequence(context.Background(), bus.RuntimeStream, bus.ProjectConsumer, 1)
	require.NoError(t, err)
	e.waitApplied("")
	requireGolden(t, e.dump())
}

// TestSlowBatchRedelivered: one batch takes longer than the ack wait while
// the other worker goes on. Acks are cumulative, so everything finished
// after the slow batch's events waits unacked behind them, and the server
// delivers all of it again; the slow batch's own events come again while
// it still holds them. Everything is applied once, the copies skipped,
// and the run goes on without starting over.
func TestSlowBatchRedelivered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.layout.Config.AckWait = time.Second
	n := e.publish(recordings(t, "acme"), 1)
	var commits atomic.Int32
	var mu sync.Mutex
	var committed, events int
	var slowest time.Duration
	p, stop := e.run(project.Config{BatchSize: 16, Workers: 2, BeforeCommit: func(int) {
		if commits.Add(1) == 3 {
			time.Sleep(3 * time.Second)
		}
	}, Committed: func(n int, took time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		committed, events, slowest = committed+1, events+n, max(slowest, took)
	}})
	e.waitApplied("")
	requireGolden(t, e.dump())
	// A copy the server sent again may still be on its way when the acks
	// of the originals have covered it: RUNTIME is all acked before the
	// copy is skipped.
	require.Eventually(t, func() bool { return p.Stats().Skipped.Load() > 0 }, 15*time.Second, 20*time.Millisecond,
		"the ack wait passed: events came again")
	stop()
	require.EqualValues(t, n, p.Stats().Applied.Load(), "each event applied once")
	require.Zero(t, p.Stats().Restarts.Load())

	// Committed saw every batch, the slow one as slow as it was.
	mu.Lock()
	defer mu.Unlock()
	require.EqualValues(t, p.Stats().Batches.Load(), committed)
	require.EqualValues(t, p.Stats().Applied.Load()+p.Stats().Skipped.Load(), events)
	require.GreaterOrEqual(t, slowest, 3*time.Second)
}

// TestExplicitAckConsumer: the projector starts on the consumer an
// earlier version left (an ack per event, which cannot be changed in
// place): it is made anew with cumulative acks from its ack floor, and
// the result is that of a clean run.
func TestExplicitAckConsumer(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.publish(recordings(t, "acme"), 1)
	old := e.layout.ProjectConsumerConfig(bus.ProjectConsumer, 0)
	old.AckPolicy = jetstream.AckExplicitPolicy
	_, err := e.layout.JS.CreateConsumer(ctx, bus.RuntimeStream, old)
	require.NoError(t, err)
	p := e.start(project.Config{})
	e.waitApplied("")
	requireGolden(t, e.dump())
	require.Zero(t, p.Stats().Restarts.Load())
	c, err := e.layout.JS.Consumer(ctx, bus.RuntimeStream, bus.ProjectConsumer)
	require.NoError(t, err)
	require.Equal(t, jetstream.AckAllPolicy, c.CachedInfo().Config.AckPolicy)
}

// TestPostgresConnectionsDropped: the projector's connections are killed
// with pg_terminate_backend while it runs, the server staying up (for the
// server going down, see TestPostgresRestarted); the result is that of a
// clean run.
func TestPostgresConnectionsDropped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(recordings(t, "acme"), 1)
	p := e.start(project.Config{BatchSize: 8, Workers: 2, BeforeCommit: func(int) { time.Sleep(2 * time.Millisecond) }})
	admin := dbtest.Pool(t)
	for range 5 {
		time.Sleep(40 * time.Millisecond)
		_, err := admin.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`, e.appName)
		require.NoError(t, err)
	}
	e.waitApplied("")
	requireGolden(t, e.dump())
	require.Positive(t, p.Stats().Retries.Load()+p.Stats().Restarts.Load(), "no connection was lost: the test tested nothing")
}

// TestPostgresRestarted: the projector's Postgres, a server of the test's
// own, crashes a third of the way through the run (it replays its WAL when
// it starts again; it is tuned not to wait for commits to flush, which the
// projector must override for its own) and is restarted cleanly two thirds
// of the way; the result is that of an uninterrupted run.
func TestPostgresRestarted(t *testing.T) {
	t.Parallel()
	pg := dbtest.StartCluster(t)
	cfg, err := pgxpool.ParseConfig(pg.URL())
	require.NoError(t, err)
	e := newEnvOn(t, cfg, "public")
	total := uint64(e.publish(recordings(t, "acme"), 1)) //nolint:gosec // a count
	var gate commitGate
	p := e.start(project.Config{BatchSize: 8, Workers: 2, BeforeCommit: gate.beforeCommit})
	failures := func() uint64 { return p.Stats().Retries.Load() + p.Stats().Restarts.Load() }
	for i, down := range []func(){pg.Crash, pg.Stop} {
		var before uint64
		gate.takeDown(t, p, total*uint64(i+1)/3, total, func() {
			before = failures()
			down()
		})
		// Down for a while: the projector keeps trying, and failing, and
		// says so.
		require.Eventually(t, func() bool { return failures() > before }, 10*time.Second, time.Millisecond, "the projector did not notice")
		require.Eventually(t, func() bool { return p.Health() != nil && !p.Active() }, 10*time.Second, time.Millisecond,
			"the projector looks healthy without its database")
		time.Sleep(100 * time.Millisecond)
		pg.Start()
	}
	e.waitApplied("")
	requireGolden(t, e.dump())
	require.NoError(t, p.Health())
	require.True(t, p.Active())
}

// TestDrainBacksOff: a shutdown while Postgres is down keeps retrying the
// batches in hand for the drain timeout, with the same backoff as before
// the shutdown: it used to retry as fast as the connection attempts
// failed, hundreds of times a second per worker.
func TestDrainBacksOff(t *testing.T) {
	t.Parallel()
	pg := dbtest.StartCluster(t)
	cfg, err := pgxpool.ParseConfig(pg.URL())
	require.NoError(t, err)
	e := newEnvOn(t, cfg, "public")
	e.publish(recordings(t, "acme"), 1)
	p, stop := e.run(project.Config{BatchSize: 8, Workers: 2, DrainTimeout: 2 * time.Second,
		BeforeCommit: func(int) { time.Sleep(2 * time.Millisecond) }})
	require.Eventually(t, func() bool { return p.Stats().Applied.Load() > 0 }, 30*time.Second, time.Millisecond)
	pg.Stop()
	require.Eventually(t, func() bool { return p.Stats().Retries.Load() > 0 }, 10*time.Second, time.Millisecond)
	before := p.Stats().Retries.Load()
	stop()
	// Two workers, 2 s of backoff from 100 ms doubling: about 5 each.
	require.Less(t, p.Stats().Retries.Load()-before, uint64(30), "retries while draining")
	pg.Start()
}

// TestDrainBounded: a shutdown while a batch waits on Postgres (here a
// lock another session holds on the event log) gives the batch up after
// the drain timeout instead of waiting as long as Postgres does; the
// batch's events are left for redelivery.
func TestDrainBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	release := e.lockEventLog()
	e.publish([]recording{fixture("acme")}, 1)
	p, stop := e.run(project.Config{DrainTimeout: time.Second})
	e.waitOnEventLog(1)
	stopped := make(chan struct{})
	go func() {
		stop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(20 * time.Second):
		release()
		<-stopped
		t.Fatal("the shutdown waited for Postgres beyond the drain timeout")
	}
	require.Zero(t, p.Stats().Applied.Load())
}

// TestDrainBoundedOverall: the drain timeout bounds the whole shutdown, not
// each batch a worker holds. With small batches each worker holds several
// when Postgres stops answering; given the timeout each, the shutdown took
// several times as long.
func TestDrainBoundedOverall(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.lockEventLog()
	e.publish(recordings(t, "acme"), 1)
	const drain = time.Second
	p, stop := e.run(project.Config{BatchSize: 4, Workers: 2, DrainTimeout: drain})
	e.waitOnEventLog(2)
	start := time.Now()
	stop()
	// It takes the drain timeout. A timeout for each batch held (each
	// worker holds a dozen or more) would take far longer; the margin is
	// for a loaded machine's teardown.
	require.Less(t, time.Since(start), 4*drain, "the shutdown's drain is bounded by the drain timeout")
	require.Zero(t, p.Stats().Applied.Load())
}

// lockEventLog locks the event log from another transaction, so that
// batches wait on it, until the returned release (or the test's end).
func (e *env) lockEventLog() (release func()) {
	e.t.Helper()
	ctx := context.Background()
	blocker, err := e.pool.Begin(ctx)
	require.NoError(e.t, err)
	released := false
	release = func() {
		if !released {
			released = true
			require.NoError(e.t, blocker.Rollback(ctx))
		}
	}
	e.t.Cleanup(release)
	_, err = blocker.Exec(ctx, `LOCK TABLE events IN ACCESS EXCLUSIVE MODE`)
	require.NoError(e.t, err)
	return release
}

// waitOnEventLog waits until at least n batches wait on the event log's lock.
func (e *env) waitOnEventLog(n int) {
	e.t.Helper()
	require.Eventually(e.t, func() bool {
		var waiting int
		require.NoError(e.t, e.pool.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_locks WHERE relation = 'events'::regclass AND NOT granted`).Scan(&waiting))
		return waiting >= n
	}, 30*time.Second, 10*time.Millisecond, "fewer than %d batches wait on the event log", n)
}

// TestLockLost: the connection holding the projector's lock dies while
// Postgres stays up. The projector notices (its watcher pings the lock's
// connection), starts over, and the result is that of an uninterrupted
// run. Until it notices, its batches still commit: no other projector has
// taken over (TestTakeover is when one has).
func TestLockLost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish(recordings(t, "acme"), 1)
	p := e.start(project.Config{BatchSize: 8, Workers: 2, BeforeCommit: func(int) { time.Sleep(20 * time.Millisecond) }})
	require.Eventually(t, func() bool { return p.Stats().Batches.Load() > 0 }, 30*time.Second, time.Millisecond)
	admin := dbtest.Pool(t)
	ctx := context.Background()
	var pid int32
	require.NoError(t, admin.QueryRow(ctx, `
		-- objsubid 1: the lock (a bigint key), not a batch's barrier lock.
		SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted AND a.application_name = $1`, e.appName).Scan(&pid))
	_, err := admin.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return p.Stats().Restarts.Load() > 0 }, 10*time.Second, time.Millisecond,
		"the projector kept running without its lock")
	e.waitApplied("")
	requireGolden(t, e.dump())
	require.Zero(t, p.Stats().Superseded.Load(), "nobody else took over")
}

// TestTakeover: another projector takes the lease over while this one is
// applying batches (as when this one lost its lock and does not know it
// yet), three times. Once a takeover has returned, no batch of the run it
// superseded commits: the one in flight when it read the new generation
// rolls back, the run ends, and the projector starts over (taking the
// lease back: nobody else uses it). The result is that of an
// uninterrupted run.
func TestTakeover(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	total := uint64(e.publish(recordings(t, "acme"), 1)) //nolint:gosec // a count
	var (
		self     atomic.Pointer[project.Projector]
		tookOver atomic.Bool
		restarts atomic.Uint64 // the projector's restarts when the last takeover returned
		late     atomic.Int64  // batches of a superseded run about to commit after the takeover
	)
	p := e.start(project.Config{BatchSize: 8, Workers: 2, BeforeCommit: func(int) {
		// The wider this window between reading the generation and
		// committing, the likelier a broken barrier shows.
		time.Sleep(10 * time.Millisecond)
		if p := self.Load(); p != nil && tookOver.Load() && p.Stats().Restarts.Load() == restarts.Load() {
			late.Add(1)
		}
	}})
	self.Store(p)
	ctx := context.Background()
	conn, err := pgx.ConnectConfig(ctx, e.pool.Config().ConnConfig)
	require.NoError(t, err)
	defer func() { _ = conn.Close(ctx) }()
	other := project.New(e.pool, e.layout, project.Config{}, quiet())
	for i := range 3 {
		batches := p.Stats().Batches.Load()
		require.Eventually(t, func() bool { return p.Active() && p.Stats().Batches.Load() > batches+2 }, 30*time.Second, time.Millisecond)
		require.Less(t, p.Stats().Applied.Load(), total, "the projector finished before takeover %d: the test tested nothing", i)
		tookOver.Store(false)
		restarts.Store(p.Stats().Restarts.Load())
		require.NoError(t, project.TakeOver(ctx, other, conn))
		tookOver.Store(true)
		require.Eventually(t, func() bool { return p.Stats().Superseded.Load() > uint64(i) }, 10*time.Second, time.Millisecond, //nolint:gosec // small
			"the projector went on applying under takeover %d", i)
	}
	e.waitApplied("")
	require.Zero(t, late.Load(), "batches committed after another projector took over")
	requireGolden(t, e.dump())
}

// TestStandby: a second projector on the same database and consumer
// stands by (healthy, not active) while the first applies RUNTIME, and
// takes over when the first stops: events published after that are
// applied by it, and nothing is applied twice.
func TestStandby(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := project.Config{BatchSize: 16, Workers: 2}
	first, stopFirst := e.run(cfg)
	require.Eventually(t, first.Active, 10*time.Second, time.Millisecond)
	second, _ := e.run(cfg)
	n := uint64(e.publish(recordings(t, "acme"), 1)) //nolint:gosec // a count
	e.waitApplied("")
	require.False(t, second.Active(), "two projectors active at once")
	require.NoError(t, second.Health(), "standing by is healthy")
	backlog, err := second.Backlog(context.Background())
	require.NoError(t, err)
	require.Zero(t, backlog)

	stopFirst()
	require.Eventually(t, second.Active, 10*time.Second, time.Millisecond, "the standby did not take over")
	n += uint64(e.publish(recordings(t, "beta"), 1)) //nolint:gosec // a count
	e.waitApplied("")
	require.Equal(t, n, first.Stats().Applied.Load()+second.Stats().Applied.Load())
	require.Positive(t, second.Stats().Applied.Load())
	var tenants int
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT count(DISTINCT tenant_id) FROM sessions`).Scan(&tenants))
	require.Equal(t, 2, tenants)
}

// TestStreamMadeAnew: the first half of every recording is projected, the
// RUNTIME stream is lost and made anew (its sequences start from 1 again)
// and the second half published to it; a projector started then applies
// all of it, as if nothing had happened: the old stream's checkpoints must
// not skip the new one's events. A NATS restart keeps the stream and its
// checkpoints.
func TestStreamMadeAnew(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var first, second []recording
	for _, r := range recordings(t, "acme") {
		h := len(r.events) / 2
		a, b := r, r
		a.events, b.events = r.events[:h], r.events[h:]
		first, second = append(first, a), append(second, b)
	}
	run := func() {
		p := project.New(e.pool, e.layout, project.Config{BatchSize: 16, Workers: 2}, quiet())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }()
		e.waitApplied("")
		cancel()
		require.NoError(t, <-done)
	}
	keys := func() []string {
		rows, err := e.pool.Query(context.Background(), `SELECT DISTINCT consumer FROM projector_checkpoints ORDER BY 1`)
		require.NoError(t, err)
		ks, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return ks
	}
	e.publish(first, 1)
	run()
	before := keys()
	require.Len(t, before, 1)
	e.srv = natstest.Restart(t, e.srv)
	e.connectNATS()
	run()
	require.Equal(t, before, keys(), "a NATS restart changed the checkpoints' key")

	require.NoError(t, e.layout.JS.DeleteStream(context.Background(), bus.RuntimeStream))
	e.connectNATS() // makes RUNTIME anew
	e.publish(second, 1)
	run()
	requireGolden(t, e.dump())
	after := keys()
	require.Len(t, after, 1, "the old stream's checkpoints are left behind")
	require.NotEqual(t, before, after)
}

// TestNATSRestart: the NATS server restarts mid-run.
func TestNATSRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	total := uint64(e.publish(recordings(t, "acme"), 1)) //nolint:gosec // a count
	var gate commitGate
	p := e.start(project.Config{BatchSize: 8, Workers: 2, BeforeCommit: gate.beforeCommit})
	gate.takeDown(t, p, total/3, total, func() { e.srv = natstest.Restart(t, e.srv) })
	e.connectNATS()
	e.waitApplied("")
	requireGolden(t, e.dump())
	require.Positive(t, p.Stats().Restarts.Load(), "the projector did not start over from its ack floor")
}

// TestSchemaMismatchStops: a database without a column the projector
// writes (a binary newer than the schema) stops the projector with the
// hint to migrate, and /healthz says so. The worker that hit it used to
// stop alone: the others and the dispatcher ran on, the consumer stalled
// at its ack limit, and the projector hung, healthy to look at.
func TestSchemaMismatchStops(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.pool.Exec(ctx, `ALTER TABLE items DROP COLUMN parent_item_id`)
	require.NoError(t, err)
	e.publish([]recording{fixture("acme")}, 1)
	p := project.New(e.pool, e.layout, project.Config{}, quiet())
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(runCtx) }()
	select {
	case err := <-done:
		require.ErrorContains(t, err, "run `agentwire migrate`")
		require.ErrorContains(t, err, "parent_item_id")
	case <-time.After(30 * time.Second):
		t.Fatal("the projector did not stop on a schema that lacks a column")
	}
	require.ErrorContains(t, p.Health(), "agentwire migrate")
}

// TestForeignPull: a pull request of another client on the projector's
// consumer (a projector that lost the lock and does not know yet) takes
// the first deliveries after the new run rewinds the consumer. The run
// used to go on from the next delivery, applying those events' sessions
// without them; their redelivery was then skipped by the checkpoints.
// Now the run starts over until its first delivery is 1: the tables equal
// an uninterrupted run's.
func TestForeignPull(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.publish(recordings(t, "acme"), 1)
	cons, _, err := e.layout.EnsureProjectConsumer(ctx, bus.ProjectConsumer, 0)
	require.NoError(t, err)
	// Everything delivered and unacked, then one more pull waiting: the
	// rewind makes the first events available to it.
	info, err := cons.Info(ctx)
	require.NoError(t, err)
	all, err := cons.Fetch(int(info.NumPending), jetstream.FetchMaxWait(5*time.Second)) //nolint:gosec // a few thousand events
	require.NoError(t, err)
	for range all.Messages() { //nolint:revive // drained, never acked
	}
	taken := make(chan int, 1)
	go func() {
		b, err := cons.Fetch(5, jetstream.FetchMaxWait(20*time.Second))
		n := 0
		if err == nil {
			for range b.Messages() {
				n++
			}
		}
		taken <- n
	}()
	time.Sleep(200 * time.Millisecond) // the pull is waiting at the server
	p := e.start(project.Config{})
	require.Equal(t, 5, <-taken, "the waiting pull took the first deliveries after the rewind")
	e.waitApplied("")
	requireGolden(t, e.dump())
	require.Positive(t, p.Stats().Restarts.Load(), "the run whose first delivery was not 1 started over")
}

// TestDeliveryGap: a delivery lost in flight (a gap in the consumer's
// delivery numbers, or numbers that went back after a server restart), or
// a first delivery other than 1 after the run's rewind (taken by another
// consumer), stops the run before the message is applied.
func TestDeliveryGap(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		delivered []uint64
		gap       bool
	}{
		{[]uint64{1, 2, 3, 4}, false},
		{[]uint64{7, 8, 9}, true}, // a run starts at the rewind: delivery 1; another consumer took 1 to 6
		{[]uint64{2}, true},
		{[]uint64{1, 2, 4}, true},
		{[]uint64{1, 2, 3, 2}, true},
		{[]uint64{1, 1}, true},
	} {
		require.Equal(t, tt.gap, project.DeliveryGap(tt.delivered...), "%v", tt.delivered)
	}
}

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	os.Exit(m.Run())
}

// TestExitCodesBeyondInt4: the projections hold exit codes as int4. A
// Windows exit code, 32 bits unsigned, is kept as the signed number of
// the same bits; one beyond 32 bits is NULL; the event log keeps both as
// they came. They used to wrap silently into unrelated numbers.
func TestExitCodesBeyondInt4(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	r := fixture("acme")
	codes := []int{3221225477, 1 << 40}
	var items []string
	for i := range r.events {
		if p, ok := r.events[i].Payload.(*canonical.ItemCompleted); ok && len(items) < len(codes) {
			p.ExitCode = &codes[len(items)]
			items = append(items, r.events[i].ItemID)
		}
	}
	require.Len(t, items, len(codes))
	e.publish([]recording{r}, 1)
	p := e.start(project.Config{})
	e.waitApplied("")
	require.Zero(t, p.Stats().DeadLettered.Load())
	for i, want := range []*int64{new(int64(-1073741819)), nil} {
		var got *int64
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT exit_code FROM items WHERE tenant_id = 'acme' AND item_id = $1`, items[i]).Scan(&got))
		require.Equal(t, want, got, "exit code %d", codes[i])
		var logged int64
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT (data->'payload'->>'exitCode')::bigint FROM events
			WHERE tenant_id = 'acme' AND item_id = $1 AND type = 'item.completed'`, items[i]).Scan(&logged))
		require.EqualValues(t, codes[i], logged)
	}
}
