package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/project"
	"github.com/agentwire/agentwire/migrations"
)

// databaseFlags are the flags of commands that use Postgres.
type databaseFlags struct {
	url     string
	workers int
	rebuild bool
}

func (f *databaseFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.url, "database-url", os.Getenv("DATABASE_URL"), "Postgres to project into (default $DATABASE_URL)")
	cmd.Flags().IntVar(&f.workers, "project-workers", project.DefaultWorkers(),
		"sessions the projector applies in parallel, each on a connection of its own; one per CPU by default, 2 to 8")
	cmd.Flags().BoolVar(&f.rebuild, "rebuild", false,
		"first empty the event log and the projections and rebuild them from RUNTIME's first event (after a projector fix); waits for a running projector to stop, and refuses if RUNTIME lost events. Once: a service restarted with it rebuilds again")
}

// maxProjectWorkers bounds --project-workers: each worker holds a
// Postgres connection, and a server allows 100 by default.
const maxProjectWorkers = 64

func (f *databaseFlags) validate() error {
	if f.workers < 1 || f.workers > maxProjectWorkers {
		return Usagef("--project-workers must be between 1 and %d, got %d", maxProjectWorkers, f.workers)
	}
	if f.url != "" {
		// Checked before anything starts; openDatabase parses it again.
		if _, err := pgxpool.ParseConfig(f.url); err != nil {
			// The URL may hold a password: it is not echoed.
			return Usagef("--database-url: %v", err)
		}
	}
	return nil
}

// openDatabase connects a pool sized for the projector's workers and
// applies the migrations the database lacks.
func openDatabase(ctx context.Context, url string, workers int, log *slog.Logger) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The URL may hold a password: it is not echoed.
		return nil, Usagef("--database-url: %v", err)
	}
	cfg.MaxConns = max(cfg.MaxConns, int32(workers)+2) //nolint:gosec // a small worker count
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "agentwire"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to Postgres: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to Postgres at %s:%d: %s (check --database-url or DATABASE_URL)", cfg.ConnConfig.Host, cfg.ConnConfig.Port, oneLine(err))
	}
	applied, err := migrations.UpPool(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	if len(applied) > 0 {
		log.Info("migrated the database", "applied", applied)
	}
	return pool, nil
}

// newProjector makes the projector and registers its metrics and health
// checks (NATS, Postgres, the projector's own) in obs.
func newProjector(ctx context.Context, pool *pgxpool.Pool, nc *nats.Conn, layout *bus.Layout, workers, batch int, obs *observer, log *slog.Logger) *project.Projector {
	batchSeconds := prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "agentwire", Subsystem: "project", Name: "batch_seconds",
		Help: "How long committing a batch took, from its first transaction begun to its commit, retries included (the wait of its events between decoding and ack).",
		// From a lone event on an idle server to a full batch retried
		// through a Postgres restart.
		Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 12),
	})
	obs.reg.MustRegister(batchSeconds)
	p := project.New(pool, layout, project.Config{Workers: workers, BatchSize: batch,
		Committed: func(_ int, took time.Duration) { batchSeconds.Observe(took.Seconds()) }}, log)
	s := p.Stats()
	obs.counters("project", map[string]*atomic.Uint64{
		"applied": &s.Applied, "skipped": &s.Skipped, "dead_lettered": &s.DeadLettered, "batches": &s.Batches,
		"retries": &s.Retries, "deadlocks": &s.Deadlocks, "restarts": &s.Restarts,
		"superseded": &s.Superseded,
	}, projectMetricHelp)
	obs.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "agentwire", Subsystem: "project", Name: "active",
			Help: "1 while this projector holds the lock and applies RUNTIME; 0 while it stands by (another one is active) or starts over.",
		}, func() float64 {
			if p.Active() {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "agentwire", Subsystem: "project", Name: "backlog_events",
			Help: "RUNTIME events the projector has not applied yet (its consumer's pending and unacked messages; acks are cumulative, so while it runs this includes events applied but waiting for a slower worker's earlier ones); NaN when NATS does not say.",
		}, func() float64 {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			n, err := p.Backlog(ctx)
			if err != nil {
				return math.NaN()
			}
			return float64(n)
		}))
	obs.natsConnected(nc)
	obs.check(p.Health, func() error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if err := pool.Ping(ctx); err != nil {
			return fmt.Errorf("the database does not answer: %w", err)
		}
		return nil
	})
	return p
}

