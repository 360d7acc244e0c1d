package claudelog_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/adapters/claudelog"
	"github.com/agentwire/agentwire/pkg/adapters/claudestream"
	"github.com/agentwire/agentwire/pkg/canonical"
)

var (
	recordingsDir = filepath.Join("..", "..", "..", "testdata", "recordings")
	recordings    = filepath.Join(recordingsDir, "claude-log", "*.jsonl")
	corpus        = filepath.Join("..", "..", "..", "..", "shared", "corpus", "claude-sessionlog", "*.jsonl")
)

func TestInventory(t *testing.T) {
	t.Parallel()
	adaptertest.Inventory(t, claudelog.Adapter{}, "testdata/inventory.tsv", "testdata/inventory.jsonl")
}

func TestGolden(t *testing.T) {
	t.Parallel()
	adaptertest.Golden(t, claudelog.Adapter{}, "testdata/inventory.jsonl", "testdata/golden")
	adaptertest.Golden(t, claudelog.Adapter{}, recordings, filepath.Join("testdata", "golden", "recordings"))
	if m, _ := filepath.Glob(corpus); len(m) > 0 {
		adaptertest.Golden(t, claudelog.Adapter{}, corpus, filepath.Join("testdata", "golden", "corpus"))
	}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	inputs := adaptertest.Inputs(t, "testdata/inventory.jsonl", false)
	inputs = append(inputs, adaptertest.Inputs(t, recordings, false)...)
	// Corpus logs are excerpts or end mid-turn (no stop reason in older logs).
	inputs = append(inputs, adaptertest.Inputs(t, corpus, true)...)
	adaptertest.Run(t, claudelog.Adapter{}, inputs, adaptertest.Features{})
}

func mapLines(t *testing.T, a adapter.Adapter, lines [][]byte) []canonical.Event {
	t.Helper()
	var out []canonical.Event
	for _, evs := range adaptertest.MapAll(t, a, adaptertest.Frames(a.Dialect(), "t", lines)) {
		out = append(out, evs...)
	}
	return out
}

func strs(lines ...string) [][]byte {
	out := make([][]byte, len(lines))
	for i, l := range lines {
		out[i] = []byte(l)
	}
	return out
}

// turns lists the turns a session opened and how they ended.
func turns(evs []canonical.Event) (started []string, done []*canonical.TurnCompleted) {
	for _, e := range evs {
		if e.Type() == canonical.KindTurnStarted {
			started = append(started, e.TurnID)
		}
		if p, ok := e.Payload.(*canonical.TurnCompleted); ok {
			done = append(done, p)
		}
	}
	return started, done
}

