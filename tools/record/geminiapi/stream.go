package geminiapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/agentwire/agentwire/tools/record/internal/script"
)

// chunk is one GenerateContentResponse: the parts it carries, and on the
// last chunk the finish reason and the usage.
type chunk struct {
	parts  []map[string]any
	finish bool
}

// chunksOf splits a reply the way the real API streams one: thoughts first,
// then the answer text in pieces, then all function calls together, the
// last chunk carrying finishReason.
func chunksOf(rep script.Reply) []chunk {
	var cs []chunk
	for _, t := range pieces(rep.Thinking) {
		cs = append(cs, chunk{parts: []map[string]any{{"text": t, "thought": true}}})
	}
	for _, t := range pieces(rep.Text) {
		cs = append(cs, chunk{parts: []map[string]any{{"text": t}}})
	}
	if len(rep.ToolCalls) > 0 {
		var parts []map[string]any
		for _, tc := range rep.ToolCalls {
			var args any = map[string]any{}
			if tc.Args != "" {
				// Bad args in a script are a scripting bug; sending them
				// raw would only make the CLI fail in a less legible way.
				if err := json.Unmarshal([]byte(tc.Args), &args); err != nil {
					args = map[string]any{"invalid_args": tc.Args}
				}
			}
			call := map[string]any{"name": tc.Name, "args": args}
			// The Gemini API sends no call ids; the CLI invents them. Send
			// one only when the script insists.
			if tc.ID != "" {
				call["id"] = tc.ID
			}
			parts = append(parts, map[string]any{"functionCall": call})
		}
		cs = append(cs, chunk{parts: parts})
	}
	if len(cs) == 0 {
		cs = append(cs, chunk{parts: []map[string]any{{"text": ""}}})
	}
	cs[len(cs)-1].finish = true
	return cs
}

// pieces cuts s into a few chunks at word boundaries, so the CLI sees a
// stream rather than a single delta.
func pieces(s string) []string {
	if s == "" {
		return nil
	}
	const size = 24
	var out []string
	for len(s) > size {
		cut := size
		for cut < len(s) && s[cut] != ' ' && s[cut] != '\n' {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// usageOf is the usageMetadata of a reply. Gemini counts thoughts apart
// from candidates, and includes cached tokens in the prompt count.
func usageOf(rep script.Reply) map[string]any {
	thoughts := 0
	if rep.Thinking != "" {
		thoughts = len(rep.Thinking)/4 + 1
	}
	u := map[string]any{
		"promptTokenCount":     rep.InputTokens,
		"candidatesTokenCount": rep.OutputTokens,
		"totalTokenCount":      rep.InputTokens + rep.OutputTokens + thoughts,
	}
	if rep.CachedTokens > 0 {
		u["cachedContentTokenCount"] = rep.CachedTokens
	}
	if thoughts > 0 {
		u["thoughtsTokenCount"] = thoughts
	}
	return u
}

func response(model, id string, c chunk, rep script.Reply) map[string]any {
	parts := make([]any, 0, len(c.parts))
	for _, p := range c.parts {
		parts = append(parts, p)
	}
	cand := map[string]any{"content": map[string]any{"parts": parts, "role": "model"}, "index": 0}
	resp := map[string]any{"candidates": []any{cand}, "modelVersion": model, "responseId": id}
	if c.finish {
		cand["finishReason"] = "STOP"
		resp["usageMetadata"] = usageOf(rep)
	} else {
		// The real API reports the prompt size on every chunk.
		resp["usageMetadata"] = map[string]any{"promptTokenCount": rep.InputTokens, "totalTokenCount": rep.InputTokens}
	}
	return resp
}

// reply answers a generateContent or streamGenerateContent request from rep.
func (s *Server) reply(w http.ResponseWriter, model, id string, stream bool, rep script.Reply) {
	if model == "" {
		model = "gemini-fake"
	}
	cs := chunksOf(rep)
	if !stream {
		// A whole response carries each text in one part, as the real
		// API's does.
		all := chunk{finish: true}
		for _, c := range cs {
			for _, p := range c.parts {
				if n := len(all.parts); n > 0 && mergeable(all.parts[n-1], p) {
					all.parts[n-1] = map[string]any{"text": all.parts[n-1]["text"].(string) + p["text"].(string), "thought": p["thought"]}
					if p["thought"] == nil {
						delete(all.parts[n-1], "thought")
					}
					continue
				}
				all.parts = append(all.parts, p)
			}
		}
		writeJSON(w, http.StatusOK, response(model, id, all, rep))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for _, c := range cs {
		b, _ := json.Marshal(response(model, id, c, rep)) // maps of strings and numbers always marshal
		if _, err := fmt.Fprintf(w, "data: %s\r\n\r\n", b); err != nil {
			s.logf("stream %s: %v", id, err)
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// mergeable says whether two parts are texts of the same kind (both thoughts
// or both answer).
func mergeable(a, b map[string]any) bool {
	_, at := a["text"].(string)
	_, bt := b["text"].(string)
	return at && bt && a["thought"] == b["thought"]
}
