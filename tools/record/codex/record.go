// Package codex records the codex scenarios.
package codex

import (
	"context"
	"errors"

	"github.com/agentwire/agentwire/tools/record/internal/manifest"
	"github.com/agentwire/agentwire/tools/record/internal/run"
)

// Record records every scenario and returns the manifest entries.
func Record(ctx context.Context, r *run.Run) ([]manifest.Entry, error) {
	return nil, errors.New("codex: not written yet")
}
