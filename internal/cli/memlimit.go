package cli

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// defaultMemoryLimit is the soft limit of the Go runtime's memory in the
// long-running commands. The embedded nats-server caches the message
// blocks it reads (8 MB each) and lets the garbage collector take them
// back; with no limit the heap grows to twice what is live before the
// collector runs, and a process draining a large backlog passed 400 MB.
// With this limit the whole process (the limit, plus the binary's code
// and the runtime's own) stays under 200 MB resident, and the collector
// works harder only while a backlog is drained (agentwire bench measures
// both).
const defaultMemoryLimit = "160MiB"

var memoryLimitUsage = "soft limit of the process's Go memory, e.g. 160MiB, 1GiB; 0 turns it off (GOMEMLIMIT, when set, wins over the default); " +
	"under a limit the collector runs at GOGC=" + strconv.Itoa(limitedGCPercent) + " unless GOGC is set"

// limitedGCPercent is the collector's GOGC while a memory limit is in
// effect and GOGC is not set. The limit, not GOGC, bounds what the
// process holds: draining a backlog, its heap reaches the limit at 100 as
// at 200 (agentwire bench's rss_peak_mb, 180-190 MB either way). Below the
// limit, 200 lets the heap grow to three times what is live, not twice,
// and the collector runs half as often: the projector, pass by pass in
// one process on one stream, applied about 10 % more events per second at
// about 10 % less machine CPU per event, and a process under moderate
// load holds somewhat more memory, well under the limit.
const limitedGCPercent = 200

// applyMemoryLimit sets the runtime's soft memory limit from the
// --memory-limit flag: its value when given, GOMEMLIMIT when that is set,
// the default otherwise. Under a limit, the collector's GOGC is
// limitedGCPercent unless GOGC is set.
func applyMemoryLimit(cmd *cobra.Command, value string) error {
	if cmd.Flags().Changed("memory-limit") || os.Getenv("GOMEMLIMIT") == "" {
		n, err := parseBytes(value)
		if err != nil {
			return Usagef("--memory-limit %q: %v", value, err)
		}
		if n == 0 {
			n = math.MaxInt64 // the runtime's "no limit"
		}
		debug.SetMemoryLimit(n)
	} // else the runtime read GOMEMLIMIT at start
	if os.Getenv("GOGC") == "" {
		percent := 100 // the runtime's default
		if debug.SetMemoryLimit(-1) < math.MaxInt64 {
			percent = limitedGCPercent
		}
		debug.SetGCPercent(percent)
	}
	return nil
}

// parseBytes reads a size such as 160MiB, 200MB, 1GiB or 4096 (bytes).
func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		factor int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1},
	}
	factor := int64(1)
	num := strings.TrimSpace(s)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(num, u.suffix); ok {
			num, factor = strings.TrimSpace(rest), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("use a whole number of bytes with an optional unit (KiB, MiB, GiB, KB, MB, GB)")
	}
	if n > (1<<62)/factor {
		return 0, fmt.Errorf("too large")
	}
	return n * factor, nil
}
