package bench

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/embedded"
	"github.com/agentwire/agentwire/internal/project"
	"github.com/agentwire/agentwire/migrations"
	"github.com/agentwire/agentwire/pkg/adapters"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
	"github.com/agentwire/agentwire/pkg/canonical/wire"
)

// ProjectFigures are the projector's throughput, its baseline's and its
// floor's, each the median of ProjectRounds rounds measured warm.
type ProjectFigures struct {
	// EventsPerS is RUNTIME events applied to the projections per second
	// (consume, decode, fold, write, checkpoint, ack), from a preloaded
	// stream, counted from when the projector is active (projectPass).
	EventsPerS float64
	// BaselineEventsPerS is pgx CopyFrom of the same events (the event-log
	// columns, as the projector's COPY sends them) into a bare table with
	// the log's column types and compression and no keys or indexes, per
	// second.
	BaselineEventsPerS float64
	// Ratio is the median of the rounds' EventsPerS / BaselineEventsPerS:
	// a round's two figures are measured a second apart, so what slows
	// the machine down for a while (autovacuum, a checkpoint, a
	// neighbour) weighs on both.
	Ratio float64
	// RatioMin and RatioMax are the rounds' smallest and largest ratios:
	// how much to trust Ratio.
	RatioMin, RatioMax float64
	// FloorEventsPerS is what consuming RUNTIME costs before any
	// projecting: the projector's consumer, batch size, parallelism and
	// cumulative acks, each batch's log rows (decoded before the clock)
	// copied into a bare table like the baseline's, committed, then
	// acked; consuming and copying overlap, and as many batches are
	// copied at once as the projector has workers. FloorRatio is the
	// rounds' median of floor / baseline: no projector consuming RUNTIME
	// this way on this machine gets above it. The floor's CPU per event
	// (FloorCPUMsPer1k) is what such a projector cannot spend less than:
	// the machine's cores divided by it bound the projector's rate,
	// whatever its own work costs.
	FloorEventsPerS, FloorRatio float64
	// CPUMsPer1k and BaselineCPUMsPer1k are what the projector and the
	// baseline cost the whole machine (every CPU, every process: Postgres
	// and the embedded NATS server too) in CPU milliseconds per thousand
	// events; 0 where the machine does not say (not Linux). Unlike the
	// rates, they do not depend on how many cores there are: the baseline
	// is one COPY, one Postgres backend, and leaves a second core idle
	// that the projector's parallel workers use.
	CPUMsPer1k, BaselineCPUMsPer1k float64
	// FloorCPUMsPer1k is the floor's machine CPU per thousand events.
	FloorCPUMsPer1k float64
	// DecodedFloorEventsPerS, DecodedFloorRatio and DecodedFloorCPUMsPer1k
	// are the same figures of the floor with every event decoded inside
	// the clock, as the projector decodes them, one at a time while the
	// previous batch is copied. No projector can do without decoding what
	// it projects: what this floor costs per event, the projection must
	// fit into what the machine's cores leave beside it.
	DecodedFloorEventsPerS, DecodedFloorRatio, DecodedFloorCPUMsPer1k float64
}

// ProjectRounds is how many times the projector and its baseline are
// measured. A single round of 20000 events lasts about a second; measured
// cold, the baseline alone was seen anywhere between 16k and 25k events/s
// from one run to the next on a busy 2-core machine, and measured warm the
// rounds still differ by a few percent.
const ProjectRounds = 3

// print prints the projection figures.
func (pf ProjectFigures) print(w io.Writer) error {
	for _, f := range []struct {
		name, unit string
		v          float64
	}{
		{"project_events_per_s", "events/s", pf.EventsPerS},
		{"project_baseline_events_per_s", "events/s", pf.BaselineEventsPerS},
		{"project_vs_baseline", "ratio", pf.Ratio},
		{"project_vs_baseline_min", "ratio", pf.RatioMin},
		{"project_vs_baseline_max", "ratio", pf.RatioMax},
		{"project_floor_events_per_s", "events/s", pf.FloorEventsPerS},
		{"project_floor_vs_baseline", "ratio", pf.FloorRatio},
		{"project_decoded_floor_events_per_s", "events/s", pf.DecodedFloorEventsPerS},
		{"project_decoded_floor_vs_baseline", "ratio", pf.DecodedFloorRatio},
		{"project_cpu_ms_per_1k_events", "ms", pf.CPUMsPer1k},
		{"project_baseline_cpu_ms_per_1k_events", "ms", pf.BaselineCPUMsPer1k},
		{"project_floor_cpu_ms_per_1k_events", "ms", pf.FloorCPUMsPer1k},
		{"project_decoded_floor_cpu_ms_per_1k_events", "ms", pf.DecodedFloorCPUMsPer1k},
	} {
		if f.unit == "ms" && f.v == 0 {
			continue // not measured here
		}
		if err := printFigure(w, f.name, f.v, f.unit); err != nil {
			return err
		}
	}
	return nil
}

