package project_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/dbtest"
	"github.com/agentwire/agentwire/internal/natstest"
	"github.com/agentwire/agentwire/internal/project"
	"github.com/agentwire/agentwire/migrations"
	"github.com/agentwire/agentwire/pkg/adapters"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
	"github.com/agentwire/agentwire/pkg/canonical/wire"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// env is one test's NATS server, layout and migrated schema.
type env struct {
	t       *testing.T
	srv     *server.Server
	nc      *nats.Conn
	layout  *bus.Layout
	pool    *pgxpool.Pool
	schema  string
	appName string
}

// newEnv is an env on a schema of its own of the shared server.
func newEnv(t *testing.T) *env {
	t.Helper()
	base, schema := dbtest.Schema(t)
	return newEnvOn(t, base.Config(), schema)
}

// newEnvOn is an env on the database and schema of base.
func newEnvOn(t *testing.T, base *pgxpool.Config, schema string) *env {
	t.Helper()
	srv := natstest.Server(t)
	e := &env{t: t, srv: srv}
	e.connectNATS()
	cfg := base.Copy()
	e.schema, e.appName = schema, "awtest_"+schema
	cfg.ConnConfig.RuntimeParams["application_name"] = e.appName
	cfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	_, err = migrations.UpPool(t.Context(), pool)
	require.NoError(t, err)
	e.pool = pool
	return e
}

func (e *env) connectNATS() {
	nc, js, err := bus.Connect(context.Background(), e.srv.ClientURL(), e.t.Name(), quiet())
	require.NoError(e.t, err)
	e.t.Cleanup(nc.Close)
	layout, err := bus.Ensure(context.Background(), js, bus.Config{})
	require.NoError(e.t, err)
	e.nc, e.layout = nc, layout
}

// databaseURL is a URL of the test's schema, for a child process.
func (e *env) databaseURL() string {
	u := dbtest.URL(e.t)
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + "search_path=" + e.schema + "&application_name=" + e.appName
}

// recording is one recorded session mapped offline.
type recording struct {
	name   string // set/scenario
	lines  [][]byte
	events []canonical.Event
}

func dialectOf(set string) string {
	switch {
	case strings.HasPrefix(set, "claude-stream"), set == "claude-control":
		return "claude-stream"
	case strings.HasPrefix(set, "acp-"):
		return "acp"
	}
	return set
}

// recordings maps every recording of a registered dialect for tenant, as
// the normalizer would: the events projected in the tests.
func recordings(t *testing.T, tenant string) []recording {
	t.Helper()
	paths, err := filepath.Glob("../../testdata/recordings/*/*.jsonl")
	require.NoError(t, err)
	sort.Strings(paths)
	var out []recording
	for _, p := range paths {
		if r, ok := mapRecording(t, tenant, p, ""); ok {
			out = append(out, r)
		}
	}
	require.NotEmpty(t, out)
	return out
}

// mapRecording maps the recording at path for tenant under an ingest
// session key ("recordings/<set>/<scenario>" when ""); ok is false when
// no adapter reads its dialect.
func mapRecording(t *testing.T, tenant, path, sessionKey string) (recording, bool) {
	t.Helper()
	set := filepath.Base(filepath.Dir(path))
	return mapAs(t, dialectOf(set), tenant, path, sessionKey)
}

// mapAs is mapRecording for a file of the given dialect.
func mapAs(t *testing.T, dialect, tenant, path, sessionKey string) (recording, bool) {
	t.Helper()
	set := filepath.Base(filepath.Dir(path))
	a, err := adapters.Lookup(dialect)
	if err != nil {
		return recording{}, false
	}
	name := set + "/" + strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if sessionKey == "" {
		sessionKey = "recordings/" + name
	}
	return mapLines(t, a, tenant, name, sessionKey, adaptertest.ReadLines(t, path)), true
}

// mapLines maps lines as one session of a's dialect: a recording cut, or
// with frames added, without a file.
func mapLines(t *testing.T, a adapter.Adapter, tenant, name, sessionKey string, lines [][]byte) recording {
	t.Helper()
	r := recording{name: name, lines: lines}
	s := a.NewSession("")
	for _, f := range adaptertest.Frames(a.Dialect(), sessionKey, r.lines) {
		f.Tenant = tenant
		evs, err := s.Map(f)
		require.NoError(t, err, name)
		r.events = append(r.events, evs...)
	}
	return r
}

// mapLinesAs is mapLines for a dialect by name.
func mapLinesAs(t *testing.T, dialect, tenant, name, sessionKey string, lines [][]byte) recording {
	t.Helper()
	a, err := adapters.Lookup(dialect)
	require.NoError(t, err)
	return mapLines(t, a, tenant, name, sessionKey, lines)
}

