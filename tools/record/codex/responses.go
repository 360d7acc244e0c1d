package codex

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentwire/agentwire/tools/record/internal/script"
)

// model is the model Codex is configured with: a slug in 0.171.0's
// bundled catalogue, because an unknown one makes Codex emit a
// "model metadata not found" error item into every recording.
const model = "gpt-5.5"

// server is a fake OpenAI Responses API on loopback that answers each main
// model request with the next Reply of a script.
type server struct {
	log    io.Writer
	script script.Script
	ln     net.Listener
	srv    *http.Server

	mu     sync.Mutex
	served int // main requests answered, including errors
	errs   int // of which failed on purpose
	bodies []map[string]any
}

func startServer(sc script.Script, log io.Writer) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fake responses server: listen: %w", err)
	}
	s := &server{log: log, script: sc, ln: ln}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.handle), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }() // ends with Close
	return s, nil
}

// BaseURL is what Codex's provider base_url must be: Codex appends
// /responses (and /models) to it.
func (s *server) BaseURL() string { return "http://" + s.ln.Addr().String() + "/v1" }

// Close stops the server at once: by then Codex has exited, and an
// interrupted stream no longer matters.
func (s *server) Close() { _ = s.srv.Close() }

// Stats returns how many main requests were answered and how many of them
// failed on purpose.
func (s *server) Stats() (served, errs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served, s.errs
}

// Bodies returns the decoded main request bodies, for checks and debugging.
func (s *server) Bodies() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.bodies...)
}