// ErrNoDatabase is returned by Project when no database URL is given.
var ErrNoDatabase = errors.New("no database for the projector figures (set DATABASE_URL)")

// Project measures the projector on n events mapped from the recordings
// (repeated as distinct sessions), in a scratch schema of the database at
// databaseURL that it drops afterwards, with its own embedded NATS server.
func Project(ctx context.Context, databaseURL, recordings string, n int, log *slog.Logger) (ProjectFigures, error) {
	var out ProjectFigures
	if databaseURL == "" {
		return out, ErrNoDatabase
	}
	sets, err := load(recordings)
	if err != nil {
		return out, err
	}
	// The projector is measured without the bench's data in its heap
	// (streamDocs).
	layout, n, stop, err := benchStream(ctx, sets, n, log)
	if err != nil {
		return out, err
	}
	defer stop()

	rounds := make([]roundFigures, ProjectRounds)
	for r := range rounds {
		if rounds[r], err = projectRound(ctx, databaseURL, layout, bus.ProjectConsumer+"-bench-"+strconv.Itoa(r), n, log); err != nil {
			return out, err
		}
	}
	med := func(figure func(roundFigures) float64) float64 {
		xs := make([]float64, len(rounds))
		for i, f := range rounds {
			xs[i] = figure(f)
		}
		return median(xs)
	}
	ratio := func(f roundFigures) float64 { return f.rate / f.baseline }
	byRatio := func(a, b roundFigures) int { return cmp.Compare(ratio(a), ratio(b)) }
	return ProjectFigures{
		EventsPerS:             med(func(f roundFigures) float64 { return f.rate }),
		BaselineEventsPerS:     med(func(f roundFigures) float64 { return f.baseline }),
		Ratio:                  med(ratio),
		RatioMin:               ratio(slices.MinFunc(rounds, byRatio)),
		RatioMax:               ratio(slices.MaxFunc(rounds, byRatio)),
		FloorEventsPerS:        med(func(f roundFigures) float64 { return f.floor }),
		FloorRatio:             med(func(f roundFigures) float64 { return f.floor / f.baseline }),
		CPUMsPer1k:             med(func(f roundFigures) float64 { return f.cpu }),
		BaselineCPUMsPer1k:     med(func(f roundFigures) float64 { return f.baselineCPU }),
		FloorCPUMsPer1k:        med(func(f roundFigures) float64 { return f.floorCPU }),
		DecodedFloorEventsPerS: med(func(f roundFigures) float64 { return f.decoded }),
		DecodedFloorRatio:      med(func(f roundFigures) float64 { return f.decoded / f.baseline }),
		DecodedFloorCPUMsPer1k: med(func(f roundFigures) float64 { return f.decodedCPU }),
	}, nil
}

// benchStream starts an embedded NATS server in a directory of its own and
// publishes up to n events mapped from the sets to its RUNTIME stream
// (publishBenchEvents). stop shuts it down and removes the directory.
func benchStream(ctx context.Context, sets []corpus, n int, log *slog.Logger) (layout *bus.Layout, published int, stop func(), err error) {
	var undo []func()
	cleanup := func() {
		for _, f := range slices.Backward(undo) {
			f()
		}
	}
	defer func() {
		if err != nil {
			cleanup()
		}
	}()
	dir, err := os.MkdirTemp("", "agentwire-bench-project-")
	if err != nil {
		return nil, 0, nil, err
	}
	undo = append(undo, func() { _ = os.RemoveAll(dir) })
	srv, err := embedded.Start(ctx, embedded.Config{Listen: "127.0.0.1:0", DataDir: dir}, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, 0, nil, err
	}
	undo = append(undo, srv.Shutdown)
	nc, layout, err := bus.Open(ctx, srv.ClientURL(), "agentwire-bench-project", bus.Config{}, log)
	if err != nil {
		return nil, 0, nil, err
	}
	undo = append(undo, nc.Close)
	if published, err = publishBenchEvents(ctx, layout.JS, sets, n); err != nil {
		return nil, 0, nil, err
	}
	return layout, published, cleanup, nil
}

