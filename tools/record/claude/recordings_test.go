package claude

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/tools/record/internal/manifest"
)

// The committed recordings are what adapter tests replay, so these tests
// check that each one really shows what its scenario is named for, without
// running Claude Code.

const recordings = "../../../testdata/recordings"

var sets = []string{"claude-stream", "claude-stream-partial", "claude-control", "claude-log"}

// frame is one recorded message: for tap lines, the message and who sent
// it; for plain stdout and logs, the line as an agent message.
type frame struct {
	dir string
	msg map[string]any
}

func load(t *testing.T, set, scenario string) []frame {
	t.Helper()
	f, err := os.Open(filepath.Join(recordings, set, scenario+".jsonl"))
	if err != nil {
		t.Fatalf("open recording: %v", err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var out []frame
	for n := 1; sc.Scan(); n++ {
		var obj map[string]any
		if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
			t.Fatalf("%s/%s.jsonl:%d: not a JSON object: %v", set, scenario, n, err)
		}
		if set == "claude-control" {
			dir, _ := obj["dir"].(string)
			msg, ok := obj["msg"].(map[string]any)
			if (dir != "agent" && dir != "client") || !ok {
				t.Fatalf("%s/%s.jsonl:%d: not a tap line with an object msg", set, scenario, n)
			}
			out = append(out, frame{dir, msg})
			continue
		}
		out = append(out, frame{"agent", obj})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read recording: %v", err)
	}
	if len(out) == 0 {
		t.Fatalf("%s/%s.jsonl is empty", set, scenario)
	}
	return out
}

func str(v any, path ...string) string {
	s, _ := get(v, path...).(string)
	return s
}

func get(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// blocks returns the content blocks of the agent's (or log's) messages of
// role, as objects.
func blocks(fs []frame, typ string) []map[string]any {
	var out []map[string]any
	for _, f := range fs {
		if f.dir != "agent" || str(f.msg, "type") != typ {
			continue
		}
		content, _ := get(f.msg, "message", "content").([]any)
		for _, c := range content {
			if m, ok := c.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

func toolUses(fs []frame, name string) []map[string]any {
	var out []map[string]any
	for _, b := range blocks(fs, "assistant") {
		if str(b, "type") == "tool_use" && str(b, "name") == name {
			out = append(out, b)
		}
	}
	return out
}

func toolResult(fs []frame, toolUseID string) map[string]any {
	for _, b := range blocks(fs, "user") {
		if str(b, "type") == "tool_result" && str(b, "tool_use_id") == toolUseID {
			return b
		}
	}
	return nil
}

func results(fs []frame) []map[string]any {
	var out []map[string]any
	for _, f := range fs {
		if f.dir == "agent" && str(f.msg, "type") == "result" {
			out = append(out, f.msg)
		}
	}
	return out
}

func hasBlock(fs []frame, typ string) bool {
	return slices.ContainsFunc(blocks(fs, "assistant"), func(b map[string]any) bool { return str(b, "type") == typ })
}

// requireBashRan checks for a Bash tool_use answered by a tool_result that
// is an error exactly when wantErr.
func requireBashRan(t *testing.T, fs []frame, wantErr bool) {
	t.Helper()
	uses := toolUses(fs, "Bash")
	if len(uses) == 0 {
		t.Fatal("no Bash tool_use")
	}
	for _, u := range uses {
		res := toolResult(fs, str(u, "id"))
		if res == nil {
			t.Fatalf("Bash tool_use %s has no tool_result", str(u, "id"))
		}
		if isErr, _ := res["is_error"].(bool); isErr != wantErr {
			t.Errorf("tool_result of %s: is_error=%v, want %v (%v)", str(u, "id"), isErr, wantErr, res["content"])
		}
	}
}

func manifestEntries(t *testing.T) map[string]manifest.Entry {
	t.Helper()
	es, err := manifest.Read(filepath.Join(recordings, "MANIFEST.tsv"))
	if err != nil {
		t.Fatalf("read manifest: %v", err)
	}
	out := map[string]manifest.Entry{}
	for _, e := range es {
		if slices.Contains(sets, e.Set) {
			out[e.Set+"/"+e.Scenario] = e
		}
	}
	return out
}

func TestManifestCoversEveryScenario(t *testing.T) {
	t.Parallel()
	entries := manifestEntries(t)
	for _, set := range sets {
		for _, scenario := range manifest.Scenarios {
			e, ok := entries[set+"/"+scenario]
			if !ok {
				t.Errorf("%s/%s: no manifest row", set, scenario)
				continue
			}
			if e.Program != program {
				t.Errorf("%s/%s: program %q, want %q", set, scenario, e.Program, program)
			}
			if e.File == "-" {
				if e.Frames != 0 || !strings.HasPrefix(e.Note, "unsupported: ") {
					t.Errorf("%s/%s: a row without a file needs frames 0 and an unsupported: note", set, scenario)
				}
				continue
			}
			if n := len(load(t, set, scenario)); n != e.Frames {
				t.Errorf("%s/%s: manifest says %d frames, file has %d", set, scenario, e.Frames, n)
			}
			if leak, ok := adaptertest.MachinePath([]byte(e.Command)); ok {
				t.Errorf("%s/%s: command leaks %q: %s", set, scenario, leak, e.Command)
			}
			if strings.Contains(e.Command, "rec-claude") {
				t.Errorf("%s/%s: command leaks the recorder's scratch directory: %s", set, scenario, e.Command)
			}
		}
	}
}

func TestRecordingsLeakNoScratchPath(t *testing.T) {
	t.Parallel()
	for _, set := range sets {
		files, err := filepath.Glob(filepath.Join(recordings, set, "*.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if leak, ok := adaptertest.MachinePath(b); ok {
				t.Errorf("%s contains %q", file, leak)
			}
			if strings.Contains(string(b), "rec-claude-") {
				t.Errorf("%s contains the recorder's scratch directory", file)
			}
		}
	}
}

// streamSets are the sets whose frames are the stream-json SDK messages.
var streamSets = []string{"claude-stream", "claude-stream-partial", "claude-control"}

func TestPlain(t *testing.T) {
	t.Parallel()
	for _, set := range streamSets {
		rs := results(load(t, set, "plain"))
		if len(rs) != 1 || rs[0]["is_error"] != false || str(rs[0], "subtype") != "success" {
			t.Errorf("%s: want one successful result, got %v", set, rs)
		}
	}
}

func TestShell(t *testing.T) {
	t.Parallel()
	for _, set := range sets {
		fs := load(t, set, "shell")
		requireBashRan(t, fs, false)
		if set != "claude-log" && len(results(fs)) != 1 {
			t.Errorf("%s: want one result", set)
		}
	}
}

func TestMultistep(t *testing.T) {
	t.Parallel()
	for _, set := range sets {
		fs := load(t, set, "multistep")
		if !hasBlock(fs, "thinking") {
			t.Errorf("%s: no thinking block", set)
		}
		if len(toolUses(fs, "TodoWrite"))+len(toolUses(fs, "TaskCreate")) == 0 {
			t.Errorf("%s: no plan tool (TodoWrite or TaskCreate)", set)
		}
		requireBashRan(t, fs, false)
	}
}

func TestPartialMessages(t *testing.T) {
	t.Parallel()
	deltas := map[string]bool{}
	for _, scenario := range []string{"plain", "shell", "multistep"} {
		for _, f := range load(t, "claude-stream-partial", scenario) {
			if str(f.msg, "type") == "stream_event" {
				deltas[str(f.msg, "event", "type")] = true
				deltas[str(f.msg, "event", "delta", "type")] = true
			}
		}
	}
	for _, want := range []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop", "text_delta", "thinking_delta", "signature_delta", "input_json_delta"} {
		if !deltas[want] {
			t.Errorf("claude-stream-partial: no %s stream_event", want)
		}
	}
	for _, f := range load(t, "claude-stream", "multistep") {
		if str(f.msg, "type") == "stream_event" {
			t.Fatal("claude-stream has stream_event frames: it is the set without partial messages")
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		scenario string
		status   float64 // as JSON numbers decode
	}{{"error-500", 500}, {"error-429", 429}} {
		scenario, status := c.scenario, c.status
		for _, set := range streamSets {
			fs := load(t, set, scenario)
			rs := results(fs)
			if len(rs) != 1 || rs[0]["is_error"] != true || rs[0]["api_error_status"] != status {
				t.Errorf("%s/%s: want one result with is_error and api_error_status %v, got %v", set, scenario, status, rs)
			}
			retried := slices.ContainsFunc(fs, func(f frame) bool {
				return str(f.msg, "type") == "system" && str(f.msg, "subtype") == "api_retry" && get(f.msg, "error_status") == status
			})
			if !retried {
				t.Errorf("%s/%s: no system:api_retry frame", set, scenario)
			}
		}
		logged := slices.ContainsFunc(load(t, "claude-log", scenario), func(f frame) bool {
			return f.msg["isApiErrorMessage"] == true && f.msg["apiErrorStatus"] == status
		})
		if !logged {
			t.Errorf("claude-log/%s: no API error message", scenario)
		}
	}
}

// permissionExchange finds the can_use_tool request and the client's
// answer to it, returning the answer's behavior and the tool_use_id asked.
func permissionExchange(t *testing.T, fs []frame) (behavior, toolUseID string) {
	t.Helper()
	var reqID string
	for _, f := range fs {
		if f.dir == "agent" && str(f.msg, "type") == "control_request" && str(f.msg, "request", "subtype") == "can_use_tool" {
			reqID, toolUseID = str(f.msg, "request_id"), str(f.msg, "request", "tool_use_id")
			if str(f.msg, "request", "tool_name") != "Bash" {
				t.Errorf("can_use_tool asks for %q, want Bash", str(f.msg, "request", "tool_name"))
			}
		}
		if reqID != "" && f.dir == "client" && str(f.msg, "type") == "control_response" && str(f.msg, "response", "request_id") == reqID {
			return str(f.msg, "response", "response", "behavior"), toolUseID
		}
	}
	t.Fatal("no can_use_tool request answered by the client")
	return "", ""
}

func TestApprovalAllow(t *testing.T) {
	t.Parallel()
	fs := load(t, "claude-control", "approval-allow")
	behavior, id := permissionExchange(t, fs)
	if behavior != "allow" {
		t.Errorf("client answered %q, want allow", behavior)
	}
	if res := toolResult(fs, id); res == nil || res["is_error"] != false {
		t.Errorf("allowed tool did not run cleanly: %v", res)
	}
	requireBashRan(t, load(t, "claude-log", "approval-allow"), false)
}

func TestApprovalDeny(t *testing.T) {
	t.Parallel()
	fs := load(t, "claude-control", "approval-deny")
	behavior, id := permissionExchange(t, fs)
	if behavior != "deny" {
		t.Errorf("client answered %q, want deny", behavior)
	}
	if res := toolResult(fs, id); res == nil || res["is_error"] != true {
		t.Errorf("denied tool has no error tool_result: %v", res)
	}
	requireBashRan(t, load(t, "claude-log", "approval-deny"), true)
	// Print mode has no one to ask: the tool is denied and the result lists it.
	for _, set := range []string{"claude-stream", "claude-stream-partial"} {
		fs := load(t, set, "approval-deny")
		requireBashRan(t, fs, true)
		rs := results(fs)
		if len(rs) != 1 {
			t.Fatalf("%s: want one result, got %d", set, len(rs))
		}
		if denials, _ := rs[0]["permission_denials"].([]any); len(denials) == 0 {
			t.Errorf("%s: result lists no permission_denials", set)
		}
	}
}

func TestTwoTurns(t *testing.T) {
	t.Parallel()
	for _, set := range streamSets {
		rs := results(load(t, set, "two-turns"))
		if len(rs) != 2 {
			t.Errorf("%s: %d result frames, want 2", set, len(rs))
		}
		for _, r := range rs {
			if r["is_error"] != false {
				t.Errorf("%s: failed turn: %v", set, r["result"])
			}
		}
	}
	prompts := 0
	for _, f := range load(t, "claude-log", "two-turns") {
		if str(f.msg, "type") == "user" && str(f.msg, "message", "content") != "" {
			prompts++
		}
	}
	if prompts != 2 {
		t.Errorf("claude-log: %d user prompts, want 2", prompts)
	}
}
