package codex

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/internal/adaptertest"
)

// These tests read the committed recordings, so CI proves that each one
// shows what its scenario is named for without running Codex.

const recordings = "../../../testdata/recordings"

type obj = map[string]any

func str(v any, path ...string) string {
	for _, k := range path {
		m, ok := v.(obj)
		if !ok {
			return ""
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// readLines decodes every line of a recording as a JSON object.
func readLines(t *testing.T, rel string) []obj {
	t.Helper()
	f, err := os.Open(filepath.Join(recordings, rel))
	if err != nil {
		t.Fatalf("open recording: %v", err)
	}
	defer func() { _ = f.Close() }() // read-only
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var out []obj
	for n := 1; sc.Scan(); n++ {
		var o obj
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("%s:%d: not a JSON object: %v", rel, n, err)
		}
		if leak, ok := adaptertest.MachinePath(sc.Bytes()); ok {
			t.Errorf("%s:%d: machine path %q leaked", rel, n, leak)
		}
		if strings.Contains(sc.Text(), "/.cache/record/") {
			t.Errorf("%s:%d: the recorder's cache path leaked", rel, n)
		}
		out = append(out, o)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", rel, err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: empty", rel)
	}
	return out
}

// expect is one property of a recording: the number of lines satisfying
// pred lies in least..most (most < 0: no upper bound).
type expect struct {
	what        string
	least, most int
	pred        func(obj) bool
}

func atLeast(n int, what string, pred func(obj) bool) expect { return expect{what, n, -1, pred} }
func no(what string, pred func(obj) bool) expect             { return expect{what, 0, 0, pred} }

// check runs expectations against a recording; extra sees all lines for
// properties across lines and returns a failure or "".
func check(t *testing.T, rel string, exps []expect, extra func([]obj) string) []obj {
	t.Helper()
	lines := readLines(t, rel)
	for _, e := range exps {
		n := 0
		for _, l := range lines {
			if e.pred(l) {
				n++
			}
		}
		if n < e.least || (e.most >= 0 && n > e.most) {
			t.Errorf("%s: %s: got %d lines, want %d..%d", rel, e.what, n, e.least, e.most)
		}
	}
	if extra != nil {
		if msg := extra(lines); msg != "" {
			t.Errorf("%s: %s", rel, msg)
		}
	}
	return lines
}

func get(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(obj)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func TestExecRecordings(t *testing.T) {
	t.Parallel()
	typ := func(ty string) func(obj) bool { return func(o obj) bool { return str(o, "type") == ty } }
	item := func(ev, ty string) func(obj) bool {
		return func(o obj) bool { return str(o, "type") == ev && str(o, "item", "type") == ty }
	}
	oneThread := func(l []obj) string {
		threads := map[string]bool{}
		for _, o := range l {
			if str(o, "type") == "thread.started" {
				threads[str(o, "thread_id")] = true
			}
		}
		if len(threads) != 1 {
			return fmt.Sprintf("want every run on one thread, got %d thread ids", len(threads))
		}
		return ""
	}
	cases := map[string][]expect{
		"plain": {
			atLeast(1, "agent_message", item("item.completed", "agent_message")),
			atLeast(1, "turn.completed", typ("turn.completed")),
		},
		"shell": {
			atLeast(1, "command_execution started", item("item.started", "command_execution")),
			atLeast(1, "ls completed with its output", func(o obj) bool {
				return item("item.completed", "command_execution")(o) && strings.Contains(str(o, "item", "aggregated_output"), "main.go")
			}),
			atLeast(1, "agent_message", item("item.completed", "agent_message")),
		},
		"multistep": {
			atLeast(1, "reasoning", item("item.completed", "reasoning")),
			atLeast(1, "todo_list started", item("item.started", "todo_list")),
			atLeast(1, "todo_list updated", item("item.updated", "todo_list")),
			atLeast(1, "command_execution", item("item.completed", "command_execution")),
			atLeast(2, "agent_message", item("item.completed", "agent_message")),
			atLeast(1, "turn.completed", typ("turn.completed")),
		},
		"error-500": {
			atLeast(2, "reconnecting errors", func(o obj) bool {
				return str(o, "type") == "error" && strings.HasPrefix(str(o, "message"), "Reconnecting")
			}),
			atLeast(1, "turn.failed", typ("turn.failed")),
			no("turn.completed", typ("turn.completed")),
		},
		"error-429": {
			atLeast(2, "429 reconnecting errors", func(o obj) bool {
				return str(o, "type") == "error" && strings.Contains(str(o, "message"), "429")
			}),
			atLeast(1, "turn.completed after the retries", typ("turn.completed")),
			no("turn.failed", typ("turn.failed")),
		},
		"two-turns": {
			atLeast(2, "turn.started", typ("turn.started")),
			atLeast(2, "turn.completed", typ("turn.completed")),
		},
	}
	for name, exps := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var extra func([]obj) string
			if name == "two-turns" {
				extra = oneThread
			}
			check(t, "codex-exec/"+name+".jsonl", exps, extra)
		})
	}
}