// roundFigures are one round's rates (events/s) of the projector, its
// baseline and its two floors, and the machine CPU (ms per thousand
// events) of each.
type roundFigures struct {
	rate, baseline, floor, decoded         float64
	cpu, baselineCPU, floorCPU, decodedCPU float64
}

func median(xs []float64) float64 {
	slices.Sort(xs)
	return quantile(xs, 0.5)
}

// projectRound measures, in a scratch schema of its own, the projector
// reading the whole preloaded RUNTIME stream through a new consumer, then
// the baseline copying rows into a bare table, then the two floors. Each is
// measured warm, in steady state: it first does the same work once,
// unmeasured, on the same pool, and what that wrote is truncated. A
// projector is a service that runs for days on long-lived connections;
// cold, the first pass paid what a new Postgres backend pays once (mapping
// the shared buffers it touches into its own page tables was a sixth of
// Postgres's CPU in a profile, then catalog and plan caches), and the
// projector's fresh backends paid it while the baseline copied on a
// connection the projector had warmed.
func projectRound(ctx context.Context, databaseURL string, layout *bus.Layout, consumer string, n int, log *slog.Logger) (roundFigures, error) {
	var f roundFigures
	pool, drop, err := scratchSchema(ctx, databaseURL)
	if err != nil {
		return f, err
	}
	defer drop()
	if _, err := migrations.UpPool(ctx, pool); err != nil {
		return f, err
	}

	// The projector, from the preloaded stream to its last ack.
	err = warmThenMeasure(func(pass string) error {
		elapsed, cpu, err := projectPass(ctx, pool, layout, consumer+pass, n, log)
		if err != nil {
			return err
		}
		f.rate, f.cpu = float64(n)/elapsed.Seconds(), cpu
		return nil
	}, func() error { return truncate(ctx, pool, project.Tables...) })
	if err != nil {
		return f, err
	}

	// The baseline: the same events' log columns, copied into a bare table
	// (createBenchTables). The events decoded before the clock; their rows are made as the
	// projector's COPY makes them (EventSource), so the baseline differs by
	// nothing but what the projector does besides.
	docs, err := streamDocs(ctx, layout.JS, n)
	if err != nil {
		return f, err
	}
	events := make([]canonical.Event, len(docs))
	for i, doc := range docs {
		if events[i], err = canonical.DecodeEnvelope(doc); err != nil {
			return f, err
		}
	}
	if err := createBenchTables(ctx, pool); err != nil {
		return f, err
	}
	err = warmThenMeasure(func(string) error {
		start, cpu := time.Now(), startCPU()
		rows := project.EventSource(len(events), func(i int) (*canonical.Event, uint64, []byte) { return &events[i], uint64(i + 1), docs[i] }) //nolint:gosec // i is non-negative
		if _, err := pool.CopyFrom(ctx, pgx.Identifier{"bench_events"}, project.EventColumns, rows); err != nil {
			return fmt.Errorf("baseline copy: %w", err)
		}
		f.baseline, f.baselineCPU = float64(len(events))/time.Since(start).Seconds(), cpu.msPer1k(len(events))
		return nil
	}, func() error { return truncate(ctx, pool, "bench_events") })
	if err != nil {
		return f, err
	}

	for _, floor := range []struct {
		name      string
		decode    bool
		rate, cpu *float64
	}{
		{"floor", false, &f.floor, &f.floorCPU},
		{"decoded floor", true, &f.decoded, &f.decodedCPU},
	} {
		err = warmThenMeasure(func(pass string) error {
			elapsed, cpu, err := floorRound(ctx, pool, layout, consumer+"-"+strings.ReplaceAll(floor.name, " ", "-")+pass, events, floor.decode)
			if err != nil {
				return fmt.Errorf("%s: %w", floor.name, err)
			}
			*floor.rate, *floor.cpu = float64(len(events))/elapsed.Seconds(), cpu
			return nil
		}, func() error { return truncate(ctx, pool, "bench_floor") })
		if err != nil {
			return f, err
		}
	}
	return f, nil
}

