// Package anthropic is a fake Anthropic Messages API on loopback. It answers
// the main conversation requests of Claude Code (and of anything built on
// it, like claude-code-acp) from a script.Script, streaming them as the
// real API does, and answers the CLI's side requests (titles, quota
// probes, token counts) itself so they never consume the script.
package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwire/agentwire/tools/record/internal/script"
)

// Server is a running fake Messages API.
type Server struct {
	log    io.Writer
	script script.Script
	ln     net.Listener
	srv    *http.Server

	mu     sync.Mutex
	served int
	// given marks the replies of script already given.
	given []bool
	logMu sync.Mutex
	// ids numbers the messages of this server only, so a recording's
	// message and tool ids do not depend on what ran beside it.
	ids atomic.Int64
}

// Start listens on a free loopback port and serves s. Every request is
// logged to log, one line each, so a recording run shows what the CLI asked.
func Start(log io.Writer, s script.Script) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("anthropic: listen on loopback: %w", err)
	}
	srv := &Server{log: log, script: s, ln: ln, given: make([]bool, len(s))}
	srv.srv = &http.Server{Handler: http.HandlerFunc(srv.handle), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			srv.logf("serve: %v", err)
		}
	}()
	return srv, nil
}

// URL is the base URL to put in ANTHROPIC_BASE_URL (no trailing slash, no /v1).
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server; requests in flight are cut off.
func (s *Server) Close() { _ = s.srv.Close() } // nothing useful to do with a close error

// Requests is the number of main requests served so far, the ones that
// consumed (or ran past) the script.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served
}

func (s *Server) logf(format string, args ...any) {
	if s.log == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	_, _ = fmt.Fprintf(s.log, "anthropic: "+format+"\n", args...) // a lost log line is not worth failing for
}

// next takes the reply for the next main request, for model.
func (s *Server) next(model string) (int, script.Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.served
	s.served++
	for i, r := range s.script {
		if !s.given[i] && strings.Contains(model, r.Model) {
			s.given[i] = true
			return n, r
		}
	}
	return n, script.Reply{Text: "done"}
}

// request is the part of a Messages API request body we look at.
type request struct {
	Model     string            `json:"model"`
	MaxTokens int               `json:"max_tokens"`
	Stream    bool              `json:"stream"`
	Tools     []json.RawMessage `json:"tools"`
	System    json.RawMessage   `json:"system"`
	Thinking  json.RawMessage   `json:"thinking"`
	Messages  []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.logf("%s %s: read body: %v", r.Method, r.URL.Path, err)
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	path := r.URL.Path
	switch {
	case r.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		s.logf("POST %s (side: token count)", path)
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 100})
		return
	case r.Method == http.MethodPost && path == "/v1/messages":
	case r.Method == http.MethodHead || (r.Method == http.MethodGet && (path == "/" || path == "")):
		// Connectivity checks: any 200 will do.
		s.logf("%s %s (side: connectivity)", r.Method, path)
		w.WriteHeader(http.StatusOK)
		return
	default:
		s.logf("%s %s: unknown path, answering 404", r.Method, path)
		writeJSON(w, http.StatusNotFound, apiError("not_found_error", "no such endpoint in the fake server: "+path))
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		s.logf("POST %s: decode body: %v", path, err)
		writeJSON(w, http.StatusBadRequest, apiError("invalid_request_error", "bad JSON"))
		return
	}
	if why := sideRequest(&req); why != "" {
		s.logf("POST %s model=%s max_tokens=%d stream=%v tools=%d (side: %s)", path, req.Model, req.MaxTokens, req.Stream, len(req.Tools), why)
		s.reply(w, &req, sideReply(why))
		return
	}
	n, reply := s.next(req.Model)
	s.logf("POST %s model=%s max_tokens=%d stream=%v tools=%d messages=%d thinking=%s (main #%d)", path, req.Model, req.MaxTokens, req.Stream, len(req.Tools), len(req.Messages), orNone(req.Thinking), n+1)
	if reply.Error != nil {
		writeError(w, reply.Error)
		return
	}
	s.reply(w, &req, reply)
}

// sideRequest says why a request is not part of the conversation, or "" for
// a main request. Claude Code's main loop always offers its tools; its side
// requests (session titles, topic detection, quota probes) offer none.
func sideRequest(req *request) string {
	switch {
	case req.MaxTokens == 1:
		return "quota probe"
	case len(req.Tools) == 0:
		sys := strings.ToLower(string(req.System))
		switch {
		case strings.Contains(sys, "title"):
			return "title"
		case strings.Contains(sys, "topic"):
			return "topic"
		default:
			return "no tools"
		}
	}
	return ""
}

// sideReply answers a side request. Titles and topics are asked for as
// JSON; a JSON object works for both and reads as harmless text elsewhere.
func sideReply(why string) script.Reply {
	switch why {
	case "title":
		return script.Reply{Text: `{"title": "Recorded session"}`, InputTokens: 50, OutputTokens: 8}
	case "topic":
		return script.Reply{Text: `{"isNewTopic": false, "title": null}`, InputTokens: 50, OutputTokens: 8}
	default:
		return script.Reply{Text: "ok", InputTokens: 10, OutputTokens: 1}
	}
}

func orNone(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "none"
	}
	return string(raw)
}

func apiError(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_fake")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client hung up; nothing to do
}

func writeError(w http.ResponseWriter, e *script.HTTPError) {
	typ := "api_error"
	switch e.Status {
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case 529:
		typ = "overloaded_error"
	case http.StatusBadRequest:
		typ = "invalid_request_error"
	case http.StatusUnauthorized:
		typ = "authentication_error"
	}
	if e.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfterSeconds))
	}
	// The SDK retries on this header's say-so as well as on the status.
	w.Header().Set("X-Should-Retry", "true")
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	writeJSON(w, e.Status, apiError(typ, msg))
}
