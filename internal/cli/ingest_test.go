package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/natstest"
)

func runIngest(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return runIngestFrom(t, strings.NewReader(stdin), args...)
}

func runIngestFrom(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Exec(context.Background(), "ingest", func(ctx context.Context, a []string, o, e io.Writer) error {
		cmd := newIngestCommand() //nolint:contextcheck // as in Ingest
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		cmd.SetArgs(a)
		cmd.SetOut(o)
		cmd.SetErr(e)
		cmd.SetIn(stdin)
		return cmd.ExecuteContext(ctx)
	}, args, &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

// rawStream is RAW on the server at url, over a connection closed with
// the test.
func rawStream(t *testing.T, url string) jetstream.Stream {
	t.Helper()
	nc, err := nats.Connect(url)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	s, err := js.Stream(t.Context(), bus.RawStream)
	require.NoError(t, err)
	return s
}

func rawCount(t *testing.T, url string) uint64 {
	t.Helper()
	info, err := rawStream(t, url).Info(t.Context())
	require.NoError(t, err)
	return info.State.Msgs
}

func TestIngestFileCommand(t *testing.T) {
	t.Parallel()
	url := natstest.Server(t).ClientURL()
	dir := t.TempDir()
	for _, set := range []string{"codex-exec", "gemini-stream"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "recordings", set, "plain.jsonl"))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, set+".jsonl"), b, 0o600))
	}
	// Through the standalone program's entry point.
	var out, errOut bytes.Buffer
	code := Exec(t.Context(), "ingest", Ingest, []string{"file", "--nats-url", url, "--tenant", "t1", dir}, &out, &errOut)
	require.Equal(t, ExitOK, code, errOut.String())
	require.Regexp(t, `^ingested 2 files, \d+ frames, .* in .*\n$`, out.String())
	require.Contains(t, errOut.String(), "dialect=codex-exec")
	require.Contains(t, errOut.String(), "dialect=gemini-stream")
	require.Contains(t, errOut.String(), `msg="ingested file"`)
	n := rawCount(t, url)
	require.Positive(t, n)

	// Through agentwire, again: nothing new is stored.
	r := run(t, "ingest", "file", "--nats-url", url, "--tenant", "t1", dir)
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Equal(t, n, rawCount(t, url))
}

func TestIngestStdinCommand(t *testing.T) {
	t.Parallel()
	url := natstest.Server(t).ClientURL()
	r := runIngest(t, "{\"type\":\"thread.started\",\"thread_id\":\"x\"}\n{\"type\":\"turn.started\"}\n", "stdin", "--nats-url", url, "--session", "s1")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "ingested stdin as s1 (codex-exec): 2 frames")
	require.Equal(t, uint64(2), rawCount(t, url))

	// A second run of the named session continues it: nothing is taken
	// for a duplicate of the first run's frames.
	r = runIngest(t, "{\"type\":\"turn.completed\"}\n", "stdin", "--nats-url", url, "--session", "s1", "--dialect", "codex-exec")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Equal(t, uint64(3), rawCount(t, url))

	r = runIngest(t, "hello\n", "stdin", "--nats-url", url)
	require.Equal(t, ExitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "cannot be told from the first frame; pass --dialect")
}

