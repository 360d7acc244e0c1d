package ingest_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/ingest"
	"github.com/agentwire/agentwire/internal/natstest"
)

const tenant = "acme"

type fixture struct {
	srv    *server.Server
	nc     *nats.Conn
	js     jetstream.JetStream
	layout *bus.Layout
	in     *ingest.Ingester
	logs   *syncBuffer
	// made is when the fixture was made: before anything it ingests is read.
	made time.Time
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := natstest.Server(t)
	return connectFixture(t, srv)
}

func connectFixture(tb testing.TB, srv *server.Server) *fixture {
	tb.Helper()
	return connectFixtureAt(tb, srv, srv.ClientURL())
}

// connectFixtureAt is connectFixture through url (a natstest.Relay's).
func connectFixtureAt(tb testing.TB, srv *server.Server, url string) *fixture {
	tb.Helper()
	made := time.Now()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	nc, js, err := bus.Connect(tb.Context(), url, tb.Name(), log)
	require.NoError(tb, err)
	tb.Cleanup(nc.Close)
	layout, err := bus.Ensure(tb.Context(), js, bus.Config{})
	require.NoError(tb, err)
	pub, err := ingest.NewPublisher(layout, tenant, log)
	require.NoError(tb, err)
	return &fixture{srv: srv, nc: nc, js: js, layout: layout, in: &ingest.Ingester{Pub: pub, Log: log}, logs: logs, made: made}
}

type rawMsg struct {
	subject string
	header  nats.Header
	data    []byte
}

// raw returns every RAW message in stream order.
func (f *fixture) raw(t *testing.T) []rawMsg {
	t.Helper()
	ctx := t.Context()
	stream, err := f.js.Stream(ctx, bus.RawStream)
	require.NoError(t, err)
	info, err := stream.Info(ctx)
	require.NoError(t, err)
	want := info.State.Msgs
	if want == 0 {
		return nil
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	require.NoError(t, err)
	var out []rawMsg
	for uint64(len(out)) < want {
		batch, err := cons.Fetch(int(min(want-uint64(len(out)), 5000)), jetstream.FetchMaxWait(5*time.Second))
		require.NoError(t, err)
		n := 0
		for m := range batch.Messages() {
			out = append(out, rawMsg{subject: m.Subject(), header: m.Headers(), data: m.Data()})
			n++
		}
		require.NoError(t, batch.Error())
		require.Positive(t, n, "RAW stopped delivering after %d of %d messages", len(out), want)
	}
	return out
}

// bySession groups messages by session key, keeping stream order.
func bySession(msgs []rawMsg) map[string][]rawMsg {
	out := map[string][]rawMsg{}
	for _, m := range msgs {
		k := m.header.Get(bus.HeaderSessionKey)
		out[k] = append(out[k], m)
	}
	return out
}

// body returns a frame's bytes, from the object store when it is there.
func (f *fixture) body(t *testing.T, m rawMsg) []byte {
	t.Helper()
	name := m.header.Get(bus.HeaderObject)
	if name == "" {
		return m.data
	}
	require.Empty(t, m.data)
	store, err := f.js.ObjectStore(t.Context(), bus.RawObjects)
	require.NoError(t, err)
	b, err := store.GetBytes(t.Context(), name)
	require.NoError(t, err)
	return b
}

// frames are the lines of a file that are frames.
func frames(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out [][]byte
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			out = append(out, line)
		}
	}
	return out
}

// frameOrigin is what a session's RAW headers say of when its frames
// were written.
type frameOrigin struct {
	backlog   bool
	writtenBy time.Time // zero: not said
}

// live frames were written as they were read.
var live = frameOrigin{}

// fileOrigin is the origin of frames ingest read from the file at path:
// backlog, written by its modification time.
func fileOrigin(t *testing.T, path string) frameOrigin {
	t.Helper()
	info, err := os.Stat(path)
	require.NoError(t, err)
	return frameOrigin{backlog: true, writtenBy: info.ModTime()}
}

// check asserts that h, the headers of a RAW message (what), say origin.
func (origin frameOrigin) check(t *testing.T, h nats.Header, what string) {
	t.Helper()
	require.Equal(t, origin.backlog, h.Get(bus.HeaderBacklog) == "true", "%s: backlog", what)
	if origin.writtenBy.IsZero() {
		require.Empty(t, h.Get(bus.HeaderWrittenBy), "%s: written by", what)
		return
	}
	by, err := time.Parse(time.RFC3339Nano, h.Get(bus.HeaderWrittenBy))
	require.NoError(t, err, "%s: written by", what)
	require.True(t, origin.writtenBy.Equal(by), "%s: written by %s, want %s", what, by, origin.writtenBy)
}

