package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/pkg/adapters"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// Request headers of POST /v1/frames.
const (
	// HTTPHeaderDialect names the dialect of the frames (required).
	HTTPHeaderDialect = "Agentwire-Dialect"
	// HTTPHeaderSession is the session key (required, at most
	// MaxSessionKeyLen bytes); ordinals count per tenant and key.
	HTTPHeaderSession = "Agentwire-Session"
	// HTTPHeaderOrdinal is the ordinal of the body's first frame (optional,
	// from 1); the next frames take the next ones.
	HTTPHeaderOrdinal = "Agentwire-Ordinal"
	// HTTPHeaderProvider attributes the frames to a provider (optional).
	HTTPHeaderProvider = "Agentwire-Provider"
	// HTTPHeaderBacklog, "true", says the frames were written earlier (a
	// log uploaded after the fact), not just now (optional): RAW's header
	// of the same name.
	HTTPHeaderBacklog = bus.HeaderBacklog
	// HTTPHeaderWrittenBy is an RFC 3339 time by which the frames had
	// been written, such as the uploaded log's modification time
	// (optional; it makes them backlog): RAW's header of the same name.
	HTTPHeaderWrittenBy = bus.HeaderWrittenBy
)

// MaxSessionKeyLen bounds the session key of an HTTP request.
const MaxSessionKeyLen = 1024

// DefaultMaxBody is the default body-size limit of POST /v1/frames.
const DefaultMaxBody = 16 << 20

