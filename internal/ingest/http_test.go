package ingest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/ingest"
)

type httpFixture struct {
	*fixture
	url string
}

func newHTTPFixture(t *testing.T, maxBody int64) *httpFixture {
	t.Helper()
	f := newFixture(t)
	tokens, err := ingest.ParseTokens(strings.NewReader("# tenant hash\nacme " + ingest.HashToken("acme-secret") +
		"\n\nglobex sha256:" + ingest.HashToken("globex-secret") + "\n"))
	require.NoError(t, err)
	require.Equal(t, 2, tokens.Len())
	srv := httptest.NewServer(ingest.NewHTTPServer(ingest.HTTPOptions{Layout: f.layout, Tokens: tokens, MaxBody: maxBody}))
	t.Cleanup(srv.Close)
	return &httpFixture{fixture: f, url: srv.URL}
}

// post sends body and returns the status and the decoded answer.
// post posts body; more are further request headers, name then value.
func (h *httpFixture) post(t *testing.T, token, session, ordinal, body string, more ...string) (int, ingest.FramesResponse) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, h.url+"/v1/frames", strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set(ingest.HTTPHeaderDialect, "codex-exec")
	req.Header.Set(ingest.HTTPHeaderSession, session)
	if ordinal != "" {
		req.Header.Set(ingest.HTTPHeaderOrdinal, ordinal)
	}
	for i := 0; i+1 < len(more); i += 2 {
		req.Header.Set(more[i], more[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { require.NoError(t, res.Body.Close()) }()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var out ingest.FramesResponse
	require.NoError(t, json.Unmarshal(b, &out), string(b))
	return res.StatusCode, out
}

func lines(n, from int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(`{"type":"item","n":` + strconv.Itoa(from+i) + "}\n")
	}
	return b.String()
}

func TestHTTPGood(t *testing.T) {
	t.Parallel()
	h := newHTTPFixture(t, 0)
	code, res := h.post(t, "acme-secret", "s1", "", lines(3, 1)+"\n  \n"+lines(2, 4))
	require.Equal(t, http.StatusAccepted, code, res.Error)
	require.Equal(t, ingest.FramesResponse{Accepted: 5, FirstOrdinal: 1, LastOrdinal: 5}, res)
	// Without an ordinal, the next request continues the session.
	code, res = h.post(t, "acme-secret", "s1", "", lines(1, 6)[:len(lines(1, 6))-1]) // no final newline
	require.Equal(t, http.StatusAccepted, code, res.Error)
	require.Equal(t, uint64(6), res.FirstOrdinal)

	var want [][]byte
	for l := range strings.SplitSeq(strings.TrimSpace(lines(6, 1)), "\n") {
		want = append(want, []byte(l))
	}
	h.checkSession(t, bySession(h.raw(t))["s1"], "s1", "codex-exec", want, live)

	// A log uploaded after the fact says so: its frames are backlog, and
	// when the client knows it, when the log had been written by.
	code, res = h.post(t, "acme-secret", "old", "", lines(2, 1), ingest.HTTPHeaderBacklog, "true")
	require.Equal(t, http.StatusAccepted, code, res.Error)
	h.checkSession(t, bySession(h.raw(t))["old"], "old", "codex-exec", [][]byte{[]byte(`{"type":"item","n":1}`), []byte(`{"type":"item","n":2}`)}, frameOrigin{backlog: true})
	code, res = h.post(t, "acme-secret", "older", "", lines(1, 1), ingest.HTTPHeaderWrittenBy, "2026-05-01T12:00:00+02:00")
	require.Equal(t, http.StatusAccepted, code, res.Error)
	h.checkSession(t, bySession(h.raw(t))["older"], "older", "codex-exec", [][]byte{[]byte(`{"type":"item","n":1}`)},
		frameOrigin{backlog: true, writtenBy: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)})

	res2, err := http.Get(h.url + "/healthz") //nolint:noctx // a test
	require.NoError(t, err)
	require.NoError(t, res2.Body.Close())
	require.Equal(t, http.StatusOK, res2.StatusCode)
}

func TestHTTPContinuesAfterRestart(t *testing.T) {
	t.Parallel()
	h := newHTTPFixture(t, 0)
	code, _ := h.post(t, "acme-secret", "s", "", lines(2, 1))
	require.Equal(t, http.StatusAccepted, code)
	// A new server (a restart) numbers after what RAW holds.
	tokens, err := ingest.ParseTokens(strings.NewReader("acme " + ingest.HashToken("t2")))
	require.NoError(t, err)
	srv := httptest.NewServer(ingest.NewHTTPServer(ingest.HTTPOptions{Layout: h.layout, Tokens: tokens}))
	t.Cleanup(srv.Close)
	h2 := &httpFixture{fixture: h.fixture, url: srv.URL}
	code, res := h2.post(t, "t2", "s", "", lines(1, 3))
	require.Equal(t, http.StatusAccepted, code)
	require.Equal(t, uint64(3), res.FirstOrdinal)
	require.Len(t, h.raw(t), 3)
}

