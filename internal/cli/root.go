package cli

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Agentwire runs the `agentwire` command with args.
func Agentwire(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := newRootCommand() //nolint:contextcheck // cobra hands ctx to every command through ExecuteContext
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	var ue *usageError
	if err != nil && !errors.As(err, &ue) && isCobraUsageError(err) {
		return Usagef("%v (see `agentwire --help`)", err)
	}
	return err
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "agentwire",
		Short: "Capture, normalize and project the events of AI coding agents",
		Long: `agentwire captures every frame that AI coding-agent runtimes emit (Claude Code and
the Claude Agent SDK, OpenAI Codex, Cursor and other ACP agents, Gemini CLI), keeps
it unchanged in NATS JetStream, normalizes it into one canonical model of runtime
events published as CloudEvents on runtime.<provider>.<type>, and projects thread,
turn and item state into Postgres.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return Usagef("%v (see `%s --help`)", err, cmd.CommandPath())
	})
	root.AddCommand(newVersionCommand(), newSchemaCommand(), newMapCommand(), newUpCommand(), newNormalizeCommand(), newBenchCommand(), newIngestCommand(), newProjectCommand(), newMigrateCommand())
	return root
}

// isCobraUsageError recognizes the errors cobra returns for an unknown
// command or wrong arguments, which carry no type of their own.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires ", "invalid argument"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}
