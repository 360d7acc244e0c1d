package project_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/project"
)

// TestUsageOfTurnsNotEnded: a log cut off mid-turn (a crashed session, a
// copy taken while it ran) never states its last turn's usage. What the
// turn reported on the way is in the ledger, provisional, so the usage
// views count every token the session reports. When another session of
// the same run (the Codex tap, the Claude stream) ends the turn, the
// turn's own count replaces it: counted once, whatever the order the
// sessions come in and however the batches cut them.
func TestUsageOfTurnsNotEnded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cut   string
		keep  int // lines of the log kept: the turn is open after them
		whole string
	}{
		{"claude-log/multistep", 13, "claude-control/multistep"},
		{"claude-control/multistep", 18, "claude-log/multistep"},
		{"codex-rollout/multistep", 28, "codex-app-server/multistep"},
	} {
		t.Run(c.cut, func(t *testing.T) {
			t.Parallel()
			cut := mapCut(t, c.cut, c.keep)
			whole, ok := mapRecording(t, "acme", "../../testdata/recordings/"+c.whole+".jsonl", "")
			require.True(t, ok)
			ctx := context.Background()

			e := projected(t, cut)
			var provisional, ended int
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE provisional), count(*) FILTER (WHERE NOT provisional) FROM usage_ledger`).
				Scan(&provisional, &ended))
			require.Positive(t, provisional, "the open turn's usage so far")
			require.Zero(t, ended, "no turn of the log ended")
			var open, turnTokens int64
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(input_tokens + output_tokens), 0) FROM turns WHERE ended_at IS NULL`).
				Scan(&open, &turnTokens))
			require.Equal(t, int64(1), open)
			require.Positive(t, turnTokens, "the open turn's row shows its usage so far")
			// Every token the session reports is in the ledger, and once.
			sums := `SELECT array[sum(input_tokens), sum(cached_input_tokens), sum(cache_write_input_tokens), sum(output_tokens), sum(reasoning_output_tokens)]::int8[] FROM `
			var ledger, thread []int64
			require.NoError(t, e.pool.QueryRow(ctx, sums+`usage_ledger`).Scan(&ledger))
			require.NoError(t, e.pool.QueryRow(ctx, sums+`threads`).Scan(&thread))
			require.Equal(t, thread, ledger)
			var viewed []int64
			require.NoError(t, e.pool.QueryRow(ctx, sums+`usage_by_session`).Scan(&viewed))
			require.Equal(t, ledger, viewed)
			// A report replaces the one before, in whichever batch it comes.
			requireSameDump(t, e.dump(), projectedBy(t, project.Config{Workers: 1, BatchSize: 1}, cut).dump(), "the projection in one batch")

			alone := projected(t, whole)
			var want []int64
			require.NoError(t, alone.pool.QueryRow(ctx, sums+`usage_by_day`).Scan(&want))
			require.Greater(t, want[0]+want[3], ledger[0]+ledger[3], "the whole turn used more than the cut log saw")
			var dumps []string
			for _, cfg := range []project.Config{{Workers: 1}, {Workers: 1, BatchSize: 1}} {
				for _, recs := range [][]recording{{cut, whole}, {whole, cut}} {
					both := projectedBy(t, cfg, recs...)
					var got []int64
					require.NoError(t, both.pool.QueryRow(ctx, sums+`usage_by_day`).Scan(&got))
					require.Equal(t, want, got, "batch size %d, %s first: the turn's own count, once", cfg.BatchSize, recs[0].name)
					require.NoError(t, both.pool.QueryRow(ctx, `SELECT count(*) FROM usage_ledger WHERE provisional`).Scan(&provisional))
					require.Zero(t, provisional, "batch size %d, %s first", cfg.BatchSize, recs[0].name)
					dumps = append(dumps, both.dump())
				}
			}
			for _, d := range dumps[1:] {
				requireSameDump(t, dumps[0], d, "another order or batch size")
			}
		})
	}
}

// mapCut maps the first keep lines of a recording ("<set>/<scenario>"),
// under the recording's own session key: a copy of its log taken while
// the session ran.
func mapCut(t *testing.T, name string, keep int) recording {
	t.Helper()
	b, err := os.ReadFile("../../testdata/recordings/" + name + ".jsonl")
	require.NoError(t, err)
	lines := strings.SplitAfter(string(b), "\n")
	require.Greater(t, len(lines), keep)
	path := filepath.Join(t.TempDir(), filepath.Base(filepath.Dir(name)), filepath.Base(name)+".jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o750))
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines[:keep], "")), 0o600))
	r, ok := mapRecording(t, "acme", path, "recordings/"+name)
	require.True(t, ok)
	return r
}
