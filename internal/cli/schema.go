package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentwire/agentwire/pkg/canonical"
)

func newSchemaCommand() *cobra.Command {
	var (
		list bool
		out  string
	)
	cmd := &cobra.Command{
		Use:   "schema [TYPE]",
		Short: "Print the JSON Schemas of the canonical event types",
		Long: `Print the JSON Schema (draft 2020-12) of a canonical event type, list the types,
or write every schema to a directory as <type>.json.`,
		Example: `  agentwire schema --list
  agentwire schema turn.completed
  agentwire schema --out ./schemas`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return Usagef("schema: takes at most one TYPE, got %d arguments (see `agentwire schema --help`)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			modes := 0
			for _, set := range []bool{list, out != "", len(args) == 1} {
				if set {
					modes++
				}
			}
			if modes != 1 {
				return Usagef("schema: give exactly one of TYPE, --list or --out DIR (see `agentwire schema --help`)")
			}
			w := cmd.OutOrStdout()
			switch {
			case list:
				for _, k := range canonical.Kinds() {
					if _, err := fmt.Fprintln(w, k); err != nil {
						return err
					}
				}
				return nil
			case out != "":
				if err := canonical.WriteSchemas(out); err != nil {
					return err
				}
				_, err := fmt.Fprintf(cmd.ErrOrStderr(), "wrote %d schemas to %s\n", len(canonical.Kinds()), out)
				return err
			default:
				k, err := canonical.ParseKind(args[0])
				if err != nil {
					return Usagef("schema: unknown event type %q; `agentwire schema --list` prints the %d types", args[0], len(canonical.Kinds()))
				}
				b, err := canonical.Schema(k)
				if err != nil {
					return err
				}
				_, err = w.Write(b)
				return err
			}
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "print the event types, one per line")
	cmd.Flags().StringVar(&out, "out", "", "write every schema to `DIR`/<type>.json")
	cmd.ValidArgs = kindNames()
	return cmd
}

func kindNames() []string {
	var names []string
	for _, k := range canonical.Kinds() {
		names = append(names, string(k))
	}
	return names
}
