// Command schemagen writes the JSON Schema of every canonical event type to
// a directory, one <type>.json per type. `go generate` runs it so that the
// committed schemas follow the Go types; a test fails when they drift.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentwire/agentwire/pkg/canonical"
)

func main() {
	out := flag.String("out", "schemas", "directory to write the schemas to")
	flag.Parse()
	if err := canonical.WriteSchemas(*out); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "schemagen: wrote %d schemas to %s\n", len(canonical.Kinds()), filepath.Clean(*out))
}