// checkSession asserts that msgs are want, in order, with the headers of
// ordinals 1..n and of their origin.
func (f *fixture) checkSession(t *testing.T, msgs []rawMsg, key, dialect string, want [][]byte, origin frameOrigin) {
	t.Helper()
	require.Len(t, msgs, len(want), key)
	subject := bus.RawSubject(tenant, key, f.layout.Config.Partitions)
	for i, w := range want {
		m := msgs[i]
		require.Equal(t, subject, m.subject)
		require.Equal(t, tenant, m.header.Get(bus.HeaderTenant))
		require.Equal(t, dialect, m.header.Get(bus.HeaderDialect), key)
		require.Equal(t, key, m.header.Get(bus.HeaderSessionKey))
		require.Equal(t, strconv.Itoa(i+1), m.header.Get(bus.HeaderOrdinal), key)
		require.Equal(t, bus.RawMsgID(tenant, key, uint64(i+1)), m.header.Get(bus.HeaderMsgID))
		at, err := time.Parse(time.RFC3339Nano, m.header.Get(bus.HeaderReceivedAt))
		require.NoError(t, err)
		// Read while the test ran, however long the machine took.
		require.False(t, at.Before(f.made) || at.After(time.Now()), "%s frame %d received at %s, not while the test ran (from %s)", key, i+1, at, f.made)
		origin.check(t, m.header, fmt.Sprintf("%s frame %d", key, i+1))
		require.True(t, bytes.Equal(w, f.body(t, m)), "%s frame %d differs", key, i+1)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o750))
	require.NoError(t, os.WriteFile(to, b, 0o600))
}

func recording(set, name string) string {
	return filepath.Join("..", "..", "testdata", "recordings", set, name)
}

func TestFilesRecordings(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dir := t.TempDir()
	sets := map[string]string{ // relative path → dialect
		"codex/plain.jsonl":         "codex-exec",
		"codex/app/multistep.jsonl": "codex-app-server",
		"claude/log.jsonl":          "claude-log",
		"claude/control.ndjson":     "claude-stream",
		"acp/shell.json":            "acp",
		"gemini/two-turns.jsonl":    "gemini-stream",
	}
	copyFile(t, recording("codex-exec", "plain.jsonl"), filepath.Join(dir, "codex/plain.jsonl"))
	copyFile(t, recording("codex-app-server", "multistep.jsonl"), filepath.Join(dir, "codex/app/multistep.jsonl"))
	copyFile(t, recording("claude-log", "plain.jsonl"), filepath.Join(dir, "claude/log.jsonl"))
	copyFile(t, recording("claude-control", "approval-allow.jsonl"), filepath.Join(dir, "claude/control.ndjson"))
	copyFile(t, recording("acp-gemini", "shell.jsonl"), filepath.Join(dir, "acp/shell.json"))
	copyFile(t, recording("gemini-stream", "two-turns.jsonl"), filepath.Join(dir, "gemini/two-turns.jsonl"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a frame file\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "unknown.jsonl"), []byte("hello\n{\"x\":1}\n"), 0o600))

	inputs, err := ingest.Discover([]string{dir}, ingest.AutoDialect)
	require.NoError(t, err)
	require.Len(t, inputs, len(sets)+1)
	sum, err := f.in.Files(t.Context(), inputs, ingest.FileOptions{})
	require.NoError(t, err)
	require.Equal(t, len(sets), sum.Files)
	require.Equal(t, 1, sum.Skipped)
	require.Contains(t, f.logs.String(), "skipping a file whose dialect cannot be told")
	require.Contains(t, sum.String(), fmt.Sprintf("ingested %d files (1 skipped), %d frames", len(sets), sum.Frames))

	check := func() {
		sessions := bySession(f.raw(t))
		require.Len(t, sessions, len(sets))
		var total uint64
		for rel, dialect := range sets {
			path := filepath.Join(dir, filepath.FromSlash(rel))
			key := ingest.FileSessionKey(path)
			want := frames(t, path)
			total += uint64(len(want))
			f.checkSession(t, sessions[key], key, dialect, want, fileOrigin(t, path))
			require.Contains(t, f.logs.String(), "dialect="+dialect)
		}
		require.Equal(t, total, sum.Frames)
	}
	check()

	// Again: the duplicate window drops every frame.
	f2 := connectFixture(t, f.srv)
	sum2, err := f2.in.Files(t.Context(), inputs, ingest.FileOptions{})
	require.NoError(t, err)
	require.Equal(t, sum.Frames, sum2.Frames)
	check()
}