func TestMap(t *testing.T) {
	t.Parallel()
	user := func(uuid, text string) string {
		return `{"type":"user","isSidechain":false,"message":{"role":"user","content":"` + text + `"},"uuid":"` + uuid + `","sessionId":"s1"}`
	}
	asst := func(msg, block, stop string, out int) string {
		return `{"type":"assistant","isSidechain":false,"message":{"id":"` + msg + `","model":"m","role":"assistant","stop_reason":` + stop + `,"content":[` + block + `],"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":` + strconv.Itoa(out) + `}},"uuid":"a` + msg + `","sessionId":"s1"}`
	}
	hook := func(toolUseID, event, command string) string {
		return `{"type":"progress","data":{"type":"hook_progress","hookEvent":"` + event + `","hookName":"` + event + `:Bash","command":"` + command + `"},"toolUseID":"` + toolUseID + `","parentToolUseID":"` + toolUseID + `","uuid":"h-` + toolUseID + event + command + `","sessionId":"s1"}`
	}
	tests := []struct {
		name  string
		given []string
		check func(t *testing.T, evs []canonical.Event)
	}{
		{
			name: "a message split over lines sharing message.id counts its (last) usage once",
			given: []string{
				user("u1", "go"),
				asst("m1", `{"type":"text","text":"a"}`, "null", 1),
				asst("m1", `{"type":"tool_use","id":"t1","name":"Read","input":{}}`, `"tool_use"`, 7),
				`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]},"uuid":"u2","sessionId":"s1"}`,
				asst("m2", `{"type":"text","text":"b"}`, `"end_turn"`, 3),
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				var done *canonical.TurnCompleted
				for _, e := range evs {
					if p, ok := e.Payload.(*canonical.TurnCompleted); ok {
						done = p
					}
				}
				require.NotNil(t, done)
				require.Equal(t, canonical.TokenUsage{InputTokens: 20, CachedInputTokens: 10, OutputTokens: 10}, *done.Usage)
				require.Equal(t, int64(20), done.ModelUsage["m"].InputTokens)
			},
		},
		{
			name: "a summary titles the conversation its leaf ends: this one's when the leaf is here, before or after it, else none",
			given: []string{
				`{"type":"summary","summary":"Another conversation","leafUuid":"elsewhere"}`,
				`{"type":"summary","summary":"This conversation, resumed","leafUuid":"u1"}`,
				user("u1", "go"),
				asst("m1", `{"type":"text","text":"done"}`, `"end_turn"`, 1),
				`{"type":"summary","summary":"Just summarized","leafUuid":"am1","sessionId":"s1"}`,
				`{"type":"summary","summary":"Older format, no leaf","sessionId":"s1"}`,
				`{"type":"summary","summary":"Another conversation, later","leafUuid":"elsewhere too","sessionId":"s1"}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				var names, waiting []string
				for _, e := range evs {
					p, ok := e.Payload.(*canonical.ThreadMetadataUpdated)
					if !ok {
						continue
					}
					if p.Name != "" {
						require.NotEmpty(t, e.ThreadID, "a title names a thread: %s", p.Name)
						names = append(names, p.Name)
					} else {
						waiting = append(waiting, string(p.Metadata["summary"]))
					}
				}
				require.Equal(t, []string{"This conversation, resumed", "Just summarized", "Older format, no leaf"}, names)
				require.Len(t, waiting, 3, "a summary waiting for its leaf is metadata, the record kept")
				require.Contains(t, waiting[0], `"leafUuid":"elsewhere"`)
				// The title follows the leaf line's own events.
				i := slices.IndexFunc(evs, func(e canonical.Event) bool {
					p, ok := e.Payload.(*canonical.ThreadMetadataUpdated)
					return ok && p.Name == "This conversation, resumed"
				})
				require.IsType(t, &canonical.ItemCompleted{}, evs[i-1].Payload)
			},
		},
		{
			name: "each hook_progress line is a hook run of its own, and a stop_hook_summary ends its runs",
			given: []string{
				user("u1", "go"),
				hook("toolu_1", "PreToolUse", "log.sh"),
				hook("toolu_1", "PreToolUse", "guard.sh"),
				hook("toolu_1", "PostToolUse", "log.sh"),
				hook("stop_1", "SubagentStop", "log.sh"),
				hook("stop_1", "SubagentStop", "check.sh"),
				hook("stop_1", "SubagentStop", "lint.sh"),
				`{"type":"system","subtype":"stop_hook_summary","hookCount":3,"hookInfos":[{"command":"log.sh"},{"command":"check.sh"},{"command":"lint.sh"}],` +
					`"hookErrors":["Failed with non-blocking status code: check.sh: not found","Failed with non-blocking status code 1"],"toolUseID":"stop_1","uuid":"s","sessionId":"s1"}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				type run struct{ event, command, outcome, output string }
				runs := map[string]*run{}
				var order []string
				for _, e := range evs {
					switch p := e.Payload.(type) { //nolint:gochecksumtype // only hooks matter here
					case *canonical.HookStarted:
						require.NotContains(t, runs, p.HookID, "one id per run")
						require.Equal(t, p.HookEvent+":Bash", p.HookName)
						runs[p.HookID] = &run{event: p.HookEvent, command: p.Command}
						order = append(order, p.HookID)
					case *canonical.HookCompleted:
						require.Contains(t, runs, p.HookID, "a run that started")
						runs[p.HookID].outcome, runs[p.HookID].output = string(p.Outcome), p.Output
					case *canonical.HookProgress:
						t.Fatalf("hook_progress reports no output: %+v", p)
					}
				}
				got := make([]run, len(order))
				for i, id := range order {
					got[i] = *runs[id]
				}
				require.Equal(t, []run{
					{event: "PreToolUse", command: "log.sh"},
					{event: "PreToolUse", command: "guard.sh"},
					{event: "PostToolUse", command: "log.sh"},
					// The error that names no command is each unnamed hook's.
					{event: "SubagentStop", command: "log.sh", outcome: "error", output: "Failed with non-blocking status code 1"},
					{event: "SubagentStop", command: "check.sh", outcome: "error", output: "Failed with non-blocking status code: check.sh: not found"},
					{event: "SubagentStop", command: "lint.sh", outcome: "error", output: "Failed with non-blocking status code 1"},
				}, got)
			},
		},
		{
			name: "an attachment that reports a hook's end ends the run its hook_progress line started",
			given: []string{
				user("u1", "go"),
				hook("sess_1", "SessionStart", "prime.sh"),
				hook("toolu_1", "PreToolUse", "log.sh"),
				hook("toolu_1", "PreToolUse", "guard.sh"),
				// The run's tool use id in the attachment, or on the line; its event, or its name's.
				`{"type":"attachment","attachment":{"type":"hook_success","hookName":"SessionStart:startup","command":"prime.sh","stdout":"primed","exitCode":0,"durationMs":116},"toolUseID":"sess_1","uuid":"a1","sessionId":"s1"}`,
				`{"type":"attachment","attachment":{"type":"hook_success","hookName":"PreToolUse:Bash","hookEvent":"PreToolUse","toolUseID":"toolu_1","content":"","stdout":"","stderr":"warn\n","exitCode":0,"command":"log.sh","durationMs":31},"uuid":"a2","sessionId":"s1"}`,
				`{"type":"attachment","attachment":{"type":"hook_blocking_error","hookName":"PreToolUse:Bash","hookEvent":"PreToolUse","toolUseID":"toolu_1","blockingError":{"blockingError":"rm -rf is not allowed","command":"guard.sh"},"content":["a","b"]},"uuid":"a3","sessionId":"s1"}`,
				`{"type":"attachment","attachment":{"type":"hook_additional_context","hookName":"PreToolUse","content":["be careful"]},"uuid":"a4","sessionId":"s1"}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				started := map[string]string{}
				type end struct {
					command, outcome, output, stdout, stderr string
					exit                                     int
				}
				var ends []end
				metadata := 0
				for _, e := range evs {
					switch p := e.Payload.(type) { //nolint:gochecksumtype // only hooks and metadata matter here
					case *canonical.HookStarted:
						started[p.HookID] = p.Command
					case *canonical.HookCompleted:
						require.Contains(t, started, p.HookID, "a run that started")
						x := -1
						if p.ExitCode != nil {
							x = *p.ExitCode
						}
						ends = append(ends, end{started[p.HookID], string(p.Outcome), p.Output, p.Stdout, p.Stderr, x})
					case *canonical.ThreadMetadataUpdated:
						metadata++
					}
				}
				require.Equal(t, []end{
					{command: "prime.sh", outcome: "success", stdout: "primed"},
					{command: "log.sh", outcome: "success", stderr: "warn\n"},
					{command: "guard.sh", outcome: "error", output: "rm -rf is not allowed", exit: -1},
				}, ends)
				require.Equal(t, 1, metadata, "context a hook added is metadata")
			},
		},
		{
			name: "a stop_hook_summary without errors ends each of its runs as a success",
			given: []string{
				user("u1", "go"),
				hook("stop_1", "Stop", "a.sh"),
				hook("stop_1", "Stop", "b.sh"),
				`{"type":"system","subtype":"stop_hook_summary","hookInfos":[{"command":"a.sh"},{"command":"b.sh"}],"hookErrors":[],"toolUseID":"stop_1","uuid":"s","sessionId":"s1"}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				started := map[string]bool{}
				var done []canonical.HookOutcome
				for _, e := range evs {
					switch p := e.Payload.(type) { //nolint:gochecksumtype // only hooks matter here
					case *canonical.HookStarted:
						started[p.HookID] = true
					case *canonical.HookCompleted:
						require.True(t, started[p.HookID], p.HookID)
						done = append(done, p.Outcome)
					}
				}
				require.Equal(t, []canonical.HookOutcome{canonical.HookOutcomeSuccess, canonical.HookOutcomeSuccess}, done)
			},
		},
		{
			name: "the CLI version and the main conversation's model are the session's configuration, reported when they change",
			given: []string{
				`{"type":"user","message":{"role":"user","content":"go"},"uuid":"u1","sessionId":"s1","version":"2.0.27","cwd":"/w","gitBranch":"main"}`,
				`{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","role":"assistant","stop_reason":null,"content":[{"type":"text","text":"a"}]},"uuid":"a1","sessionId":"s1","version":"2.0.27"}`,
				`{"type":"assistant","isSidechain":true,"message":{"id":"m2","model":"claude-haiku-4-5","role":"assistant","stop_reason":null,"content":[{"type":"text","text":"b"}]},"uuid":"a2","sessionId":"s1","version":"2.0.27"}`,
				`{"type":"assistant","message":{"id":"m3","model":"<synthetic>","role":"assistant","stop_reason":null,"content":[{"type":"text","text":"c"}]},"uuid":"a3","sessionId":"s1","version":"2.0.28"}`,
				`{"type":"assistant","message":{"id":"m4","model":"claude-opus-4-6","role":"assistant","stop_reason":"end_turn","content":[{"type":"text","text":"d"}]},"uuid":"a4","sessionId":"s1","version":"2.0.28"}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				var turn string
				var configs []string
				for _, e := range evs {
					if e.Type() == canonical.KindTurnStarted {
						turn = e.TurnID
					}
					if p, ok := e.Payload.(*canonical.SessionConfigured); ok {
						b, err := json.Marshal(p.Config)
						require.NoError(t, err)
						configs = append(configs, string(b))
						if _, ok := p.Config["model"]; ok {
							require.Equal(t, turn, e.TurnID, "in the open turn")
						}
					}
				}
				require.Equal(t, []string{
					`{"claude_code_version":"2.0.27","cwd":"/w","gitBranch":"main"}`,
					`{"model":"claude-sonnet-4-5"}`,
					// Neither the sub-agent's model nor a synthetic message's.
					`{"claude_code_version":"2.0.28"}`,
					`{"model":"claude-opus-4-6"}`,
				}, configs)
			},
		},
		{
			name: "a sub-agent written into the main log counts in the turn's breakdown by model, not in its usage",
			given: []string{
				user("u1", "go"),
				asst("m1", `{"type":"tool_use","id":"t1","name":"Task","input":{}}`, `"tool_use"`, 1),
				// As CLIs before 2.0 wrote sub-agents: sidechain lines in the main log.
				`{"type":"user","isSidechain":true,"message":{"role":"user","content":"look around"},"uuid":"s1u","sessionId":"s1"}`,
				`{"type":"assistant","isSidechain":true,"message":{"id":"sub1","model":"haiku","role":"assistant","stop_reason":"end_turn","content":[{"type":"text","text":"found it"}],"usage":{"input_tokens":500,"output_tokens":40}},"uuid":"s1a","sessionId":"s1"}`,
				`{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"found it"}]},"uuid":"u2","sessionId":"s1"}`,
				asst("m2", `{"type":"text","text":"done"}`, `"end_turn"`, 3),
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				started, done := turns(evs)
				require.Len(t, started, 1, "the sidechain prompt opens no turn of its own")
				require.Len(t, done, 1)
				main := canonical.TokenUsage{InputTokens: 20, CachedInputTokens: 10, OutputTokens: 4}
				require.Equal(t, main, *done[0].Usage, "the turn's usage is the main line's")
				require.Equal(t, map[string]canonical.ModelUsage{
					"m":     {TokenUsage: main},
					"haiku": {TokenUsage: canonical.TokenUsage{InputTokens: 500, OutputTokens: 40}},
				}, done[0].ModelUsage, "the sub-agent's spend is in the breakdown, as the stream's result gives it")
				for _, e := range evs {
					if e.Type() == canonical.KindTurnCompleted {
						require.Equal(t, "m1", e.ProviderRefs.ProviderTurnID)
					}
				}
			},
		},
		{
			name: "a sub-agent's own transcript that opens with hook context counts its usage as its turn's",
			given: []string{
				`{"type":"user","isSidechain":true,"isMeta":true,"message":{"role":"user","content":"<system-reminder>hook context</system-reminder>"},"uuid":"h1","sessionId":"s1"}`,
				`{"type":"user","isSidechain":true,"message":{"role":"user","content":"Summarize the conversation"},"uuid":"p1","sessionId":"s1"}`,
				`{"type":"assistant","isSidechain":true,"message":{"id":"c1","model":"opus","role":"assistant","stop_reason":null,"content":[{"type":"text","text":"summary"}],"usage":{"input_tokens":3,"cache_read_input_tokens":900,"output_tokens":8}},"uuid":"a1","sessionId":"s1"}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				var u []*canonical.ThreadTokenUsageUpdated
				for _, e := range evs {
					if p, ok := e.Payload.(*canonical.ThreadTokenUsageUpdated); ok {
						u = append(u, p)
					}
				}
				require.Len(t, u, 1)
				own := canonical.TokenUsage{InputTokens: 3, CachedInputTokens: 900, OutputTokens: 8}
				require.Equal(t, own, *u[0].Turn, "the transcript's own line, not a sub-agent's inside another turn")
				require.Equal(t, own, u[0].Usage)
			},
		},
		{
			name: "a turn reports its usage so far, once per change, until it ends",
			given: []string{
				user("u1", "go"),
				asst("m1", `{"type":"text","text":"a"}`, "null", 1),
				asst("m1", `{"type":"tool_use","id":"t1","name":"Read","input":{}}`, `"tool_use"`, 1), // same usage
				asst("m1", `{"type":"tool_use","id":"t2","name":"Read","input":{}}`, `"tool_use"`, 7),
				`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]},"uuid":"u2","sessionId":"s1"}`,
				asst("m2", `{"type":"text","text":"b"}`, `"end_turn"`, 3),
				user("u3", "again"),
				asst("m3", `{"type":"tool_use","id":"t3","name":"Read","input":{}}`, `"tool_use"`, 2), // cut off here
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				var turns []string
				var soFar []canonical.TokenUsage
				var total canonical.TokenUsage
				for _, e := range evs {
					if e.Type() == canonical.KindTurnStarted {
						turns = append(turns, e.TurnID)
					}
					if p, ok := e.Payload.(*canonical.ThreadTokenUsageUpdated); ok {
						total = p.Usage
						if p.Turn == nil {
							continue
						}
						require.Equal(t, turns[len(turns)-1], e.TurnID, "the open turn's")
						require.Equal(t, map[string]canonical.ModelUsage{"m": {TokenUsage: *p.Turn}}, p.TurnModelUsage)
						// The id turn.completed names, so the projector
						// replaces the count with the turn's own.
						require.Equal(t, map[int]string{0: "m1", 1: "m3"}[len(turns)-1], e.ProviderRefs.ProviderTurnID)
						soFar = append(soFar, *p.Turn)
					}
				}
				require.Len(t, turns, 2)
				require.Equal(t, []canonical.TokenUsage{
					{InputTokens: 10, CachedInputTokens: 5, OutputTokens: 1},
					{InputTokens: 10, CachedInputTokens: 5, OutputTokens: 7},
					// The second turn, which never ended.
					{InputTokens: 10, CachedInputTokens: 5, OutputTokens: 2},
				}, soFar)
				// The session total counts the first turn and the second so far.
				require.Equal(t, canonical.TokenUsage{InputTokens: 30, CachedInputTokens: 15, OutputTokens: 12}, total)
			},
		},
		{
			// Arrival is 2026-01-02 here (adaptertest.Frames), as for a log
			// ingested long after it was written.
			name: "a snapshot is at the time it was taken, an update of one on the session's clock",
			given: []string{
				`{"type":"file-history-snapshot","messageId":"u1","snapshot":{"messageId":"u1","trackedFileBackups":{},"timestamp":"2025-10-24T20:50:22.798Z"},"isSnapshotUpdate":false}`,
				`{"type":"user","message":{"role":"user","content":"go"},"uuid":"u1","sessionId":"s1","timestamp":"2025-10-24T20:50:22.800Z"}`,
				`{"type":"file-history-snapshot","messageId":"u1","snapshot":{"messageId":"u1","trackedFileBackups":{},"timestamp":"2025-10-24T20:50:22.798Z"},"isSnapshotUpdate":true}`,
				`{"type":"file-history-snapshot","messageId":"u2","snapshot":{"messageId":"u2","trackedFileBackups":{},"timestamp":"bogus"},"isSnapshotUpdate":false}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				var at []string
				for _, e := range evs {
					if e.Type() == canonical.KindThreadMetadataUpdated {
						at = append(at, e.CreatedAt.Format(time.RFC3339Nano))
					}
				}
				// The update: the user line's time plus the 1 ms between
				// their arrivals, not the original's time; an unreadable
				// time: the clock's too.
				require.Equal(t, []string{"2025-10-24T20:50:22.798Z", "2025-10-24T20:50:22.801Z", "2025-10-24T20:50:22.802Z"}, at)
			},
		},
		{
			name:  "older logs without stop reasons: the next prompt ends the turn; turns are distinct",
			given: []string{user("u1", "one"), asst("m1", `{"type":"text","text":"a"}`, "null", 1), user("u2", "two"), asst("m2", `{"type":"text","text":"b"}`, "null", 1)},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				var started, completed []string
				for _, e := range evs {
					switch e.Type() { //nolint:exhaustive // only turns matter here
					case canonical.KindTurnStarted:
						started = append(started, e.TurnID)
					case canonical.KindTurnCompleted:
						completed = append(completed, e.TurnID)
					}
				}
				require.Len(t, started, 2)
				require.NotEqual(t, started[0], started[1])
				require.Equal(t, started[:1], completed)
			},
		},
		{
			name: "the CLI's interruption marker ends the open turn interrupted and opens none",
			given: []string{
				user("u1", "one"), asst("m1", `{"type":"tool_use","id":"t1","name":"Read","input":{}}`, "null", 4),
				`{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"The user doesn't want to proceed with this tool use.","is_error":true}]},"uuid":"u2","sessionId":"s1"}`,
				`{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]},"uuid":"u3","sessionId":"s1"}`,
				user("u4", "two"), asst("m2", `{"type":"text","text":"b"}`, `"end_turn"`, 1),
				// With no turn open, the marker still opens none of its own.
				`{"type":"user","isSidechain":false,"message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]},"uuid":"u5","sessionId":"s1"}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				started, done := turns(evs)
				var markers []canonical.Event
				for _, e := range evs {
					if p, ok := e.Payload.(*canonical.ItemCompleted); ok && strings.HasPrefix(p.Content[canonical.StreamUnknown], "[Request interrupted") {
						markers = append(markers, e)
						require.Equal(t, "injected by the CLI", p.Title)
					}
				}
				require.Len(t, started, 2, "one turn per prompt")
				require.Len(t, done, 2)
				require.Equal(t, canonical.TurnStateInterrupted, done[0].State)
				require.Equal(t, "Request interrupted by user for tool use", done[0].ErrorMessage, "the marker's words are the reason")
				require.Equal(t, int64(4), done[0].Usage.OutputTokens, "the tokens the interrupted turn spent")
				require.Equal(t, canonical.TurnStateCompleted, done[1].State)
				require.Empty(t, done[1].ErrorMessage)
				require.Len(t, markers, 2)
				require.Equal(t, started[0], markers[0].TurnID, "the marker belongs to the turn it ends")
			},
		},
		{
			name: "a local command as older CLIs wrote it opens no turn and ends the open one, as system:local_command",
			given: []string{
				user("u1", "one"), asst("m1", `{"type":"text","text":"a"}`, "null", 2),
				`{"type":"user","isSidechain":false,"isMeta":true,"message":{"role":"user","content":"Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to."},"uuid":"c1","sessionId":"s1"}`,
				`{"type":"user","isSidechain":false,"message":{"role":"user","content":"<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>"},"uuid":"c2","sessionId":"s1"}`,
				`{"type":"user","isSidechain":false,"message":{"role":"user","content":"<local-command-stdout></local-command-stdout>"},"uuid":"c3","sessionId":"s1"}`,
				`{"type":"system","subtype":"local_command","content":"<command-name>/model</command-name>","level":"info","uuid":"c4","sessionId":"s1"}`,
				user("u2", "two"), asst("m2", `{"type":"text","text":"b"}`, `"end_turn"`, 1),
				// A prompt command (/init) writes <command-name> too, with no
				// caveat before it: it is a prompt.
				user("u3", "<command-message>init is analyzing your codebase…</command-message>\\n<command-name>/init</command-name>"),
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				started, done := turns(evs)
				local := map[string]string{}
				for _, e := range evs {
					if p, ok := e.Payload.(*canonical.ItemCompleted); ok && (p.Title == "local command" || p.Title == "injected by the CLI") {
						require.Empty(t, e.TurnID, "outside turns: %+v", p)
						local[string(p.ItemType)] += p.Content[canonical.StreamCommandOutput] + p.Content[canonical.StreamUnknown][:min(7, len(p.Content[canonical.StreamUnknown]))] + "|"
					}
				}
				require.Len(t, started, 3, "one turn per prompt, /init's included")
				require.Len(t, done, 2)
				require.Equal(t, canonical.TurnStateCompleted, done[0].State, "the caveat ends the open turn")
				require.Equal(t, map[string]string{
					"user_message":      "Caveat:|",
					"command_execution": "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n<command-args></command-args>|<local-command-stdout></local-command-stdout>|<command-name>/model</command-name>|",
				}, local)
			},
		},
		{
			name:  "an API error message ends the turn failed",
			given: []string{user("u1", "hi"), `{"type":"assistant","message":{"id":"e1","model":"<synthetic>","role":"assistant","stop_reason":"stop_sequence","content":[{"type":"text","text":"API Error: 500"}],"usage":{"input_tokens":0,"output_tokens":0}},"isApiErrorMessage":true,"error":"server_error","sessionId":"s1"}`},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				last := evs[len(evs)-2].Payload.(*canonical.TurnCompleted)
				require.Equal(t, canonical.TurnStateFailed, last.State)
				require.Equal(t, "API Error: 500", last.ErrorMessage)
			},
		},
		{
			name:  "bad input is kept, not dropped",
			given: []string{`{"type":"user"`, `{"type":"brand-new-record"}`},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.KindRuntimeError, evs[0].Type())
				require.Equal(t, canonical.KindRuntimeWarning, evs[1].Type())
				require.Equal(t, claudelog.Source, evs[0].Raw.Source)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			evs := mapLines(t, claudelog.Adapter{}, strs(tt.given...))
			for _, e := range evs {
				require.NoError(t, canonical.Validate(e))
			}
			tt.check(t, evs)
		})
	}
}

