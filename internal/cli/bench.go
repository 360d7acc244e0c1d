package cli

import (
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"

	"github.com/agentwire/agentwire/internal/bench"
)

func newBenchCommand() *cobra.Command {
	var (
		frames     int
		recordings string
		cpuProfile string
		memProfile string
		memLimit   string
		only       string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure mapping, normalizing and end-to-end throughput and latency on this machine",
		Long: `Measure on an embedded NATS server, with the recordings as load, and print one
"name value unit" line per figure: map_frames_per_s_core (offline mapping on one core, all
recordings, then per dialect), normalize_frames_per_s and its same-run ceiling
normalize_baseline_frames_per_s (JetStream consume → publish of as many messages, as large, as
the normalizer publishes for each frame, with no mapping; each the median of three rounds, and
normalize_vs_baseline with its min and max over them), e2e_frames_per_s, e2e_p50_ms and
e2e_p99_ms (ingest to a subscriber), project_* with DATABASE_URL (the projector's events/s beside a
CopyFrom of the same events, their ratio, the floor: consuming RUNTIME and copying the same rows
with nothing decoded or projected, the decoded floor: the same with every event decoded, and on
Linux the machine CPU per thousand events), and rss_peak_mb of the process
(the largest of each stage's peak, printed too) under the soft memory limit agentwire up has.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if frames < 100 {
				return Usagef("bench: --frames must be at least 100, got %d", frames)
			}
			if err := applyMemoryLimit(cmd, memLimit); err != nil {
				return err
			}
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile) //nolint:gosec // the file the user names
				if err != nil {
					return fmt.Errorf("bench: --cpuprofile: %w", err)
				}
				defer func() { _ = f.Close() }()
				if err := pprof.StartCPUProfile(f); err != nil {
					return fmt.Errorf("bench: --cpuprofile: %w", err)
				}
				defer pprof.StopCPUProfile()
			}
			if memProfile != "" {
				f, err := os.Create(memProfile) //nolint:gosec // the file the user names
				if err != nil {
					return fmt.Errorf("bench: --memprofile: %w", err)
				}
				defer func() { _ = f.Close() }()
				// Written when the figures are done: what the run still holds.
				defer func() { _ = pprof.Lookup("heap").WriteTo(f, 0) }()
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			cfg := bench.Config{Recordings: recordings, Frames: frames, Out: cmd.OutOrStdout(), Log: log}
			switch only {
			case "":
				return bench.Run(cmd.Context(), cfg)
			case "project":
				return bench.RunProject(cmd.Context(), cfg)
			}
			return Usagef("bench: --only takes project, got %q", only)
		},
	}
	cmd.Flags().IntVar(&frames, "frames", 50000, "frames to push through the pipeline figures")
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to `FILE` (go tool pprof)")
	cmd.Flags().StringVar(&memLimit, "memory-limit", defaultMemoryLimit, memoryLimitUsage+"; the default is agentwire up's, so the figures are the service's")
	cmd.Flags().StringVar(&memProfile, "memprofile", "", "write a heap profile to `FILE` when the run ends (go tool pprof)")
	cmd.Flags().StringVar(&only, "only", "", "measure only one group of figures: project (needs DATABASE_URL)")
	cmd.Flags().StringVar(&recordings, "recordings", "testdata/recordings", "directory of recordings used as load")
	return cmd
}
