package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/ingest"
	"github.com/agentwire/agentwire/pkg/adapters"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Ingest runs the `ingest` command tree as a program of its own (cmd/ingest):
// `ingest file x.jsonl` is `agentwire ingest file x.jsonl`.
func Ingest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := newIngestCommand() //nolint:contextcheck // cobra hands ctx to every command through ExecuteContext
	root.SilenceUsage = true
	root.SilenceErrors = true
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return Usagef("%v (see `%s --help`)", err, cmd.CommandPath())
	})
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	var ue *usageError
	if err != nil && !errors.As(err, &ue) && isCobraUsageError(err) {
		return Usagef("%v (see `ingest --help`)", err)
	}
	return err
}

// exitCodeError makes the process exit with a command's exit code, without
// a message (the command has said what went wrong).
type exitCodeError struct{ code int }

func (e *exitCodeError) Error() string {
	return fmt.Sprintf("the command exited with status %d", e.code)
}

// ExitCode is the code to exit with.
func (e *exitCodeError) ExitCode() int { return e.code }

// ingestFlags are the flags every ingest subcommand shares.
type ingestFlags struct {
	natsURL, tenant, dialect, provider, session string
}

func newIngestCommand() *cobra.Command {
	var f ingestFlags
	cmd := &cobra.Command{
		Use:   "ingest",
		Short: "Publish agent frames (files, stdin, a spawned agent) to the RAW stream",
		Long: `Read the frames AI coding agents emit, one per line, and publish them unchanged to the
RAW stream of NATS JetStream, each with its tenant, dialect, session key, ordinal and receive
time. Bad frames (broken JSON, invalid UTF-8, huge lines) are published as they are; the
normalizer turns them into error events.

Session keys: file "file:<absolute path>", stdin "stdin:<start time>", exec
"exec:<command>:<start time>", proxy "proxy:<command>:<start time>", unless --session names the session of a single input.
Ingesting the same file twice stores nothing new (JetStream's duplicate window). A stdin,
exec or proxy run of a session named by --session continues it: its frames are numbered after
those RAW already holds for the session.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return Usagef("ingest: give a source: file, stdin or exec (see `%s --help`)", cmd.CommandPath())
		},
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.natsURL, "nats-url", bus.DefaultURL, "NATS server to publish to")
	pf.StringVar(&f.tenant, "tenant", "default", "tenant the frames belong to")
	pf.StringVar(&f.dialect, "dialect", "", "dialect of the frames: auto (sniff) or one of "+strings.Join(adapters.KnownDialects(), ", "))
	pf.StringVar(&f.provider, "provider", "", "attribute the frames to this provider instead of the dialect's")
	pf.StringVar(&f.session, "session", "", "session key of a single input (default: derived from the source)")
	cmd.AddCommand(newIngestFileCommand(&f), newIngestStdinCommand(&f), newIngestExecCommand(&f), newIngestProxyCommand(&f),
		newIngestFlushCommand(&f), newIngestServeCommand(&f), newIngestTokenHashCommand())
	return cmd
}

// checkDialect validates --dialect; "" stays "" (the caller's default).
func checkDialect(log *slog.Logger, name, dialect string, autoOK bool) error {
	switch {
	case dialect == "":
		return nil
	case dialect == ingest.AutoDialect:
		if !autoOK {
			return Usagef("%s: --dialect auto cannot sniff a command's output; name its dialect (one of %s)", name, strings.Join(adapters.KnownDialects(), ", "))
		}
		return nil
	case !adapters.IsKnownDialect(dialect):
		return Usagef("%s: --dialect: unknown dialect %q (known: auto, %s)", name, dialect, strings.Join(adapters.KnownDialects(), ", "))
	}
	if _, err := adapters.Lookup(dialect); err != nil {
		log.Warn("no adapter for this dialect in this build: frames are kept in RAW and normalized once one is registered", "dialect", dialect)
	}
	return nil
}

// ingestEnv is what every ingest subcommand needs once its flags are valid.
type ingestEnv struct {
	log *slog.Logger
	in  *ingest.Ingester
	nc  interface{ Close() }
}

func (f *ingestFlags) validate(log *slog.Logger, name string, autoOK bool) (canonical.Provider, error) {
	if err := canonical.ValidateTenant(f.tenant); err != nil {
		return "", Usagef("%s: --tenant: %v", name, err)
	}
	var p canonical.Provider
	if f.provider != "" {
		var err error
		if p, err = canonical.ParseProvider(f.provider); err != nil {
			return "", Usagef("%s: --provider: %v", name, err)
		}
	}
	return p, checkDialect(log, name, f.dialect, autoOK)
}

// connect connects to NATS, applies the layout and returns an ingester.
func (f *ingestFlags) connect(ctx context.Context, log *slog.Logger, p canonical.Provider) (*ingestEnv, error) {
	nc, layout, err := bus.Open(ctx, f.natsURL, "agentwire-ingest", bus.Config{}, log)
	if err != nil {
		return nil, err
	}
	pub, err := ingest.NewPublisher(layout, f.tenant, log)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &ingestEnv{log: log, in: &ingest.Ingester{Pub: pub, Log: log, Provider: p}, nc: nc}, nil
}

func ingestLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func newIngestFileCommand(f *ingestFlags) *cobra.Command {
	var ff followFlags
	cmd := &cobra.Command{
		Use:   "file [PATH ...]",
		Short: "Ingest session files and directories (default: the agent CLIs' own logs)",
		Long: `Ingest files, each one session keyed "file:<absolute path>". A directory is walked
recursively for *.jsonl, *.json and *.ndjson files. The dialect of each file is --dialect,
or sniffed from its first lines (the default, auto); a file whose dialect cannot be told is
skipped with a warning.

Without PATH, the default log locations that exist are read: ~/.claude/projects
(claude-log), $CODEX_HOME/sessions or ~/.codex/sessions (codex-rollout) and ~/.gemini/tmp
(sniffed: Gemini CLI keeps whole-JSON chat files there, which are skipped).

The lines were written before they are read: those that state no time of their own are timed
when the file had been written by (its modification time), and their events say so
(createdAtIngested), so that the views keep such times out of durations and latencies. With
--follow, only the lines a file held when following began (or resumed) are, those of a file
rotated away while agentwire was stopped included; lines appended while it follows are timed
as they come.`,
		Example: `  agentwire ingest file testdata/recordings
  agentwire ingest file --dialect codex-exec run.jsonl
  agentwire ingest file        # ~/.claude/projects, ~/.codex/sessions, ~/.gemini/tmp`,
		RunE: func(cmd *cobra.Command, paths []string) error {
			if ff.follow {
				return ff.run(cmd, f, paths)
			}
			ctx := cmd.Context()
			stderr := cmd.ErrOrStderr()
			log := ingestLogger(stderr)
			p, err := f.validate(log, "ingest file", true)
			if err != nil {
				return err
			}
			dialect := f.dialect
			if dialect == "" {
				dialect = ingest.AutoDialect
			}
			var inputs []ingest.Input
			if len(paths) == 0 {
				if inputs, err = defaultInputs(log, dialect, cmd.Flags().Changed("dialect")); err != nil {
					return err
				}
			} else if inputs, err = ingest.Discover(paths, dialect); err != nil {
				if errors.Is(err, ingest.ErrNoInput) {
					return Usagef("ingest file: %v", err)
				}
				return fmt.Errorf("ingest file: %w", err)
			}
			if f.session != "" && len(inputs) != 1 {
				return Usagef("ingest file: --session names one session; give one file (got %d)", len(inputs))
			}
			if len(inputs) == 0 {
				log.Warn("no files to ingest", "paths", paths)
			}
			env, err := f.connect(ctx, log, p)
			if err != nil {
				return fmt.Errorf("ingest file: %w", err)
			}
			defer env.nc.Close()
			opts := ingest.FileOptions{SessionKey: f.session, Progress: ingest.LogProgress()}
			if isTerminal(stderr) {
				opts.Progress = ingest.BarProgress(stderr)
			}
			sum, err := env.in.Files(ctx, inputs, opts)
			if _, perr := fmt.Fprintln(cmd.OutOrStdout(), sum); perr != nil && err == nil {
				err = perr
			}
			if err != nil {
				return fmt.Errorf("ingest file: %w", err)
			}
			return nil
		},
	}
	ff.register(cmd)
	return cmd
}

