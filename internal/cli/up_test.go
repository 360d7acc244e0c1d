package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/dbtest"
	"github.com/agentwire/agentwire/internal/natstest"
	"github.com/agentwire/agentwire/migrations"
)

// TestUpEndToEnd is `agentwire up` as the README runs it: an embedded NATS,
// the normalizer and the projector into Postgres in one process, fed by
// `agentwire ingest file` with every recording. Every event the normalizer
// published reaches the event log and the projections, /metrics counts it
// for both stages, /healthz answers 200, and a cancel (what SIGTERM does)
// stops it cleanly.
func TestUpEndToEnd(t *testing.T) {
	t.Parallel()
	pool, dbURL := schemaURL(t)
	natsAt, metricsAt := freeAddr(t), freeAddr(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up := start(ctx, "up", "--nats-listen", natsAt, "--data-dir", t.TempDir(), "--database-url", dbURL, "--metrics-listen", metricsAt)
	get := func(path string) (int, string) { return httpGet(t, "http://"+metricsAt+path) }
	require.Eventually(t, func() bool { code, _ := get("/healthz"); return code == http.StatusOK }, 30*time.Second, 20*time.Millisecond,
		"agentwire up did not become healthy")

	r := run(t, "ingest", "--nats-url", "nats://"+natsAt, "file", "../../testdata/recordings")
	require.Equal(t, ExitOK, r.code, r.stderr)
	m := regexp.MustCompile(`ingested \d+ files, (\d+) frames`).FindStringSubmatch(r.stdout + r.stderr)
	require.NotNil(t, m, "no summary in:\n%s%s", r.stdout, r.stderr)
	frames, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)

	var metrics map[string]float64
	require.Eventually(t, func() bool {
		_, body := get("/metrics")
		metrics = parseMetrics(body)
		return metrics["agentwire_normalize_frames_total"] == frames &&
			metrics["agentwire_project_applied_total"] == metrics["agentwire_normalize_events_total"] &&
			metrics["agentwire_project_backlog_events"] == 0
	}, 60*time.Second, 50*time.Millisecond, "the pipeline did not settle")
	events := metrics["agentwire_normalize_events_total"]
	require.Greater(t, events, frames/2, "too few events for the recordings")
	require.InDelta(t, 1, metrics["agentwire_project_active"], 0)
	require.Zero(t, metrics["agentwire_project_dead_lettered_total"])
	require.Positive(t, metrics["agentwire_project_batches_total"])
	// The two are counted one after the other, and a batch of events
	// redelivered (all skipped, so the settling above does not wait for
	// it) may be committing while /metrics is read: equal once it is.
	require.Eventually(t, func() bool {
		_, body := get("/metrics")
		m := parseMetrics(body)
		return m["agentwire_project_batches_total"] == m["agentwire_project_batch_seconds_count"]
	}, 10*time.Second, 20*time.Millisecond, "a batch-duration observation per committed batch")
	require.Positive(t, metrics["agentwire_project_batch_seconds_sum"])

	var logged, turns int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM turns)`).Scan(&logged, &turns))
	require.InDelta(t, events, logged, 0, "events in the log")
	require.Positive(t, turns)

	code, body := get("/healthz")
	require.Equal(t, http.StatusOK, code, body)

	cancel()
	require.Contains(t, up.wait(t), "projector stopped")
}

// TestSeparateServices runs the stages as separate services, the way a
// deployment does: agentwire normalize and agentwire project against one
// NATS server, each with its own /metrics, fed by agentwire ingest file.
// The projector applies every event the normalizer published, and both
// stop cleanly. The logs were written on another day than they are read,
// and state no times: their turns count on the day they were written.
func TestSeparateServices(t *testing.T) {
	t.Parallel()
	pool, dbURL := schemaURL(t)
	natsURL := natstest.Server(t).ClientURL()
	normalizeAt, projectAt := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	normalizer := start(ctx, "normalize", "--nats-url", natsURL, "--metrics-listen", normalizeAt)
	projector := start(ctx, "project", "--nats-url", natsURL, "--database-url", dbURL, "--metrics-listen", projectAt)
	for _, at := range []string{normalizeAt, projectAt} {
		require.Eventually(t, func() bool { code, _ := httpGet(t, "http://"+at+"/healthz"); return code == http.StatusOK },
			30*time.Second, 20*time.Millisecond, "%s did not become healthy", at)
	}

	logs := t.TempDir()
	written := time.Date(2026, 5, 1, 9, 30, 0, 0, time.UTC)
	paths, err := filepath.Glob("../../testdata/recordings/codex-exec/*.jsonl")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		to := filepath.Join(logs, filepath.Base(p))
		require.NoError(t, os.WriteFile(to, b, 0o600))
		require.NoError(t, os.Chtimes(to, written, written))
	}
	r := run(t, "ingest", "--nats-url", natsURL, "file", logs)
	require.Equal(t, ExitOK, r.code, r.stderr)
	m := regexp.MustCompile(`ingested \d+ files, (\d+) frames`).FindStringSubmatch(r.stdout + r.stderr)
	require.NotNil(t, m, "no summary in:\n%s%s", r.stdout, r.stderr)
	frames, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	var events float64
	require.Eventually(t, func() bool {
		_, n := httpGet(t, "http://"+normalizeAt+"/metrics")
		_, p := httpGet(t, "http://"+projectAt+"/metrics")
		nm, pm := parseMetrics(n), parseMetrics(p)
		events = nm["agentwire_normalize_events_total"]
		// Every frame normalized first: the projector can have caught up
		// with a normalizer halfway through.
		return nm["agentwire_normalize_frames_total"] == frames && events > 0 &&
			pm["agentwire_project_applied_total"] == events && pm["agentwire_project_backlog_events"] == 0
	}, 60*time.Second, 50*time.Millisecond, "the projector did not apply what the normalizer published")
	var logged int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM events`).Scan(&logged))
	require.InDelta(t, events, logged, 0)
	var days []string
	var turns int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT array_agg(DISTINCT day::text), sum(turns) FROM usage_by_day`).Scan(&days, &turns))
	require.Equal(t, []string{"2026-05-01"}, days, "tokens by day: the day the logs were written")
	require.Positive(t, turns)

	cancel()
	normalizer.wait(t)
	require.Contains(t, projector.wait(t), "projector stopped")

	// A projector fix is rolled out: --rebuild makes the projections anew
	// from RUNTIME, mending what the old projector wrote.
	tag, err := pool.Exec(t.Context(), `UPDATE items SET title = 'what a bug wrote'`)
	require.NoError(t, err)
	require.Positive(t, tag.RowsAffected())
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	rebuildAt := freeAddr(t)
	projector = start(ctx, "project", "--rebuild", "--nats-url", natsURL, "--database-url", dbURL, "--metrics-listen", rebuildAt)
	require.Eventually(t, func() bool {
		_, p := httpGet(t, "http://"+rebuildAt+"/metrics")
		pm := parseMetrics(p)
		return pm["agentwire_project_applied_total"] == events && pm["agentwire_project_backlog_events"] == 0
	}, 60*time.Second, 50*time.Millisecond, "the rebuild did not apply RUNTIME again")
	var wrong int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM items WHERE title = 'what a bug wrote'`).Scan(&wrong))
	require.Zero(t, wrong)
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM events`).Scan(&logged))
	require.InDelta(t, events, logged, 0)
	cancel()
	require.Contains(t, projector.wait(t), "emptied the event log and the projections; rebuilding them from RUNTIME")
}

// schemaURL is a schema of the test's own: a pool on it and a URL of it
// for a command's --database-url.
func schemaURL(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	pool, schema := dbtest.Schema(t)
	u := dbtest.URL(t)
	if strings.Contains(u, "?") {
		return pool, u + "&search_path=" + schema
	}
	return pool, u + "?search_path=" + schema
}

// service is a long-running command started in this process.
type service struct {
	name   string
	done   chan int
	stderr *bytes.Buffer // read once the command has returned
}

// start runs the agentwire command args until ctx ends.
func start(ctx context.Context, args ...string) *service {
	s := &service{name: args[0], done: make(chan int, 1), stderr: &bytes.Buffer{}}
	go func() { s.done <- Exec(ctx, "agentwire", Agentwire, args, io.Discard, s.stderr) }()
	return s
}

// wait waits for the command to stop cleanly after its context ended and
// returns what it logged.
func (s *service) wait(t *testing.T) string {
	t.Helper()
	select {
	case code := <-s.done:
		require.Equal(t, ExitOK, code, s.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("agentwire %s did not stop after its context was cancelled", s.name)
	}
	return s.stderr.String()
}

// httpGet returns the status and body at url, or 0 and the error.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// parseMetrics reads the samples without labels of a Prometheus text page.
func parseMetrics(page string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(page))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 || strings.HasPrefix(f[0], "#") || strings.Contains(f[0], "{") {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			out[f[0]] = v
		}
	}
	return out
}

// handedOut are the addresses freeAddr gave this test process.
var handedOut = struct {
	sync.Mutex
	addrs map[string]bool
}{addrs: map[string]bool{}}

// freeAddr is a 127.0.0.1 address nothing listens on (now), and one no
// other test of this process was given: the port is free again once its
// probe closes, so the kernel may pick it for the next probe, and two
// parallel tests would then race to bind it.
func freeAddr(t *testing.T) string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for {
		l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		if !handedOut.addrs[addr] {
			handedOut.addrs[addr] = true
			return addr
		}
	}
}

// TestUpRebuildRefused: `up --rebuild` on a RUNTIME that lost its first
// events (aged out or purged) cannot rebuild without losing what they
// built. It exits at once, non-zero, saying why, instead of ingesting and
// normalizing with no projector, and changes nothing in Postgres.
func TestUpRebuildRefused(t *testing.T) {
	t.Parallel()
	pool, dbURL := schemaURL(t)
	srv := natstest.Server(t)
	nc, layout, err := bus.Open(t.Context(), srv.ClientURL(), "test", bus.Config{}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	for range 2 {
		_, err := layout.JS.Publish(t.Context(), "runtime.codex.turn.started", []byte(`{}`))
		require.NoError(t, err)
	}
	st, err := layout.JS.Stream(t.Context(), bus.RuntimeStream)
	require.NoError(t, err)
	require.NoError(t, st.Purge(t.Context(), jetstream.WithPurgeSequence(2)))
	nc.Close()
	// A projection written before: a rebuild empties the checkpoints first
	// of all (project.Tables).
	_, err = migrations.UpPool(t.Context(), pool)
	require.NoError(t, err)
	_, err = pool.Exec(t.Context(), `INSERT INTO projector_checkpoints (consumer, tenant_id, session_id, last_seq)