// projectPass runs a projector on pool through a new consumer until it has
// acked all n events of the preloaded stream, and returns how long that
// took and its machine CPU per thousand events. Both are counted from the
// moment the projector is active: what it does before (a connection of
// its own, its lock, its consumer, its lease: 30-50 ms here, 3-5 % of a
// pass) a service does once when it starts, and the baseline, copying on
// a connection the pool holds, pays nothing like it.
func projectPass(ctx context.Context, pool *pgxpool.Pool, layout *bus.Layout, consumer string, n int, log *slog.Logger) (time.Duration, float64, error) {
	p := project.New(pool, layout, project.Config{Consumer: consumer}, log)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(pctx) }()
	if err := waitActive(ctx, p, done); err != nil {
		return 0, 0, err
	}
	start, cpu := time.Now(), startCPU()
	st := p.Stats()
	committed := func() bool { return st.Applied.Load()+st.Skipped.Load()+st.DeadLettered.Load() >= uint64(n) } //nolint:gosec // n > 0
	if err := waitFor(ctx, committed, done, "projector stopped early"); err != nil {
		return 0, 0, err
	}
	if err := waitAcked(ctx, layout.JS, consumer, done); err != nil {
		return 0, 0, err
	}
	elapsed, ms := time.Since(start), cpu.msPer1k(n)
	cancel()
	if err := <-done; err != nil {
		return 0, 0, err
	}
	return elapsed, ms, nil
}

// waitActive waits until p holds its lock and lease and is about to
// consume. The projector turns active before it rewinds its consumer and
// starts its workers, so no event is applied unseen.
func waitActive(ctx context.Context, p *project.Projector, done <-chan error) error {
	return waitFor(ctx, p.Active, done, "projector stopped before it was active")
}

// waitFor waits until cond holds, looking every millisecond: a pass lasts
// about a second, and the clock stops within a millisecond of its end.
// cond reads the projector's own state, so looking costs nothing beside
// it (a look at the server's consumer costs an API request).
func waitFor(ctx context.Context, cond func() bool, done <-chan error, stopped string) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case err := <-done:
			return fmt.Errorf("%s: %w", stopped, err)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// warmThenMeasure runs phase twice: first warming up (pass "-warm", a
// suffix for what must be named anew, like a consumer), then reset to
// undo what it wrote, then measured (pass ""). The phase records its
// figures each time; the measured pass's are the ones left.
func warmThenMeasure(phase func(pass string) error, reset func() error) error {
	if err := phase("-warm"); err != nil {
		return err
	}
	if err := reset(); err != nil {
		return fmt.Errorf("reset after warming up: %w", err)
	}
	return phase("")
}

// createBenchTables creates the bare tables the baseline (bench_events)
// and the floors (bench_floor) copy into, in a migrated schema: the event
// log's column types and compression (lz4, not the server's default: what
// the log does for its own speed, they get too), without its keys and
// indexes.
func createBenchTables(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := pool.Exec(ctx, `CREATE TABLE bench_events (LIKE events INCLUDING COMPRESSION);
CREATE TABLE bench_floor (LIKE events INCLUDING COMPRESSION)`)
	return err
}

func truncate(ctx context.Context, pool *pgxpool.Pool, tables ...string) error {
	_, err := pool.Exec(ctx, "TRUNCATE "+strings.Join(tables, ", "))
	return err
}

