// Command ingest runs the agentwire ingest service (see package
// github.com/agentwire/agentwire/internal/ingest).
package main

import (
	"github.com/agentwire/agentwire/internal/cli"
	"github.com/agentwire/agentwire/internal/ingest"
)

func main() { cli.Main("ingest", ingest.Run) }