// defaultInputs finds the files of the default log locations.
func defaultInputs(log *slog.Logger, dialect string, override bool) ([]ingest.Input, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, Usagef("ingest file: no PATH and no home directory to find the agents' logs in: %v", err)
	}
	all := ingest.DefaultLocations(home, os.Getenv("CODEX_HOME"))
	locs := ingest.ExistingLocations(all)
	if len(locs) == 0 {
		dirs := make([]string, len(all))
		for i, l := range all {
			dirs[i] = l.Dir
		}
		return nil, Usagef("ingest file: no PATH given and no default log location exists (%s)", strings.Join(dirs, ", "))
	}
	var inputs []ingest.Input
	for _, l := range locs {
		d := l.Dialect
		if override {
			d = dialect
		}
		found, err := ingest.Discover([]string{l.Dir}, d)
		if err != nil {
			return nil, fmt.Errorf("ingest file: %w", err)
		}
		log.Info("reading the default log location", "agent", l.Agent, "dir", l.Dir, "dialect", d, "files", len(found))
		inputs = append(inputs, found...)
	}
	return inputs, nil
}

func newIngestStdinCommand(f *ingestFlags) *cobra.Command {
	var (
		backlog   bool
		writtenBy string
	)
	cmd := &cobra.Command{
		Use:   "stdin",
		Short: "Ingest standard input as one session",
		Long: `Ingest the lines of standard input as one session, keyed "stdin:<start time>" unless
--session names it; a named session is continued, its frames numbered after those RAW
already holds for it. Without --dialect (or with auto) the dialect is sniffed from the first
frame.

A frame that states no time of its own is timed when it is read. That is its time when an
agent writes it into the pipe; for a log written earlier (redirected from a file, or piped
with --backlog) it is not, and its events say so (createdAtIngested): the views leave the
spans between such times out of durations and latencies. Such frames are timed when the log
had been written by instead, where that is known: the file's modification time, or
--written-by, so that a log read days later counts on the day it was written.`,
		Example: `  codex exec --json "fix the test" | agentwire ingest stdin --dialect codex-exec
  agentwire ingest stdin --dialect codex-exec < yesterday.jsonl
  ssh build-host cat run.jsonl | agentwire ingest stdin --dialect codex-exec --written-by 2026-05-01T18:00:00Z`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			log := ingestLogger(cmd.ErrOrStderr())
			p, err := f.validate(log, "ingest stdin", true)
			if err != nil {
				return err
			}
			var by time.Time
			if writtenBy != "" {
				if by, err = ingest.ParseWrittenBy(writtenBy); err != nil {
					return Usagef("ingest stdin: --written-by: %v", err)
				}
			}
			start := time.Now()
			key := f.session
			if key == "" {
				key = ingest.StdinSessionKey(start)
			}
			env, err := f.connect(ctx, log, p)
			if err != nil {
				return fmt.Errorf("ingest stdin: %w", err)
			}
			defer env.nc.Close()
			if f.session != "" {
				// Continue a named session after what RAW holds: numbered
				// from 1 again, these frames would be taken for its old ones.
				if _, err := env.in.Pub.LastOrdinal(ctx, key); err != nil {
					return fmt.Errorf("ingest stdin: where session %s ends in RAW: %w", key, err)
				}
			}
			in := cmd.InOrStdin()
			written, regular := ingest.WrittenFile(in)
			if !by.IsZero() {
				written = by
			}
			s := ingest.Session{Key: key, Dialect: f.dialect, Backlog: backlog || regular || !by.IsZero(), WrittenBy: written}
			dialect, frames, size, err := env.in.Stream(ctx, in, s)
			if errors.Is(err, ingest.ErrUnknownDialect) {
				return Usagef("ingest stdin: %v", err)
			}
			if err != nil {
				return fmt.Errorf("ingest stdin: %w", err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "ingested stdin as %s (%s): %d frames, %d bytes in %s\n",
				key, orNone(dialect), frames, size, time.Since(start).Round(time.Millisecond))
			return err
		},
	}
	cmd.Flags().BoolVar(&backlog, "backlog", false, "the input is a log written earlier, not an agent writing now (implied when standard input is a file)")
	cmd.Flags().StringVar(&writtenBy, "written-by", "", "the input is a log written by this RFC 3339 time (implies --backlog; default for a file: its modification time)")
	return cmd
}

