// Command project runs the agentwire project service (see package
// github.com/agentwire/agentwire/internal/project).
package main

import (
	"github.com/agentwire/agentwire/internal/cli"
	"github.com/agentwire/agentwire/internal/project"
)

func main() { cli.Main("project", project.Run) }
