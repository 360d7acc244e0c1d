// Command normalize runs the agentwire normalizer service (see package
// github.com/agentwire/agentwire/internal/normalize).
package main

import "github.com/agentwire/agentwire/internal/cli"

func main() { cli.Main("normalize", cli.Normalize) }