func TestAppServerRecordings(t *testing.T) {
	t.Parallel()
	method := func(m string) func(obj) bool { return func(o obj) bool { return str(o, "msg", "method") == m } }
	item := func(ev, ty string) func(obj) bool {
		return func(o obj) bool {
			return str(o, "msg", "method") == ev && str(o, "msg", "params", "item", "type") == ty
		}
	}
	turnDone := func(status string) func(obj) bool {
		return func(o obj) bool {
			return str(o, "msg", "method") == "turn/completed" && str(o, "msg", "params", "turn", "status") == status
		}
	}
	errNote := func(retry bool) func(obj) bool {
		return func(o obj) bool {
			r, ok := get(o, "msg", "params", "willRetry").(bool)
			return str(o, "msg", "method") == "error" && ok && r == retry
		}
	}
	// answered checks that the client answered the agent's approval
	// request, by its id, with decision.
	answered := func(decision string) func([]obj) string {
		return func(l []obj) string {
			var id any
			for _, o := range l {
				if str(o, "dir") == "agent" && str(o, "msg", "method") == "item/commandExecution/requestApproval" {
					id = get(o, "msg", "id")
				}
			}
			if id == nil {
				return "no item/commandExecution/requestApproval from the agent"
			}
			for _, o := range l {
				if str(o, "dir") == "client" && get(o, "msg", "method") == nil && get(o, "msg", "id") == id &&
					str(o, "msg", "result", "decision") == decision {
					return ""
				}
			}
			return fmt.Sprintf("no client response %q to approval request %v", decision, id)
		}
	}
	command := func(status string) expect {
		return atLeast(1, "commandExecution "+status, func(o obj) bool {
			return item("item/completed", "commandExecution")(o) && str(o, "msg", "params", "item", "status") == status
		})
	}
	cases := map[string]struct {
		exps  []expect
		extra func([]obj) string
	}{
		"plain": {exps: []expect{
			atLeast(1, "agentMessage delta", method("item/agentMessage/delta")),
			atLeast(1, "agentMessage", item("item/completed", "agentMessage")),
			atLeast(1, "turn completed", turnDone("completed")),
		}},
		"shell": {exps: []expect{
			atLeast(1, "commandExecution started", item("item/started", "commandExecution")),
			command("completed"),
			atLeast(1, "agentMessage", item("item/completed", "agentMessage")),
			atLeast(1, "turn completed", turnDone("completed")),
		}},
		"multistep": {exps: []expect{
			atLeast(1, "reasoning summary delta", method("item/reasoning/summaryTextDelta")),
			atLeast(1, "reasoning", item("item/completed", "reasoning")),
			atLeast(2, "plan updates", method("turn/plan/updated")),
			command("completed"),
			atLeast(2, "agentMessage", item("item/completed", "agentMessage")),
			atLeast(1, "turn completed", turnDone("completed")),
		}},
		"error-500": {exps: []expect{
			atLeast(2, "retrying error notifications", errNote(true)),
			atLeast(1, "final error notification", errNote(false)),
			atLeast(1, "turn failed", turnDone("failed")),
		}},
		"error-429": {exps: []expect{
			atLeast(2, "retrying error notifications", errNote(true)),
			no("final error notification", errNote(false)),
			atLeast(1, "turn completed", turnDone("completed")),
		}},
		"approval-allow": {exps: []expect{
			atLeast(1, "serverRequest/resolved", method("serverRequest/resolved")),
			command("completed"),
			atLeast(1, "turn completed", turnDone("completed")),
		}, extra: answered("accept")},
		"approval-deny": {exps: []expect{
			atLeast(1, "serverRequest/resolved", method("serverRequest/resolved")),
			command("declined"),
			atLeast(1, "turn completed", turnDone("completed")),
		}, extra: answered("decline")},
		"two-turns": {exps: []expect{
			atLeast(1, "thread/start", method("thread/start")),
			atLeast(2, "turn/start from the client", func(o obj) bool { return str(o, "dir") == "client" && method("turn/start")(o) }),
			atLeast(2, "turns completed", turnDone("completed")),
		}},
	}
	tapLine := []expect{
		no("lines without an agent or client dir", func(o obj) bool { return str(o, "dir") != "agent" && str(o, "dir") != "client" }),
		no("msgs that are not objects", func(o obj) bool { _, ok := o["msg"].(obj); return !ok }),
		no("jsonrpc members (Codex omits them, so the client must too)", func(o obj) bool { return get(o, "msg", "jsonrpc") != nil }),
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			check(t, "codex-app-server/"+name+".jsonl", append(c.exps, tapLine...), c.extra)
		})
	}
}

