// Command project runs the agentwire projector (see package
// github.com/agentwire/agentwire/internal/project).
package main

import "github.com/agentwire/agentwire/internal/cli"

func main() { cli.Main("project", cli.Project) }