// HTTPOptions configure the HTTP ingest endpoint.
type HTTPOptions struct {
	// Layout is the JetStream layout to publish to.
	Layout *bus.Layout
	// Tokens maps bearer tokens to tenants.
	Tokens *Tokens
	// MaxBody is the largest body accepted, in bytes (DefaultMaxBody when 0).
	MaxBody int64
	// FlushTimeout bounds how long a request waits for JetStream to store
	// its frames before answering 503 (30 seconds when 0).
	FlushTimeout time.Duration
	// Log receives warnings.
	Log *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// HTTPServer is the HTTP ingest endpoint:
//
//	POST /v1/frames   an NDJSON body, one frame a line, of one session
//	GET  /healthz     200 when connected to NATS, else 503
//
// POST /v1/frames needs "Authorization: Bearer TOKEN" (the token's tenant
// owns the frames), Agentwire-Dialect and Agentwire-Session; optional are
// Agentwire-Ordinal (the ordinal of the first frame) and
// Agentwire-Provider. Blank lines are not frames and take no ordinal.
// Answers, in JSON:
//
//	202 {"accepted":N,"first_ordinal":A,"last_ordinal":B}  stored in RAW
//	400 {"error":…,"accepted":G,"published":N,"bad":[{"line":L,"ordinal":O,"error":…}]}
//	    some lines are not JSON: the good ones are stored all the same, and
//	    so are the bad ones (as raw frames that normalize into error
//	    events); "line" counts the body's lines from 1
//	400 {"error":…}  a missing or bad header: nothing stored
//	401 no valid bearer token; 413 body over the limit: nothing stored
//	503 JetStream did not store the frames in time: retry
//
// Retries are idempotent when the client numbers its frames: with
// Agentwire-Ordinal the message ids are the session's and the ordinals',
// so a retried request stores nothing new (within RAW's duplicate
// window). Without it the server numbers the frames after the last one
// RAW holds for the session, and a retry stores them again.
type HTTPServer struct {
	opts HTTPOptions

	mu      sync.Mutex
	tenants map[string]*httpTenant
}

// httpTenant serializes the requests of a tenant: Publisher.Flush waits
// for everything pending, so one request at a time knows its frames are
// the ones stored.
type httpTenant struct {
	mu   sync.Mutex
	pub  *Publisher
	seen map[string]bool
}

// NewHTTPServer returns the HTTP ingest endpoint.
func NewHTTPServer(opts HTTPOptions) *HTTPServer {
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.FlushTimeout <= 0 {
		opts.FlushTimeout = 30 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &HTTPServer{opts: opts, tenants: map[string]*httpTenant{}}
}

// ServeHTTP routes a request.
func (s *HTTPServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/healthz":
		if nc := s.opts.Layout.JS.Conn(); nc == nil || !nc.IsConnected() {
			http.Error(w, "NATS is not connected", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n")) // the client may be gone
	case "/v1/frames":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSON(w, http.StatusMethodNotAllowed, FramesResponse{Error: "POST NDJSON frames here"})
			return
		}
		s.frames(w, r)
	default:
		writeJSON(w, http.StatusNotFound, FramesResponse{Error: "not found; POST /v1/frames or GET /healthz"})
	}
}

// BadLine is a line of a request body that is not a JSON value.
type BadLine struct {
	Line    int    `json:"line"`
	Ordinal uint64 `json:"ordinal"`
	Error   string `json:"error"`
}

// FramesResponse is the body of the answer to POST /v1/frames.
type FramesResponse struct {
	Error        string    `json:"error,omitempty"`
	Accepted     int       `json:"accepted"`
	Published    int       `json:"published,omitempty"`
	FirstOrdinal uint64    `json:"first_ordinal,omitempty"`
	LastOrdinal  uint64    `json:"last_ordinal,omitempty"`
	Bad          []BadLine `json:"bad,omitempty"`
}

func (s *HTTPServer) frames(w http.ResponseWriter, r *http.Request) {
	tenant, ok := s.opts.Tokens.Tenant(bearer(r))
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="agentwire"`)
		writeJSON(w, http.StatusUnauthorized, FramesResponse{Error: "a valid bearer token is required"})
		return
	}
	req, err := parseFramesHeaders(r.Header)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, FramesResponse{Error: err.Error()})
		return
	}
	body, err := readBody(w, r, s.opts.MaxBody)
	if err != nil {
		if tooBig, ok := errors.AsType[*http.MaxBytesError](err); ok {
			writeJSON(w, http.StatusRequestEntityTooLarge, FramesResponse{Error: fmt.Sprintf("the body is over the limit of %d bytes; split it", tooBig.Limit)})
			return
		}
		writeJSON(w, http.StatusBadRequest, FramesResponse{Error: "read the body: " + err.Error()})
		return
	}
	t, err := s.tenant(tenant)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, FramesResponse{Error: err.Error()})
		return
	}
	resp, err := s.publish(r.Context(), t, req, body)
	if err != nil {
		s.opts.Log.Warn("HTTP ingest: frames not stored", "tenant", tenant, "session", req.session, "err", err)
		resp.Error = "the frames were not stored; retry (with the same Agentwire-Ordinal to store each frame once): " + err.Error()
		writeJSON(w, http.StatusServiceUnavailable, resp)
		return
	}
	if len(resp.Bad) > 0 {
		lines := make([]string, len(resp.Bad))
		for i, b := range resp.Bad {
			lines[i] = strconv.Itoa(b.Line)
		}
		resp.Error = fmt.Sprintf("%d lines are not JSON (lines %s); they were stored as raw frames all the same", len(resp.Bad), strings.Join(lines, ", "))
		writeJSON(w, http.StatusBadRequest, resp)
		return
	}
	writeJSON(w, http.StatusAccepted, resp)
}

type framesRequest struct {
	dialect, session string
	provider         canonical.Provider
	ordinal          uint64
	backlog          bool
	writtenBy        time.Time
}

func parseFramesHeaders(h http.Header) (framesRequest, error) {
	req := framesRequest{dialect: h.Get(HTTPHeaderDialect), session: h.Get(HTTPHeaderSession)}
	switch {
	case req.dialect == "":
		return req, fmt.Errorf("the %s header is required (one of %s)", HTTPHeaderDialect, strings.Join(adapters.KnownDialects(), ", "))
	case !adapters.IsKnownDialect(req.dialect):
		return req, fmt.Errorf("%s: unknown dialect %q (known: %s)", HTTPHeaderDialect, req.dialect, strings.Join(adapters.KnownDialects(), ", "))
	case req.session == "":
		return req, fmt.Errorf("the %s header is required: the session key", HTTPHeaderSession)
	case len(req.session) > MaxSessionKeyLen || !utf8.ValidString(req.session):
		return req, fmt.Errorf("%s: a session key is valid UTF-8 of at most %d bytes", HTTPHeaderSession, MaxSessionKeyLen)
	}
	if v := h.Get(HTTPHeaderOrdinal); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 {
			return req, fmt.Errorf("%s: want an integer from 1, got %q", HTTPHeaderOrdinal, v)
		}
		req.ordinal = n
	}
	switch v := h.Get(HTTPHeaderBacklog); v {
	case "", "false":
	case "true":
		req.backlog = true
	default:
		return req, fmt.Errorf("%s: want true or false, got %q", HTTPHeaderBacklog, v)
	}
	if v := h.Get(HTTPHeaderWrittenBy); v != "" {
		t, err := ParseWrittenBy(v)
		switch {
		case err != nil:
			return req, fmt.Errorf("%s: %w", HTTPHeaderWrittenBy, err)
		case h.Get(HTTPHeaderBacklog) == "false":
			return req, fmt.Errorf("%s says the frames were written earlier, %s: false that they were not; drop one", HTTPHeaderWrittenBy, HTTPHeaderBacklog)
		}
		req.backlog, req.writtenBy = true, t
	}
	if v := h.Get(HTTPHeaderProvider); v != "" {
		p, err := canonical.ParseProvider(v)
		if err != nil {
			return req, fmt.Errorf("%s: %w", HTTPHeaderProvider, err)
		}
		req.provider = p
	}
	return req, nil
}

func bearer(r *http.Request) string {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	return buf.Bytes(), err
}

func (s *HTTPServer) tenant(name string) (*httpTenant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tenants[name]; ok {
		return t, nil
	}
	pub, err := NewPublisher(s.opts.Layout, name, s.opts.Log)
	if err != nil {
		return nil, err
	}
	t := &httpTenant{pub: pub, seen: map[string]bool{}}
	s.tenants[name] = t
	return t, nil
}

// publish publishes the lines of body and waits until they are stored.
func (s *HTTPServer) publish(ctx context.Context, t *httpTenant, req framesRequest, body []byte) (FramesResponse, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var resp FramesResponse
	if req.ordinal == 0 && !t.seen[req.session] {
		// Continue after what RAW holds, so that a restarted server does
		// not number new frames like old ones (and see them dropped).
		if _, err := t.pub.LastOrdinal(ctx, req.session); err != nil {
			return resp, err
		}
	}
	t.seen[req.session] = true
	now := s.opts.Now()
	next := req.ordinal
	lineNo := 0
	for len(body) > 0 {
		lineNo++
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		f := Frame{SessionKey: req.session, Dialect: req.dialect, Provider: req.provider, Bytes: line, ReceivedAt: now, Backlog: req.backlog, WrittenBy: req.writtenBy}
		var ordinal uint64
		if next > 0 {
			ordinal = next
			next++
			if err := t.pub.PublishAt(ctx, f, ordinal); err != nil {
				return resp, err
			}
		} else {
			var err error
			if ordinal, err = t.pub.Publish(ctx, f); err != nil {
				return resp, err
			}
		}
		if resp.FirstOrdinal == 0 {
			resp.FirstOrdinal = ordinal
		}
		resp.LastOrdinal = ordinal
		resp.Published++
		if msg := badJSON(line); msg != "" {
			resp.Bad = append(resp.Bad, BadLine{Line: lineNo, Ordinal: ordinal, Error: msg})
		} else {
			resp.Accepted++
		}
	}
	fctx, cancel := context.WithTimeout(ctx, s.opts.FlushTimeout)
	defer cancel()
	if err := t.pub.Flush(fctx); err != nil {
		return resp, err
	}
	if len(resp.Bad) == 0 {
		resp.Published = 0 // the same as accepted
	}
	return resp, nil
}

// badJSON says why line is not one JSON value, or "" when it is.
func badJSON(line []byte) string {
	if !utf8.Valid(line) {
		return "not valid UTF-8"
	}
	if json.Valid(line) {
		return ""
	}
	var v any
	if err := json.Unmarshal(line, &v); err != nil {
		return "not JSON: " + err.Error()
	}
	return "not JSON"
}

func writeJSON(w http.ResponseWriter, code int, v FramesResponse) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) //nolint:errchkjson // the client may be gone
}

// ErrAddrInUse is wrapped by Listen when the address is taken.
var ErrAddrInUse = errors.New("address in use")

// Listen listens on addr (host:port; port 0 picks a free one, which the
// listener's Addr tells) for Serve.
func Listen(ctx context.Context, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		// Said apart from other failures so that the command can name the
		// flag that picks another address.
		return nil, fmt.Errorf("%s is taken (another agentwire?): %w", addr, ErrAddrInUse)
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Serve serves h on ln until ctx ends, then shuts down: ln is closed at
// once, and requests in flight get a few seconds to finish (their
// context is not canceled with ctx, so frames being stored are stored).
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve HTTP on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shut down the HTTP server: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve HTTP on %s: %w", ln.Addr(), err)
	}
	return nil
}

// ListenAndServe is Listen, then Serve until ctx ends. ready, when not
// nil, gets the address listened on before the first request is served.
func ListenAndServe(ctx context.Context, addr string, h http.Handler, ready func(net.Addr)) error {
	ln, err := Listen(ctx, addr)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(ln.Addr())
	}
	return Serve(ctx, ln, h)
}
