package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/embedded"
	"github.com/agentwire/agentwire/internal/ingest"
)

func newUpCommand() *cobra.Command {
	var (
		f       serviceFlags
		db      databaseFlags
		listen  string
		dataDir string
		httpAt  string
		tokens  string
	)
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Run agentwire on one machine: embedded NATS, the normalizer and the projector",
		Long: `Run an embedded NATS server with JetStream (store in --data-dir), the normalizer and,
given a database (--database-url or DATABASE_URL), the projector in one process. Frames
ingested into it (agentwire ingest ...) come out as canonical events on
runtime.<provider>.<type> (watch them with: nats sub 'runtime.>') and in the Postgres
projections. With --nats-url, use that NATS server instead of an embedded one.
Metrics and health: http://127.0.0.1:9464/metrics and /healthz (--metrics-listen).`,
		Example: `  DATABASE_URL=postgres://localhost/agentwire agentwire up
  agentwire ingest file testdata/recordings/codex-exec     # in another terminal`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.start(cmd); err != nil {
				return err
			}
			if err := db.validate(); err != nil {
				return err
			}
			log, err := f.logger(cmd.ErrOrStderr(), "up")
			if err != nil {
				return err
			}
			httpTokens, err := loadHTTPTokens(httpAt, tokens)
			if err != nil {
				return err
			}
			// The components run until ctx ends. It is cancelled when up
			// returns, whatever the reason, before their stop functions wait
			// for them: a component that fails to start (the HTTP address
			// taken) or stops with an error (the normalizer) would otherwise
			// leave up waiting for the others until a signal came.
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			url := f.natsURL
			if !cmd.Flags().Changed("nats-url") {
				srv, err := embedded.Start(ctx, embedded.Config{Listen: listen, DataDir: dataDir}, log.With("component", "nats"))
				if errors.Is(err, embedded.ErrPortTaken) {
					return Usagef("%v; pass --nats-listen 127.0.0.1:<free port>, or --nats-url %s to use the server that is there", err, bus.DefaultURL)
				}
				if err != nil {
					return err
				}
				defer func() {
					srv.Shutdown()
					srv.WaitForShutdown()
				}()
				url = srv.ClientURL()
				abs, _ := filepath.Abs(dataDir)
				_, _ = fmt.Fprintf(cmd.ErrOrStderr(), "agentwire: NATS with JetStream on %s (store %s)\nagentwire: watch events with: nats --server %s sub 'runtime.>'\nagentwire: feed it with:      agentwire ingest --nats-url %s file <logs>\n", url, abs, url, url)
			}
			nc, layout, err := bus.Open(ctx, url, "agentwire-up", f.bus, log)
			if err != nil {
				return err
			}
			defer nc.Close()
			obs := newObserver()
			stopProjector, err := startProjector(ctx, cmd.ErrOrStderr(), url, f, db, obs, log.With("component", "project"))
			if err != nil {
				return err
			}
			defer func() { cancel(); stopProjector() }()
			if httpAt != "" {
				stopHTTP, err := startHTTPIngest(ctx, layout, httpAt, httpTokens, log.With("component", "http"))
				if err != nil {
					return err
				}
				defer func() { cancel(); stopHTTP() }()
			}
			return runNormalizer(ctx, nc, layout, &f, obs, log.With("component", "normalize"))
		},
	}
	f.register(cmd.Flags(), serviceUp)
	db.register(cmd)
	cmd.Flags().StringVar(&listen, "nats-listen", "127.0.0.1:4222", "address of the embedded NATS server")
	cmd.Flags().StringVar(&dataDir, "data-dir", ".agentwire", "directory of the embedded JetStream store")
	cmd.Flags().StringVar(&httpAt, "http-listen", "", "also accept frames over HTTP (POST /v1/frames) on this address")
	cmd.Flags().StringVar(&tokens, "http-tokens", "", `bearer tokens of --http-listen: one "TENANT SHA256-HEX" a line`)
	return cmd
}

// startHTTPIngest runs the HTTP ingest endpoint beside the pipeline until
// ctx ends; the returned func waits for it to stop.
func startHTTPIngest(ctx context.Context, layout *bus.Layout, addr string, tokens *ingest.Tokens, log *slog.Logger) (func(), error) {
	h := ingest.NewHTTPServer(ingest.HTTPOptions{Layout: layout, Tokens: tokens, Log: log})
	listening := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		err := ingest.ListenAndServe(ctx, addr, h, func(a net.Addr) {
			log.Info("serving POST /v1/frames", "addr", a.String(), "tokens", tokens.Len())
			listening <- nil
		})
		if err != nil {
			listening <- err
		}
	}()
	if err := <-listening; err != nil {
		return nil, Usagef("--http-listen: %v; pass another address", err)
	}
	return func() { <-done }, nil
}

// loadHTTPTokens reads the bearer tokens of --http-listen, before anything
// starts: a flag that cannot work is refused at once. No address, no
// tokens (nil).
func loadHTTPTokens(addr, file string) (*ingest.Tokens, error) {
	switch {
	case addr == "" && file == "":
		return nil, nil
	case addr == "":
		return nil, Usagef("--http-tokens is for --http-listen; pass --http-listen ADDRESS too, or drop --http-tokens")
	case file == "":
		return nil, Usagef("--http-listen needs --http-tokens FILE (lines \"TENANT SHA256-HEX\"; see `agentwire ingest token-hash`)")
	}
	tokens, err := ingest.LoadTokens(file)
	if err != nil {
		return nil, Usagef("--http-tokens: %v", err)
	}
	return tokens, nil
}
