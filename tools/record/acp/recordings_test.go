package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const recordings = "../../../testdata/recordings"

var sets = []string{"acp-gemini", "acp-claude-code"}

// line is one tap line, its msg decoded.
type line struct {
	Dir string         `json:"dir"`
	Msg map[string]any `json:"msg"`
}

func (l line) method() string { s, _ := l.Msg["method"].(string); return s }

func (l line) update() map[string]any {
	p, _ := l.Msg["params"].(map[string]any)
	u, _ := p["update"].(map[string]any)
	return u
}

// session is a parsed recording with the requests of each side indexed, so
// a response can be matched to what it answers.
type session struct {
	lines []line
}

func read(t *testing.T, set, scenario string) session {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(recordings, set, scenario+".jsonl"))
	if err != nil {
		t.Fatalf("read recording: %v", err)
	}
	var s session
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || (l.Dir != "agent" && l.Dir != "client") || l.Msg == nil {
			t.Fatalf("%s/%s:%d: not a tap line with a JSON-RPC object", set, scenario, n)
		}
		if l.Msg["jsonrpc"] != "2.0" {
			t.Errorf("%s/%s:%d: jsonrpc = %v", set, scenario, n, l.Msg["jsonrpc"])
		}
		s.lines = append(s.lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

// requests returns the requests dir sent with method.
func (s session) requests(dir, method string) []line {
	var out []line
	for _, l := range s.lines {
		if _, hasID := l.Msg["id"]; hasID && l.Dir == dir && l.method() == method {
			out = append(out, l)
		}
	}
	return out
}

// response finds the other side's response to req.
func (s session) response(t *testing.T, req line) line {
	t.Helper()
	for _, l := range s.lines {
		if l.Dir != req.Dir && l.method() == "" && l.Msg["id"] == req.Msg["id"] {
			return l
		}
	}
	t.Fatalf("%s request %v (%s) has no response", req.Dir, req.Msg["id"], req.method())
	return line{}
}

func (s session) updates(kind string) []map[string]any {
	var out []map[string]any
	for _, l := range s.lines {
		if l.Dir == "agent" && l.method() == "session/update" {
			if u := l.update(); u["sessionUpdate"] == kind {
				out = append(out, u)
			}
		}
	}
	return out
}

// prompts returns the responses to every session/prompt, checking the
// handshake came first.
func (s session) prompts(t *testing.T) []line {
	t.Helper()
	for _, m := range []string{"initialize", "session/new"} {
		reqs := s.requests("client", m)
		if len(reqs) != 1 {
			t.Fatalf("want one %s request, got %d", m, len(reqs))
		}
		if r := s.response(t, reqs[0]); r.Msg["result"] == nil {
			t.Fatalf("%s failed: %v", m, r.Msg["error"])
		}
	}
	var out []line
	for _, req := range s.requests("client", "session/prompt") {
		out = append(out, s.response(t, req))
	}
	return out
}

func stopReason(l line) string {
	r, _ := l.Msg["result"].(map[string]any)
	s, _ := r["stopReason"].(string)
	return s
}

func text(us []map[string]any) string {
	var b strings.Builder
	for _, u := range us {
		c, _ := u["content"].(map[string]any)
		s, _ := c["text"].(string)
		b.WriteString(s)
	}
	return b.String()
}

// completedExecute returns the ids of execute tool calls that completed.
func completedExecute(s session) []string {
	execute := map[string]bool{}
	for _, u := range s.updates("tool_call") {
		if u["kind"] == "execute" {
			id, _ := u["toolCallId"].(string)
			execute[id] = true
		}
	}
	var out []string
	for _, u := range s.updates("tool_call_update") {
		id, _ := u["toolCallId"].(string)
		if execute[id] && u["status"] == "completed" {
			out = append(out, id)
		}
	}
	return out
}

func forSets(t *testing.T, scenario string, check func(t *testing.T, set string, s session)) {
	t.Helper()
	for _, set := range sets {
		t.Run(set, func(t *testing.T) {
			t.Parallel()
			check(t, set, read(t, set, scenario))
		})
	}
}

func TestRecordingPlain(t *testing.T) {
	t.Parallel()
	forSets(t, "plain", func(t *testing.T, _ string, s session) {
		t.Helper()
		ps := s.prompts(t)
		if len(ps) != 1 || stopReason(ps[0]) != "end_turn" {
			t.Fatalf("want one prompt ending end_turn, got %v", ps)
		}
		if got := text(s.updates("agent_message_chunk")); !strings.HasPrefix(got, "Hello!") {
			t.Errorf("agent text = %q", got)
		}
	})
}

func TestRecordingShell(t *testing.T) {
	t.Parallel()
	forSets(t, "shell", func(t *testing.T, set string, s session) {
		t.Helper()
		ps := s.prompts(t)
		if len(ps) != 1 || stopReason(ps[0]) != "end_turn" {
			t.Fatalf("want one prompt ending end_turn, got %v", ps)
		}
		if len(s.requests("client", "session/set_mode")) != 1 {
			t.Errorf("the shell scenario sets a mode that runs tools unasked")
		}
		if n := len(s.requests("agent", "session/request_permission")); n != 0 {
			t.Errorf("%d permission requests in a mode that should need none", n)
		}
		if len(completedExecute(s)) != 1 {
			t.Errorf("want one completed execute tool call")
		}
		// Gemini CLI sends no shell output over ACP (its display is not a
		// string); Claude's is in the update.
		if set == "acp-claude-code" && !strings.Contains(text(contents(s.updates("tool_call_update"))), "main.go") {
			t.Errorf("the ls output is not in the tool call updates")
		}
		if got := text(s.updates("agent_message_chunk")); !strings.Contains(got, "The project has") {
			t.Errorf("no answer after the tool: %q", got)
		}
	})
}

// contents flattens the content blocks of tool call updates so text can
// read them.
func contents(us []map[string]any) []map[string]any {
	var out []map[string]any
	for _, u := range us {
		cs, _ := u["content"].([]any)
		for _, c := range cs {
			if m, ok := c.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

func TestRecordingMultistep(t *testing.T) {
	t.Parallel()
	forSets(t, "multistep", func(t *testing.T, set string, s session) {
		t.Helper()
		ps := s.prompts(t)
		if len(ps) != 1 || stopReason(ps[0]) != "end_turn" {
			t.Fatalf("want one prompt ending end_turn, got %v", ps)
		}
		if len(s.updates("agent_thought_chunk")) == 0 {
			t.Errorf("no agent_thought_chunk")
		}
		switch set {
		case "acp-claude-code":
			plans := s.updates("plan")
			if len(plans) == 0 {
				t.Fatalf("no plan update")
			}
			if es, _ := plans[0]["entries"].([]any); len(es) != 2 {
				t.Errorf("plan entries = %v, want 2", plans[0]["entries"])
			}
		case "acp-gemini":
			found := false
			for _, u := range s.updates("tool_call") {
				id, _ := u["toolCallId"].(string)
				found = found || strings.HasPrefix(id, "write_todos")
			}
			if !found {
				t.Errorf("no write_todos tool call")
			}
		}
		if len(completedExecute(s)) != 1 {
			t.Errorf("want one completed execute tool call")
		}
	})
}

func TestRecordingErrors(t *testing.T) {
	t.Parallel()
	for scenario, want := range map[string]string{"error-500": "nternal error", "error-429": "exhausted"} {
		forSets(t, scenario, func(t *testing.T, _ string, s session) {
			t.Helper()
			ps := s.prompts(t)
			if len(ps) != 1 {
				t.Fatalf("want one prompt, got %d", len(ps))
			}
			e, _ := ps[0].Msg["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if e == nil || !strings.Contains(msg, want) {
				t.Errorf("prompt response = %v, want a JSON-RPC error mentioning %q", ps[0].Msg, want)
			}
		})
	}
}

// permission checks the one permission request and returns the option kind
// the client chose and the tool call it was about.
func permission(t *testing.T, s session) (kind, toolCallID string) {
	t.Helper()
	reqs := s.requests("agent", "session/request_permission")
	if len(reqs) != 1 {
		t.Fatalf("want one session/request_permission, got %d", len(reqs))
	}
	params, _ := reqs[0].Msg["params"].(map[string]any)
	tc, _ := params["toolCall"].(map[string]any)
	toolCallID, _ = tc["toolCallId"].(string)
	res, _ := s.response(t, reqs[0]).Msg["result"].(map[string]any)
	outcome, _ := res["outcome"].(map[string]any)
	if outcome["outcome"] != "selected" {
		t.Fatalf("permission outcome = %v", outcome)
	}
	opts, _ := params["options"].([]any)
	for _, o := range opts {
		m, _ := o.(map[string]any)
		if m["optionId"] == outcome["optionId"] {
			kind, _ = m["kind"].(string)
		}
	}
	return kind, toolCallID
}

func TestRecordingApprovalAllow(t *testing.T) {
	t.Parallel()
	forSets(t, "approval-allow", func(t *testing.T, _ string, s session) {
		t.Helper()
		ps := s.prompts(t)
		if len(ps) != 1 || stopReason(ps[0]) != "end_turn" {
			t.Fatalf("want one prompt ending end_turn, got %v", ps)
		}
		kind, id := permission(t, s)
		if kind != "allow_once" {
			t.Errorf("chosen option kind = %q, want allow_once", kind)
		}
		ran := false
		for _, u := range s.updates("tool_call_update") {
			ran = ran || (u["toolCallId"] == id && u["status"] == "completed")
		}
		if !ran {
			t.Errorf("the allowed tool call %s never completed", id)
		}
	})
}

func TestRecordingApprovalDeny(t *testing.T) {
	t.Parallel()
	forSets(t, "approval-deny", func(t *testing.T, set string, s session) {
		t.Helper()
		ps := s.prompts(t)
		if len(ps) != 1 {
			t.Fatalf("want one prompt, got %d", len(ps))
		}
		kind, id := permission(t, s)
		if kind != "reject_once" {
			t.Errorf("chosen option kind = %q, want reject_once", kind)
		}
		for _, u := range s.updates("tool_call_update") {
			if u["toolCallId"] == id && u["status"] == "completed" {
				t.Errorf("the rejected tool call %s completed", id)
			}
		}
		// claude-code-acp denies with interrupt, and Claude Code ends such
		// a turn as an error; Gemini CLI tells the model and carries on.
		if set == "acp-gemini" && stopReason(ps[0]) != "end_turn" {
			t.Errorf("stopReason = %q, want end_turn", stopReason(ps[0]))
		}
		if set == "acp-claude-code" && ps[0].Msg["error"] == nil {
			t.Errorf("want the prompt to end in a JSON-RPC error, got %v", ps[0].Msg)
		}
	})
}

func TestRecordingTwoTurns(t *testing.T) {
	t.Parallel()
	forSets(t, "two-turns", func(t *testing.T, _ string, s session) {
		t.Helper()
		ps := s.prompts(t)
		if len(ps) != 2 {
			t.Fatalf("want two prompt responses, got %d", len(ps))
		}
		for i, p := range ps {
			if stopReason(p) != "end_turn" {
				t.Errorf("prompt %d: stopReason = %q", i+1, stopReason(p))
			}
		}
		reqs := s.requests("client", "session/prompt")
		p0, _ := reqs[0].Msg["params"].(map[string]any)
		p1, _ := reqs[1].Msg["params"].(map[string]any)
		if p0["sessionId"] != p1["sessionId"] {
			t.Errorf("the prompts went to different sessions")
		}
	})
}
