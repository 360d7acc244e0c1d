// Command ingest publishes agent frames to the RAW stream: `ingest file`,
// `ingest stdin` and `ingest exec`, the same commands as `agentwire
// ingest` (see package github.com/agentwire/agentwire/internal/ingest).
package main

import "github.com/agentwire/agentwire/internal/cli"

func main() { cli.Main("ingest", cli.Ingest) }
