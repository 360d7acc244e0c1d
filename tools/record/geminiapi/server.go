// Package geminiapi is a fake Gemini API (generativelanguage v1beta) on
// loopback. It answers Gemini CLI's main chat requests, the streamed
// streamGenerateContent calls, from a script.Script, and answers the CLI's
// side calls (model routing, next-speaker and loop checks, summaries, token
// counts) itself so that they never consume the script.
package geminiapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentwire/agentwire/tools/record/internal/script"
)

// Server is a running fake Gemini API.
type Server struct {
	log    io.Writer
	script script.Script
	ln     net.Listener
	srv    *http.Server

	mu     sync.Mutex
	served int
	ids    int
	logMu  sync.Mutex
}

// Start listens on a free loopback port and serves s. Every request is
// logged to log, one line each, so a recording run shows what the CLI asked.
func Start(log io.Writer, s script.Script) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("geminiapi: listen on loopback: %w", err)
	}
	srv := &Server{log: log, script: s, ln: ln}
	srv.srv = &http.Server{Handler: http.HandlerFunc(srv.handle), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			srv.logf("serve: %v", err)
		}
	}()
	return srv, nil
}

// URL is the base URL for GOOGLE_GEMINI_BASE_URL (no trailing slash, no
// API version).
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
	_, _ = fmt.Fprintf(s.log, "geminiapi: "+format+"\n", args...) // a lost log line is not worth failing for
}

// next takes the reply for the next main request, and a response id that is
// stable across runs.
func (s *Server) next() (int, script.Reply, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.served
	s.served++
	s.ids++
	id := fmt.Sprintf("fake-response-%04d", s.ids)
	if n < len(s.script) {
		return n, s.script[n], id
	}
	return n, script.Reply{Text: "done"}, id
}

func (s *Server) sideID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("fake-response-%04d", s.ids)
}