// TestIngestStdinBacklog: standard input redirected from a file, or
// piped with --backlog, is a log written earlier: its frames say so, so
// that their receive times are not taken for their times.
func TestIngestStdinBacklog(t *testing.T) {
	t.Parallel()
	url := natstest.Server(t).ClientURL()
	path := filepath.Join(t.TempDir(), "log.jsonl")
	require.NoError(t, os.WriteFile(path, []byte("{\"type\":\"turn.started\"}\n"), 0o600))
	file, err := os.Open(path)
	require.NoError(t, err)
	defer func() { _ = file.Close() }()
	r := runIngestFrom(t, file, "stdin", "--nats-url", url, "--session", "file", "--dialect", "codex-exec")
	require.Equal(t, ExitOK, r.code, r.stderr)
	r = runIngest(t, "{\"type\":\"turn.started\"}\n", "stdin", "--nats-url", url, "--session", "piped-old", "--dialect", "codex-exec", "--backlog")
	require.Equal(t, ExitOK, r.code, r.stderr)
	r = runIngest(t, "{\"type\":\"turn.started\"}\n", "stdin", "--nats-url", url, "--session", "live", "--dialect", "codex-exec")
	require.Equal(t, ExitOK, r.code, r.stderr)
	r = runIngest(t, "{\"type\":\"turn.started\"}\n", "stdin", "--nats-url", url, "--session", "piped-dated", "--dialect", "codex-exec", "--written-by", "2026-05-01T20:00:00+02:00")
	require.Equal(t, ExitOK, r.code, r.stderr)
	r = runIngest(t, "{\"type\":\"turn.started\"}\n", "stdin", "--nats-url", url, "--session", "bad", "--dialect", "codex-exec", "--written-by", "May 1st")
	require.Equal(t, ExitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, `--written-by: want an RFC 3339 time such as 2026-05-01T12:00:00Z, got "May 1st"`)

	stream := rawStream(t, url)
	backlog := map[string]bool{}
	writtenBy := map[string]string{}
	for seq := uint64(1); seq <= 4; seq++ {
		m, err := stream.GetMsg(t.Context(), seq)
		require.NoError(t, err)
		backlog[m.Header.Get(bus.HeaderSessionKey)] = m.Header.Get(bus.HeaderBacklog) == "true"
		writtenBy[m.Header.Get(bus.HeaderSessionKey)] = m.Header.Get(bus.HeaderWrittenBy)
	}
	require.Equal(t, map[string]bool{"file": true, "piped-old": true, "live": false, "piped-dated": true}, backlog)
	// The file says when it was written, and so does a pipe given the time.
	info, err := file.Stat()
	require.NoError(t, err)
	require.Equal(t, map[string]string{"file": info.ModTime().UTC().Format(time.RFC3339Nano), "piped-old": "", "live": "",
		"piped-dated": "2026-05-01T18:00:00Z"}, writtenBy)
}

func TestIngestExecCommand(t *testing.T) {
	t.Parallel()
	url := natstest.Server(t).ClientURL()
	r := runIngest(t, "", "exec", "--nats-url", url, "--dialect", "codex-exec", "--", "sh", "-c", `echo '{"type":"turn.started"}'; echo oops >&2; exit 3`)
	require.Equal(t, 3, r.code, r.stderr)
	require.NotContains(t, r.stderr, "ingest: ")
	require.Equal(t, uint64(3), rawCount(t, url))

	// Flags after the command are the command's.
	r = runIngest(t, "", "exec", "--nats-url", url, "--dialect", "codex-exec", "sh", "-c", "exit 0", "--json")
	require.Equal(t, ExitOK, r.code, r.stderr)
}

func TestIngestUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"a.jsonl", "b.jsonl"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("{}\n"), 0o600))
	}
	// No server runs at this URL: usage errors come before connecting.
	url := "nats://127.0.0.1:1"
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"ingest", "file", "--nats-url", url, "--dialect", "klingon", dir}, `unknown dialect "klingon"`},
		{[]string{"ingest", "file", "--nats-url", url, filepath.Join(dir, "missing")}, "no such file or directory"},
		{[]string{"ingest", "file", "--nats-url", url, "--session", "k", dir}, "--session names one session"},
		{[]string{"ingest", "file", "--nats-url", url, "--tenant", "a.b", dir}, "--tenant"},
		{[]string{"ingest", "file", "--nats-url", url, "--provider", "Nope!", dir}, "--provider"},
		{[]string{"ingest", "exec", "--nats-url", url, "--", "true"}, "--dialect is required"},
		{[]string{"ingest", "exec", "--nats-url", url, "--dialect", "auto", "--", "true"}, "cannot sniff"},
		{[]string{"ingest", "exec", "--nats-url", url, "--dialect", "codex-exec"}, "give the command to run"},
		{[]string{"ingest", "stdin", "--nats-url", url, "extra"}, "unknown command"},
		{[]string{"ingest", "file", "--bogus"}, "unknown flag"},
		{[]string{"ingest"}, "give a source"},
	}
	for _, tt := range tests {
		r := run(t, tt.args...)
		require.Equal(t, ExitUsage, r.code, "%v: %s", tt.args, r.stderr)
		require.Contains(t, r.stderr, tt.msg, tt.args)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), "%v: one line: %q", tt.args, r.stderr)
		require.Empty(t, r.stdout)
	}
}

func TestIngestConnectError(t *testing.T) {
	t.Parallel()
	r := run(t, "ingest", "file", "--nats-url", "nats://127.0.0.1:1", filepath.Join("..", "..", "testdata", "recordings", "codex-exec"))
	require.Equal(t, ExitError, r.code)
	require.Contains(t, r.stderr, "connect to NATS at nats://127.0.0.1:1")
}