func orNone(s string) string {
	if s == "" {
		return "no frames"
	}
	return s
}

func newIngestExecCommand(f *ingestFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "exec --dialect D -- CMD [ARG ...]",
		Short: "Run an agent CLI and ingest what it writes",
		Long: `Run CMD and publish each line of its standard output as a frame of one session, keyed
"exec:<command>:<start time>" unless --session names it. Each line of its standard error
becomes a frame {"agentwire":"stderr","line":"..."} of the same session, and its exit status
the last frame {"agentwire":"exit","code":N} (with "signal" when it was killed by one):
runtime.warning and session.exited events in every dialect (the exit also ends the turns and
items the agent left running: interrupted and failed). When CMD is codex, claude,
gemini or cursor-agent (or npx of one) and its arguments name a model (-m, --model, -c model=...), the first
frame is {"agentwire":"model","model":"..."}: session.configured, which prices the turns of
an agent that never names its model (codex exec).
SIGINT and SIGTERM are forwarded to it; ingest exits with its exit code.`,
		Example: `  agentwire ingest exec --dialect codex-exec -- codex exec --json "fix the test"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return Usagef("ingest exec: give the command to run after -- (see `%s --help`)", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			log := ingestLogger(cmd.ErrOrStderr())
			if f.dialect == "" {
				return Usagef("ingest exec: --dialect is required (one of %s)", strings.Join(adapters.KnownDialects(), ", "))
			}
			p, err := f.validate(log, "ingest exec", false)
			if err != nil {
				return err
			}
			env, err := f.connect(ctx, log, p)
			if err != nil {
				return fmt.Errorf("ingest exec: %w", err)
			}
			defer env.nc.Close()
			sigs := make(chan os.Signal, 4)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sigs)
			// The signals that end ctx are forwarded: the command decides
			// when the session ends, and ingest records all of it.
			res, err := env.in.Exec(context.WithoutCancel(ctx), ingest.ExecOptions{
				Args:    args,
				Session: ingest.Session{Key: f.session, Dialect: f.dialect},
				Stdin:   cmd.InOrStdin(),
				Signals: sigs,
			})
			if err != nil {
				return fmt.Errorf("ingest exec %s: %w", filepath.Base(args[0]), err)
			}
			if res.ExitCode != 0 {
				return &exitCodeError{code: exitStatus(res.ExitCode)}
			}
			return nil
		},
	}
	cmd.Flags().SetInterspersed(false)
	return cmd
}

// exitStatus maps a command's exit code to one a process can exit with.
func exitStatus(code int) int {
	if code < 0 || code > 255 {
		return ExitError
	}
	return code
}

func newIngestProxyCommand(f *ingestFlags) *cobra.Command {
	var bufferDir string
	var bufferMax int64
	var drainTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "proxy --dialect codex-app-server|acp|claude-stream -- CMD [ARG ...]",
		Short: "Run a stdio agent between the controlling app and ingest both directions",
		Long: `Launch this instead of the agent: it starts CMD, forwards its standard input, output and
error byte for byte, and publishes every message of one session keyed
"proxy:<command>:<start time>" (unless --session) with its direction: "agent" for what CMD
writes on stdout, "client" for what the app writes to its stdin. Stderr lines and the exit
status (and the model its command line names) are diagnostic frames as for exec. Publishing never slows the agent: frames go
through a bounded on-disk buffer (--buffer-dir, --buffer-max) that holds them while NATS is
away; when it is full, frames are dropped, counted and said on stderr. Signals (SIGINT,
SIGTERM) are forwarded; proxy exits with CMD's exit code.

After CMD exits, proxy waits up to --drain-timeout for NATS to store what is still
buffered. What it did not store stays in --buffer-dir, with its tenant, session and
ordinals: the next proxy run with the same --buffer-dir publishes it in the background (as
it does the buffer of a proxy that crashed), or ` + "`agentwire ingest flush`" + ` does at once.
Frames keep their message ids, so a frame stored twice is stored once.`,
		Example: `  agentwire ingest proxy --dialect codex-app-server -- codex app-server
  agentwire ingest proxy --dialect acp -- cursor-agent acp`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return Usagef("ingest proxy: give the agent to run after -- (see `%s --help`)", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			log := ingestLogger(cmd.ErrOrStderr())
			switch f.dialect {
			case "codex-app-server", "acp", "claude-stream":
			default:
				return Usagef("ingest proxy: --dialect must be codex-app-server, acp or claude-stream (got %q)", f.dialect)
			}
			if bufferMax <= 0 {
				return Usagef("ingest proxy: --buffer-max must be positive")
			}
			if drainTimeout <= 0 {
				return Usagef("ingest proxy: --drain-timeout must be positive")
			}
			p, err := f.validate(log, "ingest proxy", false)
			if err != nil {
				return err
			}
			// The agent must start whether or not NATS answers: the proxy
			// connects from its publishing goroutine, frames wait in the
			// buffer meanwhile.
			var (
				connMu sync.Mutex
				env    *ingestEnv
			)
			defer func() {
				connMu.Lock()
				defer connMu.Unlock()
				if env != nil {
					env.nc.Close()
				}
			}()
			in := &ingest.Ingester{Log: log, Provider: p}
			connect := func(ctx context.Context) (*ingest.Publisher, error) {
				e, err := f.connect(ctx, log, p)
				if err != nil {
					return nil, err
				}
				connMu.Lock()
				env = e
				connMu.Unlock()
				return e.in.Pub, nil
			}
			sigs := make(chan os.Signal, 4)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sigs)
			res, err := in.Proxy(context.WithoutCancel(ctx), ingest.ProxyOptions{
				Args:         args,
				Connect:      connect,
				Session:      ingest.Session{Key: f.session, Dialect: f.dialect},
				Tenant:       f.tenant,
				Stdin:        cmd.InOrStdin(),
				Stdout:       cmd.OutOrStdout(),
				Stderr:       cmd.ErrOrStderr(),
				Signals:      sigs,
				BufferDir:    bufferDir,
				BufferMax:    bufferMax,
				DrainTimeout: drainTimeout,
			})
			if err != nil && res.SessionKey == "" {
				return fmt.Errorf("ingest proxy %s: %w", filepath.Base(args[0]), err)
			}
			if err != nil {
				// The agent ran: its exit code wins; the failure is on the
				// log (frames not stored are kept in LeftIn).
				log.Error("ingest proxy: publishing failed", "err", err, "left", res.Left, "kept_in", res.LeftIn, "dropped", res.Dropped)
			}
			if res.ExitCode != 0 {
				return &exitCodeError{code: exitStatus(res.ExitCode)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&bufferDir, "buffer-dir", ingest.DefaultBufferDir(), "directory of the on-disk buffer that holds frames while NATS is away, and after the agent exits until they are stored")
	cmd.Flags().Int64Var(&bufferMax, "buffer-max", ingest.DefaultBufferMax, "bytes the on-disk buffer may hold; frames past it are dropped and counted")
	cmd.Flags().DurationVar(&drainTimeout, "drain-timeout", 10*time.Second, "after the agent exits, how long to wait for NATS to store what is buffered (the rest stays in --buffer-dir)")
	cmd.Flags().SetInterspersed(false)
	return cmd
}

func newIngestFlushCommand(f *ingestFlags) *cobra.Command {
	var bufferDir string
	cmd := &cobra.Command{
		Use:   "flush",
		Short: "Publish the frames proxies left in their on-disk buffer",
		Long: `Publish, now, the frames that ` + "`ingest proxy`" + ` runs left in --buffer-dir because NATS
did not store them before the agent exited (or because the proxy crashed), and wait until
JetStream has stored them. Each frame goes to its own tenant and session with its own
ordinal, so frames already stored are not stored again. Buffers of proxies still running
are left to them. The next proxy run does the same in the background; flush is for when
none is coming soon. --tenant, --dialect, --provider and --session do not apply.`,
		Example: `  agentwire ingest flush
  agentwire ingest flush --buffer-dir /var/lib/agentwire/proxy`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			log := ingestLogger(cmd.ErrOrStderr())
			nc, layout, err := bus.Open(ctx, f.natsURL, "agentwire-ingest-flush", bus.Config{}, log)
			if err != nil {
				return fmt.Errorf("ingest flush: %w", err)
			}
			defer nc.Close()
			sum, err := ingest.ResumeSpools(ctx, layout, bufferDir, log)
			buffers := "buffers"
			if sum.Spools == 1 {
				buffers = "buffer"
			}
			if _, perr := fmt.Fprintf(cmd.OutOrStdout(), "flushed %d frames of %d %s from %s\n", sum.Frames, sum.Spools, buffers, bufferDir); perr != nil && err == nil {
				err = perr
			}
			if sum.Busy > 0 {
				log.Info("left the buffers of proxies still running to them", "buffers", sum.Busy)
			}
			if err != nil {
				return fmt.Errorf("ingest flush %s: %w", bufferDir, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&bufferDir, "buffer-dir", ingest.DefaultBufferDir(), "the --buffer-dir of the proxies")
	return cmd
}
