// Package run is what every provider recorder gets from the record
// command: where to write, where the installed CLIs are, and a log.
package run

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Versions pins the CLI versions recordings are made with. Bump one, run
// `make record`, and review the diff of testdata/recordings.
var Versions = map[string]string{
	"@openai/codex":                   "0.171.0",
	"@anthropic-ai/claude-code":       "2.1.197",
	"@google/gemini-cli":              "0.61.0",
	"@zed-industries/claude-code-acp": "0.16.2",
}

// Run is the context of one recording run.
type Run struct {
	// OutDir is the recordings directory (testdata/recordings).
	OutDir string
	// NPMDir is the npm prefix the pinned CLIs are installed in;
	// NPMDir/node_modules/<package> is each package.
	NPMDir string
	// ScratchParent holds the scratch boxes ("" for the system temp dir).
	ScratchParent string
	// Log receives progress lines and CLI stderr.
	Log io.Writer
	// Timeout bounds each CLI invocation.
	Timeout time.Duration
	// Keep keeps scratch boxes for debugging.
	Keep bool
	// Scenario, when set, is the one scenario to record; recorders that
	// cannot pick one record none.
	Scenario string
}

// Module returns the directory of an installed npm package.
func (r *Run) Module(pkg string) string { return filepath.Join(r.NPMDir, "node_modules", pkg) }

// Out returns the path of a recording, creating its directory.
func (r *Run) Out(rel string) string {
	p := filepath.Join(r.OutDir, rel)
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	return p
}

// WithTimeout bounds one CLI invocation.
func (r *Run) WithTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.Timeout)
}