// floorRound consumes the preloaded RUNTIME stream through a new consumer
// configured as the projector's, as the projector does, and copies each
// batch's log rows into a bare table, a transaction per batch, on as many
// connections at once as the projector has workers, acking after the
// commits with the projector's own batching and cumulative acks
// (project.Batches, project.Acks). Nothing is projected. A reader fills
// the next batches while others are copied. The rows are built from
// events, the stream's events in order, decoded before the clock; with
// decode, from each message, decoded by the reader as it arrives. It
// returns how long that took from when the consumer was made, as the
// projector is counted from when it is active, and the machine CPU per
// thousand events over the same span.
func floorRound(ctx context.Context, pool *pgxpool.Pool, layout *bus.Layout, consumer string, events []canonical.Event, decode bool) (time.Duration, float64, error) {
	pc := project.Config{}.WithDefaults()
	cons, err := layout.JS.CreateOrUpdateConsumer(ctx, bus.RuntimeStream, layout.ProjectConsumerConfig(consumer, pc.InFlight()))
	if err != nil {
		return 0, 0, err
	}
	start, cpu := time.Now(), startCPU()
	defer func() { _ = layout.JS.DeleteConsumer(context.WithoutCancel(ctx), bus.RuntimeStream, consumer) }()
	it, err := cons.Messages(jetstream.PullMaxMessages(pc.BatchSize), jetstream.PullExpiry(5*time.Second))
	if err != nil {
		return 0, 0, err
	}
	defer it.Stop()
	acks := project.NewAcks(layout.JS.Conn(), slog.New(slog.DiscardHandler))
	in := make(chan floorMsg, pc.BatchSize)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(in)
		for range events {
			m, err := it.Next(jetstream.NextContext(gctx))
			if err != nil {
				return err
			}
			f, err := readFloorMsg(m, events, decode)
			if err != nil {
				return err
			}
			f.pos = acks.Track(m)
			select {
			case in <- f:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	for range pc.Workers {
		g.Go(func() error {
			var done []uint64
			for batch := range project.Batches(in, pc.BatchSize) {
				if err := copyBatch(gctx, pool, batch); err != nil {
					return err
				}
				done = done[:0]
				for _, m := range batch {
					done = append(done, m.pos)
				}
				acks.Finish(done...)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, 0, err
	}
	if err := waitAcked(ctx, layout.JS, consumer, make(chan error)); err != nil {
		return 0, 0, err
	}
	return time.Since(start), cpu.msPer1k(len(events)), nil
}

// floorMsg is a RUNTIME message the floor copies, with its event, stream
// sequence and position in the floor's acks.
type floorMsg struct {
	msg jetstream.Msg
	ev  *canonical.Event
	seq uint64
	pos uint64
}

// readFloorMsg reads m's stream sequence and takes its event from events,
// or with decode, decodes it from m.
func readFloorMsg(m jetstream.Msg, events []canonical.Event, decode bool) (floorMsg, error) {
	md, err := m.Metadata()
	if err != nil {
		return floorMsg{}, err
	}
	f := floorMsg{msg: m, seq: md.Sequence.Stream}
	if f.seq == 0 || f.seq > uint64(len(events)) {
		return f, fmt.Errorf("stream sequence %d: not one of the %d events published", f.seq, len(events))
	}
	if !decode {
		f.ev = &events[f.seq-1]
		return f, nil
	}
	ev, err := project.DecodeEvent(m.Subject(), m.Headers(), m.Data())
	if err != nil {
		return f, fmt.Errorf("decode event %d: %w", f.seq, err)
	}
	f.ev = &ev
	return f, nil
}

// copyBatch copies the log rows of a batch of RUNTIME messages into
// bench_floor in a transaction of its own.
func copyBatch(ctx context.Context, pool *pgxpool.Pool, batch []floorMsg) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	rows := project.EventSource(len(batch), func(i int) (*canonical.Event, uint64, []byte) {
		return batch[i].ev, batch[i].seq, batch[i].msg.Data()
	})
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"bench_floor"}, project.EventColumns, rows); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// benchEvents maps the recordings, each repetition a new session of its
// own tenant, until n events. Canonical ids derive from the tenant and the
// provider's own ids, so repetitions under one tenant would all describe
// the same Codex threads, turns and items (987 sessions sharing 58 thread
// rows in 20000 events): the figure would measure workers queueing for
// those rows' locks, not throughput. Sessions sharing rows are tested on
// their own (internal/project's TestSharedRows).
func benchEvents(sets []corpus, n int) ([]canonical.Event, error) {
	var out []canonical.Event
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; len(out) < n; i++ {
		c := sets[i%len(sets)]
		a, err := adapters.Lookup(c.dialect)
		if err != nil {
			return nil, err
		}
		s := a.NewSession("")
		for j, l := range c.lines {
			evs, err := s.Map(adapter.Frame{Bytes: l, Dialect: c.dialect, Tenant: "bench-" + strconv.Itoa(i), SessionKey: "bench/" + strconv.Itoa(i),
				Ordinal: uint64(j + 1), ReceivedAt: at.Add(time.Duration(j) * time.Millisecond)})
			if err != nil {
				return nil, err
			}
			out = append(out, evs...)
		}
		if i > 0 && len(out) == 0 {
			return nil, errors.New("the recordings map to no events")
		}
	}
	return out[:n], nil
}

// publishBenchEvents publishes n events mapped from the sets (benchEvents)
// and returns how many it published. The events are dropped on return.
// It waits for the server's acks a window at a time and lets go of each
// event once it is encoded: a future holds its message until acked, and
// with every message in hand the setup, not the projector, was the
// stage's peak memory (197-200 MB against the projector's 184).
func publishBenchEvents(ctx context.Context, js jetstream.JetStream, sets []corpus, n int) (int, error) {
	events, err := benchEvents(sets, n)
	if err != nil {
		return 0, err
	}
	const window = 1024
	futures := make([]jetstream.PubAckFuture, 0, window)
	acked := func() error {
		for _, f := range futures {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				return err
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		futures = futures[:0]
		return nil
	}
	for i := range events {
		msg, err := wire.ToNATS(events[i])
		if err != nil {
			return 0, err
		}
		events[i] = canonical.Event{}
		f, err := js.PublishMsgAsync(msg)
		if err != nil {
			return 0, err
		}
		if futures = append(futures, f); len(futures) == window {
			if err := acked(); err != nil {
				return 0, err
			}
		}
	}
	if err := acked(); err != nil {
		return 0, err
	}
	return len(events), nil
}

// scratchSchema creates a schema for the bench and returns a pool on it and
// a function that drops it.
func scratchSchema(ctx context.Context, databaseURL string) (*pgxpool.Pool, func(), error) {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "agentwire_bench_" + hex.EncodeToString(b)
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, nil, fmt.Errorf("database URL: %w", err)
	}
	admin, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to Postgres: %w", err)
	}
	defer func() { _ = admin.Close(context.WithoutCancel(ctx)) }()
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return nil, nil, err
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	cfg.MaxConns = max(cfg.MaxConns, 8)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	drop := func() {
		pool.Close()
		c, err := pgx.ConnectConfig(context.WithoutCancel(ctx), cfg.ConnConfig)
		if err != nil {
			return
		}
		defer func() { _ = c.Close(context.WithoutCancel(ctx)) }()
		_, _ = c.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
	}
	return pool, drop, nil
}

// streamDocs reads the documents of RUNTIME's first n events, as the
// projector receives them. The baseline's input is read back after the
// projector was measured, not kept from the start: 20000 documents (about
// 50 MB) live in the heap while the projector ran made the collector,
// under the service's 160 MiB limit, run far more often than the projector
// alone makes it, and mark them each time. The projector process's CPU
// per event was 48-67 ms per thousand with them, 45-48 without (same
// machine, one after the other).
func streamDocs(ctx context.Context, js jetstream.JetStream, n int) ([][]byte, error) {
	cons, err := js.OrderedConsumer(ctx, bus.RuntimeStream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, fmt.Errorf("read RUNTIME back: %w", err)
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("read RUNTIME back: %w", err)
	}
	defer it.Stop()
	docs := make([][]byte, n)
	for i := range docs {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("read RUNTIME back: event %d of %d: %w", i+1, n, err)
		}
		docs[i] = m.Data()
	}
	return docs, nil
}

// waitAcked waits until the server has every event of RUNTIME acked by
// consumer. It is called once the events are committed, when only their
// last acks are on the way: it looks at once and then every millisecond.
// It looked every 20 ms, first after 20: the projector's clock ran on
// 10 ms on average after its end, the floors' 20, of passes of 0.4-1 s.
func waitAcked(ctx context.Context, js jetstream.JetStream, consumer string, done <-chan error) error {
	st, err := js.Stream(ctx, bus.RuntimeStream)
	if err != nil {
		return err
	}
	last := st.CachedInfo().State.LastSeq
	c, err := js.Consumer(ctx, bus.RuntimeStream, consumer)
	if err != nil {
		return err
	}
	for {
		ci, err := c.Info(ctx)
		if err == nil && ci.AckFloor.Stream >= last {
			return nil
		}
		select {
		case err := <-done:
			return fmt.Errorf("projector stopped early: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// RunProject measures and prints only the projection figures (the rest of
// Run is skipped), to iterate on the projector.
func RunProject(ctx context.Context, cfg Config) error {
	pf, err := Project(ctx, os.Getenv("DATABASE_URL"), cfg.Recordings, min(cfg.Frames, 20000), cfg.Log)
	if err != nil {
		return fmt.Errorf("project: %w", err)
	}
	return pf.print(cfg.Out)
}
