package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/normalize"
	"github.com/agentwire/agentwire/internal/project"
	"github.com/agentwire/agentwire/internal/telemetry"
)

// serviceFlags are the flags every long-running command shares.
type serviceFlags struct {
	natsURL  string
	metrics  string
	logLevel string
	bus      bus.Config
	batch    int
	memLimit string
}

// Default addresses of /metrics and /healthz: the normalizer and the
// projector run side by side on one machine, each on its own.
const (
	normalizeMetricsAt = "127.0.0.1:9464"
	projectMetricsAt   = "127.0.0.1:9465"
)

// serviceKind is which of the long-running commands a flag set belongs to: a
// flag's help says what it does in that command, and a flag that would do
// nothing there is not offered.
type serviceKind int

const (
	serviceNormalize serviceKind = iota
	serviceProject
	serviceUp // normalizer and projector in one process
)

func (f *serviceFlags) register(fs *pflag.FlagSet, s serviceKind) {
	metricsAt, delivered, batch, batchDefault := normalizeMetricsAt, "frame", "frames a normalizer partition fetches at a time", normalize.DefaultBatchSize
	switch s {
	case serviceNormalize: // the defaults above
	case serviceProject:
		metricsAt, delivered, batch, batchDefault = projectMetricsAt, "event", "events the projector applies in one transaction, at most", project.DefaultBatchSize
	case serviceUp:
		delivered, batch, batchDefault = "frame or event", fmt.Sprintf("frames a normalizer partition fetches at a time, and events the projector applies in one transaction, at most; "+
			"0: %d frames and %d events", normalize.DefaultBatchSize, project.DefaultBatchSize), 0
	}
	fs.StringVar(&f.natsURL, "nats-url", bus.DefaultURL, "NATS server to use")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&f.metrics, "metrics-listen", metricsAt, "address of /metrics (Prometheus) and /healthz; empty turns them off")
	fs.IntVar(&f.bus.Replicas, "replicas", 1, "replicas of the streams (3 in a cluster)")
	fs.IntVar(&f.bus.Partitions, "partitions", bus.DefaultPartitions, "RAW partitions, fixed when RAW is created")
	fs.DurationVar(&f.bus.RawMaxAge, "raw-max-age", 0, "how long RAW keeps frames (0: forever)")
	fs.DurationVar(&f.bus.RuntimeMaxAge, "runtime-max-age", 0, "how long RUNTIME keeps events (0: forever)")
	fs.DurationVar(&f.bus.DuplicateWindow, "duplicate-window", 10*time.Minute,
		"how long RAW and RUNTIME remember message ids to drop re-sent frames and re-published events; must outlast a normalizer restart, and costs memory in proportion to the rate")
	if s != serviceProject {
		fs.DurationVar(&f.bus.PinnedTTL, "pinned-ttl", 10*time.Second, "how soon a partition moves from a vanished normalizer worker to another")
	}
	fs.DurationVar(&f.bus.AckWait, "ack-wait", 30*time.Second, "how long a delivered "+delivered+" waits for its ack before redelivery (after a worker crash)")
	fs.IntVar(&f.batch, "batch", batchDefault, batch)
	fs.StringVar(&f.memLimit, "memory-limit", defaultMemoryLimit, memoryLimitUsage)
}

// busFlags are the flags of bus.Config's fields, by field name.
var busFlags = map[string]string{
	"Replicas": "replicas", "Partitions": "partitions", "RawMaxAge": "raw-max-age", "RuntimeMaxAge": "runtime-max-age",
	"DuplicateWindow": "duplicate-window", "PinnedTTL": "pinned-ttl", "AckWait": "ack-wait",
}

func (f *serviceFlags) logger(w io.Writer, service string) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, Usagef("--log-level %q: use debug, info, warn or error", f.logLevel)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})).With("service", service), nil
}

func (f *serviceFlags) validate() error {
	if err := f.bus.WithDefaults().Validate(); err != nil {
		// Every field has its flag; a field added without one still gets
		// a message, in the field's name.
		var bad *bus.ConfigError
		if errors.As(err, &bad) && busFlags[bad.Field] != "" {
			return Usagef("--%s %s, got %v", busFlags[bad.Field], bad.Rule, bad.Value)
		}
		return Usagef("%v", err)
	}
	if f.batch < 0 || f.batch > 10000 {
		return Usagef("--batch must be between 0 (the default) and 10000, got %d", f.batch)
	}
	return nil
}

// start checks the flags and applies the ones that are the process's
// (the memory limit): the first thing a service command does.
func (f *serviceFlags) start(cmd *cobra.Command) error {
	if err := f.validate(); err != nil {
		return err
	}
	return applyMemoryLimit(cmd, f.memLimit)
}

// observer is what a service shows on /metrics and /healthz: each of its
// components (the normalizer, the projector) registers its metrics and a
// health check, and the service is healthy while every check passes.
type observer struct {
	reg    *prometheus.Registry
	checks []func() error
}

