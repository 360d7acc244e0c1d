package cli

import (
	"net"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
)

// TestOldNATSServerRefused runs the commands against a real nats-server
// older than the services need, when one is installed (Debian's is
// 2.9): each exits at once, non-zero, its error one line saying what to
// upgrade to, instead of running on a server that ignores what it is
// asked. The embedded server is too new to show it.
func TestOldNATSServerRefused(t *testing.T) {
	t.Parallel()
	binary, err := exec.LookPath("nats-server")
	if err != nil {
		t.Skip("no nats-server installed")
	}
	out, err := exec.CommandContext(t.Context(), binary, "--version").Output()
	require.NoError(t, err)
	version := regexp.MustCompile(`v?([0-9]+\.[0-9]+\.[0-9]+)`).FindStringSubmatch(string(out))
	require.NotNil(t, version, "nats-server --version said %q", out)
	if bus.VersionAtLeast(version[1], bus.MinServer) {
		t.Skipf("the installed nats-server is %s, not older than %s", version[1], bus.MinServer)
	}
	addr := freeAddr(t)
	host, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	srv := exec.CommandContext(t.Context(), binary, "-a", host, "-p", port, "-js", "-sd", t.TempDir())
	require.NoError(t, srv.Start())
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	require.Eventually(t, func() bool {
		c, err := (&net.Dialer{}).DialContext(t.Context(), "tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "nats-server did not listen")

	_, dbURL := schemaURL(t)
	url := "nats://" + addr
	for _, args := range [][]string{
		{"ingest", "--nats-url", url, "file", "../../testdata/recordings/codex-exec/shell.jsonl"},
		{"normalize", "--nats-url", url, "--metrics-listen", ""},
		{"project", "--nats-url", url, "--database-url", dbURL, "--metrics-listen", ""},
		{"up", "--nats-url", url, "--database-url", dbURL, "--metrics-listen", ""},
	} {
		r := run(t, args...)
		require.NotEqual(t, ExitOK, r.code, "%v: %s", args, r.stderr)
		// Logs may come first (project migrates the database before it
		// connects to NATS); the error is the last line, whole.
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		line := lines[len(lines)-1]
		require.True(t, strings.HasPrefix(line, "agentwire: "), "%v: %s", args, line)
		require.Contains(t, line, "is "+version[1]+",", args)
		require.True(t, strings.HasSuffix(line, "upgrade the NATS server to "+bus.MinServer+" or newer"), "%v: %s", args, line)
	}
}