func TestFilesSessionKeyAndDialect(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	path := recording("codex-exec", "shell.jsonl")
	inputs, err := ingest.Discover([]string{path}, "codex-exec")
	require.NoError(t, err)
	_, err = f.in.Files(t.Context(), inputs, ingest.FileOptions{SessionKey: "mine"})
	require.NoError(t, err)
	f.checkSession(t, bySession(f.raw(t))["mine"], "mine", "codex-exec", frames(t, path), fileOrigin(t, path))
	require.NotContains(t, f.logs.String(), "sniffed")

	two, err := ingest.Discover([]string{path, recording("codex-exec", "plain.jsonl")}, "codex-exec")
	require.NoError(t, err)
	_, err = f.in.Files(t.Context(), two, ingest.FileOptions{SessionKey: "mine"})
	require.ErrorContains(t, err, "a session key names one input")

	_, err = ingest.Discover([]string{filepath.Join(t.TempDir(), "missing")}, "auto")
	require.ErrorIs(t, err, ingest.ErrNoInput)
}

func TestDefaultLocations(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	locs := ingest.DefaultLocations(home, "")
	require.Equal(t, []string{
		filepath.Join(home, ".claude", "projects"),
		filepath.Join(home, ".codex", "sessions"),
		filepath.Join(home, ".gemini", "tmp"),
	}, []string{locs[0].Dir, locs[1].Dir, locs[2].Dir})
	require.Equal(t, filepath.Join(home, "ch", "sessions"), ingest.DefaultLocations(home, filepath.Join(home, "ch"))[1].Dir)
	require.Empty(t, ingest.ExistingLocations(locs))
	require.NoError(t, os.MkdirAll(locs[1].Dir, 0o750))
	got := ingest.ExistingLocations(locs)
	require.Len(t, got, 1)
	require.Equal(t, "codex-rollout", got[0].Dialect)
}

func TestStream(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	path := recording("claude-stream", "plain.jsonl")
	b, err := os.ReadFile(path)
	require.NoError(t, err)

	// Sniffed from the first frame (after empty lines).
	key := ingest.StdinSessionKey(time.Now())
	require.True(t, strings.HasPrefix(key, "stdin:"))
	d, n, _, err := f.in.Stream(t.Context(), io.MultiReader(strings.NewReader("\n  \n"), bytes.NewReader(b)), ingest.Session{Key: key})
	require.NoError(t, err)
	require.Equal(t, "claude-stream", d)
	want := frames(t, path)
	require.Equal(t, uint64(len(want)), n)
	f.checkSession(t, bySession(f.raw(t))[key], key, "claude-stream", want, live)

	// Given dialect: nothing is sniffed, anything goes.
	d, n, _, err = f.in.Stream(t.Context(), strings.NewReader("x\ny"), ingest.Session{Key: "s2", Dialect: "codex-exec"})
	require.NoError(t, err)
	require.Equal(t, "codex-exec", d)
	require.Equal(t, uint64(2), n)
	f.checkSession(t, bySession(f.raw(t))["s2"], "s2", "codex-exec", [][]byte{[]byte("x"), []byte("y")}, live)

	d, n, _, err = f.in.Stream(t.Context(), strings.NewReader("not json\n"), ingest.Session{Key: "s3"})
	require.ErrorIs(t, err, ingest.ErrUnknownDialect)
	require.Empty(t, d)
	require.Zero(t, n)
	_, n, _, err = f.in.Stream(t.Context(), strings.NewReader(""), ingest.Session{Key: "s4"})
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestBarProgress(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	p := ingest.BarProgress(&buf)
	p.Start(1000)
	p.Add(400, 3)
	p.Set(1000)
	p.Log(func() { _, _ = buf.Write([]byte("a note\n")) })
	p.Finish()
	require.Contains(t, buf.String(), "3 frames")
	require.Contains(t, buf.String(), "a note")
}
