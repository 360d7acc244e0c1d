package cli

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentwire/agentwire/internal/ingest"
	"github.com/agentwire/agentwire/internal/normalize"
	"github.com/agentwire/agentwire/pkg/adapters"
	"github.com/agentwire/agentwire/pkg/canonical"
	"github.com/agentwire/agentwire/pkg/canonical/wire"
)

func newMapCommand() *cobra.Command {
	var dialect, provider, tenant, session string
	cmd := &cobra.Command{
		Use:   "map --dialect D [FILE ...]",
		Short: "Map provider frames to canonical events offline (no NATS)",
		Long: `Map the frames of FILEs (standard input without FILE) with the adapter of a dialect and
print one CloudEvent per line in the JSON event format, with the canonical event as data.

Each file is one session whose key is the one ingest gives it, "file:" + its absolute
path (stdin: "stdin"), unless --session sets it: map prints the ids the pipeline produces. A
file's frames get its modification time as receive time, so mapping it twice prints the same
bytes. Bad frames become runtime.error events; the exit status is 0
when the input could be read.`,
		Example: `  agentwire map --dialect codex-exec run.jsonl
  codex exec --json "fix the test" | agentwire map --dialect codex-exec`,
		RunE: func(cmd *cobra.Command, files []string) error {
			ctx := cmd.Context()
			if dialect == "" {
				return Usagef("map: --dialect is required (one of %s)", strings.Join(adapters.Dialects(), ", "))
			}
			a, err := adapters.Lookup(dialect)
			if err != nil {
				return Usagef("map: --dialect: %v", err)
			}
			var p canonical.Provider
			if provider != "" {
				if p, err = canonical.ParseProvider(provider); err != nil {
					return Usagef("map: --provider: %v", err)
				}
			}
			if err := canonical.ValidateTenant(tenant); err != nil {
				return Usagef("map: --tenant: %v", err)
			}
			if session != "" && len(files) > 1 {
				return Usagef("map: --session names one session; give one FILE or none")
			}
			out := bufio.NewWriterSize(cmd.OutOrStdout(), 1<<16)
			emit := func(e canonical.Event) error {
				b, err := wire.MarshalStructured(e)
				if err != nil {
					return fmt.Errorf("map: %w", err)
				}
				b = append(b, '\n')
				_, err = out.Write(b)
				return err
			}
			one := func(name, key string, f *os.File, at time.Time) error {
				if session != "" {
					key = session
				}
				// As ingest marks them: a log on disk was written before.
				written, regular := ingest.WrittenFile(f)
				meta := normalize.StreamMeta{Dialect: dialect, Tenant: tenant, SessionKey: key, ReceivedAt: at, Backlog: regular, WrittenBy: written}
				if _, err := normalize.MapReader(ctx, f, a.NewSession(p), meta, emit); err != nil {
					return fmt.Errorf("map %s: %w", name, err)
				}
				return nil
			}
			if len(files) == 0 {
				if err := one("stdin", "stdin", os.Stdin, time.Now().UTC()); err != nil {
					return err
				}
			}
			for _, path := range files {
				f, err := os.Open(path) //nolint:gosec // reading the files the user names is the point
				if err != nil {
					return fmt.Errorf("map: %w", err)
				}
				st, err := f.Stat()
				if err == nil && st.IsDir() {
					err = fmt.Errorf("%s is a directory; give the session files", path)
				}
				if err == nil {
					var abs string
					if abs, err = filepath.Abs(path); err == nil {
						err = one(path, ingest.FileSessionKey(abs), f, st.ModTime().UTC())
					}
				}
				_ = f.Close() // read-only
				if err != nil {
					return fmt.Errorf("map: %w", err)
				}
			}
			return out.Flush()
		},
	}
	cmd.Flags().StringVar(&dialect, "dialect", "", "the input's dialect (required): "+fmt.Sprint(adapters.Dialects()))
	cmd.Flags().StringVar(&provider, "provider", "", "attribute events to this provider instead of the dialect's")
	cmd.Flags().StringVar(&tenant, "tenant", "default", "tenant the events belong to")
	cmd.Flags().StringVar(&session, "session", "", "session key (default: the file path, or \"stdin\")")
	return cmd
}
