package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/ingest"
	"github.com/agentwire/agentwire/internal/natstest"
)

func TestIngestTokenHashCommand(t *testing.T) {
	t.Parallel()
	r := runIngest(t, "", "token-hash", "s3cret")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, ingest.HashToken("s3cret")+"\n", r.stdout)
	r = runIngest(t, "s3cret\n", "token-hash")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, ingest.HashToken("s3cret")+"\n", r.stdout)
}

func TestIngestServeUsageErrors(t *testing.T) {
	t.Parallel()
	r := runIngest(t, "", "serve", "--tokens", "x")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, "--http")
	r = runIngest(t, "", "serve", "--http", ":0", "--tokens", "/nonexistent/tokens")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, "tokens")
	r = runIngest(t, "", "file", "--follow", "--poll", "0", ".")
	require.Equal(t, ExitUsage, r.code)
}

// lockedBuffer is a command's stderr, read while the command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// servingLine is how `ingest serve` tells the address it took, which is
// how a user of --http 127.0.0.1:0 learns it too.
var servingLine = regexp.MustCompile(`msg="serving POST /v1/frames" addr=(\S+)`)

// serveRun is `agentwire ingest serve` running in the background.
type serveRun struct {
	base   string // http://ADDR
	addr   string
	cancel context.CancelFunc
	stderr *lockedBuffer
	done   chan int
}

// startServe runs `agentwire ingest serve --http 127.0.0.1:0` as a user
// does, and waits until it says where it listens.
func startServe(t *testing.T, natsURL string, args ...string) *serveRun {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	s := &serveRun{cancel: cancel, stderr: &lockedBuffer{}, done: make(chan int, 1)}
	argv := append([]string{"ingest", "--nats-url", natsURL, "serve", "--http", "127.0.0.1:0"}, args...)
	go func() {
		s.done <- Exec(ctx, "agentwire", Agentwire, argv, io.Discard, s.stderr)
	}()
	t.Cleanup(func() {
		cancel()
		<-s.done
	})
	require.Eventually(t, func() bool {
		m := servingLine.FindStringSubmatch(s.stderr.String())
		if m == nil {
			return false
		}
		s.addr = m[1]
		return true
	}, 20*time.Second, 5*time.Millisecond, "ingest serve did not say where it listens: %s", s.stderr)
	s.base = "http://" + s.addr
	return s
}

// tokensFile writes a tokens file of two tenants: acme and globex, whose
// tokens are their names with "-secret".
func tokensFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens.txt")
	body := "# tenant sha256\nacme " + ingest.HashToken("acme-secret") + "\nglobex " + ingest.HashToken("globex-secret") + "\n"
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	return path
}

// postFrames POSTs body over a fresh TCP connection and returns the
// status and answer.
func postFrames(t *testing.T, base, token, session, ordinal string, body io.Reader) (int, ingest.FramesResponse) {
	t.Helper()
	code, out, err := post(t.Context(), base, token, session, ordinal, body, false)
	require.NoError(t, err)
	return code, out
}

// post is postFrames for goroutines other than the test's. With
// expectContinue the body is sent only once the handler reads it: a write
// to a piped body then returns once the handler has the request.
func post(ctx context.Context, base, token, session, ordinal string, body io.Reader, expectContinue bool) (int, ingest.FramesResponse, error) {
	var out ingest.FramesResponse
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/frames", body)
	if err != nil {
		return 0, out, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set(ingest.HTTPHeaderDialect, "codex-exec")
	req.Header.Set(ingest.HTTPHeaderSession, session)
	if ordinal != "" {
		req.Header.Set(ingest.HTTPHeaderOrdinal, ordinal)
	}
	transport := &http.Transport{DisableKeepAlives: true}
	if expectContinue {
		req.Header.Set("Expect", "100-continue")
		transport.ExpectContinueTimeout = 30 * time.Second
	}
	// No keep-alive: every request crosses a connection of its own, as
	// from separate clients.
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	res, err := client.Do(req)
	if err != nil {
		return 0, out, err
	}
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, out, err
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return 0, out, fmt.Errorf("answer %q: %w", b, err)
	}
	return res.StatusCode, out, nil
}

