package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentwire/agentwire/tools/record/internal/sandbox"
	"github.com/agentwire/agentwire/tools/record/internal/tap"
)

// client is the controlling app's side of one ACP session: it answers the
// agent's requests (permissions, file reads and writes) and remembers what
// happened, for the manifest note and for checking the scenario ran as
// scripted.
type client struct {
	box *sandbox.Box
	// decide is the option kind picked for permission requests
	// ("allow_once" or "reject_once").
	decide string

	mu          sync.Mutex
	permissions []string // the option kind chosen for each request, in order
	reads       int
	writes      int
	others      []string
}

// capabilities are what the client offers in initialize. Terminals are not
// offered: with them claude-code-acp swaps its Bash tool for one that runs
// on the client, and Gemini CLI does not use them at all; both then run the
// shell themselves, which is what the scenarios are about.
func capabilities() map[string]any {
	return map[string]any{
		"fs":       map[string]any{"readTextFile": true, "writeTextFile": true},
		"terminal": false,
	}
}

func rpcErr(code int, msg string) map[string]any {
	return map[string]any{"code": code, "message": msg}
}

// onRequest answers one agent→client request.
func (c *client) onRequest(method string, params map[string]any) (any, map[string]any) {
	switch method {
	case "session/request_permission":
		return c.permission(params)
	case "fs/read_text_file":
		return c.read(params)
	case "fs/write_text_file":
		return c.write(params)
	}
	c.mu.Lock()
	c.others = append(c.others, method)
	c.mu.Unlock()
	return nil, rpcErr(-32601, "method not found: "+method)
}

func (c *client) permission(params map[string]any) (any, map[string]any) {
	opts, _ := params["options"].([]any)
	pick := func(match func(kind string) bool) (string, string) {
		for _, o := range opts {
			m, _ := o.(map[string]any)
			kind, _ := m["kind"].(string)
			id, _ := m["optionId"].(string)
			if match(kind) {
				return id, kind
			}
		}
		return "", ""
	}
	id, kind := pick(func(k string) bool { return k == c.decide })
	if id == "" {
		// Fall back to the same verdict for longer: an agent that offers
		// only allow_always still gets allowed.
		verdict, _, _ := strings.Cut(c.decide, "_")
		id, kind = pick(func(k string) bool { return strings.HasPrefix(k, verdict+"_") })
	}
	c.mu.Lock()
	c.permissions = append(c.permissions, kind)
	c.mu.Unlock()
	if id == "" {
		return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
	}
	return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": id}}, nil
}

// inBox resolves a path the agent names and refuses any outside the scratch
// box, so a misbehaving agent cannot read or write the developer's files.
func (c *client) inBox(params map[string]any) (string, map[string]any) {
	p, _ := params["path"].(string)
	if p == "" || !filepath.IsAbs(p) {
		return "", rpcErr(-32602, "path must be absolute")
	}
	p = filepath.Clean(p)
	if rel, err := filepath.Rel(c.box.Root, p); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", rpcErr(-32002, "resource not found: "+p)
	}
	return p, nil
}

func (c *client) read(params map[string]any) (any, map[string]any) {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	p, rerr := c.inBox(params)
	if rerr != nil {
		return nil, rerr
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, rpcErr(-32002, "resource not found: "+p)
	}
	text := string(b)
	// line is 1-based and limit counts lines, as in the ACP schema.
	line, _ := params["line"].(float64)
	limit, _ := params["limit"].(float64)
	if line > 1 || limit > 0 {
		lines := strings.SplitAfter(text, "\n")
		start := max(int(line)-1, 0)
		start = min(start, len(lines))
		end := len(lines)
		if limit > 0 {
			end = min(start+int(limit), end)
		}
		text = strings.Join(lines[start:end], "")
	}
	return map[string]any{"content": text}, nil
}

func (c *client) write(params map[string]any) (any, map[string]any) {
	c.mu.Lock()
	c.writes++
	c.mu.Unlock()
	p, rerr := c.inBox(params)
	if rerr != nil {
		return nil, rerr
	}
	content, _ := params["content"].(string)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, rpcErr(-32603, err.Error())
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		return nil, rpcErr(-32603, err.Error())
	}
	return nil, nil
}

// summary says what the client did, for the manifest note.
func (c *client) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []string
	if len(c.permissions) > 0 {
		parts = append(parts, fmt.Sprintf("session/request_permission answered %s", strings.Join(c.permissions, ", ")))
	}
	if c.reads > 0 {
		parts = append(parts, fmt.Sprintf("%d fs/read_text_file", c.reads))
	}
	if c.writes > 0 {
		parts = append(parts, fmt.Sprintf("%d fs/write_text_file", c.writes))
	}
	if len(c.others) > 0 {
		parts = append(parts, "refused "+strings.Join(c.others, ", "))
	}
	return strings.Join(parts, "; ")
}

// rpcError is a JSON-RPC error response the agent sent; the error
// scenarios expect one from session/prompt.
type rpcError struct {
	Method  string
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("%s: json-rpc error %d: %s", e.Method, e.Code, e.Message)
}

// call wraps RPC.Call so that an agent's JSON-RPC error is told apart from a
// broken pipe or a timeout.
func call(ctx context.Context, rpc *tap.RPC, method string, params any) (json.RawMessage, error) {
	res, err := rpc.Call(ctx, method, params)
	if err == nil {
		return res, nil
	}
	// tap.RPC reports the error object only in its message.
	if body, ok := strings.CutPrefix(err.Error(), "json-rpc error: "); ok {
		f := &rpcError{Method: method}
		if json.Unmarshal([]byte(body), f) == nil {
			return nil, f
		}
	}
	return nil, fmt.Errorf("%s: %w", method, err)
}