// transcript is what a stream and the log of one session must agree on.
type transcript struct {
	Turns   int
	Texts   [][]string // per turn: final assistant texts, in order
	TextIDs [][]string // per turn: the item ids of Texts
	Items   []string   // assistant, reasoning and tool item ids, in order
	Usage   []canonical.TokenUsage
	Threads []string
}

func summarize(evs []canonical.Event) transcript {
	var tr transcript
	turn := -1
	for _, e := range evs {
		switch p := e.Payload.(type) { //nolint:gochecksumtype // only turns and items matter here
		case *canonical.TurnStarted:
			tr.Turns++
			turn++
			tr.Texts, tr.TextIDs = append(tr.Texts, nil), append(tr.TextIDs, nil)
		case *canonical.ItemCompleted:
			if p.ItemType == canonical.ItemTypeUserMessage {
				continue
			}
			tr.Items = append(tr.Items, e.ItemID)
			if text := p.Content[canonical.StreamAssistantText]; text != "" && turn >= 0 {
				tr.Texts[turn], tr.TextIDs[turn] = append(tr.Texts[turn], text), append(tr.TextIDs[turn], e.ItemID)
			}
		case *canonical.TurnCompleted:
			if p.Usage != nil {
				tr.Usage = append(tr.Usage, *p.Usage)
			}
		case *canonical.ThreadStarted:
			tr.Threads = append(tr.Threads, e.ThreadID)
		}
	}
	return tr
}

