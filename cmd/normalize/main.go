// Command normalize runs the agentwire normalize service (see package
// github.com/agentwire/agentwire/internal/normalize).
package main

import (
	"github.com/agentwire/agentwire/internal/cli"
	"github.com/agentwire/agentwire/internal/normalize"
)

func main() { cli.Main("normalize", normalize.Run) }
