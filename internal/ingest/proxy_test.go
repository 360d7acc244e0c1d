package ingest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/ingest"
	"github.com/agentwire/agentwire/internal/natstest"
)

var (
	fakeAgentOnce sync.Once
	fakeAgentPath string
	errFakeAgent  error
)

// fakeAgent builds testdata/fakeagent once per test binary.
func fakeAgent(tb testing.TB) string {
	tb.Helper()
	fakeAgentOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentwire-fakeagent-") //nolint:usetesting // shared by every test of the binary; removed by TestMain
		if err != nil {
			errFakeAgent = err
			return
		}
		fakeAgentPath = filepath.Join(dir, "fakeagent")
		out, err := exec.CommandContext(context.Background(), "go", "build", "-o", fakeAgentPath, "./testdata/fakeagent").CombinedOutput()
		if err != nil {
			errFakeAgent = fmt.Errorf("build fakeagent: %w\n%s", err, out)
		}
	})
	require.NoError(tb, errFakeAgent)
	return fakeAgentPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fakeAgentPath != "" {
		_ = os.RemoveAll(filepath.Dir(fakeAgentPath))
	}
	os.Exit(code)
}

// transcript is what a client wrote to the agent and read from it.
type transcript struct {
	sent, received bytes.Buffer
}

// driveTurns plays the client of the fake agent: a ping, then turns whose
// approval request it answers, then EOF.
func driveTurns(t *testing.T, w io.WriteCloser, r io.Reader, from, turns int, tr *transcript, between func(turn int)) {
	t.Helper()
	br := bufio.NewReader(r)
	send := func(s string) {
		tr.sent.WriteString(s + "\n")
		_, err := io.WriteString(w, s+"\n")
		require.NoError(t, err)
	}
	until := func(id string) {
		for {
			line, err := br.ReadBytes('\n')
			tr.received.Write(line)
			require.NoError(t, err)
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			require.NoError(t, json.Unmarshal(line, &m), string(line))
			if m.Method == "approve" {
				send(fmt.Sprintf(`{"id":%s,"result":%t}`, m.ID, len(m.ID)%2 == 0))
				continue
			}
			if string(m.ID) == id {
				return
			}
		}
	}
	for i := from; i < from+turns; i++ {
		send(fmt.Sprintf(`{"id":%d,"method":"ping"}`, 2*i))
		until(strconv.Itoa(2 * i))
		send(fmt.Sprintf(`{"id":%d,"method":"turn","params":{"n":%d}}`, 2*i+1, i%4))
		until(strconv.Itoa(2*i + 1))
		if between != nil {
			between(i)
		}
	}
}

func finish(t *testing.T, w io.WriteCloser, r io.Reader, tr *transcript) {
	t.Helper()
	require.NoError(t, w.Close())
	rest, err := io.ReadAll(r)
	require.NoError(t, err)
	tr.received.Write(rest)
}

// direct runs the fake agent without the proxy.
func direct(t *testing.T, turns int) (*transcript, string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), fakeAgent(t))
	w, err := cmd.StdinPipe()
	require.NoError(t, err)
	r, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	tr := &transcript{}
	driveTurns(t, w, r, 0, turns, tr, nil)
	finish(t, w, r, tr)
	require.NoError(t, cmd.Wait())
	return tr, stderr.String()
}

type proxyRun struct {
	stdinW  *io.PipeWriter
	stdoutR *io.PipeReader
	stderr  *syncBuffer
	done    chan struct{}
	res     ingest.ProxyResult
	err     error
}

func startProxy(t *testing.T, f *fixture, opts ingest.ProxyOptions) *proxyRun {
	t.Helper()
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	run := &proxyRun{stdinW: stdinW, stdoutR: stdoutR, stderr: &syncBuffer{}, done: make(chan struct{})}
	if len(opts.Args) == 0 {
		opts.Args = []string{fakeAgent(t)}
	}
	opts.Stdin, opts.Stdout, opts.Stderr = stdinR, stdoutW, run.stderr
	if opts.BufferDir == "" {
		opts.BufferDir = t.TempDir()
	}
	go func() {
		defer close(run.done)
		run.res, run.err = f.in.Proxy(t.Context(), opts)
		_ = stdoutW.Close()
	}()
	return run
}