VALUES ('project', 'acme', gen_random_uuid(), 1)`)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	up := start(ctx, "up", "--nats-url", srv.ClientURL(), "--database-url", dbURL, "--metrics-listen", freeAddr(t), "--rebuild")
	select {
	case code := <-up.done:
		require.NotEqual(t, ExitOK, code, up.stderr.String())
	case <-ctx.Done():
		t.Fatalf("agentwire up --rebuild kept running on a RUNTIME that lost events:\n%s", up.stderr.String())
	}
	require.Contains(t, up.stderr.String(), "RUNTIME no longer holds every event: it starts at sequence 2")
	require.NotContains(t, up.stderr.String(), "projecting RUNTIME into Postgres")
	var n int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM projector_checkpoints`).Scan(&n))
	require.Equal(t, 1, n, "the refused rebuild emptied the projections")
}

// TestUpStartFailureExits: a component that fails once others are running
// (here the HTTP ingest address is taken, after the projector started)
// ends up at once, non-zero, saying why. It used to leave up waiting for
// the projector until a signal came: no normalizer, no metrics, no word.
// A flag that cannot work is refused before anything starts.
func TestUpStartFailureExits(t *testing.T) {
	t.Parallel()
	_, dbURL := schemaURL(t)
	taken, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = taken.Close() }()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	up := start(ctx, "up", "--nats-listen", freeAddr(t), "--data-dir", t.TempDir(), "--database-url", dbURL,
		"--metrics-listen", freeAddr(t), "--http-listen", taken.Addr().String(), "--http-tokens", tokensFile(t))
	select {
	case code := <-up.done:
		require.Equal(t, ExitUsage, code, up.stderr.String())
	case <-ctx.Done():
		t.Fatalf("agentwire up kept running after its HTTP address was refused:\n%s", up.stderr.String())
	}
	require.Contains(t, up.stderr.String(), "projecting RUNTIME into Postgres", "the failure came before the projector started")
	require.Contains(t, up.stderr.String(), "--http-listen: ")

	for _, args := range [][]string{
		{"--http-listen", freeAddr(t)},
		{"--http-tokens", tokensFile(t)},
		{"--http-listen", freeAddr(t), "--http-tokens", "/nonexistent/tokens"},
	} {
		r := run(t, append([]string{"up", "--nats-listen", freeAddr(t), "--data-dir", t.TempDir(), "--database-url", dbURL}, args...)...)
		require.Equal(t, ExitUsage, r.code, "%v: %s", args, r.stderr)
		require.Contains(t, r.stderr, "--http-", args)
		require.NotContains(t, r.stderr, "NATS with JetStream on", "%v: started before refusing the flags", args)
	}
}

