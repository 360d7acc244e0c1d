package adapters

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/agentwire/agentwire/internal/jsonscan"
)

// The dialects agentwire knows by name (ADAPTERS.md), whether or not this
// build registers an adapter for them. Sniff returns one of these.
const (
	DialectCodexAppServer = "codex-app-server"
	DialectCodexExec      = "codex-exec"
	DialectCodexRollout   = "codex-rollout"
	DialectClaudeStream   = "claude-stream"
	DialectClaudeLog      = "claude-log"
	DialectACP            = "acp"
	DialectGeminiStream   = "gemini-stream"
)

// KnownDialects lists every dialect agentwire defines, sorted, including
// those whose adapter is not registered in this build: frames of a known
// dialect can be ingested into RAW before their adapter lands.
func KnownDialects() []string {
	out := []string{
		DialectACP, DialectClaudeLog, DialectClaudeStream, DialectCodexAppServer,
		DialectCodexExec, DialectCodexRollout, DialectGeminiStream,
	}
	for _, d := range Dialects() {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// IsKnownDialect says whether dialect is one KnownDialects lists.
func IsKnownDialect(dialect string) bool { return slices.Contains(KnownDialects(), dialect) }

// sniffLines bounds how many lines Sniff looks at.
const sniffLines = 64

// Sniff guesses the dialect of a stream from its first frames (lines
// without their newline). Each line is classified on its own; the first
// line that names a dialect decides, so lines that are not JSON or that
// could belong to several dialects (a bare {"type":"error"}) are passed
// over. ok is false when no line among the first 64 names one.
//
// The rules, in order:
//
//   - tap line {"dir":…,"msg":{…}}: msg with "jsonrpc" → acp; msg with a
//     string "type" → claude-stream (its control protocol); other JSON-RPC
//     → codex-app-server (Codex omits "jsonrpc");
//   - "jsonrpc" with method, result or error → acp;
//   - type session_meta, response_item, event_msg, turn_context or
//     compacted with a payload → codex-rollout;
//   - type thread.*, turn.* or item.* → codex-exec;
//   - parentUuid, or sessionId with uuid and timestamp, or type summary,
//     file-history-snapshot or queue-operation → claude-log;
//   - type system, assistant, user, stream_event, control_request,
//     control_response or control_cancel_request, or result with
//     session_id and no timestamp → claude-stream;
//   - type init, message, tool_use, tool_result, result or error with a
//     timestamp → gemini-stream;
//   - JSON-RPC without "jsonrpc" (method with id or params; id with result
//     or error) → codex-app-server.
func Sniff(lines [][]byte) (dialect string, ok bool) {
	n := 0
	for _, line := range lines {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if n++; n > sniffLines {
			break
		}
		if d := sniffLine(line); d != "" {
			return d, true
		}
	}
	return "", false
}

type object map[string]json.RawMessage

func (o object) has(k string) bool { _, ok := o[k]; return ok }

// str returns member k when it is a JSON string.
func (o object) str(k string) (string, bool) {
	raw, ok := o[k]
	if !ok {
		return "", false
	}
	var s string
	if jsonscan.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func parseObject(b []byte) (object, bool) {
	if len(b) == 0 || b[0] != '{' {
		return nil, false
	}
	var o object
	if jsonscan.Unmarshal(b, &o) != nil {
		return nil, false
	}
	return o, true
}

func sniffLine(line []byte) string {
	o, ok := parseObject(line)
	if !ok {
		return ""
	}
	if dir, isTap := o.str("dir"); isTap && (dir == "agent" || dir == "client") && o.has("msg") {
		return sniffTap(o["msg"])
	}
	if o.has("jsonrpc") && (o.has("method") || o.has("result") || o.has("error")) {
		return DialectACP
	}
	typ, hasType := o.str("type")
	switch {
	case hasType && o.has("payload") && slices.Contains([]string{"session_meta", "response_item", "event_msg", "turn_context", "compacted"}, typ):
		return DialectCodexRollout
	case hasType && (strings.HasPrefix(typ, "thread.") || strings.HasPrefix(typ, "turn.") || strings.HasPrefix(typ, "item.")):
		return DialectCodexExec
	case o.has("parentUuid") || (o.has("sessionId") && o.has("uuid") && o.has("timestamp")):
		return DialectClaudeLog
	case hasType && slices.Contains([]string{"summary", "file-history-snapshot", "queue-operation"}, typ):
		return DialectClaudeLog
	case hasType && slices.Contains([]string{"system", "assistant", "user", "stream_event", "control_request", "control_response", "control_cancel_request"}, typ):
		return DialectClaudeStream
	case typ == "result" && o.has("session_id") && !o.has("timestamp"):
		return DialectClaudeStream
	case hasType && o.has("timestamp") && slices.Contains([]string{"init", "message", "tool_use", "tool_result", "result", "error"}, typ):
		return DialectGeminiStream
	case isJSONRPC(o):
		return DialectCodexAppServer
	}
	return ""
}

func sniffTap(msg json.RawMessage) string {
	o, ok := parseObject(bytes.TrimSpace(msg))
	if !ok {
		return ""
	}
	switch {
	case o.has("jsonrpc"):
		return DialectACP
	case func() bool { _, ok := o.str("type"); return ok }():
		return DialectClaudeStream
	case isJSONRPC(o):
		return DialectCodexAppServer
	}
	return ""
}

// isJSONRPC recognizes a JSON-RPC request, notification or response
// without the "jsonrpc" member.
func isJSONRPC(o object) bool {
	if _, ok := o.str("method"); ok {
		return o.has("id") || o.has("params") || len(o) == 1
	}
	return o.has("id") && (o.has("result") || o.has("error"))
}
