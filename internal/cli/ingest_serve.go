package cli

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/ingest"
)

func newIngestServeCommand(f *ingestFlags) *cobra.Command {
	var addr, tokensFile string
	var maxBody int64
	cmd := &cobra.Command{
		Use:   "serve --http ADDR --tokens FILE",
		Short: "Accept frames over HTTP: POST /v1/frames",
		Long: `Serve POST /v1/frames: an NDJSON body, one frame a line, of one session, published to
RAW under the tenant of the bearer token. Headers: Authorization: Bearer TOKEN,
Agentwire-Dialect (required), Agentwire-Session (the session key, required),
Agentwire-Ordinal (the ordinal of the first frame, optional: with it a retried request
stores nothing new), Agentwire-Provider (optional), Agentwire-Backlog (optional: true for a
log written earlier and uploaded now, whose frames' receive times are not their times),
Agentwire-Written-By (optional: an RFC 3339 time by which such a log had been written, such
as its modification time; the frames that state no time take it; implies backlog).

Answers 202 {"accepted":N,...} once JetStream has stored the frames; 400 naming the lines
that are not JSON (every line is stored all the same; the normalizer turns the bad ones
into error events); 401 without a valid token; 413 over --max-body; 503 when JetStream did
not store them in time (retry). GET /healthz answers 200 while NATS is connected.

The tokens file holds one "TENANT SHA256-HEX" a line (# comments); hash a token with
` + "`agentwire ingest token-hash`" + `. --tenant, --dialect and --session do not apply.`,
		Example: `  agentwire ingest token-hash "$TOKEN" | sed 's/^/acme /' >> tokens.txt
  agentwire ingest serve --http :8080 --tokens tokens.txt
  curl -H "Authorization: Bearer $TOKEN" -H 'Agentwire-Dialect: codex-exec' \
       -H 'Agentwire-Session: run-42' -H 'Agentwire-Ordinal: 1' \
       --data-binary @run.jsonl http://localhost:8080/v1/frames`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			log := ingestLogger(cmd.ErrOrStderr())
			if addr == "" {
				return Usagef("ingest serve: --http ADDR is required (e.g. :8080)")
			}
			if tokensFile == "" {
				return Usagef("ingest serve: --tokens FILE is required (lines \"TENANT SHA256-HEX\")")
			}
			if maxBody <= 0 {
				return Usagef("ingest serve: --max-body must be positive")
			}
			tokens, err := ingest.LoadTokens(tokensFile)
			if err != nil {
				return Usagef("ingest serve: %v", err)
			}
			if tokens.Len() == 0 {
				log.Warn("the tokens file holds no token: every request will get 401", "file", tokensFile)
			}
			// Listened on before connecting: a taken address is a mistake
			// on the command line, said at once whether or not NATS answers.
			ln, err := ingest.Listen(ctx, addr)
			if errors.Is(err, ingest.ErrAddrInUse) {
				return Usagef("ingest serve: %v; pass --http 127.0.0.1:<free port>, or --http 127.0.0.1:0 to take any (the address is logged)", err)
			}
			if err != nil {
				return Usagef("ingest serve: --http: %v", err)
			}
			defer func() { _ = ln.Close() }() // Serve closes it too; this covers the early returns
			nc, layout, err := bus.Open(ctx, f.natsURL, "agentwire-ingest-http", bus.Config{}, log)
			if err != nil {
				return fmt.Errorf("ingest serve: %w", err)
			}
			defer nc.Close()
			h := ingest.NewHTTPServer(ingest.HTTPOptions{Layout: layout, Tokens: tokens, MaxBody: maxBody, Log: log})
			log.Info("serving POST /v1/frames", "addr", ln.Addr().String(), "tokens", tokens.Len(), "max_body", maxBody)
			if err := ingest.Serve(ctx, ln, h); err != nil {
				return fmt.Errorf("ingest serve: %w", err)
			}
			log.Info("stopped serving", "addr", ln.Addr().String())
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&addr, "http", "", "address to listen on, e.g. :8080 or 127.0.0.1:8080 (port 0 takes a free one, logged)")
	fl.StringVar(&tokensFile, "tokens", "", `bearer tokens: one "TENANT SHA256-HEX" a line`)
	fl.Int64Var(&maxBody, "max-body", ingest.DefaultMaxBody, "largest request body, in bytes (413 past it)")
	return cmd
}

func newIngestTokenHashCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "token-hash [TOKEN]",
		Short: "Print the SHA-256 of a bearer token, for the tokens file of `ingest serve`",
		Long: `Print the hex SHA-256 of TOKEN (or of the first line of standard input), as the tokens
file of ` + "`ingest serve`" + ` holds it after the tenant: "TENANT SHA256-HEX".`,
		Example: `  echo "acme $(agentwire ingest token-hash "$TOKEN")" >> tokens.txt`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var token string
			if len(args) == 1 {
				token = args[0]
			} else {
				line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				if err != nil && line == "" {
					return Usagef("ingest token-hash: give a token, as an argument or on standard input")
				}
				token = strings.TrimRight(line, "\r\n")
			}
			if token == "" {
				return Usagef("ingest token-hash: the token is empty")
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), ingest.HashToken(token))
			return err
		},
	}
}

// followFlags are the flags of `ingest file --follow`.
type followFlags struct {
	follow bool
	poll   time.Duration
}

func (ff *followFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&ff.follow, "follow", false, "keep reading: tail growing files, pick up new ones, resume after a restart (offsets in the "+ingest.OffsetsBucket+" KV bucket)")
	cmd.Flags().DurationVar(&ff.poll, "poll", 250*time.Millisecond, "with --follow: how often to look for new lines and files")
}

// run is `ingest file --follow`: it runs until interrupted.
func (ff *followFlags) run(cmd *cobra.Command, f *ingestFlags, paths []string) error {
	ctx := cmd.Context()
	log := ingestLogger(cmd.ErrOrStderr())
	p, err := f.validate(log, "ingest file", true)
	if err != nil {
		return err
	}
	if ff.poll <= 0 {
		return Usagef("ingest file: --poll must be positive")
	}
	dialect := f.dialect
	if dialect == "" {
		dialect = ingest.AutoDialect
	}
	if len(paths) == 0 {
		if paths, err = defaultLocationDirs(log); err != nil {
			return err
		}
	}
	env, err := f.connect(ctx, log, p)
	if err != nil {
		return fmt.Errorf("ingest file: %w", err)
	}
	defer env.nc.Close()
	log.Info("following", "paths", paths, "poll", ff.poll)
	err = env.in.Follow(ctx, ingest.FollowOptions{Paths: paths, Dialect: dialect, SessionKey: f.session, Poll: ff.poll})
	if err != nil && !errors.Is(err, ctx.Err()) {
		return fmt.Errorf("ingest file --follow: %w", err)
	}
	return nil
}

// defaultLocationDirs are the default log directories that exist, for
// --follow without PATH. Their dialects differ, so each file is sniffed
// unless --dialect says otherwise.
func defaultLocationDirs(log *slog.Logger) ([]string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, Usagef("ingest file: no PATH and no home directory to find the agents' logs in: %v", err)
	}
	locs := ingest.ExistingLocations(ingest.DefaultLocations(home, os.Getenv("CODEX_HOME")))
	if len(locs) == 0 {
		return nil, Usagef("ingest file --follow: no PATH given and no default log location exists")
	}
	dirs := make([]string, len(locs))
	for i, l := range locs {
		dirs[i] = l.Dir
		log.Info("following the default log location", "agent", l.Agent, "dir", l.Dir)
	}
	return dirs, nil
}