func (run *proxyRun) wait(t *testing.T) {
	t.Helper()
	select {
	case <-run.done:
	case <-time.After(60 * time.Second):
		t.Fatal("the proxy did not end")
	}
}

// checkPublished asserts that RAW holds the transcript's messages, each
// with its direction, in the order they crossed, the stderr line and the
// exit frame last.
func checkPublished(t *testing.T, f *fixture, key string, tr *transcript) {
	t.Helper()
	msgs := bySession(f.raw(t))[key]
	// The whole sequence, so that a failure tells a frame stored late from
	// one lost.
	want, ordinals := make([]string, len(msgs)), make([]string, len(msgs))
	for i, m := range msgs {
		want[i], ordinals[i] = strconv.Itoa(i+1), m.header.Get(bus.HeaderOrdinal)
	}
	require.Equal(t, want, ordinals, "the session's ordinals in RAW, in stream order")
	var stderr []string
	var got []string
	for _, m := range msgs {
		require.Equal(t, "acp", m.header.Get(bus.HeaderDialect))
		dir := m.header.Get(bus.HeaderDirection)
		if dir == "" {
			stderr = append(stderr, string(m.data))
			continue
		}
		got = append(got, dir+" "+string(m.data))
	}
	require.JSONEq(t, `{"agentwire":"exit","code":0}`, stderr[len(stderr)-1], "the exit frame is last")
	require.JSONEq(t, `{"agentwire":"exit","code":0}`, string(msgs[len(msgs)-1].data))
	require.Equal(t, []string{`{"agentwire":"stderr","line":"fakeagent: ready"}`}, stderr[:len(stderr)-1])

	// Each direction in order, and every answer after what it answers.
	var client, agent []string
	at := map[string]int{}
	for i, g := range got {
		d, m, _ := strings.Cut(g, " ")
		if d == "client" {
			client = append(client, m)
		} else {
			agent = append(agent, m)
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		require.NoError(t, json.Unmarshal([]byte(m), &msg))
		kind := "answer"
		if msg.Method != "" {
			kind = "request"
		}
		if len(msg.ID) > 0 {
			at[kind+string(msg.ID)] = i
		}
	}
	require.Equal(t, proxyLines(tr.sent.String()), client)
	require.Equal(t, proxyLines(tr.received.String()), agent)
	for k, i := range at {
		if id, ok := strings.CutPrefix(k, "answer"); ok {
			req, ok := at["request"+id]
			require.True(t, ok, "no request %s", id)
			require.Less(t, req, i, "answer %s published before its request", id)
		}
	}
}

func proxyLines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

func TestProxyTransparent(t *testing.T) {
	t.Parallel()
	const turns = 6
	want, wantStderr := direct(t, turns)

	f := newFixture(t)
	run := startProxy(t, f, ingest.ProxyOptions{Session: ingest.Session{Key: "proxy-t", Dialect: "acp"}})
	tr := &transcript{}
	driveTurns(t, run.stdinW, run.stdoutR, 0, turns, tr, nil)
	finish(t, run.stdinW, run.stdoutR, tr)
	run.wait(t)
	require.NoError(t, run.err)
	require.Equal(t, want.sent.String(), tr.sent.String())
	require.Equal(t, want.received.String(), tr.received.String(), "the agent's stdout is unchanged")
	require.Equal(t, wantStderr, run.stderr.String(), "its stderr too")
	require.Equal(t, 0, run.res.ExitCode)
	require.Equal(t, uint64(1), run.res.Stderr)
	require.Equal(t, run.res.Agent+run.res.Client+run.res.Stderr+1, run.res.Published)
	require.Zero(t, run.res.Dropped)
	checkPublished(t, f, "proxy-t", tr)
}

func TestProxyExitCode(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	run := startProxy(t, f, ingest.ProxyOptions{Session: ingest.Session{Dialect: "acp"}})
	_, err := io.WriteString(run.stdinW, `{"id":1,"method":"exit","params":{"code":4}}`+"\n")
	require.NoError(t, err)
	_, err = io.ReadAll(run.stdoutR)
	require.NoError(t, err)
	run.wait(t)
	require.NoError(t, run.err)
	require.Equal(t, 4, run.res.ExitCode)
	require.True(t, strings.HasPrefix(run.res.SessionKey, "proxy:fakeagent:"), run.res.SessionKey)
	msgs := bySession(f.raw(t))[run.res.SessionKey]
	// The request, the agent's startup line on stderr (which may cross the
	// proxy before or after the request) and the exit frame, last.
	require.Len(t, msgs, 3)
	clients := 0
	for _, m := range msgs[:2] {
		if m.header.Get(bus.HeaderDirection) == "client" {
			clients++
		}
	}
	require.Equal(t, 1, clients, "one of the first two frames is the client's request")
	require.JSONEq(t, `{"agentwire":"exit","code":4}`, string(msgs[2].data))
}

// TestProxyModelFrame: the model the agent's command line names opens the
// session, before any frame that crossed.
func TestProxyModelFrame(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	codex := filepath.Join(t.TempDir(), "codex")
	require.NoError(t, os.Symlink(fakeAgent(t), codex))
	run := startProxy(t, f, ingest.ProxyOptions{Session: ingest.Session{Dialect: "codex-app-server"}, Args: []string{codex, "app-server", "-c", "model=gpt-5.5"}})
	_, err := io.WriteString(run.stdinW, `{"id":1,"method":"exit","params":{"code":0}}`+"\n")
	require.NoError(t, err)
	_, err = io.ReadAll(run.stdoutR)
	require.NoError(t, err)
	run.wait(t)
	require.NoError(t, run.err)
	msgs := bySession(f.raw(t))[run.res.SessionKey]
	require.NotEmpty(t, msgs)
	require.JSONEq(t, `{"agentwire":"model","model":"gpt-5.5"}`, string(msgs[0].data))
	require.Equal(t, []string{"1"}, msgs[0].header.Values(bus.HeaderOrdinal))
	require.JSONEq(t, `{"agentwire":"exit","code":0}`, string(msgs[len(msgs)-1].data))
}

// TestProxySessionContinues: a second proxy run of a named session, from
// another process (a new Publisher), numbers its frames after the first
// run's, so none is taken for a duplicate.
func TestProxySessionContinues(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	exitWith := func(f *fixture, code int) {
		t.Helper()
		run := startProxy(t, f, ingest.ProxyOptions{Session: ingest.Session{Key: "proxy-twice", Dialect: "acp"}})
		_, err := io.WriteString(run.stdinW, `{"id":1,"method":"exit","params":{"code":`+strconv.Itoa(code)+`}}`+"\n")
		require.NoError(t, err)
		_, err = io.ReadAll(run.stdoutR)
		require.NoError(t, err)
		run.wait(t)
		require.NoError(t, run.err)
		require.Equal(t, code, run.res.ExitCode)
	}
	exitWith(f, 4)
	exitWith(connectFixture(t, f.srv), 5)

	msgs := bySession(f.raw(t))["proxy-twice"]
	require.Len(t, msgs, 6)
	for i, m := range msgs {
		require.Equal(t, strconv.Itoa(i+1), m.header.Get(bus.HeaderOrdinal))
	}
	require.JSONEq(t, `{"agentwire":"exit","code":4}`, string(msgs[2].data))
	require.JSONEq(t, `{"agentwire":"exit","code":5}`, string(msgs[5].data))
}

// TestProxyNATSOutage stops NATS in the middle of a session: the agent
// keeps working, and every frame is stored once, in order, when NATS is
// back.
func TestProxyNATSOutage(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	f := connectFixture(t, srv)
	run := startProxy(t, f, ingest.ProxyOptions{Session: ingest.Session{Key: "proxy-outage", Dialect: "acp"}, DrainTimeout: 30 * time.Second})
	tr := &transcript{}
	driveTurns(t, run.stdinW, run.stdoutR, 0, 3, tr, nil)
	srv.Shutdown()
	srv.WaitForShutdown()
	start := time.Now()
	driveTurns(t, run.stdinW, run.stdoutR, 3, 20, tr, nil) // NATS is down: the agent is not slowed
	t.Logf("20 turns with NATS down took %s", time.Since(start))
	natstest.Restart(t, srv)
	driveTurns(t, run.stdinW, run.stdoutR, 23, 3, tr, nil)
	finish(t, run.stdinW, run.stdoutR, tr)
	run.wait(t)
	require.NoError(t, run.err)
	require.Zero(t, run.res.Dropped)
	require.Zero(t, run.res.Left)
	want, _ := direct(t, 26)
	require.Equal(t, want.received.String(), tr.received.String())
	checkPublished(t, f, "proxy-outage", tr)
}

// TestProxyBufferFull fills a tiny buffer while NATS is down: frames are
// dropped and counted, said once, and the agent is not disturbed.
func TestProxyBufferFull(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	f := connectFixture(t, srv)
	srv.Shutdown()
	srv.WaitForShutdown()
	run := startProxy(t, f, ingest.ProxyOptions{Session: ingest.Session{Key: "proxy-full", Dialect: "acp"}, BufferMax: 512, DrainTimeout: 200 * time.Millisecond})
	tr := &transcript{}
	driveTurns(t, run.stdinW, run.stdoutR, 0, 10, tr, nil)
	finish(t, run.stdinW, run.stdoutR, tr)
	run.wait(t)
	require.NoError(t, run.err)
	require.Equal(t, 0, run.res.ExitCode)
	require.Positive(t, run.res.Dropped)
	require.Positive(t, run.res.Left, "NATS never came back: what fitted is kept")
	require.DirExists(t, run.res.LeftIn)
	want, _ := direct(t, 10)
	require.Equal(t, want.received.String(), tr.received.String())
	require.Equal(t, 1, strings.Count(f.logs.String(), "buffer is full"), f.logs.String())
}

// BenchmarkProxyRoundTrip measures a ping round trip with the agent
// directly and through the proxy (publishing to an embedded NATS).
func BenchmarkProxyRoundTrip(b *testing.B) {
	agent := fakeAgent(b)
	roundTrips := func(b *testing.B, w io.Writer, r *bufio.Reader) {
		b.Helper()
		for i := 0; b.Loop(); i++ {
			if _, err := fmt.Fprintf(w, `{"id":%d,"method":"ping"}`+"\n", i); err != nil {
				b.Fatal(err)
			}
			if _, err := r.ReadBytes('\n'); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("direct", func(b *testing.B) {
		cmd := exec.CommandContext(b.Context(), agent)
		w, _ := cmd.StdinPipe()
		r, _ := cmd.StdoutPipe()
		require.NoError(b, cmd.Start())
		roundTrips(b, w, bufio.NewReader(r))
		_ = w.Close()
		_ = cmd.Wait()
	})
	b.Run("proxy", func(b *testing.B) {
		srv := natstest.Server(b)
		log := slog.New(slog.DiscardHandler)
		nc, js, err := bus.Connect(b.Context(), srv.ClientURL(), b.Name(), log)
		require.NoError(b, err)
		defer nc.Close()
		layout, err := bus.Ensure(b.Context(), js, bus.Config{})
		require.NoError(b, err)
		pub, err := ingest.NewPublisher(layout, tenant, log)
		require.NoError(b, err)
		in := &ingest.Ingester{Pub: pub, Log: log}
		stdinR, stdinW := io.Pipe()
		stdoutR, stdoutW := io.Pipe()
		done := make(chan error, 1)
		go func() {
			_, err := in.Proxy(b.Context(), ingest.ProxyOptions{
				Args: []string{agent}, Session: ingest.Session{Key: "bench", Dialect: "acp"},
				Stdin: stdinR, Stdout: stdoutW, BufferDir: b.TempDir(),
			})
			_ = stdoutW.Close()
			done <- err
		}()
		roundTrips(b, stdinW, bufio.NewReader(stdoutR))
		b.StopTimer()
		_ = stdinW.Close()
		_, _ = io.Copy(io.Discard, stdoutR)
		require.NoError(b, <-done)
	})
}

// TestProxyDrainTimeoutKeepsFrames lets NATS go away in the middle of a
// session and stay away after the agent exits: the drain times out, the
// frames not stored stay on disk, and the next proxy run with the same
// buffer directory publishes them once NATS is back, each frame once, in
// order, with its ordinal.
func TestProxyDrainTimeoutKeepsFrames(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	f := connectFixture(t, srv)
	bufDir := t.TempDir()
	run := startProxy(t, f, ingest.ProxyOptions{Session: ingest.Session{Key: "proxy-left", Dialect: "acp"}, BufferDir: bufDir, DrainTimeout: 300 * time.Millisecond})
	tr := &transcript{}
	driveTurns(t, run.stdinW, run.stdoutR, 0, 2, tr, nil)
	// Some frames are stored before NATS goes: the resumed run must not
	// store them again.
	stored := len(proxyLines(tr.sent.String())) + len(proxyLines(tr.received.String()))
	require.Eventually(t, func() bool { return len(f.raw(t)) >= stored }, 10*time.Second, 10*time.Millisecond)
	srv.Shutdown()
	srv.WaitForShutdown()
	driveTurns(t, run.stdinW, run.stdoutR, 2, 5, tr, nil)

	// A buffer whose proxy runs is not taken from it.
	sum, err := ingest.ResumeSpools(t.Context(), f.layout, bufDir, f.in.Log)
	require.NoError(t, err)
	require.Equal(t, ingest.ResumeSummary{Busy: 1}, sum)

	finish(t, run.stdinW, run.stdoutR, tr)
	run.wait(t)
	require.NoError(t, run.err)
	require.Equal(t, 0, run.res.ExitCode)
	require.Zero(t, run.res.Dropped)
	require.Positive(t, run.res.Left)
	require.Equal(t, bufDir, filepath.Dir(run.res.LeftIn))
	require.DirExists(t, run.res.LeftIn)
	logs := f.logs.String()
	require.Contains(t, logs, "they are kept on disk, and published by the next `agentwire ingest proxy` with the same --buffer-dir")
	require.Contains(t, logs, "dir="+run.res.LeftIn)

	natstest.Restart(t, srv)
	next := startProxy(t, f, ingest.ProxyOptions{Session: ingest.Session{Key: "proxy-next", Dialect: "acp"}, BufferDir: bufDir, DrainTimeout: 30 * time.Second})
	tr2 := &transcript{}
	driveTurns(t, next.stdinW, next.stdoutR, 0, 1, tr2, nil)
	finish(t, next.stdinW, next.stdoutR, tr2)
	next.wait(t)
	require.NoError(t, next.err)
	require.Zero(t, next.res.Left)
	require.LessOrEqual(t, run.res.Left, next.res.Resumed, "frames stored but not yet known stored may be sent again")

	checkPublished(t, f, "proxy-left", tr)
	checkPublished(t, f, "proxy-next", tr2)
	entries, err := os.ReadDir(bufDir)
	require.NoError(t, err)
	require.Empty(t, entries, "every buffer is stored and deleted")
}
