package normalize_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/natstest"
)

// manySessions builds n sessions from the recorded frames, each a full
// recording so every session is a realistic, complete run.
func manySessions(t *testing.T, n int) []session {
	t.Helper()
	base := recordings(t)
	out := make([]session, n)
	for i := range out {
		b := base[i%len(base)]
		out[i] = session{key: fmt.Sprintf("%s#%d", b.key, i), dialect: b.dialect, lines: b.lines}
	}
	return out
}

func setup(t *testing.T, cfg bus.Config) (url string, js jetstream.JetStream, layout *bus.Layout) {
	t.Helper()
	srv := natstest.Server(t)
	nc := natstest.Conn(t, srv)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	layout, err = bus.Ensure(context.Background(), js, cfg)
	require.NoError(t, err)
	return srv.ClientURL(), js, layout
}

// TestOrderAcrossWorkers runs 120 interleaved sessions through 4
// normalizers sharing the partitions: every session's events arrive
// complete and in the order offline mapping gives.
func TestOrderAcrossWorkers(t *testing.T) {
	t.Parallel()

	cfg := bus.Config{Partitions: 8, PinnedTTL: time.Second}
	url, js, layout := setup(t, cfg)
	sessions := manySessions(t, 120)
	want := expected(t, "default", sessions)
	startNormalizers(t, url, 4, cfg)
	publish(t, layout, "default", sessions, true)
	got, _ := collect(t, js, total(want))
	require.Len(t, got, len(want))
	for k := range want {
		require.Equal(t, want[k], got[k], "session %s", k)
	}
}

// TestCrashRecovery SIGKILLs a normalizer process at random points of a
// run of more than 10k frames, six times, restarting it each time: RUNTIME
// ends up with exactly the events of an uninterrupted run, each once, in
// per-session order.
func TestCrashRecovery(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills a normalizer process; skipped with -short")
	}

	bin := filepath.Join(t.TempDir(), "normalize")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "../../cmd/normalize")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	cfg := bus.Config{Partitions: 4, PinnedTTL: 500 * time.Millisecond, AckWait: 2 * time.Second}
	url, js, layout := setup(t, cfg)
	sessions := manySessions(t, 1100)
	want := expected(t, "default", sessions)
	frames := 0
	for _, s := range sessions {
		frames += len(s.lines)
	}
	require.GreaterOrEqual(t, frames, 10000)
	publish(t, layout, "default", sessions, true)

	start := func() *exec.Cmd {
		cmd := exec.CommandContext(context.Background(), bin, "--nats-url", url, "--log-level", "warn", "--partitions", "4", "--pinned-ttl", "500ms", "--ack-wait", "2s", "--batch", "64", "--metrics-listen", "")
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		return cmd
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 6 {
		cmd := start()
		time.Sleep(time.Duration(200+rng.IntN(600)) * time.Millisecond)
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		_ = cmd.Wait()
	}
	last := start()
	t.Cleanup(func() {
		_ = last.Process.Signal(syscall.SIGTERM)
		_ = last.Wait()
	})

	got, _ := collect(t, js, total(want))
	require.Len(t, got, len(want))
	for k := range want {
		require.Equal(t, want[k], got[k], "session %s", k)
	}
}
