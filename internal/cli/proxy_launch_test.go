package cli

import (
	"context"
	"log/slog"
	"net"
	"strconv"
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

	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	addr := "127.0.0.1:" + strconv.Itoa(port)

	type outcome struct{ r result }
	done := make(chan outcome, 1)
	go func() {
		done <- outcome{run(t, "ingest", "--nats-url", "nats://"+addr, "--session", "launch", "proxy",
			"--dialect", "acp", "--buffer-dir", t.TempDir(), "--",
			"sh", "-c", `printf '{"jsonrpc":"2.0","id":1,"result":{}}\n{"jsonrpc":"2.0","method":"session/update","params":{}}\n'`)}
	}()

	// The agent's output is not held back by the missing server: the
	// proxy is still draining its buffer when the server comes up.
	time.Sleep(time.Second)
	srv, err := embedded.Start(context.Background(), embedded.Config{Listen: addr, DataDir: t.TempDir()}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)

	var got outcome
	select {
	case got = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the proxy did not finish")
	}
	require.Equal(t, ExitOK, got.r.code, got.r.stderr)
	require.Contains(t, got.r.stdout, `"method":"session/update"`, "the agent's output passed through")
	require.Contains(t, got.r.stderr, "NATS is not reachable")

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
