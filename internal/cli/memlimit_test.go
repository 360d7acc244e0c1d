package cli

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseBytes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"160MiB": 160 << 20, "1GiB": 1 << 30, "512KiB": 512 << 10, "200MB": 200e6, "2GB": 2e9, "4096": 4096,
		"4096B": 4096, "10 MiB": 10 << 20, "0": 0,
	} {
		got, err := parseBytes(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "MiB", "-1MiB", "1.5GiB", "ten", "1TiB", "99999999999GiB"} {
		_, err := parseBytes(in)
		require.Error(t, err, in)
	}
}

// TestMemoryLimitFlag runs the flag through a service command: a bad value
// is a one-line usage error; a good one is what the runtime then holds.
// It sets the process's memory limit and GOGC, so it does not run in
// parallel.
func TestMemoryLimitFlag(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	beforeGC := gcPercent()
	defer debug.SetGCPercent(beforeGC)

	r := run(t, "normalize", "--memory-limit", "lots")
	require.Equal(t, ExitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, `--memory-limit "lots"`)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), "errors are one line: %q", r.stderr)

	// The limit is applied before the command connects, so an unreachable
	// NATS still leaves it set.
	run(t, "normalize", "--memory-limit", "300MiB", "--nats-url", "nats://127.0.0.1:1", "--metrics-listen", "")
	require.Equal(t, int64(300<<20), debug.SetMemoryLimit(-1))
	require.Equal(t, limitedGCPercent, gcPercent(), "under a limit")
	run(t, "normalize", "--memory-limit", "0", "--nats-url", "nats://127.0.0.1:1", "--metrics-listen", "")
	require.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1))
	require.Equal(t, 100, gcPercent(), "without a limit, the runtime's default")

	// GOMEMLIMIT is a limit too; GOGC, when set, is left as the runtime
	// read it.
	t.Setenv("GOMEMLIMIT", "200MiB")
	debug.SetMemoryLimit(200 << 20)
	run(t, "normalize", "--nats-url", "nats://127.0.0.1:1", "--metrics-listen", "")
	require.Equal(t, int64(200<<20), debug.SetMemoryLimit(-1))
	require.Equal(t, limitedGCPercent, gcPercent())
	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	run(t, "normalize", "--memory-limit", "300MiB", "--nats-url", "nats://127.0.0.1:1", "--metrics-listen", "")
	require.Equal(t, 150, gcPercent())
}

// gcPercent is the collector's GOGC, left as it was.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}