var projectMetricHelp = map[string]string{
	"applied":       "Events applied to the projections.",
	"skipped":       "Redelivered or duplicate events skipped (applied already).",
	"dead_lettered": "Events sent to deadletter.project.<tenant>.",
	"batches":       "Batch transactions committed.",
	"retries":       "Batches retried after a transient Postgres error.",
	"deadlocks":     "Retries due to a deadlock Postgres detected (expected 0).",
	"restarts":      "Restarts of the consume loop (Postgres, NATS or the lock lost).",
	"superseded":    "Batches rolled back because another projector had taken over (this one had lost its lock).",
}

// prepareRebuild, with --rebuild, empties the projections for a rebuild
// from RUNTIME's first event and returns RUNTIME's last sequence (0
// without --rebuild).
func prepareRebuild(ctx context.Context, p *project.Projector, db databaseFlags) (uint64, error) {
	if !db.rebuild {
		return 0, nil
	}
	to, err := p.PrepareRebuild(ctx)
	if err != nil {
		return 0, fmt.Errorf("rebuild: %w", err)
	}
	return to, nil
}

// runProjector projects until ctx ends, logging progress; after a
// rebuild was prepared (rebuildTo, RUNTIME's last sequence then), it says
// how far the rebuild is until it has caught up.
func runProjector(ctx context.Context, p *project.Projector, rebuildTo uint64, db databaseFlags, log *slog.Logger) error {
	log.Info("projector running", "workers", db.workers)
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	var rebuilding <-chan time.Time
	if rebuildTo > 0 {
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		rebuilding = t.C
	}
	started := time.Now()
	for {
		select {
		case err := <-done:
			s := p.Stats()
			log.Info("projector stopped", "applied", s.Applied.Load(), "skipped", s.Skipped.Load(), "dead_lettered", s.DeadLettered.Load())
			return err
		case <-tick.C:
			s := p.Stats()
			log.Info("progress", "applied", s.Applied.Load(), "skipped", s.Skipped.Load(), "dead_lettered", s.DeadLettered.Load(), "retries", s.Retries.Load(), "deadlocks", s.Deadlocks.Load())
		case <-rebuilding:
			floor, err := p.AckFloor(ctx)
			if err != nil {
				continue // not consuming yet, or NATS away: said by the next tick
			}
			if floor >= rebuildTo {
				log.Info("rebuilt the projections", "events", rebuildTo, "took", time.Since(started).Round(time.Millisecond))
				rebuilding = nil
				continue
			}
			log.Info("rebuilding the projections", "done", floor, "of", rebuildTo, "percent", floor*100/rebuildTo)
		}
	}
}

