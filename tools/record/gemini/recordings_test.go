package gemini

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const recordings = "../../../testdata/recordings/" + set

// events reads a committed stream-json recording, failing on any line that
// is not a JSON object with a type.
func events(t *testing.T, scenario string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(recordings, scenario+".jsonl"))
	if err != nil {
		t.Fatalf("read recording: %v", err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s:%d: not a JSON object: %v", scenario, n, err)
		}
		if _, ok := ev["type"].(string); !ok {
			t.Fatalf("%s:%d: no type", scenario, n)
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func ofType(evs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, ev := range evs {
		if ev["type"] == typ {
			out = append(out, ev)
		}
	}
	return out
}

// lastResult checks the stream ends with one result per process and returns
// the last.
func lastResult(t *testing.T, evs []map[string]any) map[string]any {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1]["type"] != "result" {
		t.Fatalf("the stream does not end with a result event")
	}
	return evs[len(evs)-1]
}

func assistantText(evs []map[string]any) string {
	var b strings.Builder
	for _, ev := range ofType(evs, "message") {
		if ev["role"] == "assistant" {
			s, _ := ev["content"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// toolRun checks that a tool_use of name has a successful tool_result with
// the same tool_id, and returns the result.
func toolRun(t *testing.T, evs []map[string]any, name string) map[string]any {
	t.Helper()
	for _, use := range ofType(evs, "tool_use") {
		if use["tool_name"] != name {
			continue
		}
		for _, res := range ofType(evs, "tool_result") {
			if res["tool_id"] == use["tool_id"] {
				if res["status"] != "success" {
					t.Errorf("%s result status = %v, want success", name, res["status"])
				}
				return res
			}
		}
		t.Fatalf("tool_use %s (%v) has no tool_result", name, use["tool_id"])
	}
	t.Fatalf("no tool_use of %s", name)
	return nil
}

func TestRecordingPlain(t *testing.T) {
	t.Parallel()
	evs := events(t, "plain")
	if len(ofType(evs, "init")) != 1 {
		t.Errorf("want one init event")
	}
	if got := assistantText(evs); !strings.HasPrefix(got, "Hello!") {
		t.Errorf("assistant text = %q", got)
	}
	if res := lastResult(t, evs); res["status"] != "success" {
		t.Errorf("result status = %v", res["status"])
	}
}

func TestRecordingShell(t *testing.T) {
	t.Parallel()
	evs := events(t, "shell")
	res := toolRun(t, evs, "run_shell_command")
	if out, _ := res["output"].(string); !strings.Contains(out, "main.go") {
		t.Errorf("ls output = %q, want the project's files", out)
	}
	if got := assistantText(evs); !strings.Contains(got, "The project has") {
		t.Errorf("no answer after the tool: %q", got)
	}
	if r := lastResult(t, evs); r["status"] != "success" {
		t.Errorf("result status = %v", r["status"])
	}
}

func TestRecordingMultistep(t *testing.T) {
	t.Parallel()
	evs := events(t, "multistep")
	toolRun(t, evs, "write_todos")
	toolRun(t, evs, "run_shell_command")
	res := lastResult(t, evs)
	stats, _ := res["stats"].(map[string]any)
	// Thoughts never reach stream-json; they show only in the token total.
	if in, out, total := stats["input_tokens"].(float64), stats["output_tokens"].(float64), stats["total_tokens"].(float64); total <= in+out {
		t.Errorf("total_tokens %v does not count thoughts beyond input %v + output %v", total, in, out)
	}
}

func TestRecordingErrors(t *testing.T) {
	t.Parallel()
	for scenario, want := range map[string]string{"error-500": "Internal error encountered", "error-429": "Resource has been exhausted"} {
		evs := events(t, scenario)
		res := lastResult(t, evs)
		e, _ := res["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if res["status"] != "error" || !strings.Contains(msg, want) {
			t.Errorf("%s: result = %v, want status error mentioning %q", scenario, res, want)
		}
	}
}

func TestRecordingTwoTurns(t *testing.T) {
	t.Parallel()
	evs := events(t, "two-turns")
	inits, results := ofType(evs, "init"), ofType(evs, "result")
	if len(inits) != 2 || len(results) != 2 {
		t.Fatalf("want two init and two result events, got %d and %d", len(inits), len(results))
	}
	if inits[0]["session_id"] != inits[1]["session_id"] {
		t.Errorf("the resumed run has another session: %v vs %v", inits[0]["session_id"], inits[1]["session_id"])
	}
	for _, r := range results {
		if r["status"] != "success" {
			t.Errorf("result status = %v", r["status"])
		}
	}
}