// publish puts the recordings' events on RUNTIME, sessions interleaved
// (each in order), each event `copies` times (copies after the first
// without a message id, so the stream keeps them). It publishes without
// waiting for each ack (one connection keeps the order), in windows below
// the client's limit of acks pending, and returns once the stream holds
// them all.
func (e *env) publish(recs []recording, copies int) int {
	e.t.Helper()
	var futures []jetstream.PubAckFuture
	n := 0
	acked := func() {
		for _, f := range futures {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				require.NoError(e.t, err, "publish %s", f.Msg().Subject)
			}
		}
		n += len(futures)
		futures = futures[:0]
	}
	for i := 0; ; i++ {
		more := false
		for _, r := range recs {
			if i >= len(r.events) {
				continue
			}
			more = true
			for c := range copies {
				msg, err := wire.ToNATS(r.events[i])
				require.NoError(e.t, err)
				if c > 0 {
					msg.Header.Del(bus.HeaderMsgID)
				}
				f, err := e.layout.JS.PublishMsgAsync(msg)
				require.NoError(e.t, err)
				if futures = append(futures, f); len(futures) == 1000 {
					acked()
				}
			}
		}
		if !more {
			acked()
			return n
		}
	}
}

func (e *env) start(cfg project.Config) *project.Projector {
	e.t.Helper()
	p := project.New(e.pool, e.layout, cfg, quiet())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	e.t.Cleanup(func() {
		cancel()
		require.NoError(e.t, <-done)
	})
	return p
}

// run starts a projector and returns it with a function that stops it
// (called at the end of the test if not before).
func (e *env) run(cfg project.Config) (*project.Projector, func()) {
	e.t.Helper()
	p := project.New(e.pool, e.layout, cfg, quiet())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	stop := func() {
		cancel()
		require.NoError(e.t, <-done)
	}
	e.t.Cleanup(func() {
		if ctx.Err() == nil {
			stop()
		}
	})
	return p, stop
}