func (s *server) handle(w http.ResponseWriter, req *http.Request) {
	path := strings.TrimSuffix(req.URL.Path, "/")
	switch {
	case req.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		s.responses(w, req)
	case req.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		// An empty list keeps Codex on the model named in config.toml
		// rather than on whatever a catalogue would suggest.
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"object":"list","data":[],"models":[]}`)
	default:
		logf(s.log, "codex: fake server: unhandled %s %s\n", req.Method, req.URL.String())
		http.NotFound(w, req)
	}
}

func (s *server) responses(w http.ResponseWriter, req *http.Request) {
	raw, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		logf(s.log, "codex: fake server: undecodable body: %v\n", err)
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	n := s.served
	s.served++
	s.bodies = append(s.bodies, body)
	reply := script.Reply{Text: "done"}
	if n < len(s.script) {
		reply = s.script[n]
	}
	if reply.Error != nil {
		s.errs++
	}
	s.mu.Unlock()

	if e := reply.Error; e != nil {
		s.fail(w, e)
		return
	}
	s.stream(w, n, reply)
}

func (s *server) fail(w http.ResponseWriter, e *script.HTTPError) {
	kind := "server_error"
	if e.Status == http.StatusTooManyRequests {
		kind = "rate_limit_exceeded"
	}
	if e.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfterSeconds))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": e.Message, "type": kind, "code": kind, "param": nil}})
	_, _ = w.Write(b)
}

// stream writes one Responses API SSE stream: reasoning, then message, then
// function calls, each as an output item with its deltas, then
// response.completed with usage.
func (s *server) stream(w http.ResponseWriter, n int, reply script.Reply) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)

	seq := 0
	emit := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		b, _ := json.Marshal(fields)
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b) // a gone client shows as Codex's error, not ours
		if flusher != nil {
			flusher.Flush()
		}
	}
	respID := fmt.Sprintf("resp_%04d", n+1)
	created := time.Now().Unix()
	response := func(status string, output []any, usage any) map[string]any {
		return map[string]any{
			"id": respID, "object": "response", "created_at": created, "status": status,
			"model": model, "output": output, "usage": usage,
			"parallel_tool_calls": false, "tool_choice": "auto", "tools": []any{},
		}
	}
	emit("response.created", map[string]any{"response": response("in_progress", []any{}, nil)})
	emit("response.in_progress", map[string]any{"response": response("in_progress", []any{}, nil)})

	var output []any
	idx := 0
	if reply.Thinking != "" {
		id := fmt.Sprintf("rs_%04d_%d", n+1, idx)
		emit("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"id": id, "type": "reasoning", "summary": []any{}}})
		emit("response.reasoning_summary_part.added", map[string]any{"item_id": id, "output_index": idx, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": ""}})
		for _, d := range chunks(reply.Thinking) {
			emit("response.reasoning_summary_text.delta", map[string]any{"item_id": id, "output_index": idx, "summary_index": 0, "delta": d})
		}
		emit("response.reasoning_summary_text.done", map[string]any{"item_id": id, "output_index": idx, "summary_index": 0, "text": reply.Thinking})
		emit("response.reasoning_summary_part.done", map[string]any{"item_id": id, "output_index": idx, "summary_index": 0, "part": map[string]any{"type": "summary_text", "text": reply.Thinking}})
		item := map[string]any{"id": id, "type": "reasoning", "summary": []any{map[string]any{"type": "summary_text", "text": reply.Thinking}}}
		emit("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	if reply.Text != "" {
		id := fmt.Sprintf("msg_%04d_%d", n+1, idx)
		emit("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"id": id, "type": "message", "role": "assistant", "status": "in_progress", "content": []any{}}})
		emit("response.content_part.added", map[string]any{"item_id": id, "output_index": idx, "content_index": 0, "part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, d := range chunks(reply.Text) {
			emit("response.output_text.delta", map[string]any{"item_id": id, "output_index": idx, "content_index": 0, "delta": d})
		}
		emit("response.output_text.done", map[string]any{"item_id": id, "output_index": idx, "content_index": 0, "text": reply.Text})
		part := map[string]any{"type": "output_text", "text": reply.Text, "annotations": []any{}}
		emit("response.content_part.done", map[string]any{"item_id": id, "output_index": idx, "content_index": 0, "part": part})
		item := map[string]any{"id": id, "type": "message", "role": "assistant", "status": "completed", "content": []any{part}}
		emit("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	for i, tc := range reply.ToolCalls {
		id := fmt.Sprintf("fc_%04d_%d", n+1, idx)
		callID := tc.ID
		if callID == "" {
			callID = fmt.Sprintf("call_%04d_%d", n+1, i)
		}
		emit("response.output_item.added", map[string]any{"output_index": idx, "item": map[string]any{"id": id, "type": "function_call", "status": "in_progress", "call_id": callID, "name": tc.Name, "arguments": ""}})
		for _, d := range chunks(tc.Args) {
			emit("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": idx, "delta": d})
		}
		emit("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": idx, "arguments": tc.Args})
		item := map[string]any{"id": id, "type": "function_call", "status": "completed", "call_id": callID, "name": tc.Name, "arguments": tc.Args}
		emit("response.output_item.done", map[string]any{"output_index": idx, "item": item})
		output = append(output, item)
		idx++
	}
	usage := map[string]any{
		"input_tokens":          reply.InputTokens,
		"input_tokens_details":  map[string]any{"cached_tokens": reply.CachedTokens},
		"output_tokens":         reply.OutputTokens,
		"output_tokens_details": map[string]any{"reasoning_tokens": reasoningTokens(reply)},
		"total_tokens":          reply.InputTokens + reply.OutputTokens,
	}
	if output == nil {
		output = []any{}
	}
	emit("response.completed", map[string]any{"response": response("completed", output, usage)})
}

// reasoningTokens reports a share of the output as reasoning when the
// reply thinks, so usage mappings see a non-zero reasoning count.
func reasoningTokens(r script.Reply) int {
	if r.Thinking == "" {
		return 0
	}
	return r.OutputTokens / 2
}

// chunks splits s into a few deltas at word boundaries, so recordings show
// streaming rather than one delta per item.
func chunks(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s[min(len(s), 12):], ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		cut := min(len(s), 12) + i + 1
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}