func newObserver() *observer { return &observer{reg: telemetry.NewRegistry()} }

// counters registers agentwire_<subsystem>_<name>_total for each counter.
func (o *observer) counters(subsystem string, counters map[string]*atomic.Uint64, help map[string]string) {
	for name, c := range counters {
		o.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: "agentwire", Subsystem: subsystem, Name: name + "_total", Help: help[name],
		}, func() float64 { return float64(c.Load()) }))
	}
}

// check adds health checks; call it before serve.
func (o *observer) check(checks ...func() error) { o.checks = append(o.checks, checks...) }

// natsConnected is the health check of a service's NATS connection.
func (o *observer) natsConnected(nc *nats.Conn) {
	o.check(func() error {
		if !nc.IsConnected() {
			return fmt.Errorf("NATS is %s", nc.Status())
		}
		return nil
	})
}

func (o *observer) health() error {
	var errs []error
	for _, c := range o.checks {
		if err := c(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// serve serves /metrics and /healthz on addr ("" serves nothing) until
// the returned function stops it.
func (o *observer) serve(ctx context.Context, addr string, log *slog.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	srv, err := telemetry.Start(ctx, addr, o.reg, o.health, log)
	if errors.Is(err, telemetry.ErrAddrInUse) {
		return nil, Usagef("%v; pass --metrics-listen 127.0.0.1:<free port>, or --metrics-listen '' to turn metrics off", err)
	}
	if err != nil {
		return nil, err
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Stop(sctx)
	}, nil
}

// runNormalizer applies the layout and normalizes until ctx ends, then
// drains the connection. Metrics and health are served meanwhile, with
// those of the components already registered in obs.
func runNormalizer(ctx context.Context, nc *nats.Conn, layout *bus.Layout, f *serviceFlags, obs *observer, log *slog.Logger) error {
	n, err := normalize.New(ctx, layout, normalize.Config{BatchSize: f.batch}, log)
	if err != nil {
		return err
	}
	s := n.Stats()
	obs.counters("normalize", map[string]*atomic.Uint64{
		"frames": &s.Frames, "events": &s.Events, "skipped": &s.Skipped,
		"gaps": &s.Gaps, "rebuilt": &s.Rebuilt, "dead_lettered": &s.DeadLettered,
	}, metricHelp)
	obs.natsConnected(nc)
	stop, err := obs.serve(ctx, f.metrics, log)
	if err != nil {
		return err
	}
	defer stop()
	log.Info("normalizer running", "partitions", layout.Config.Partitions)
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	tick := time.NewTicker(30 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			s := n.Stats()
			log.Info("normalizer stopped", "frames", s.Frames.Load(), "events", s.Events.Load(), "dead_lettered", s.DeadLettered.Load())
			if derr := nc.Drain(); derr != nil {
				log.Debug("drain", "err", derr)
			}
			return err
		case <-tick.C:
			s := n.Stats()
			log.Info("progress", "frames", s.Frames.Load(), "events", s.Events.Load(), "skipped", s.Skipped.Load(), "dead_lettered", s.DeadLettered.Load())
		}
	}
}

var metricHelp = map[string]string{
	"frames":        "Frames mapped.",
	"events":        "Canonical events published.",
	"skipped":       "Redelivered frames skipped because they were mapped already.",
	"gaps":          "Missing frames given up on after the gap timeout.",
	"rebuilt":       "Sessions whose state was missing and was rebuilt from RAW.",
	"dead_lettered": "Frames or events sent to the dead-letter stream.",
}

func newNormalizeCommand() *cobra.Command {
	var f serviceFlags
	cmd := &cobra.Command{
		Use:   "normalize",
		Short: "Run the normalizer: RAW frames → canonical events on RUNTIME",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.start(cmd); err != nil {
				return err
			}
			log, err := f.logger(cmd.ErrOrStderr(), "normalize")
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			nc, layout, err := bus.Open(ctx, f.natsURL, "agentwire-normalize", f.bus, log)
			if err != nil {
				return err
			}
			defer nc.Close()
			return runNormalizer(ctx, nc, layout, &f, newObserver(), log)
		},
	}
	f.register(cmd.Flags(), serviceNormalize)
	return cmd
}

// Normalize runs the normalize command on its own (cmd/normalize).
func Normalize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := newNormalizeCommand() //nolint:contextcheck // cobra hands ctx to the command through ExecuteContext
	return runStandalone(ctx, cmd, args, stdout, stderr)
}

func runStandalone(ctx context.Context, cmd *cobra.Command, args []string, stdout, stderr io.Writer) error {
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return Usagef("%v (see `%s --help`)", err, c.CommandPath())
	})
	cmd.SetArgs(args)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	err := cmd.ExecuteContext(ctx)
	if err != nil && !strings.Contains(err.Error(), "--help") && isCobraUsageError(err) {
		return Usagef("%v", err)
	}
	return err
}