// waitApplied waits until the consumer has acked everything in RUNTIME.
// It fails when the ack floor stops moving for stallLimit, not after a
// fixed time: a big projection under the race detector on a busy machine
// takes minutes, and a stuck projector is caught just as surely.
func (e *env) waitApplied(consumer string) {
	e.t.Helper()
	if consumer == "" {
		consumer = bus.ProjectConsumer
	}
	const stallLimit = 45 * time.Second
	ctx := context.Background()
	var floor uint64
	moved := time.Now()
	for {
		st, err := e.layout.JS.Stream(ctx, bus.RuntimeStream)
		require.NoError(e.t, err)
		ci, err := e.consumerInfo(ctx, st, consumer)
		if err == nil {
			if ci.AckFloor.Stream == st.CachedInfo().State.LastSeq && ci.NumAckPending == 0 {
				return
			}
			if ci.AckFloor.Stream != floor {
				floor, moved = ci.AckFloor.Stream, time.Now()
			}
		}
		if time.Since(moved) > stallLimit {
			e.t.Fatalf("the projector did not ack all of RUNTIME: its ack floor stayed at %d of %d for %v (last error: %v)",
				floor, st.CachedInfo().State.LastSeq, stallLimit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// consumerInfo is a consumer's current info.
func (e *env) consumerInfo(ctx context.Context, st jetstream.Stream, consumer string) (*jetstream.ConsumerInfo, error) {
	c, err := st.Consumer(ctx, consumer)
	if err != nil {
		return nil, err
	}
	return c.Info(ctx)
}

// projectionTables are dumped in full; events are dumped without the
// RUNTIME sequence (a duplicate published again has another one).
var projectionTables = slices.DeleteFunc(slices.Clone(project.Tables), func(t string) bool {
	return t == "events" || t == "projector_checkpoints"
})

// dump is a canonical text dump of every projection but those named in
// without: one JSON row per line, sorted, per table.
func (e *env) dump(without ...string) string {
	e.t.Helper()
	var b strings.Builder
	for _, table := range projectionTables {
		if slices.Contains(without, table) {
			continue
		}
		row, from := "to_jsonb(x)", table
		switch table {
		case "sessions":
			// Configurations are long (model and command lists): a digest.
			row = "to_jsonb(x) || jsonb_build_object('config', md5(x.config::text))"
		case "item_text_parts":
			// Where a text was cut into parts depends on the batches; its
			// order (seq) counts every part ever inserted, rolled back too.
			from = "(SELECT tenant_id, item_id, session_id, stream, string_agg(text, '' ORDER BY seq) AS text FROM item_text_parts GROUP BY 1, 2, 3, 4)"
		}
		var rows string
		err := e.pool.QueryRow(context.Background(), fmt.Sprintf(
			`SELECT coalesce(string_agg(j, E'\n' ORDER BY j), '') FROM (SELECT (%s)::text AS j FROM %s x) s`, row, from)).Scan(&rows)
		require.NoError(e.t, err)
		fmt.Fprintf(&b, "== %s\n%s\n", table, rows)
	}
	var rows string
	err := e.pool.QueryRow(context.Background(),
		`SELECT coalesce(string_agg(j, E'\n' ORDER BY j), '') FROM (
		   SELECT concat_ws(' ', tenant_id, event_id, type, md5((to_jsonb(x) - 'runtime_seq')::text)) AS j FROM events x) s`).Scan(&rows)
	require.NoError(e.t, err)
	fmt.Fprintf(&b, "== events\n%s\n", rows)
	return b.String()
}

const goldenPath = "testdata/recordings.golden"

func golden(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(goldenPath)
	require.NoError(t, err, "run go test -run TestGolden -update ./internal/project to create it")
	return string(b)
}

// requireGolden fails with the lines that differ (short), not the dumps.
func requireGolden(t *testing.T, got string) {
	t.Helper()
	requireSameDump(t, golden(t), got, goldenPath)
}

// requireSameDump fails with the lines of two dumps that differ (short).
func requireSameDump(t *testing.T, want, got, wantName string) {
	t.Helper()
	if want == got {
		return
	}
	count := func(s string) map[string]int {
		m := map[string]int{}
		for l := range strings.SplitSeq(s, "\n") {
			m[l]++
		}
		return m
	}
	w, g := count(want), count(got)
	var diff []string
	for l, n := range w {
		if g[l] < n {
			diff = append(diff, "- "+short(l))
		}
	}
	for l, n := range g {
		if w[l] < n {
			diff = append(diff, "+ "+short(l))
		}
	}
	sort.Strings(diff)
	if len(diff) > 40 {
		diff = append(diff[:40], fmt.Sprintf("... and %d more", len(diff)-40))
	}
	t.Fatalf("projection differs from %s:\n%s", wantName, strings.Join(diff, "\n"))
}

func short(s string) string {
	if len(s) > 700 {
		return s[:700] + "…"
	}
	return s
}

// commitGate holds a projector's commits (its BeforeCommit) while a test
// takes a server down, so that the server goes with the run unfinished,
// however fast the projector is; a run over by then tests nothing.
type commitGate struct{ held sync.RWMutex }

func (g *commitGate) beforeCommit(int) {
	g.held.RLock()
	defer g.held.RUnlock()
	time.Sleep(2 * time.Millisecond)
}

// takeDown waits until p has applied at least applied events, then runs
// down with commits held, and checks that p had not applied all total.
func (g *commitGate) takeDown(t *testing.T, p *project.Projector, applied, total uint64, down func()) {
	t.Helper()
	require.Eventually(t, func() bool { return p.Stats().Applied.Load() >= applied }, 30*time.Second, time.Millisecond)
	g.held.Lock()
	defer g.held.Unlock()
	down()
	require.Less(t, p.Stats().Applied.Load(), total, "the projector finished before the server went down: the test tested nothing")
}

// claudeCounts are the token counts Claude writes in an API message's
// usage and in a result's: the transcript's own figures, read apart from
// the adapters that map them.
type claudeCounts struct {
	Input      int64 `json:"input_tokens"`
	CacheRead  int64 `json:"cache_read_input_tokens"`
	CacheWrite int64 `json:"cache_creation_input_tokens"`
	Output     int64 `json:"output_tokens"`
}

func (c claudeCounts) usage() canonical.TokenUsage {
	return canonical.TokenUsage{InputTokens: c.Input, CachedInputTokens: c.CacheRead, CacheWriteInputTokens: c.CacheWrite, OutputTokens: c.Output}
}

// claudeModelCounts are one model's counts in a Claude result's
// modelUsage, cumulated over the session.
type claudeModelCounts struct {
	Input      int64 `json:"inputTokens"`
	CacheRead  int64 `json:"cacheReadInputTokens"`
	CacheWrite int64 `json:"cacheCreationInputTokens"`
	Output     int64 `json:"outputTokens"`
}

func (c claudeModelCounts) usage() canonical.TokenUsage {
	return claudeCounts(c).usage()
}