func TestHTTPBadLines(t *testing.T) {
	t.Parallel()
	h := newHTTPFixture(t, 0)
	body := lines(1, 1) + "{broken\n" + lines(1, 2) + "\xff\xfe\n" + lines(1, 3)
	code, res := h.post(t, "acme-secret", "mixed", "10", body)
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, 3, res.Accepted)
	require.Equal(t, 5, res.Published)
	require.Len(t, res.Bad, 2)
	require.Equal(t, 2, res.Bad[0].Line)
	require.Equal(t, uint64(11), res.Bad[0].Ordinal)
	require.Contains(t, res.Bad[0].Error, "not JSON")
	require.Equal(t, 4, res.Bad[1].Line)
	require.Equal(t, "not valid UTF-8", res.Bad[1].Error)
	require.Contains(t, res.Error, "lines 2, 4")

	msgs := bySession(h.raw(t))["mixed"]
	require.Len(t, msgs, 5, "bad lines are published too")
	for i, m := range msgs {
		require.Equal(t, strconv.Itoa(10+i), m.header.Get(bus.HeaderOrdinal))
	}
	require.Equal(t, "{broken", string(msgs[1].data))
	require.Equal(t, "\xff\xfe", string(msgs[3].data))
}

func TestHTTPUnauthenticated(t *testing.T) {
	t.Parallel()
	h := newHTTPFixture(t, 0)
	for _, token := range []string{"", "wrong", ingest.HashToken("acme-secret")} {
		code, res := h.post(t, token, "s", "", lines(2, 1))
		require.Equal(t, http.StatusUnauthorized, code, token)
		require.NotEmpty(t, res.Error)
	}
	require.Empty(t, h.raw(t))
}

func TestHTTPBadHeaders(t *testing.T) {
	t.Parallel()
	h := newHTTPFixture(t, 0)
	code, res := h.post(t, "acme-secret", "", "", lines(1, 1))
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, res.Error, ingest.HTTPHeaderSession)
	code, res = h.post(t, "acme-secret", "s", "0", lines(1, 1))
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, res.Error, ingest.HTTPHeaderOrdinal)
	code, res = h.post(t, "acme-secret", "s", "", lines(1, 1), ingest.HTTPHeaderBacklog, "yes")
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, res.Error, ingest.HTTPHeaderBacklog)
	code, res = h.post(t, "acme-secret", "s", "", lines(1, 1), ingest.HTTPHeaderWrittenBy, "yesterday")
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, res.Error, ingest.HTTPHeaderWrittenBy+`: want an RFC 3339 time`)
	code, res = h.post(t, "acme-secret", "s", "", lines(1, 1), ingest.HTTPHeaderWrittenBy, "2026-05-01T12:00:00Z", ingest.HTTPHeaderBacklog, "false")
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, res.Error, "drop one")
	require.Empty(t, h.raw(t))
}

func TestHTTPOversize(t *testing.T) {
	t.Parallel()
	h := newHTTPFixture(t, 1024)
	code, res := h.post(t, "acme-secret", "s", "1", lines(100, 1))
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	require.Contains(t, res.Error, "1024")
	code, _ = h.post(t, "acme-secret", "s", "1", lines(10, 1))
	require.Equal(t, http.StatusAccepted, code)
	require.Len(t, h.raw(t), 10, "nothing of the oversize body was stored")
}

func TestHTTPRetriesAreIdempotent(t *testing.T) {
	t.Parallel()
	h := newHTTPFixture(t, 0)
	for range 3 {
		code, res := h.post(t, "acme-secret", "r", "1", lines(4, 1))
		require.Equal(t, http.StatusAccepted, code)
		require.Equal(t, 4, res.Accepted)
	}
	// A retry of a partly stored batch, overlapping the next one.
	code, _ := h.post(t, "acme-secret", "r", "3", lines(4, 3))
	require.Equal(t, http.StatusAccepted, code)
	var want [][]byte
	for l := range strings.SplitSeq(strings.TrimSpace(lines(6, 1)), "\n") {
		want = append(want, []byte(l))
	}
	h.checkSession(t, h.raw(t), "r", "codex-exec", want, live)
}

func TestHTTPTwoTenants(t *testing.T) {
	t.Parallel()
	h := newHTTPFixture(t, 0)
	code, _ := h.post(t, "acme-secret", "same", "1", lines(2, 1))
	require.Equal(t, http.StatusAccepted, code)
	code, _ = h.post(t, "globex-secret", "same", "1", lines(3, 1))
	require.Equal(t, http.StatusAccepted, code)
	count := map[string]uint64{}
	for _, m := range h.raw(t) {
		tn := m.header.Get(bus.HeaderTenant)
		count[tn]++
		require.Equal(t, bus.RawSubject(tn, "same", h.layout.Config.Partitions), m.subject)
		require.Equal(t, bus.RawMsgID(tn, "same", count[tn]), m.header.Get(bus.HeaderMsgID))
	}
	require.Equal(t, map[string]uint64{"acme": 2, "globex": 3}, count)
}

func TestParseTokensRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"acme", "acme deadbeef", "Acme " + ingest.HashToken("x"), "a " + ingest.HashToken("x") + "\nb " + ingest.HashToken("x")} {
		_, err := ingest.ParseTokens(strings.NewReader(in))
		require.Error(t, err, in)
	}
}
