package bench

import (
	"bytes"
	"context"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/dbtest"
	"github.com/agentwire/agentwire/internal/project"
	"github.com/agentwire/agentwire/migrations"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// TestRunPrintsEveryFigure runs the whole bench on a few frames: every
// figure the issue names comes out as `name value unit` with a positive
// value, and the baseline's self-check (it publishes what the normalizer
// would, message for message) passes.
func TestRunPrintsEveryFigure(t *testing.T) {
	t.Setenv("DATABASE_URL", "") // the projection figures have their own test (TestProjectFigures)
	var out bytes.Buffer
	err := Run(context.Background(), Config{Recordings: "../../testdata/recordings", Frames: 600, Out: &out, Log: slog.New(slog.DiscardHandler), MapRound: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for line := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("not `name value unit`: %q", line)
		}
		if _, twice := got[f[0]]; twice {
			t.Errorf("%s printed twice (a stage's rounds are one figure):\n%s", f[0], out.String())
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got[f[0]] = v
	}
	for _, name := range []string{
		"map_frames_per_s_core", "map_frames_per_s_core_claude_stream", "map_frames_per_s_core_codex_rollout",
		"normalize_frames_per_s", "normalize_baseline_frames_per_s", "normalize_vs_baseline", "normalize_vs_baseline_min", "normalize_vs_baseline_max",
		"e2e_frames_per_s", "e2e_p50_ms", "e2e_p99_ms", "rss_peak_mb", "rss_peak_mb_normalize",
	} {
		if got[name] <= 0 {
			t.Errorf("%s = %v, want a positive figure in:\n%s", name, got[name], out.String())
		}
	}
	if got["normalize_vs_baseline_min"] > got["normalize_vs_baseline"] || got["normalize_vs_baseline"] > got["normalize_vs_baseline_max"] {
		t.Errorf("normalize ratios: want min <= median <= max:\n%s", out.String())
	}
	if got["rss_peak_mb"] < got["rss_peak_mb_normalize"] {
		t.Errorf("the peak is below a stage's peak:\n%s", out.String())
	}
}

// TestProjectFigures measures the projector on a few events against a real
// Postgres: both rates are positive, the ratio is the rounds' median, and
// every round's scratch schema is gone afterwards.
func TestProjectFigures(t *testing.T) {
	t.Parallel()
	url := dbtest.URL(t)
	ctx := context.Background()
	pool := dbtest.Pool(t)
	// newSchemas counts the scratch schemas not named in before.
	newSchemas := func(before []string) (names []string, n int) {
		if err := pool.QueryRow(ctx, `SELECT coalesce(array_agg(nspname::text), '{}'), count(*) FILTER (WHERE nspname::text <> ALL($1))
			FROM pg_namespace WHERE nspname LIKE 'agentwire_bench_%'`, before).Scan(&names, &n); err != nil {
			t.Fatal(err)
		}
		return names, n
	}
	before, _ := newSchemas(nil)
	pf, err := Project(ctx, url, "../../testdata/recordings", 1500, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if pf.EventsPerS <= 0 || pf.BaselineEventsPerS <= 0 || pf.FloorEventsPerS <= 0 || pf.FloorRatio <= 0 ||
		pf.DecodedFloorEventsPerS <= 0 || pf.DecodedFloorRatio <= 0 {
		t.Errorf("rates %+v, want the projector's, the baseline's and the floors' positive", pf)
	}
	if pf.RatioMin <= 0 || pf.RatioMin > pf.Ratio || pf.Ratio > pf.RatioMax {
		t.Errorf("ratios %+v, want 0 < min <= median <= max", pf)
	}
	// Tests running beside this one make scratch schemas of their own,
	// and drop them within seconds; one left behind stays.
	deadline := time.Now().Add(30 * time.Second)
	for _, left := newSchemas(before); left > 0; _, left = newSchemas(before) {
		if time.Now().After(deadline) {
			t.Fatalf("%d scratch schemas left behind", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var out bytes.Buffer
	if err := pf.print(&out); err != nil {
		t.Fatal(err)
	}
	names := []string{"project_events_per_s", "project_baseline_events_per_s", "project_vs_baseline ", "project_vs_baseline_min", "project_vs_baseline_max",
		"project_floor_events_per_s", "project_floor_vs_baseline", "project_decoded_floor_events_per_s", "project_decoded_floor_vs_baseline"}
	if runtime.GOOS == "linux" {
		// The machine's CPU is read from /proc/stat: each phase kept at
		// least one CPU busy for tens of milliseconds.
		if pf.CPUMsPer1k <= 0 || pf.BaselineCPUMsPer1k <= 0 || pf.FloorCPUMsPer1k <= 0 || pf.DecodedFloorCPUMsPer1k <= 0 {
			t.Errorf("CPU per 1k events %v (projector), %v (baseline), %v (floor), %v (decoded floor), want all positive",
				pf.CPUMsPer1k, pf.BaselineCPUMsPer1k, pf.FloorCPUMsPer1k, pf.DecodedFloorCPUMsPer1k)
		}
		names = append(names, "project_cpu_ms_per_1k_events", "project_baseline_cpu_ms_per_1k_events", "project_floor_cpu_ms_per_1k_events",
			"project_decoded_floor_cpu_ms_per_1k_events")
	}
	for _, name := range names {
		if !strings.Contains(out.String(), name) {
			t.Errorf("no %s in:\n%s", strings.TrimSpace(name), out.String())
		}
	}
	// A figure not measured is left out, not printed as 0.
	out.Reset()
	if err := (ProjectFigures{EventsPerS: 1, BaselineEventsPerS: 2, Ratio: 0.5, RatioMin: 0.5, RatioMax: 0.5}).print(&out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "cpu") {
		t.Errorf("unmeasured CPU figures printed:\n%s", out.String())
	}
}

// TestDecodedFloorDecodes runs both floors on a real stream and database
// with no events decoded beforehand (zero values): the plain floor copies
// those and Postgres refuses them, the decoded floor copies what it
// decoded from each message, every row the stream's.
func TestDecodedFloorDecodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	layout, n, pool := streamAndSchema(t, 300)
	if err := createBenchTables(ctx, pool); err != nil {
		t.Fatal(err)
	}
	undecoded := make([]canonical.Event, n)
	if _, _, err := floorRound(ctx, pool, layout, "plain", undecoded, false); err == nil {
		t.Fatal("the plain floor copied events without a tenant or an id")
	}
	if _, _, err := floorRound(ctx, pool, layout, "decoded", undecoded, true); err != nil {
		t.Fatal(err)
	}
	var rows, seqs, matching int
	err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT runtime_seq),
		count(*) FILTER (WHERE data->>'eventId' = event_id::text AND data->>'tenant' = tenant_id AND data->>'type' = type)
		FROM bench_floor`).Scan(&rows, &seqs, &matching)
	if err != nil {
		t.Fatal(err)
	}
	if rows != n || seqs != n || matching != n {
		t.Errorf("%d rows, %d sequences, %d rows matching their document; want all %d", rows, seqs, matching, n)
	}
}

// TestWaitActive: the projector's clock starts only once it is active. A
// second projector on the same consumer stands by while the first holds
// the lock, and waitActive keeps waiting; when the first stops, the
// second takes over and waitActive returns.
func TestWaitActive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	layout, _, pool := streamAndSchema(t, 50)

	run := func(p *project.Projector) (stop func() error, done chan error) {
		pctx, cancel := context.WithCancel(ctx)
		done = make(chan error, 1)
		go func() { done <- p.Run(pctx) }()
		return func() error { cancel(); return <-done }, done
	}
	cfg := project.Config{Consumer: "wait-active"}
	first := project.New(pool, layout, cfg, log)
	stopFirst, firstDone := run(first)
	if err := waitActive(ctx, first, firstDone); err != nil {
		t.Fatal(err)
	}

	second := project.New(pool, layout, cfg, log)
	stopSecond, secondDone := run(second)
	defer func() { _ = stopSecond() }()
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := waitActive(short, second, secondDone); err == nil {
		t.Fatal("waitActive returned while the projector stood by")
	}
	if err := stopFirst(); err != nil {
		t.Fatal(err)
	}
	long, cancelLong := context.WithTimeout(ctx, 10*time.Second)
	defer cancelLong()
	if err := waitActive(long, second, secondDone); err != nil {
		t.Fatalf("the second projector took over, waitActive did not return: %v", err)
	}
}

// streamAndSchema publishes up to n events of the recordings to the RUNTIME
// stream of an embedded NATS server (benchStream) and makes a migrated
// scratch schema, both gone when the test ends.
func streamAndSchema(t *testing.T, n int) (*bus.Layout, int, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	sets, err := load("../../testdata/recordings")
	if err != nil {
		t.Fatal(err)
	}
	layout, n, stop, err := benchStream(ctx, sets, n, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	pool, drop, err := scratchSchema(ctx, dbtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	if _, err := migrations.UpPool(ctx, pool); err != nil {
		t.Fatal(err)
	}
	return layout, n, pool
}