func TestRolloutRecordings(t *testing.T) {
	t.Parallel()
	event := func(ty string) func(obj) bool {
		return func(o obj) bool { return str(o, "type") == "event_msg" && str(o, "payload", "type") == ty }
	}
	call := func(name string) func(obj) bool {
		return func(o obj) bool {
			return str(o, "type") == "response_item" && str(o, "payload", "type") == "function_call" && str(o, "payload", "name") == name
		}
	}
	output := func(o obj) bool {
		return str(o, "type") == "response_item" && str(o, "payload", "type") == "function_call_output"
	}
	failedTask := func(o obj) bool { return event("task_complete")(o) && get(o, "payload", "error") != nil }
	cases := map[string][]expect{
		"plain": {atLeast(1, "task_complete", event("task_complete"))},
		"shell": {
			atLeast(1, "exec_command call", call("exec_command")),
			atLeast(1, "its output", output),
		},
		"multistep": {
			atLeast(1, "reasoning", func(o obj) bool { return str(o, "type") == "response_item" && str(o, "payload", "type") == "reasoning" }),
			atLeast(2, "update_plan calls", call("update_plan")),
			atLeast(1, "exec_command call", call("exec_command")),
		},
		"error-500": {atLeast(1, "task_complete with an error", failedTask)},
		"error-429": {
			atLeast(1, "task_complete", event("task_complete")),
			no("failed task", failedTask),
		},
		"approval-allow": {
			atLeast(1, "escalated exec_command", func(o obj) bool {
				return call("exec_command")(o) && strings.Contains(str(o, "payload", "arguments"), "require_escalated")
			}),
			atLeast(1, "its output", output),
		},
		"approval-deny": {
			atLeast(1, "rejected output", func(o obj) bool {
				return output(o) && strings.Contains(str(o, "payload", "output"), "rejected by user")
			}),
		},
		"two-turns": {
			atLeast(2, "task_started", event("task_started")),
			atLeast(2, "task_complete", event("task_complete")),
		},
	}
	sessionFirst := func(l []obj) string {
		if ty := str(l[0], "type"); ty != "session_meta" {
			return fmt.Sprintf("first line is %q, want session_meta", ty)
		}
		return ""
	}
	for name, exps := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			check(t, "codex-rollout/"+name+".jsonl", exps, sessionFirst)
		})
	}
}
