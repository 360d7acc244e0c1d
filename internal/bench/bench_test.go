package bench

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRunPrintsEveryFigure runs the whole bench on a few frames: every
// figure the issue names comes out as `name value unit` with a positive
// value, and the baseline's self-check (it publishes what the normalizer
// would, message for message) passes.
func TestRunPrintsEveryFigure(t *testing.T) {
	t.Setenv("DATABASE_URL", "") // the projection figures have their own test
	var out bytes.Buffer
	err := Run(context.Background(), Config{Recordings: "../../testdata/recordings", Frames: 600, Out: &out, Log: slog.New(slog.DiscardHandler), MapRound: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for line := range strings.SplitSeq(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("not `name value unit`: %q", line)
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got[f[0]] = v
	}
	for _, name := range []string{
		"map_frames_per_s_core", "map_frames_per_s_core_claude_stream", "map_frames_per_s_core_codex_rollout",
		"normalize_frames_per_s", "normalize_baseline_frames_per_s", "normalize_vs_baseline",
		"e2e_frames_per_s", "e2e_p50_ms", "e2e_p99_ms", "rss_peak_mb", "rss_peak_mb_normalize",
	} {
		if got[name] <= 0 {
			t.Errorf("%s = %v, want a positive figure in:\n%s", name, got[name], out.String())
		}
	}
	if got["rss_peak_mb"] < got["rss_peak_mb_normalize"] {
		t.Errorf("the peak is below a stage's peak:\n%s", out.String())
	}
}
