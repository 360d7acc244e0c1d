package cli

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/embedded"
)

// TestProxyStartsWithoutNATS launches the proxy while no NATS server
// answers: the agent runs and its output passes through at once, and its
// frames reach RAW once a server comes up.
func TestProxyStartsWithoutNATS(t *testing.T) {
	t.Parallel()

	addr := freeAddr(t)

	var stdout bytes.Buffer
	stderr := &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Exec(context.Background(), "agentwire", Agentwire, []string{"ingest", "--nats-url", "nats://" + addr,
			"--session", "launch", "proxy", "--dialect", "acp", "--buffer-dir", t.TempDir(), "--",
			"sh", "-c", `printf '{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","method":"session/update","params":{}}\n'`},
			&stdout, stderr)
	}()

	// The agent's output is not held back by the missing server: the
	// proxy has said NATS is away and is still draining its buffer when
	// the server comes up.
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "NATS is not reachable") },
		30*time.Second, 5*time.Millisecond, "the proxy did not say NATS is away: %s", stderr)
	srv, err := embedded.Start(context.Background(), embedded.Config{Listen: addr, DataDir: t.TempDir()}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)

	select {
	case code := <-done:
		require.Equal(t, ExitOK, code, stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatal("the proxy did not finish")
	}
	require.Contains(t, stdout.String(), `"method":"session/update"`, "the agent's output passed through")

	nc, err := nats.Connect(srv.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	raw, err := js.Stream(t.Context(), bus.RawStream)
	require.NoError(t, err)
	// Two stdout lines and the exit frame.
	require.Equal(t, uint64(3), raw.CachedInfo().State.Msgs)
}

// TestProxyLeftFramesFlush runs the proxy while NATS is down and stays
// down: the drain times out, the frames stay in --buffer-dir with a log
// line that says where and what publishes them, and `ingest flush`
// publishes them once NATS is up, each once.
func TestProxyLeftFramesFlush(t *testing.T) {
	t.Parallel()

	addr := freeAddr(t)
	url := "nats://" + addr
	bufDir := t.TempDir()

	r := run(t, "ingest", "--nats-url", url, "--tenant", "t1", "--session", "left", "proxy",
		"--dialect", "acp", "--buffer-dir", bufDir, "--drain-timeout", "300ms", "--",
		"sh", "-c", `printf '{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","method":"session/update","params":{}}\n'; exit 3`)
	require.Equal(t, 3, r.code, r.stderr)
	var kept string
	for line := range strings.SplitSeq(r.stderr, "\n") {
		if strings.Contains(line, "kept on disk") {
			kept = line
		}
	}
	require.NotEmpty(t, kept, r.stderr)
	require.Contains(t, kept, "`agentwire ingest flush`")
	require.Contains(t, kept, "frames=3")
	require.Contains(t, kept, "buffer_dir="+bufDir)
	require.NotContains(t, r.stderr, "level=ERROR")
	left, err := os.ReadDir(bufDir)
	require.NoError(t, err)
	require.Len(t, left, 1)

	srv, err := embedded.Start(context.Background(), embedded.Config{Listen: addr, DataDir: t.TempDir()}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	r = run(t, "ingest", "--nats-url", url, "flush", "--buffer-dir", bufDir)
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Equal(t, "flushed 3 frames of 1 buffer from "+bufDir+"\n", r.stdout)
	r = run(t, "ingest", "--nats-url", url, "flush", "--buffer-dir", bufDir)
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Equal(t, "flushed 0 frames of 0 buffers from "+bufDir+"\n", r.stdout, "the first flush took them all")
	left, err = os.ReadDir(bufDir)
	require.NoError(t, err)
	require.Empty(t, left)

	msgs := rawMessages(t, srv.ClientURL())
	require.Len(t, msgs, 3)
	for i, m := range msgs {
		h := m.Headers()
		require.Equal(t, "t1", h.Get(bus.HeaderTenant))
		require.Equal(t, "left", h.Get(bus.HeaderSessionKey))
		require.Equal(t, strconv.Itoa(i+1), h.Get(bus.HeaderOrdinal))
	}
	require.Equal(t, "agent", msgs[0].Headers().Get(bus.HeaderDirection))
	require.JSONEq(t, `{"agentwire":"exit","code":3}`, string(msgs[2].Data()))
}
