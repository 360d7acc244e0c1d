package codexrollout_test

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/pkg/adapters/codexrollout"
	"github.com/agentwire/agentwire/pkg/canonical"
)

const (
	recordings = "../../../testdata/recordings/codex-rollout/*.jsonl"
	corpus     = "../../../../shared/corpus/codex-rollout/*.jsonl"
)

func TestInventory(t *testing.T) {
	t.Parallel()
	adaptertest.Inventory(t, codexrollout.Adapter{}, "testdata/inventory.tsv", "testdata/inventory.jsonl")
}

func TestGolden(t *testing.T) {
	t.Parallel()
	adaptertest.Golden(t, codexrollout.Adapter{}, "testdata/inventory.jsonl", "testdata/golden")
	adaptertest.Golden(t, codexrollout.Adapter{}, recordings, "testdata/golden")
	// The shared corpus, when it is checked out next to the project.
	if m, _ := filepath.Glob(corpus); len(m) > 0 {
		adaptertest.Golden(t, codexrollout.Adapter{}, corpus, "testdata/golden")
	}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	inputs := adaptertest.Inputs(t, "testdata/inventory.jsonl", false)
	inputs = append(inputs, adaptertest.Inputs(t, recordings, false)...)
	inputs = append(inputs, adaptertest.Inputs(t, corpus, true)...)
	adaptertest.Run(t, codexrollout.Adapter{}, inputs, adaptertest.Features{})
}

// TestNoWarnings holds the recordings to zero runtime.warning: every frame
// Codex 0.171.0 sent in them is of a known kind.
func TestNoWarnings(t *testing.T) {
	t.Parallel()
	for _, in := range adaptertest.Inputs(t, recordings, false) {
		for _, e := range adaptertest.Flat(adaptertest.MapAll(t, codexrollout.Adapter{}, adaptertest.Frames(codexrollout.Dialect, in.Name, in.Frames))) {
			if w, ok := e.Payload.(*canonical.RuntimeWarning); ok && !strings.HasPrefix(w.Message, "Reconnecting") {
				t.Errorf("%s: runtime.warning %q", in.Name, w.Message)
			}
		}
	}
}

func mapLines(t *testing.T, lines ...string) []canonical.Event {
	t.Helper()
	return adaptertest.MapLines(t, codexrollout.Adapter{}, lines...)
}

func ln(typ, payload string) string {
	return `{"timestamp":"2026-12-02T12:59:06.063Z","type":"` + typ + `","payload":` + payload + `}`
}

const tc = `{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":60,"output_tokens":10,"reasoning_output_tokens":2,"total_tokens":110},"last_token_usage":{"input_tokens":100,"cached_input_tokens":60,"output_tokens":10,"reasoning_output_tokens":2,"total_tokens":110},"model_context_window":1000},"rate_limits":{"primary":{"used_percent":4.0,"window_minutes":300,"resets_at":1771890497},"secondary":null}}`

// tokens is a token_count whose cumulative total is n tokens of output.
func tokens(n int) string {
	u := `{"input_tokens":0,"output_tokens":` + strconv.Itoa(n) + `,"total_tokens":` + strconv.Itoa(n) + `}`
	return `{"type":"token_count","info":{"total_token_usage":` + u + `,"last_token_usage":` + u + `}}`
}