func ndjson(from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, `{"type":"item.completed","n":%d}`+"\n", i)
	}
	return b.String()
}

// rawMessages returns every message in RAW, in stream order.
func rawMessages(t *testing.T, url string) []jetstream.Msg {
	t.Helper()
	nc, err := nats.Connect(url)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	s, err := js.Stream(t.Context(), bus.RawStream)
	require.NoError(t, err)
	info, err := s.Info(t.Context())
	require.NoError(t, err)
	if info.State.Msgs == 0 {
		return nil
	}
	cons, err := s.OrderedConsumer(t.Context(), jetstream.OrderedConsumerConfig{})
	require.NoError(t, err)
	var out []jetstream.Msg
	for uint64(len(out)) < info.State.Msgs {
		batch, err := cons.Fetch(int(min(info.State.Msgs-uint64(len(out)), 5000)), jetstream.FetchMaxWait(5*time.Second))
		require.NoError(t, err)
		n := 0
		for m := range batch.Messages() {
			out = append(out, m)
			n++
		}
		require.NoError(t, batch.Error())
		require.Positive(t, n, "RAW stopped delivering after %d of %d", len(out), info.State.Msgs)
	}
	return out
}

// TestIngestServeOverTCP runs `agentwire ingest serve` as a user does,
// against an embedded NATS, and talks to it with net/http over TCP.
func TestIngestServeOverTCP(t *testing.T) {
	t.Parallel()
	url := natstest.Server(t).ClientURL()
	s := startServe(t, url, "--tokens", tokensFile(t), "--max-body", "4096")

	// Good bodies, one per tenant, under the same session key: each lands
	// with its own tenant.
	code, res := postFrames(t, s.base, "acme-secret", "run-1", "1", strings.NewReader(ndjson(1, 3)))
	require.Equal(t, http.StatusAccepted, code, res.Error)
	require.Equal(t, ingest.FramesResponse{Accepted: 3, FirstOrdinal: 1, LastOrdinal: 3}, res)
	code, res = postFrames(t, s.base, "globex-secret", "run-1", "", strings.NewReader(ndjson(1, 2)))
	require.Equal(t, http.StatusAccepted, code, res.Error)
	require.Equal(t, ingest.FramesResponse{Accepted: 2, FirstOrdinal: 1, LastOrdinal: 2}, res)

	// A retry of the first request stores nothing new.
	code, res = postFrames(t, s.base, "acme-secret", "run-1", "1", strings.NewReader(ndjson(1, 3)))
	require.Equal(t, http.StatusAccepted, code, res.Error)
	require.Equal(t, 3, res.Accepted)

	// 401: no token, an unknown one. Nothing is stored.
	for _, token := range []string{"", "nope"} {
		code, res = postFrames(t, s.base, token, "run-2", "1", strings.NewReader(ndjson(1, 1)))
		require.Equal(t, http.StatusUnauthorized, code, token)
		require.Contains(t, res.Error, "bearer token")
	}

	// 413: over --max-body, with a Content-Length and chunked (the
	// limit is found while reading). Nothing is stored.
	big := ndjson(1, 200)
	require.Greater(t, len(big), 4096)
	code, res = postFrames(t, s.base, "acme-secret", "run-3", "1", strings.NewReader(big))
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	require.Contains(t, res.Error, "4096")
	code, _ = postFrames(t, s.base, "acme-secret", "run-3", "1", io.MultiReader(strings.NewReader(big)))
	require.Equal(t, http.StatusRequestEntityTooLarge, code)

	msgs := rawMessages(t, url)
	require.Len(t, msgs, 5, "3 acme frames once, 2 globex frames, nothing of the refused requests")
	got := map[string][]string{}
	for _, m := range msgs {
		h := m.Headers()
		tenant := h.Get(bus.HeaderTenant)
		require.Equal(t, bus.RawSubject(tenant, "run-1", bus.DefaultPartitions), m.Subject())
		require.Equal(t, "run-1", h.Get(bus.HeaderSessionKey))
		require.Equal(t, "codex-exec", h.Get(bus.HeaderDialect))
		ordinal, err := strconv.ParseUint(h.Get(bus.HeaderOrdinal), 10, 64)
		require.NoError(t, err)
		require.Equal(t, bus.RawMsgID(tenant, "run-1", ordinal), h.Get(bus.HeaderMsgID))
		got[tenant] = append(got[tenant], string(m.Data()))
	}
	require.Equal(t, map[string][]string{
		"acme":   strings.Split(strings.TrimSuffix(ndjson(1, 3), "\n"), "\n"),
		"globex": strings.Split(strings.TrimSuffix(ndjson(1, 2), "\n"), "\n"),
	}, got)
}

