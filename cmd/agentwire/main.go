// Command agentwire is the umbrella command line of agentwire; run
// `agentwire --help` for its commands.
package main

import "github.com/agentwire/agentwire/internal/cli"

func main() { cli.Main("agentwire", cli.Agentwire) }
