package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/dbtest"
)

// TestUpEndToEnd is `agentwire up` as the README runs it: an embedded NATS,
// the normalizer and the projector into Postgres in one process, fed by
// `agentwire ingest file` with every recording. Every event the normalizer
// published reaches the event log and the projections, /metrics counts it
// for both stages, /healthz answers 200, and a cancel (what SIGTERM does)
// stops it cleanly.
func TestUpEndToEnd(t *testing.T) {
	t.Parallel()
	pool, schema := dbtest.Schema(t)
	dbURL := dbtest.URL(t)
	if strings.Contains(dbURL, "?") {
		dbURL += "&search_path=" + schema
	} else {
		dbURL += "?search_path=" + schema
	}
	natsAt, metricsAt := freeAddr(t), freeAddr(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var upErr bytes.Buffer // read once up has returned
	done := make(chan int, 1)
	go func() {
		done <- Exec(ctx, "agentwire", Agentwire, []string{"up", "--nats-listen", natsAt, "--data-dir", t.TempDir(),
			"--database-url", dbURL, "--metrics-listen", metricsAt}, io.Discard, &upErr)
	}()
	get := func(path string) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+metricsAt+path, nil)
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

	var logged, turns int
	require.NoError(t, pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM turns)`).Scan(&logged, &turns))
	require.InDelta(t, events, logged, 0, "events in the log")
	require.Positive(t, turns)

	code, body := get("/healthz")
	require.Equal(t, http.StatusOK, code, body)

	cancel()
	select {
	case code := <-done:
		require.Equal(t, ExitOK, code, upErr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("agentwire up did not stop after its context was cancelled")
	}
	require.Contains(t, upErr.String(), "projector stopped")
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

// freeAddr is a 127.0.0.1 address nothing listens on (now).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}