func TestMap(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name     string
		given    []string
		expected []canonical.Kind
		check    func(t *testing.T, evs []canonical.Event)
	}{
		{
			name: "task_started/task_complete bracket a turn; repeated token_count snapshots are not counted twice",
			given: []string{
				ln("session_meta", `{"id":"th","cli_version":"0.171.0"}`),
				ln("event_msg", `{"type":"task_started","turn_id":"tu"}`),
				ln("event_msg", tc), ln("event_msg", tc),
				ln("event_msg", `{"type":"task_complete","turn_id":"tu","duration_ms":5}`),
			},
			expected: []canonical.Kind{canonical.KindSessionStarted, canonical.KindThreadStarted, canonical.KindSessionConfigured, canonical.KindTurnStarted,
				canonical.KindThreadTokenUsageUpdated, canonical.KindAccountRateLimitsUpdated, canonical.KindThreadTokenUsageUpdated, canonical.KindAccountRateLimitsUpdated, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				want := canonical.TokenUsage{InputTokens: 40, CachedInputTokens: 60, OutputTokens: 10, ReasoningOutputTokens: 2}
				require.Equal(t, want, *evs[8].Payload.(*canonical.TurnCompleted).Usage)
				require.NotNil(t, evs[4].Payload.(*canonical.ThreadTokenUsageUpdated).Last)
				require.Nil(t, evs[6].Payload.(*canonical.ThreadTokenUsageUpdated).Last, "a repeated snapshot carries no new last usage")
				// The turn's usage so far, under the id turn.completed names.
				for _, i := range []int{4, 6} {
					require.Equal(t, want, *evs[i].Payload.(*canonical.ThreadTokenUsageUpdated).Turn)
					require.Equal(t, evs[8].TurnID, evs[i].TurnID)
					require.Equal(t, "tu", evs[i].ProviderRefs.ProviderTurnID)
				}
				w := evs[5].Payload.(*canonical.AccountRateLimitsUpdated).Windows
				require.Len(t, w, 1)
				require.Equal(t, int64(300), *w[0].WindowMinutes)
				require.Equal(t, evs[3].TurnID, evs[8].TurnID)
				require.Equal(t, "tu", evs[3].ProviderRefs.ProviderTurnID)
			},
		},
		{
			name: "a resumed process counts from zero again in the same rollout: the thread's total goes on, each turn counts its own",
			given: []string{
				ln("session_meta", `{"id":"th","cli_version":"0.40.0"}`),
				ln("event_msg", `{"type":"task_started","turn_id":"t1"}`),
				ln("event_msg", tokens(100)), ln("event_msg", tokens(500)),
				ln("event_msg", `{"type":"task_complete","turn_id":"t1"}`),
				// The thread resumed by a new process.
				ln("event_msg", `{"type":"task_started","turn_id":"t2"}`),
				ln("event_msg", tokens(30)),
				// And again mid-turn: its count so far stays the turn's.
				ln("event_msg", tokens(20)), ln("event_msg", tokens(25)),
				ln("event_msg", `{"type":"task_complete","turn_id":"t2"}`),
			},
			expected: []canonical.Kind{canonical.KindSessionStarted, canonical.KindThreadStarted, canonical.KindSessionConfigured,
				canonical.KindTurnStarted, canonical.KindThreadTokenUsageUpdated, canonical.KindThreadTokenUsageUpdated, canonical.KindTurnCompleted,
				canonical.KindTurnStarted, canonical.KindThreadTokenUsageUpdated, canonical.KindThreadTokenUsageUpdated, canonical.KindThreadTokenUsageUpdated, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				var totals, turns []int64
				for _, e := range evs {
					if p, ok := e.Payload.(*canonical.ThreadTokenUsageUpdated); ok {
						totals = append(totals, p.Usage.OutputTokens)
					}
					if p, ok := e.Payload.(*canonical.TurnCompleted); ok {
						turns = append(turns, p.Usage.OutputTokens)
					}
				}
				require.Equal(t, []int64{100, 500, 530, 550, 555}, totals, "the thread's total, all processes' counts")
				require.Equal(t, []int64{500, 55}, turns, "each turn's own: 30, then 25 more from the third process")
				require.Equal(t, totals[len(totals)-1], turns[0]+turns[1])
			},
		},
		{
			name: "tool begin/end and output pair by call_id",
			given: []string{
				ln("event_msg", `{"type":"task_started","turn_id":"tu"}`),
				ln("response_item", `{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}`),
				ln("event_msg", `{"type":"exec_command_begin","call_id":"c1","turn_id":"tu","command":["ls"]}`),
				ln("event_msg", `{"type":"exec_command_end","call_id":"c1","turn_id":"tu","exit_code":2,"aggregated_output":"a.go\n","duration":{"secs":1,"nanos":250000000}}`),
				ln("response_item", `{"type":"function_call_output","call_id":"c1","output":"a.go\n"}`),
				ln("event_msg", `{"type":"task_complete","turn_id":"tu"}`),
			},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemUpdated, canonical.KindItemUpdated, canonical.KindItemCompleted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, evs[1].ItemID, evs[4].ItemID)
				done := evs[4].Payload.(*canonical.ItemCompleted)
				require.Equal(t, canonical.ItemTypeCommandExecution, done.ItemType)
				require.Equal(t, "ls", done.Command)
				require.Equal(t, "a.go\n", done.Content[canonical.StreamCommandOutput])
				// What the end event said reaches the completion, which the
				// output (plain text) does not say; the update does not
				// carry it, a terminal field of an unfinished item.
				require.Equal(t, new(2), done.ExitCode)
				require.Equal(t, new(int64(1250)), done.DurationMs)
				require.Nil(t, evs[3].Payload.(*canonical.ItemUpdated).ExitCode)
				require.Nil(t, evs[3].Payload.(*canonical.ItemUpdated).DurationMs)
			},
		},
		{
			name: "a command the user typed (source user_shell) is by the user; the agent's is not",
			given: []string{
				ln("event_msg", `{"type":"task_started","turn_id":"tu"}`),
				ln("event_msg", `{"type":"exec_command_begin","call_id":"u1","turn_id":"tu","command":["git","status"],"source":"user_shell"}`),
				ln("event_msg", `{"type":"exec_command_end","call_id":"u1","turn_id":"tu","exit_code":0,"aggregated_output":"clean\n","source":"user_shell"}`),
				ln("event_msg", `{"type":"exec_command_begin","call_id":"a1","turn_id":"tu","command":["ls"],"source":"agent"}`),
				ln("event_msg", `{"type":"task_complete","turn_id":"tu"}`),
			},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemUpdated, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemCompleted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				// Every event of the user's command says so, its completion
				// at the end of the turn too; none of the agent's does.
				byUser := map[string][]bool{}
				for _, e := range evs[1:6] {
					lc := lifecycle(e)
					require.Equal(t, canonical.ItemTypeCommandExecution, lc.ItemType)
					byUser[e.ItemID] = append(byUser[e.ItemID], lc.ByUser)
				}
				require.Equal(t, map[string][]bool{evs[1].ItemID: {true, true, true}, evs[3].ItemID: {false, false}}, byUser)
			},
		},
		{
			name: "a shell call's output wrapped with its exit code (CLIs of 2025) is unwrapped",
			given: []string{
				ln("event_msg", `{"type":"task_started","turn_id":"tu"}`),
				ln("response_item", `{"type":"function_call","name":"shell","arguments":"{\"command\":[\"false\"]}","call_id":"c1"}`),
				ln("response_item", `{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"no\\n\",\"metadata\":{\"exit_code\":1,\"duration_seconds\":0.1}}"}`),
				ln("response_item", `{"type":"function_call","name":"shell","arguments":"{\"command\":[\"cat\",\"x.json\"]}","call_id":"c2"}`),
				ln("response_item", `{"type":"function_call_output","call_id":"c2","output":"{\"output\":1}"}`),
				ln("response_item", `{"type":"function_call","name":"shell","arguments":"{\"command\":[\"brew\"]}","call_id":"c3"}`),
				ln("response_item", `{"type":"function_call_output","call_id":"c3","output":"failed in sandbox MacosSeatbelt with execution error: sandbox denied exec error, exit code: 2, stdout: , stderr: denied"}`),
				ln("event_msg", `{"type":"task_complete","turn_id":"tu"}`),
			},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindItemCompleted,
				canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				done := evs[2].Payload.(*canonical.ItemCompleted)
				require.Equal(t, "no\n", done.Content[canonical.StreamCommandOutput])
				require.NotNil(t, done.ExitCode)
				require.Equal(t, 1, *done.ExitCode)
				require.Equal(t, new(int64(100)), done.DurationMs, "duration_seconds, in ms")
				other := evs[4].Payload.(*canonical.ItemCompleted)
				require.Equal(t, `{"output":1}`, other.Content[canonical.StreamCommandOutput], "JSON that is no such wrapper is output as it is")
				require.Nil(t, other.ExitCode)
				require.Nil(t, other.DurationMs)
				denied := evs[6].Payload.(*canonical.ItemCompleted)
				require.Equal(t, new(2), denied.ExitCode, "the exit code the sandbox's report states")
				require.Contains(t, denied.Content[canonical.StreamCommandOutput], "failed in sandbox", "the report stays the output")
			},
		},
		{
			name: "an exec_command output's header (CLIs of 2026) gives the exit code and, once exited, the duration",
			given: []string{
				ln("event_msg", `{"type":"task_started","turn_id":"tu"}`),
				ln("response_item", `{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"false\"}","call_id":"c1"}`),
				ln("response_item", `{"type":"function_call_output","call_id":"c1","output":"Chunk ID: 56effa\nWall time: 0.0512 seconds\nProcess exited with code 1\nOriginal token count: 1\nOutput:\nno\n"}`),
				ln("response_item", `{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"sleep 9\"}","call_id":"c2"}`),
				ln("response_item", `{"type":"function_call_output","call_id":"c2","output":"Chunk ID: 1a2b3c\nWall time: 10.0000 seconds\nProcess running with session ID 7\nOriginal token count: 0\nOutput:\n"}`),
				ln("response_item", `{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"cat notes\"}","call_id":"c3"}`),
				ln("response_item", `{"type":"function_call_output","call_id":"c3","output":"Dear diary\nOutput:\nfine"}`),
				ln("response_item", `{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"true\"}","call_id":"c4"}`),
				ln("response_item", `{"type":"function_call_output","call_id":"c4","output":"Wall time: NaN seconds\nProcess exited with code 0\nOutput:\n"}`),
				ln("event_msg", `{"type":"task_complete","turn_id":"tu"}`),
			},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted,
				canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted,
				canonical.KindItemCompleted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				exited := evs[2].Payload.(*canonical.ItemCompleted)
				require.Equal(t, "no\n", exited.Content[canonical.StreamCommandOutput], "the header is for the model, not output")
				require.Equal(t, new(1), exited.ExitCode)
				require.Equal(t, new(int64(51)), exited.DurationMs)
				running := evs[4].Payload.(*canonical.ItemCompleted)
				require.Nil(t, running.ExitCode)
				require.Nil(t, running.DurationMs, "a running process's wall time is the wait for this chunk")
				require.Empty(t, running.Content[canonical.StreamCommandOutput])
				plain := evs[6].Payload.(*canonical.ItemCompleted)
				require.Equal(t, "Dear diary\nOutput:\nfine", plain.Content[canonical.StreamCommandOutput], "no header: the output as it is")
				require.Nil(t, plain.ExitCode)
				nan := evs[8].Payload.(*canonical.ItemCompleted)
				require.Nil(t, nan.DurationMs, "a wall time that is no number makes no header: ParseFloat reads NaN")
				require.Equal(t, "Wall time: NaN seconds\nProcess exited with code 0\nOutput:\n", nan.Content[canonical.StreamCommandOutput])
			},
		},
		{
			name: "a message recorded twice (EventMsg and response_item) is one item; legacy id-less deltas join it",
			given: []string{
				ln("event_msg", `{"type":"agent_message_delta","delta":"Hel"}`),
				ln("event_msg", `{"type":"agent_message","message":"Hello"}`),
				ln("response_item", `{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello"}]}`),
			},
			expected: []canonical.Kind{canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindItemUpdated, canonical.KindItemCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, evs[0].ItemID, evs[3].ItemID)
				require.Equal(t, "Hello", evs[3].Payload.(*canonical.ItemCompleted).Content[canonical.StreamAssistantText])
			},
		},
		{
			name: "newer deltas carry item ids; ids match the app-server's",
			given: []string{
				ln("session_meta", `{"id":"th"}`),
				ln("event_msg", `{"type":"task_started","turn_id":"tu"}`),
				ln("event_msg", `{"type":"reasoning_content_delta","thread_id":"th","turn_id":"tu","item_id":"rs1","delta":"x","summary_index":1}`),
				ln("event_msg", `{"type":"item_completed","thread_id":"th","turn_id":"tu","item":{"type":"Reasoning","id":"rs1","summary_text":["x"]}}`),
				ln("response_item", `{"type":"reasoning","id":"rs1","summary":[{"type":"summary_text","text":"x"}]}`),
			},
			expected: []canonical.Kind{canonical.KindSessionStarted, canonical.KindThreadStarted, canonical.KindSessionConfigured, canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindItemUpdated, canonical.KindItemCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, 1, *evs[5].Payload.(*canonical.ContentDelta).SummaryIndex)
				ids := canonical.IDSpace{Tenant: "conformance", Provider: canonical.ProviderCodex, SessionKey: "whatever"}
				require.Equal(t, ids.Native(canonical.EntityItem, "th", "tu", "rs1"), evs[7].ItemID, "same id as the app-server adapter gives item rs1")
				require.Equal(t, ids.Native(canonical.EntityTurn, "th", "tu"), evs[3].TurnID)
			},
		},
		{
			name: "a rollout of codex 0.40 marks no turns: each prompt starts one, with its message and the usage until the next",
			given: []string{
				ln("session_meta", `{"id":"th","cli_version":"0.40.0"}`),
				ln("response_item", `{"type":"message","role":"user","content":[{"type":"input_text","text":"one"}]}`),
				ln("event_msg", `{"type":"user_message","message":"one"}`),
				ln("event_msg", tokens(100)), ln("event_msg", `{"type":"agent_message","message":"a"}`), ln("event_msg", tokens(150)),
				ln("response_item", `{"type":"message","role":"user","content":[{"type":"input_text","text":"two"}]}`),
				ln("event_msg", `{"type":"user_message","message":"two"}`),
				ln("event_msg", tokens(400)),
				ln("event_msg", `{"type":"turn_aborted","reason":"interrupted"}`),
				ln("event_msg", `{"type":"user_message","message":"three"}`),
				ln("event_msg", tokens(450)),
			},
			expected: []canonical.Kind{canonical.KindSessionStarted, canonical.KindThreadStarted, canonical.KindSessionConfigured,
				canonical.KindItemStarted, canonical.KindTurnStarted, canonical.KindItemCompleted,
				canonical.KindThreadTokenUsageUpdated, canonical.KindItemStarted, canonical.KindThreadTokenUsageUpdated,
				// The second prompt's transcript copy; the turn's end completes
				// the agent message (its copy never came), not the prompt.
				canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindTurnCompleted, canonical.KindTurnStarted, canonical.KindItemCompleted,
				canonical.KindThreadTokenUsageUpdated, canonical.KindTurnAborted, canonical.KindTurnCompleted,
				canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindThreadTokenUsageUpdated},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				first, second := evs[11].Payload.(*canonical.TurnCompleted), evs[16].Payload.(*canonical.TurnCompleted)
				require.Equal(t, canonical.TurnStateCompleted, first.State, "ended by the next prompt")
				require.Equal(t, int64(150), first.Usage.TotalTokens())
				require.Equal(t, canonical.TurnStateInterrupted, second.State)
				require.Equal(t, int64(250), second.Usage.TotalTokens())
				// Each prompt's message completes in the turn it starts.
				require.Equal(t, []string{evs[4].TurnID, evs[12].TurnID, evs[17].TurnID}, []string{evs[5].TurnID, evs[13].TurnID, evs[18].TurnID})
				require.Equal(t, evs[9].ItemID, evs[13].ItemID, "the second prompt's two copies are one item")
				require.Equal(t, evs[7].ItemID, evs[10].ItemID)
				require.Equal(t, evs[17].TurnID, evs[19].TurnID, "the last turn stays open with its usage")
				require.Equal(t, int64(50), evs[19].Payload.(*canonical.ThreadTokenUsageUpdated).Turn.TotalTokens(), "its usage so far")
				require.Equal(t, int64(100), evs[6].Payload.(*canonical.ThreadTokenUsageUpdated).Turn.TotalTokens())
			},
		},
		{
			name: "an output that reports the user declined the call completes it declined",
			given: []string{
				ln("event_msg", `{"type":"task_started","turn_id":"tu"}`),
				ln("response_item", `{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"touch ../m\"}","call_id":"c1"}`),
				ln("response_item", `{"type":"function_call_output","call_id":"c1","output":"exec_command failed: CreateProcess { message: \"Rejected(\\\"rejected by user\\\")\" }"}`),
				ln("response_item", `{"type":"function_call","name":"shell","arguments":"{\"command\":[\"apply_patch\"]}","call_id":"c2"}`),
				ln("response_item", `{"type":"function_call_output","call_id":"c2","output":"patch rejected by user"}`),
				// Words of a command's own output are no rejection.
				ln("response_item", `{"type":"function_call","name":"shell","arguments":"{\"command\":[\"cat\",\"log\"]}","call_id":"c3"}`),
				ln("response_item", `{"type":"function_call_output","call_id":"c3","output":"the patch rejected by user earlier"}`),
			},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted,
				canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindItemCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				for i, want := range map[int]canonical.ItemStatus{2: canonical.ItemStatusDeclined, 4: canonical.ItemStatusDeclined, 6: canonical.ItemStatusCompleted} {
					require.Equal(t, want, evs[i].Payload.(*canonical.ItemCompleted).Status, "event %d", i)
				}
			},
		},
		{
			name: "a task_complete that carries an error (codex 0.171) ends its turn failed, after a runtime.error classed by codex_error_info",
			given: []string{
				ln("event_msg", `{"type":"task_started","turn_id":"tu"}`),
				ln("event_msg", `{"type":"task_complete","turn_id":"tu","last_agent_message":null,"error":{"message":"exceeded retry limit, last status: 401","codex_error_info":"unauthorized"},"duration_ms":2502}`),
				// An error that is not the schema's object still fails the turn.
				ln("event_msg", `{"type":"task_started","turn_id":"tv"}`),
				ln("event_msg", `{"type":"task_complete","turn_id":"tv","error":"boom"}`),
				ln("event_msg", `{"type":"task_started","turn_id":"tw"}`),
				ln("event_msg", `{"type":"task_complete","turn_id":"tw","error":null}`),
			},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindRuntimeError, canonical.KindTurnCompleted,
				canonical.KindTurnStarted, canonical.KindRuntimeError, canonical.KindTurnCompleted,
				canonical.KindTurnStarted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				fail := evs[1].Payload.(*canonical.RuntimeError)
				require.Equal(t, canonical.ErrorClassPermission, fail.Class)
				require.Equal(t, "exceeded retry limit, last status: 401", fail.Message)
				require.Equal(t, evs[0].TurnID, evs[1].TurnID, "the error is the turn's")
				done := evs[2].Payload.(*canonical.TurnCompleted)
				require.Equal(t, canonical.TurnStateFailed, done.State)
				require.Equal(t, fail.Message, done.ErrorMessage)
				require.Equal(t, new(int64(2502)), done.DurationMs)
				require.Equal(t, "boom", evs[4].Payload.(*canonical.RuntimeError).Message)
				require.Equal(t, canonical.TurnStateFailed, evs[5].Payload.(*canonical.TurnCompleted).State)
				require.Equal(t, canonical.TurnStateCompleted, evs[7].Payload.(*canonical.TurnCompleted).State, "a null error is none")
			},
		},
		{
			name: "an error line fails the turn task_complete ends, as the app-server's turn/completed says; a retry or a failed rollback does not",
			given: []string{
				ln("event_msg", `{"type":"task_started","turn_id":"tu"}`),
				ln("event_msg", `{"type":"error","message":"Reconnecting... 1/5"}`),
				ln("event_msg", `{"type":"error","message":"could not roll back","codex_error_info":"thread_rollback_failed"}`),
				ln("event_msg", `{"type":"task_complete","turn_id":"tu"}`),
				ln("event_msg", `{"type":"task_started","turn_id":"tv"}`),
				ln("event_msg", `{"type":"error","message":"stream disconnected","codex_error_info":{"response_stream_disconnected":{}}}`),
				// An error on the line that ends the turn too: a second
				// runtime.error, as the app-server's error notification and
				// failed turn/completed make two.
				ln("event_msg", `{"type":"task_complete","turn_id":"tv","error":{"message":"stream lost"}}`),
				// Between turns an error fails none.
				ln("event_msg", `{"type":"error","message":"no turn"}`),
				ln("event_msg", `{"type":"task_started","turn_id":"tw"}`),
				ln("event_msg", `{"type":"task_complete","turn_id":"tw"}`),
			},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindRuntimeError, canonical.KindRuntimeError, canonical.KindTurnCompleted,
				canonical.KindTurnStarted, canonical.KindRuntimeError, canonical.KindRuntimeError, canonical.KindTurnCompleted,
				canonical.KindRuntimeError, canonical.KindTurnStarted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.TurnStateCompleted, evs[3].Payload.(*canonical.TurnCompleted).State)
				require.Equal(t, canonical.ErrorClassTransport, evs[5].Payload.(*canonical.RuntimeError).Class)
				done := evs[7].Payload.(*canonical.TurnCompleted)
				require.Equal(t, canonical.TurnStateFailed, done.State)
				require.Equal(t, "stream lost", done.ErrorMessage, "the line that ends the turn says last why")
				require.Equal(t, canonical.TurnStateCompleted, evs[10].Payload.(*canonical.TurnCompleted).State)
			},
		},
		{
			name: "in a rollout that marks no turns, an error fails the turn the next prompt ends",
			given: []string{
				ln("session_meta", `{"id":"th","cli_version":"0.40.0"}`),
				ln("event_msg", `{"type":"user_message","message":"one"}`),
				ln("event_msg", `{"type":"error","message":"You've hit your usage limit."}`),
				ln("event_msg", `{"type":"user_message","message":"two"}`),
			},
			expected: []canonical.Kind{canonical.KindSessionStarted, canonical.KindThreadStarted, canonical.KindSessionConfigured,
				canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindRuntimeError, canonical.KindItemCompleted, canonical.KindTurnCompleted,
				canonical.KindTurnStarted, canonical.KindItemStarted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				done := evs[7].Payload.(*canonical.TurnCompleted)
				require.Equal(t, canonical.TurnStateFailed, done.State)
				require.Equal(t, "You've hit your usage limit.", done.ErrorMessage)
			},
		},
		{
			name: "a later rollout without task_started is left without turns",
			given: []string{
				ln("session_meta", `{"id":"th","cli_version":"0.146.0"}`),
				ln("event_msg", `{"type":"user_message","message":"one"}`),
				ln("event_msg", `{"type":"task_started","turn_id":"tu"}`),
			},
			expected: []canonical.Kind{canonical.KindSessionStarted, canonical.KindThreadStarted, canonical.KindSessionConfigured,
				canonical.KindItemStarted, canonical.KindTurnStarted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Empty(t, evs[3].TurnID)
			},
		},
		{
			name:     "bad input is kept, not dropped",
			given:    []string{`{"type":`, ln("event_msg", `{"type":"frobnicated"}`), ln("mystery", `{}`)},
			expected: []canonical.Kind{canonical.KindRuntimeError, canonical.KindRuntimeWarning, canonical.KindRuntimeWarning},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			evs := mapLines(t, tt.given...)
			require.Equal(t, tt.expected, adaptertest.Kinds(evs))
			for _, e := range evs {
				require.NoError(t, canonical.Validate(e))
			}
			if tt.check != nil {
				tt.check(t, evs)
			}
		})
	}
}