// request is the part of a generateContent request body we look at.
type request struct {
	Contents []struct {
		Role  string            `json:"role"`
		Parts []json.RawMessage `json:"parts"`
	} `json:"contents"`
	Tools            []json.RawMessage `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.logf("%s %s: read body: %v", r.Method, r.URL.Path, err)
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	// Paths look like /v1beta/models/gemini-2.5-flash:streamGenerateContent.
	path := r.URL.Path
	model, method := "", ""
	if _, rest, ok := strings.Cut(path, "/models/"); ok {
		model, method, _ = strings.Cut(rest, ":")
	}
	if r.Method != http.MethodPost {
		s.logf("%s %s: not a model call, answering 404", r.Method, path)
		writeJSON(w, http.StatusNotFound, rpcStatus(http.StatusNotFound, "NOT_FOUND", "no such endpoint in the fake server: "+path))
		return
	}
	switch method {
	case "countTokens":
		s.logf("POST %s (side: token count)", path)
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": 100})
		return
	case "embedContent", "batchEmbedContents":
		s.logf("POST %s (side: embedding)", path)
		writeJSON(w, http.StatusOK, map[string]any{"embedding": map[string]any{"values": []float64{0, 0, 0}}})
		return
	case "generateContent", "streamGenerateContent":
	default:
		s.logf("POST %s: unknown method, answering 404", path)
		writeJSON(w, http.StatusNotFound, rpcStatus(http.StatusNotFound, "NOT_FOUND", "no such method in the fake server: "+path))
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		s.logf("POST %s: decode body: %v", path, err)
		writeJSON(w, http.StatusBadRequest, rpcStatus(http.StatusBadRequest, "INVALID_ARGUMENT", "bad JSON"))
		return
	}
	stream := method == "streamGenerateContent"
	if why := sideRequest(&req, stream); why != "" {
		s.logf("POST %s tools=%d contents=%d (side: %s)", path, len(req.Tools), len(req.Contents), why)
		s.reply(w, model, s.sideID(), stream, sideReply(&req))
		return
	}
	n, reply, id := s.next()
	s.logf("POST %s tools=%d contents=%d (main #%d)", path, len(req.Tools), len(req.Contents), n+1)
	if reply.Error != nil {
		writeError(w, reply.Error)
		return
	}
	s.reply(w, model, id, stream, reply)
}

// sideRequest says why a request is not part of the conversation, or "" for
// a main request. Gemini CLI streams its main chat and always offers its
// tools there; routing, next-speaker and loop checks ask for JSON with a
// response schema, and summaries come without tools.
func sideRequest(req *request, stream bool) string {
	switch {
	case len(req.GenerationConfig.ResponseJSONSchema) > 0 || len(req.GenerationConfig.ResponseSchema) > 0:
		return "json with schema"
	case req.GenerationConfig.ResponseMimeType == "application/json":
		return "json"
	case !stream:
		return "not streamed"
	case len(req.Tools) == 0:
		return "no tools"
	}
	return ""
}

// sideReply answers a side request: JSON matching the schema it sent when it
// sent one, a short text otherwise.
func sideReply(req *request) script.Reply {
	schema := req.GenerationConfig.ResponseJSONSchema
	if len(schema) == 0 {
		schema = req.GenerationConfig.ResponseSchema
	}
	if len(schema) == 0 {
		if req.GenerationConfig.ResponseMimeType == "application/json" {
			return script.Reply{Text: "{}", InputTokens: 10, OutputTokens: 1}
		}
		return script.Reply{Text: "ok", InputTokens: 10, OutputTokens: 1}
	}
	var sch map[string]any
	_ = json.Unmarshal(schema, &sch) // an unreadable schema gets a null, which the CLI treats as a failed check
	b, _ := json.Marshal(fill("", sch))
	return script.Reply{Text: string(b), InputTokens: 10, OutputTokens: 5}
}

// fill makes a value that satisfies a JSON (or OpenAPI-style) schema, choosing
// the answers that keep the CLI's turn going as scripted: the user speaks
// next, no loop is detected, the requested model is kept.
func fill(name string, sch map[string]any) any {
	switch name {
	case "next_speaker":
		return "user"
	case "model_choice":
		return "flash"
	}
	if enum, ok := sch["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ, _ := sch["type"].(string)
	switch strings.ToLower(typ) {
	case "object":
		out := map[string]any{}
		props, _ := sch["properties"].(map[string]any)
		for k, v := range props {
			p, _ := v.(map[string]any)
			out[k] = fill(k, p)
		}
		return out
	case "array":
		return []any{}
	case "number", "integer":
		return 0
	case "boolean":
		return false
	case "string":
		return "Answered by the fake Gemini API."
	}
	return nil
}

// rpcStatus is the google.rpc.Status error body the Gemini API sends.
func rpcStatus(code int, status, msg string, details ...any) map[string]any {
	if details == nil {
		details = []any{}
	}
	return map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status, "details": details}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client hung up; nothing to do
}

func writeError(w http.ResponseWriter, e *script.HTTPError) {
	status := "INTERNAL"
	var details []any
	switch e.Status {
	case http.StatusTooManyRequests:
		status = "RESOURCE_EXHAUSTED"
		details = append(details, map[string]any{
			"@type":      "type.googleapis.com/google.rpc.QuotaFailure",
			"violations": []any{map[string]any{"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}},
		})
		if e.RetryAfterSeconds > 0 {
			details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": fmt.Sprintf("%ds", e.RetryAfterSeconds)})
		}
	case http.StatusServiceUnavailable:
		status = "UNAVAILABLE"
	case http.StatusBadRequest:
		status = "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		status = "UNAUTHENTICATED"
	case http.StatusForbidden:
		status = "PERMISSION_DENIED"
	}
	if e.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(e.RetryAfterSeconds))
	}
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	writeJSON(w, e.Status, rpcStatus(e.Status, status, msg, details...))
}