// TestIngestServeGracefulShutdown cancels the command's context while a
// request is half sent: the listener closes at once, the request still
// completes and its frames are stored, and the command exits 0.
func TestIngestServeGracefulShutdown(t *testing.T) {
	t.Parallel()
	url := natstest.Server(t).ClientURL()
	s := startServe(t, url, "--tokens", tokensFile(t))

	body, w := io.Pipe()
	type answer struct {
		code int
		res  ingest.FramesResponse
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		code, res, err := post(t.Context(), s.base, "acme-secret", "inflight", "1", body, true)
		answered <- answer{code, res, err}
	}()
	// The write returns once the handler reads the body (Expect:
	// 100-continue), so the shutdown finds the request in its handler;
	// one only accepted by the kernel would be reset with the listener.
	_, err := io.WriteString(w, ndjson(1, 2))
	require.NoError(t, err)

	s.cancel()
	require.Eventually(t, func() bool {
		c, err := (&net.Dialer{Timeout: time.Second}).DialContext(t.Context(), "tcp", s.addr)
		if err != nil {
			return true
		}
		_ = c.Close()
		return false
	}, 10*time.Second, 10*time.Millisecond, "the listener is still open after the context ended")

	_, err = io.WriteString(w, ndjson(3, 2))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	var a answer
	select {
	case a = <-answered:
	case <-time.After(20 * time.Second):
		t.Fatal("the request in flight got no answer")
	}
	require.NoError(t, a.err, "the request in flight was cut off")
	require.Equal(t, http.StatusAccepted, a.code, a.res.Error)
	require.Equal(t, 4, a.res.Accepted)

	select {
	case code := <-s.done:
		require.Equal(t, ExitOK, code, s.stderr.String())
		s.done <- code // for the cleanup
	case <-time.After(20 * time.Second):
		t.Fatal("ingest serve did not exit after its context ended")
	}
	require.Contains(t, s.stderr.String(), "stopped serving")
	require.Len(t, rawMessages(t, url), 4)
}

// TestIngestServeAddressTaken: a taken --http address is one line that
// names the flag that fixes it, before NATS is even asked.
func TestIngestServeAddressTaken(t *testing.T) {
	t.Parallel()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = ln.Close() }()
	r := run(t, "ingest", "--nats-url", "nats://127.0.0.1:1", "serve", "--http", ln.Addr().String(), "--tokens", tokensFile(t))
	require.Equal(t, ExitUsage, r.code, r.stderr)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
	require.Contains(t, r.stderr, ln.Addr().String()+" is taken")
	require.Contains(t, r.stderr, "pass --http 127.0.0.1:<free port>")
	_, err = ingest.Listen(t.Context(), ln.Addr().String())
	require.ErrorIs(t, err, ingest.ErrAddrInUse)
}