// FuzzMap maps arbitrary frames: never a panic, every event validates and
// round-trips through its JSON document.
func FuzzMap(f *testing.F) {
	for _, l := range adaptertest.ReadLines(f, "testdata/inventory.jsonl") {
		f.Add(l, l)
	}
	// A rollout of codex 0.40, whose prompts start turns.
	f.Add([]byte(ln("session_meta", `{"id":"th","cli_version":"0.40.0"}`)), []byte(ln("event_msg", `{"type":"user_message","message":"one"}`)))
	// A turn an error line fails, ended by a line that carries an error too.
	f.Add([]byte(ln("event_msg", `{"type":"error","message":"x","codex_error_info":"bad_request"}`)),
		[]byte(ln("event_msg", `{"type":"task_complete","turn_id":"tu","error":{"message":"y","codex_error_info":{"response_stream_disconnected":{}}}}`)))
	adaptertest.Fuzz(f, codexrollout.Adapter{}, adaptertest.AnyFrame)
}

func BenchmarkMap(b *testing.B) {
	var lines [][]byte
	for _, in := range adaptertest.Inputs(b, recordings, false) {
		lines = append(lines, in.Frames...)
	}
	adaptertest.Bench(b, codexrollout.Adapter{}, lines)
}

// lifecycle is the item payload of an item.started, item.updated or
// item.completed event.
func lifecycle(e canonical.Event) canonical.ItemLifecycle {
	switch p := e.Payload.(type) { //nolint:gochecksumtype // only item lifecycles are asked for
	case *canonical.ItemStarted:
		return canonical.ItemLifecycle(*p)
	case *canonical.ItemUpdated:
		return canonical.ItemLifecycle(*p)
	case *canonical.ItemCompleted:
		return canonical.ItemLifecycle(*p)
	default:
		panic("not an item lifecycle event: " + string(e.Type()))
	}
}
