// Package acp records the acp scenarios.
package acp

import (
	"context"
	"errors"

	"github.com/agentwire/agentwire/tools/record/internal/manifest"
	"github.com/agentwire/agentwire/tools/record/internal/run"
)

// Record records every scenario and returns the manifest entries.
func Record(ctx context.Context, r *run.Run) ([]manifest.Entry, error) {
	return nil, errors.New("acp: not written yet")
}