// TestStreamAndLogAgree maps the control-protocol stream and the session
// log of the same recorded runs (testdata/recordings/MANIFEST.tsv: each
// claude-log file was written by the claude-control run of its scenario)
// and checks they give the same turns, item ids, final texts and usage.
// A sub-agent's lines are in a transcript of its own
// (<scenario>.agent-N.jsonl), of which the stream shows some: the
// stream's item ids are the log's and some of the transcripts'.
func TestStreamAndLogAgree(t *testing.T) {
	t.Parallel()
	logs, err := filepath.Glob(recordings)
	require.NoError(t, err)
	logs = slices.DeleteFunc(logs, isAgentTranscript)
	require.NotEmpty(t, logs)
	for _, logPath := range logs {
		name := filepath.Base(logPath)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			stream := summarize(mapLines(t, claudestream.Adapter{}, adaptertest.ReadLines(t, filepath.Join(recordingsDir, "claude-control", name))))
			log := summarize(mapLines(t, claudelog.Adapter{}, adaptertest.ReadLines(t, logPath)))
			require.Positive(t, stream.Turns)
			require.Equal(t, stream.Turns, log.Turns, "turns")
			require.Equal(t, stream.Usage, log.Usage, "per-turn usage")
			agents, err := filepath.Glob(strings.TrimSuffix(logPath, ".jsonl") + ".agent-*.jsonl")
			require.NoError(t, err)
			if len(agents) == 0 {
				require.Equal(t, stream.Texts, log.Texts, "final assistant texts per turn")
				require.Equal(t, stream.Items, log.Items, "item ids")
				return
			}
			var agentItems []string
			for _, a := range agents {
				agentItems = append(agentItems, summarize(mapLines(t, claudelog.Adapter{}, adaptertest.ReadLines(t, a))).Items...)
			}
			// A background sub-agent's messages are in the stream, inside
			// the turn that launched it, and in its transcript, not the log.
			for i := range stream.Texts {
				var main []string
				for j, id := range stream.TextIDs[i] {
					if !slices.Contains(agentItems, id) {
						main = append(main, stream.Texts[i][j])
					}
				}
				stream.Texts[i] = main
			}
			require.Equal(t, stream.Texts, log.Texts, "final assistant texts per turn of the main conversation")
			mainItems := slices.DeleteFunc(slices.Clone(stream.Items), func(id string) bool { return slices.Contains(agentItems, id) })
			require.Equal(t, mainItems, log.Items, "the stream's item ids of the main conversation")
			require.Less(t, len(mainItems), len(stream.Items), "the stream shows a sub-agent's message")
		})
	}
}

