package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentwire/agentwire/tools/record/internal/script"
)

// block is one content block of an assistant message.
type block struct {
	typ                   string // thinking, text, tool_use
	text, signature       string
	toolID, name, argJSON string
}

func blocksOf(rep script.Reply, msgN int64) []block {
	var bs []block
	if rep.Thinking != "" {
		bs = append(bs, block{typ: "thinking", text: rep.Thinking, signature: fmt.Sprintf("fakesig%06d", msgN)})
	}
	if rep.Text != "" {
		bs = append(bs, block{typ: "text", text: rep.Text})
	}
	for i, tc := range rep.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("toolu_fake%04d%02d", msgN, i)
		}
		args := tc.Args
		if args == "" {
			args = "{}"
		}
		bs = append(bs, block{typ: "tool_use", toolID: id, name: tc.Name, argJSON: args})
	}
	return bs
}

func usageOf(rep script.Reply) (in, cacheRead, cacheWrite, out int) {
	in, cacheRead, out = rep.InputTokens, rep.CachedTokens, rep.OutputTokens
	if in == 0 {
		in = 1200
	}
	if out == 0 {
		out = 40
	}
	return in, cacheRead, 0, out
}

func stopReasonOf(rep script.Reply) string {
	if len(rep.ToolCalls) > 0 {
		return "tool_use"
	}
	return "end_turn"
}

// reply answers a Messages request from rep, streaming when asked to.
func (s *Server) reply(w http.ResponseWriter, req *request, rep script.Reply) {
	n := s.ids.Add(1)
	msgID := fmt.Sprintf("msg_fake%06d", n)
	model := req.Model
	if model == "" {
		model = "claude-fake"
	}
	bs := blocksOf(rep, n)
	in, cacheRead, cacheWrite, out := usageOf(rep)
	if !req.Stream {
		content := make([]any, 0, len(bs))
		for _, b := range bs {
			content = append(content, b.final())
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": content, "stop_reason": stopReasonOf(rep), "stop_sequence": nil,
			"usage": map[string]any{
				"input_tokens": in, "cache_read_input_tokens": cacheRead,
				"cache_creation_input_tokens": cacheWrite, "output_tokens": out,
			},
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Request-Id", "req_fake")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(event string, data map[string]any) {
		data["type"] = event
		b, _ := json.Marshal(data) // plain maps of strings and numbers always marshal
		_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send("message_start", map[string]any{"message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": in, "cache_read_input_tokens": cacheRead,
			"cache_creation_input_tokens": cacheWrite, "output_tokens": 1,
		},
	}})
	for i, b := range bs {
		send("content_block_start", map[string]any{"index": i, "content_block": b.start()})
		for _, d := range b.deltas() {
			send("content_block_delta", map[string]any{"index": i, "delta": d})
		}
		send("content_block_stop", map[string]any{"index": i})
	}
	send("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stopReasonOf(rep), "stop_sequence": nil},
		"usage": map[string]any{
			"input_tokens": in, "cache_read_input_tokens": cacheRead,
			"cache_creation_input_tokens": cacheWrite, "output_tokens": out,
		},
	})
	send("message_stop", map[string]any{})
}

func (b block) start() map[string]any {
	switch b.typ {
	case "thinking":
		return map[string]any{"type": "thinking", "thinking": "", "signature": ""}
	case "tool_use":
		return map[string]any{"type": "tool_use", "id": b.toolID, "name": b.name, "input": map[string]any{}}
	default:
		return map[string]any{"type": "text", "text": ""}
	}
}

func (b block) deltas() []map[string]any {
	var ds []map[string]any
	switch b.typ {
	case "thinking":
		for _, c := range chunks(b.text) {
			ds = append(ds, map[string]any{"type": "thinking_delta", "thinking": c})
		}
		ds = append(ds, map[string]any{"type": "signature_delta", "signature": b.signature})
	case "tool_use":
		for _, c := range chunks(b.argJSON) {
			ds = append(ds, map[string]any{"type": "input_json_delta", "partial_json": c})
		}
	default:
		for _, c := range chunks(b.text) {
			ds = append(ds, map[string]any{"type": "text_delta", "text": c})
		}
	}
	return ds
}

func (b block) final() map[string]any {
	switch b.typ {
	case "thinking":
		return map[string]any{"type": "thinking", "thinking": b.text, "signature": b.signature}
	case "tool_use":
		return map[string]any{"type": "tool_use", "id": b.toolID, "name": b.name, "input": json.RawMessage(b.argJSON)}
	default:
		return map[string]any{"type": "text", "text": b.text}
	}
}

// chunks splits s into a few pieces at spaces, so a stream shows several
// deltas per block as the real API does, without one per word.
func chunks(s string) []string {
	const pieces = 3
	if len(s) < 12 {
		return []string{s}
	}
	var out []string
	size := len(s)/pieces + 1
	for len(s) > 0 {
		cut := min(size, len(s))
		if i := strings.IndexByte(s[cut:], ' '); i >= 0 && i < 8 {
			cut += i + 1
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}