// TestUpHTTPIngest: `up --http-listen --http-tokens` takes frames over
// HTTP, as the README shows, and they reach the projections under the
// token's tenant.
func TestUpHTTPIngest(t *testing.T) {
	t.Parallel()
	pool, dbURL := schemaURL(t)
	httpAt, metricsAt := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up := start(ctx, "up", "--nats-listen", freeAddr(t), "--data-dir", t.TempDir(), "--database-url", dbURL,
		"--metrics-listen", metricsAt, "--http-listen", httpAt, "--http-tokens", tokensFile(t))
	require.Eventually(t, func() bool { code, _ := httpGet(t, "http://"+metricsAt+"/healthz"); return code == http.StatusOK },
		30*time.Second, 20*time.Millisecond, "agentwire up did not become healthy")

	body, err := os.ReadFile("../../testdata/recordings/codex-exec/shell.jsonl")
	require.NoError(t, err)
	code, res := postFrames(t, "http://"+httpAt, "acme-secret", "run-42", "1", bytes.NewReader(body))
	require.Equal(t, http.StatusAccepted, code)
	require.Equal(t, bytes.Count(bytes.TrimSpace(body), []byte("\n"))+1, res.Accepted)

	var turns int
	require.Eventually(t, func() bool {
		err := pool.QueryRow(t.Context(), `SELECT count(*) FROM turns WHERE tenant_id = 'acme' AND state = 'completed'`).Scan(&turns)
		return err == nil && turns == 1
	}, 30*time.Second, 50*time.Millisecond, "the posted turn was not projected")
	cancel()
	require.Contains(t, up.wait(t), "projector stopped")
}