func newProjectCommand() *cobra.Command {
	var (
		f  serviceFlags
		db databaseFlags
	)
	cmd := &cobra.Command{
		Use:   "project",
		Short: "Run the projector: canonical events on RUNTIME → Postgres projections",
		Long: `Migrate the database, then apply every RUNTIME event to the Postgres projections
(sessions, threads, turns, items, requests, usage, ...) exactly once, in order per session.
Events it cannot apply go to deadletter.project.<tenant> with the reason. Several may run
against one database: one applies, the others stand by and take over when it stops.
Metrics and health: http://127.0.0.1:9465/metrics and /healthz (--metrics-listen).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.start(cmd); err != nil {
				return err
			}
			if err := db.validate(); err != nil {
				return err
			}
			if db.url == "" {
				return Usagef("project: no database: pass --database-url or set DATABASE_URL")
			}
			log, err := f.logger(cmd.ErrOrStderr(), "project")
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			pool, err := openDatabase(ctx, db.url, db.workers, log)
			if err != nil {
				return err
			}
			defer pool.Close()
			nc, layout, err := bus.Open(ctx, f.natsURL, "agentwire-project", f.bus, log)
			if err != nil {
				return err
			}
			defer nc.Close()
			obs := newObserver()
			p := newProjector(ctx, pool, nc, layout, db.workers, f.batch, obs, log)
			stop, err := obs.serve(ctx, f.metrics, log)
			if err != nil {
				return err
			}
			defer stop()
			rebuildTo, err := prepareRebuild(ctx, p, db)
			if err == nil {
				err = runProjector(ctx, p, rebuildTo, db, log)
			}
			if derr := nc.Drain(); derr != nil {
				log.Debug("drain", "err", derr)
			}
			return err
		},
	}
	f.register(cmd.Flags(), serviceProject)
	db.register(cmd)
	return cmd
}

func newMigrateCommand() *cobra.Command {
	var url string
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the Postgres migrations the database lacks",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if url == "" {
				return Usagef("migrate: no database: pass --database-url or set DATABASE_URL")
			}
			log := slog.New(slog.DiscardHandler)
			pool, err := openDatabase(cmd.Context(), url, 0, log)
			if err != nil {
				return err
			}
			defer pool.Close()
			all, err := migrations.All()
			if err != nil {
				return err
			}
			_, _ = fmt.Fprintf(cmd.OutOrStdout(), "database at version %d\n", len(all))
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "database-url", os.Getenv("DATABASE_URL"), "Postgres to migrate (default $DATABASE_URL)")
	return cmd
}

// Project runs the project command on its own (cmd/project).
func Project(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := newProjectCommand() //nolint:contextcheck // cobra hands ctx to the command through ExecuteContext
	return runStandalone(ctx, cmd, args, stdout, stderr)
}

// startProjector runs the projector inside `agentwire up` on its own NATS
// connection when a database is configured (its metrics and health in
// obs), and says how to turn it on when not. The returned function waits
// for it to stop (after ctx ends).
func startProjector(ctx context.Context, stderr io.Writer, natsURL string, f serviceFlags, db databaseFlags, obs *observer, log *slog.Logger) (func(), error) {
	if db.url == "" {
		_, _ = fmt.Fprintln(stderr, "agentwire: projections are off (no database); pass --database-url or set DATABASE_URL to project into Postgres")
		return func() {}, nil
	}
	pool, err := openDatabase(ctx, db.url, db.workers, log)
	if err != nil {
		return nil, err
	}
	nc, layout, err := bus.Open(ctx, natsURL, "agentwire-up-project", f.bus, log)
	if err != nil {
		pool.Close()
		return nil, err
	}
	p := newProjector(ctx, pool, nc, layout, db.workers, f.batch, obs, log)
	// A rebuild that cannot be done is refused before the pipeline starts,
	// so that up exits saying why instead of running without projecting.
	rebuildTo, err := prepareRebuild(ctx, p, db)
	if err != nil {
		_ = nc.Drain()
		pool.Close()
		return nil, err
	}
	_, _ = fmt.Fprintln(stderr, "agentwire: projecting RUNTIME into Postgres")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := runProjector(ctx, p, rebuildTo, db, log); err != nil {
			log.Error("projector failed", "err", err)
		}
		_ = nc.Drain()
		pool.Close()
	}()
	return func() { <-done }, nil
}

// oneLine is err's message on one line. pgx says why each address it
// tried failed on a line of its own (twice for one address when it tried
// TLS first); a service's failure is one line in its log and on a
// terminal.
func oneLine(err error) string {
	var parts []string
	for p := range strings.SplitSeq(err.Error(), "\n") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, " ")
}