func isAgentTranscript(path string) bool { return strings.Contains(filepath.Base(path), ".agent-") }

// FuzzMap maps arbitrary lines: never a panic, every event validates and
// round-trips through its JSON document.
func FuzzMap(f *testing.F) {
	lines := adaptertest.ReadLines(f, "testdata/inventory.jsonl")
	for i, l := range lines {
		f.Add(l, lines[(i+1)%len(lines)])
	}
	// A hook run and its end, as a summary and as an attachment.
	run := []byte(`{"type":"progress","data":{"type":"hook_progress","hookEvent":"Stop","hookName":"Stop","command":"a.sh"},"toolUseID":"t","uuid":"h","sessionId":"s"}`)
	f.Add(run, []byte(`{"type":"system","subtype":"stop_hook_summary","hookInfos":[{"command":"a.sh"}],"hookErrors":["a.sh: 1"],"toolUseID":"t","uuid":"s","sessionId":"s"}`))
	f.Add(run, []byte(`{"type":"attachment","attachment":{"type":"hook_blocking_error","hookEvent":"Stop","toolUseID":"t","blockingError":{"blockingError":"no","command":"a.sh"}},"uuid":"a","sessionId":"s"}`))
	adaptertest.Fuzz(f, claudelog.Adapter{}, nil)
}

