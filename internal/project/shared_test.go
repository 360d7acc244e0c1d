package project_test

import (
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/project"
)

// sharedRecordings are the Codex recordings, app-server tap and rollout
// log alike, each ingested under reps session keys: every thread, turn and
// item of a scenario is described by 2×reps sessions, since canonical ids
// derive from Codex's own ids.
func sharedRecordings(t *testing.T, reps int) []recording {
	t.Helper()
	var paths []string
	for _, set := range []string{"codex-app-server", "codex-rollout"} {
		p, err := filepath.Glob("../../testdata/recordings/" + set + "/*.jsonl")
		require.NoError(t, err)
		paths = append(paths, p...)
	}
	sort.Strings(paths)
	var out []recording
	for rep := range reps {
		for _, p := range paths {
			r, ok := mapRecording(t, "acme", p, fmt.Sprintf("shared/%d/%s", rep, filepath.Base(p)))
			require.True(t, ok, p)
			out = append(out, r)
		}
	}
	return out
}

// TestSharedRows: many sessions sharing threads, turns and items are
// applied by parallel workers, in small batches held open a while so that
// transactions overlap: no deadlock is retried, and the tables are those
// one worker builds alone.
func TestSharedRows(t *testing.T) {
	t.Parallel()
	recs := sharedRecordings(t, 6)

	parallel := newEnv(t)
	parallel.publish(recs, 1)
	p := parallel.start(project.Config{Workers: 4, BatchSize: 8, BeforeCommit: func(int) { time.Sleep(time.Millisecond) }})

	serial := newEnv(t)
	serial.publish(recs, 1)
	serial.start(project.Config{Workers: 1})

	parallel.waitApplied("")
	serial.waitApplied("")
	require.Zero(t, p.Stats().Deadlocks.Load(), "deadlocks retried")
	require.Positive(t, p.Stats().Batches.Load())
	requireSameDump(t, serial.dump(), parallel.dump(), "the projection of one worker")
}