func BenchmarkMap(b *testing.B) {
	var lines [][]byte
	for _, in := range adaptertest.Inputs(b, recordings, false) {
		lines = append(lines, in.Frames...)
	}
	adaptertest.Bench(b, claudelog.Adapter{}, lines)
}

// TestTitlesWaitBounded: a log that opens with more summaries of other
// conversations than are kept waiting keeps the latest.
func TestTitlesWaitBounded(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := range 70 {
		lines = append(lines, fmt.Sprintf(`{"type":"summary","summary":"title %d","leafUuid":"leaf-%d"}`, i, i))
	}
	for _, leaf := range []string{"leaf-0", "leaf-5", "leaf-6", "leaf-69"} {
		lines = append(lines, `{"type":"user","message":{"role":"user","content":"go"},"uuid":"`+leaf+`","sessionId":"s1"}`)
	}
	var names []string
	for _, e := range mapLines(t, claudelog.Adapter{}, strs(lines...)) {
		if p, ok := e.Payload.(*canonical.ThreadMetadataUpdated); ok && p.Name != "" {
			names = append(names, p.Name)
		}
	}
	require.Equal(t, []string{"title 6", "title 69"}, names, "the six oldest were let go")
}

// TestNotificationIsInjected: the CLI's notice that a background
// sub-agent ended starts a turn of its own, as a prompt does, and is no
// message the user wrote.
func TestNotificationIsInjected(t *testing.T) {
	t.Parallel()
	evs := mapLines(t, claudelog.Adapter{}, adaptertest.ReadLines(t, filepath.Join(recordingsDir, "claude-log", "subagent-background.jsonl")))
	var titles []string
	turns := 0
	for _, e := range evs {
		switch p := e.Payload.(type) { //nolint:gochecksumtype // only turns and user messages matter here
		case *canonical.TurnStarted:
			turns++
		case *canonical.ItemCompleted:
			if p.ItemType == canonical.ItemTypeUserMessage {
				titles = append(titles, p.Title)
			}
		}
	}
	require.Equal(t, 2, turns, "the prompt's turn and the notification's")
	require.Equal(t, []string{"", "injected by the CLI"}, titles, "the user's prompt, then the notification")
}
