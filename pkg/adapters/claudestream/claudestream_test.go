package claudestream_test

import (
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/adapters/claudestream"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// recordings are the project's own recordings of Claude Code; corpus are
// public transcripts checked out next to the project (skipped when absent).
var (
	recordings = []string{
		filepath.Join("..", "..", "..", "testdata", "recordings", "claude-stream", "*.jsonl"),
		filepath.Join("..", "..", "..", "testdata", "recordings", "claude-stream-partial", "*.jsonl"),
		filepath.Join("..", "..", "..", "testdata", "recordings", "claude-control", "*.jsonl"),
	}
	corpus = filepath.Join("..", "..", "..", "..", "shared", "corpus", "claude-stream", "*.jsonl")
)

// silent says which frames map to no events: keep-alives and a
// stream_event's message_stop. It reads the frame as the adapter does, its
// tap line unwrapped and its member names folded as encoding/json folds
// them: the fuzzer writes "tYpe", which the adapter reads as "type".
func silent(frame []byte) bool {
	msg, _, ok := adapter.Frame{Bytes: frame}.Unwrap()
	if !ok {
		return false
	}
	var h struct {
		Type  string `json:"type"`
		Event *struct {
			Type string `json:"type"`
		} `json:"event"`
	}
	if jsonscan.Unmarshal(msg, &h) != nil {
		return false
	}
	return h.Type == "keep_alive" || (h.Type == "stream_event" && h.Event != nil && h.Event.Type == "message_stop")
}

func TestInventory(t *testing.T) {
	t.Parallel()
	adaptertest.Inventory(t, claudestream.Adapter{}, "testdata/inventory.tsv", "testdata/inventory.jsonl")
}

func TestGolden(t *testing.T) {
	t.Parallel()
	adaptertest.Golden(t, claudestream.Adapter{}, "testdata/inventory.jsonl", "testdata/golden")
	// Golden file names carry the recording set, since scenarios repeat
	// across sets.
	for _, glob := range append(recordings, corpus) {
		set := filepath.Base(filepath.Dir(glob))
		if glob == corpus {
			set = "corpus"
		}
		dir := filepath.Join("testdata", "golden", set)
		if m, _ := filepath.Glob(glob); len(m) == 0 {
			continue
		}
		adaptertest.Golden(t, claudestream.Adapter{}, glob, dir)
	}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	inputs := adaptertest.Inputs(t, "testdata/inventory.jsonl", false)
	for _, g := range recordings {
		inputs = append(inputs, adaptertest.Inputs(t, g, false)...)
	}
	// Corpus files are excerpts: runs cut off without a result.
	inputs = append(inputs, adaptertest.Inputs(t, corpus, true)...)
	adaptertest.Run(t, claudestream.Adapter{}, inputs, adaptertest.Features{Silent: silent})
}

func mapLines(t *testing.T, lines ...string) []canonical.Event {
	t.Helper()
	return adaptertest.MapLines(t, claudestream.Adapter{}, lines...)
}

func ofType[P canonical.Payload](evs []canonical.Event) []P {
	var out []P
	for _, e := range evs {
		if p, ok := e.Payload.(P); ok {
			out = append(out, p)
		}
	}
	return out
}

const (
	initLine   = `{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5","tools":[],"uuid":"i"}`
	resultLine = `{"type":"result","subtype":"success","is_error":false,"result":"ok","stop_reason":"end_turn","session_id":"s1","total_cost_usd":0.01,"usage":{"input_tokens":10,"cache_read_input_tokens":20,"cache_creation_input_tokens":30,"output_tokens":5},"modelUsage":{"m":{"inputTokens":10,"outputTokens":5,"cacheReadInputTokens":20,"cacheCreationInputTokens":30,"costUSD":0.01}},"uuid":"r"}`
)

// oneTurnWith checks that the events have one turn, with these texts:
// nothing said the first query's turn ended.
func oneTurnWith(texts ...string) func(t *testing.T, evs []canonical.Event) {
	return func(t *testing.T, evs []canonical.Event) {
		t.Helper()
		turns := turnsOf(t, evs)
		require.Len(t, turns, 1, "as before: nothing says the first query's turn ended")
		require.Equal(t, texts, turns[0].Texts)
	}
}

// taskStarted and taskNotified are a sub-agent run's start and end.
const (
	taskStarted  = `{"type":"system","subtype":"task_started","task_id":"t1","tool_use_id":"tu1","description":"d","session_id":"s1","uuid":"ts"}`
	taskNotified = `{"type":"system","subtype":"task_notification","task_id":"t1","tool_use_id":"tu1","status":"completed","summary":"done","session_id":"s1","uuid":"tn"}`
)

func assistant(msgID, content string) string {
	return `{"type":"assistant","message":{"id":"` + msgID + `","model":"m","role":"assistant","content":[` + content + `],"usage":{"input_tokens":1,"output_tokens":1}},"parent_tool_use_id":null,"session_id":"s1","uuid":"a-` + msgID + `"}`
}

func partial(event string) string {
	return `{"type":"stream_event","event":` + event + `,"session_id":"s1","parent_tool_use_id":null,"uuid":"p"}`
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
			name: "a result held past the next query's init ends the turn set aside: its own usage is its share of its model, the rest the next turn's",
			given: []string{
				initLine, assistant("m1", `{"type":"text","text":"A"}`), taskStarted, taskNotified,
				initLine, assistant("m2", `{"type":"text","text":"B"}`),
				`{"type":"result","subtype":"success","result":"A","session_id":"s1","usage":{"input_tokens":10,"output_tokens":5},"modelUsage":{"m":{"inputTokens":25,"outputTokens":12,"costUSD":0.05}},"uuid":"r1"}`,
				`{"type":"result","subtype":"success","result":"B","session_id":"s1","usage":{"input_tokens":15,"output_tokens":7},"modelUsage":{"m":{"inputTokens":25,"outputTokens":12,"costUSD":0.05}},"uuid":"r2"}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				turns := turnsOf(t, evs)
				require.Len(t, turns, 2)
				require.Equal(t, []string{"A"}, turns[0].Texts)
				require.Equal(t, []string{"B"}, turns[1].Texts)
				for i, want := range []canonical.TokenUsage{{InputTokens: 10, OutputTokens: 5}, {InputTokens: 15, OutputTokens: 7}} {
					require.Equal(t, want, *turns[i].Done.Usage, "turn %d", i+1)
					require.Equal(t, want, turns[i].Done.ModelUsage["m"].TokenUsage, "turn %d", i+1)
					require.Nil(t, turns[i].Done.ModelUsage["m"].CostUSD, "turn %d: the cost cannot be split", i+1)
				}
			},
		},
		{
			name: "an init of another session sets no turn aside",
			given: []string{
				initLine, assistant("m1", `{"type":"text","text":"A"}`), taskStarted, taskNotified,
				strings.Replace(initLine, `"s1"`, `"s2"`, 1), assistant("m2", `{"type":"text","text":"B"}`),
			},
			check: oneTurnWith("A", "B"),
		},
		{
			name: "a result of another session does not end a turn set aside",
			given: []string{
				initLine, assistant("m1", `{"type":"text","text":"A"}`), taskStarted, taskNotified,
				initLine, assistant("m2", `{"type":"text","text":"B"}`),
				strings.Replace(resultLine, `"s1"`, `"s2"`, 1),
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				turns := turnsOf(t, evs)
				require.Len(t, turns, 2)
				require.Nil(t, turns[0].Done, "the turn set aside is s1's: no result of its own came")
				require.NotNil(t, turns[1].Done, "the open turn ends, as any turn the result comes for")
			},
		},
		{
			name: "a sub-agent's end in a turn that ended sets no later turn aside",
			given: []string{
				initLine, assistant("m1", `{"type":"text","text":"A"}`), taskStarted, taskNotified,
				`{"type":"conversation_reset","session_id":"s1","uuid":"cr"}`,
				assistant("m2", `{"type":"text","text":"B"}`), initLine, assistant("m3", `{"type":"text","text":"C"}`),
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				turns := turnsOf(t, evs)
				require.Len(t, turns, 2, "the reset's, then the one after it")
				require.Equal(t, []string{"B", "C"}, turns[1].Texts)
			},
		},
		{
			name: "an init mid-turn with no sub-agent's end before it sets no turn aside",
			given: []string{
				initLine, assistant("m1", `{"type":"text","text":"A"}`), taskStarted,
				initLine, assistant("m2", `{"type":"text","text":"B"}`),
			},
			check: oneTurnWith("A", "B"),
		},
		{
			name: "turns: a client prompt opens a turn, the result closes it; two turns get distinct derived ids",
			given: []string{
				`{"dir":"client","msg":{"type":"user","message":{"role":"user","content":"one"},"parent_tool_use_id":null,"session_id":""}}`,
				initLine, assistant("m1", `{"type":"text","text":"A"}`), resultLine,
				`{"dir":"client","msg":{"type":"user","message":{"role":"user","content":"two"},"parent_tool_use_id":null,"session_id":"s1"}}`,
				assistant("m2", `{"type":"text","text":"B"}`), resultLine,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				var turns []string
				for _, e := range evs {
					if e.Type() == canonical.KindTurnStarted {
						turns = append(turns, e.TurnID)
					}
				}
				require.Len(t, turns, 2)
				require.NotEqual(t, turns[0], turns[1])
				for _, e := range evs {
					if e.Type() == canonical.KindTurnCompleted {
						require.Contains(t, turns, e.TurnID)
					}
				}
			},
		},
		{
			name:  "-p does not echo the prompt: the first assistant frame opens the turn",
			given: []string{initLine, assistant("m1", `{"type":"text","text":"hi"}`), resultLine},
			// The message's usage is the turn's so far; the result's is its own.
			expected: []canonical.Kind{canonical.KindThreadStarted, canonical.KindSessionConfigured, canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted,
				canonical.KindThreadTokenUsageUpdated, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, "claude-sonnet-4-5", evs[2].Payload.(*canonical.TurnStarted).Model)
				require.Equal(t, canonical.TokenUsage{InputTokens: 1, OutputTokens: 1}, *evs[5].Payload.(*canonical.ThreadTokenUsageUpdated).Turn)
				require.Nil(t, evs[7].Payload.(*canonical.ThreadTokenUsageUpdated).Turn, "the turn has ended")
				done := evs[6].Payload.(*canonical.TurnCompleted)
				require.Equal(t, canonical.TokenUsage{InputTokens: 10, CachedInputTokens: 20, CacheWriteInputTokens: 30, OutputTokens: 5}, *done.Usage, "cache reads and writes fold into their own buckets")
				require.Equal(t, "end_turn", done.StopReason)
				require.InDelta(t, 0.01, *done.TotalCostUSD, 1e-12)
				require.Equal(t, int64(20), done.ModelUsage["m"].CachedInputTokens)
				require.Equal(t, "s1", evs[0].ProviderRefs.ProviderThreadID)
				require.NotEqual(t, "s1", evs[0].ThreadID)
			},
		},
		{
			name: "an assistant message without content blocks is a warning, in a turn open already too",
			given: []string{
				initLine, assistant("m1", `{"type":"text","text":"A"}`), assistant("m2", ``),
				`{"type":"assistant","message":null,"session_id":"s1"}`,
			},
			expected: []canonical.Kind{canonical.KindThreadStarted, canonical.KindSessionConfigured, canonical.KindTurnStarted,
				canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindThreadTokenUsageUpdated,
				canonical.KindRuntimeWarning, canonical.KindThreadTokenUsageUpdated, canonical.KindRuntimeWarning},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				for _, w := range ofType[*canonical.RuntimeWarning](evs) {
					require.Equal(t, "assistant message without content blocks", w.Message)
				}
				require.NotNil(t, evs[6].Raw, "the frame is kept")
				require.Equal(t, int64(2), evs[7].Payload.(*canonical.ThreadTokenUsageUpdated).Turn.InputTokens, "its usage still counts")
			},
		},
		{
			name: "a call whose result came first is a warning: a frame yields an event, and the finished item stays finished",
			given: []string{
				initLine,
				`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"out"}]},"parent_tool_use_id":null,"session_id":"s1"}`,
				assistant("m1", `{"type":"tool_use","id":"tu1","name":"Bash","input":{"command":"ls"}}`),
			},
			expected: []canonical.Kind{canonical.KindThreadStarted, canonical.KindSessionConfigured, canonical.KindTurnStarted,
				canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindRuntimeWarning, canonical.KindThreadTokenUsageUpdated},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, "assistant message repeats tool calls that already finished", evs[5].Payload.(*canonical.RuntimeWarning).Message)
				require.NotNil(t, evs[5].Raw, "the frame is kept")
			},
		},
		{
			name: "a result's empty stop reason and nameless model say nothing",
			given: []string{initLine, assistant("m1", `{"type":"text","text":"A"}`),
				`{"type":"result","subtype":"success","stop_reason":"","session_id":"s1","modelUsage":{"":{"inputTokens":1},"m":{"inputTokens":2}}}`},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				done := ofType[*canonical.TurnCompleted](evs)
				require.Len(t, done, 1)
				require.Empty(t, done[0].StopReason)
				require.Equal(t, []string{"m"}, slices.Collect(maps.Keys(done[0].ModelUsage)))
			},
		},
		{
			name: "a message's final usage reports the turn's usage so far, under the id the result will name",
			given: []string{
				initLine,
				partial(`{"type":"message_start","message":{"id":"m1","model":"m","usage":{"input_tokens":1,"output_tokens":1}}}`),
				partial(`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"input_tokens":4,"cache_read_input_tokens":6,"output_tokens":9}}`),
				// Cut off: no result ends the turn.
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				u := ofType[*canonical.ThreadTokenUsageUpdated](evs)
				require.Len(t, u, 1)
				want := canonical.TokenUsage{InputTokens: 4, CachedInputTokens: 6, OutputTokens: 9}
				require.Equal(t, want, *u[0].Turn)
				require.Equal(t, map[string]canonical.ModelUsage{"m": {TokenUsage: want}}, u[0].TurnModelUsage)
				require.Equal(t, want, u[0].Usage, "the session total includes the open turn")
				e := evs[len(evs)-1]
				require.Equal(t, canonical.KindThreadTokenUsageUpdated, e.Type())
				require.Equal(t, evs[2].TurnID, e.TurnID)
				require.Equal(t, "m1", e.ProviderRefs.ProviderTurnID)
			},
		},
		{
			name: "partials then the full message: no doubled text, the same item id",
			given: []string{
				initLine,
				partial(`{"type":"message_start","message":{"id":"m1","model":"m","usage":{"input_tokens":1,"output_tokens":1}}}`),
				partial(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`),
				partial(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}`),
				partial(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}`),
				assistant("m1", `{"type":"text","text":"Hello"}`),
				partial(`{"type":"content_block_stop","index":0}`),
				partial(`{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"tu1","name":"Bash","input":{}}}`),
				partial(`{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"ls\"}"}}`),
				assistant("m1", `{"type":"tool_use","id":"tu1","name":"Bash","input":{"command":"ls"}}`),
				partial(`{"type":"content_block_stop","index":1}`),
				partial(`{"type":"message_stop"}`),
				`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"a.go","is_error":false}]},"parent_tool_use_id":null,"session_id":"s1"}`,
				resultLine,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				var text string
				for _, d := range ofType[*canonical.ContentDelta](evs) {
					if d.StreamKind == canonical.StreamAssistantText {
						text += d.Delta
					}
				}
				require.Equal(t, "Hello", text, "deltas carry the text once")
				var textItem, toolItem string
				for _, e := range evs {
					switch p := e.Payload.(type) { //nolint:gochecksumtype // only item lifecycles matter here
					case *canonical.ItemStarted:
						if p.ItemType == canonical.ItemTypeAssistantMessage {
							require.Empty(t, textItem, "the full message does not start the item again")
							textItem = e.ItemID
						} else {
							toolItem = e.ItemID
						}
					case *canonical.ItemCompleted:
						if p.ItemType == canonical.ItemTypeAssistantMessage {
							require.Equal(t, textItem, e.ItemID)
							require.Equal(t, "Hello", p.Content[canonical.StreamAssistantText])
						} else {
							require.Equal(t, toolItem, e.ItemID)
							require.Equal(t, canonical.ItemTypeCommandExecution, p.ItemType)
							require.Equal(t, "ls", p.Command)
							require.Equal(t, "a.go", p.Content[canonical.StreamCommandOutput])
						}
					}
				}
				// Non-partial mapping of the same message gives the same item ids.
				plain := mapLines(t, initLine, assistant("m1", `{"type":"text","text":"Hello"}`), assistant("m1", `{"type":"tool_use","id":"tu1","name":"Bash","input":{"command":"ls"}}`))
				require.Equal(t, textItem, plain[3].ItemID)
				require.Equal(t, toolItem, plain[6].ItemID, "after the text and the message's usage")
			},
		},
		{
			name: "tool classification",
			given: []string{
				initLine,
				assistant("m1", `{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}},{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"/a.go"}},{"type":"tool_use","id":"t3","name":"Write","input":{"file_path":"/b.go"}},{"type":"tool_use","id":"t4","name":"MultiEdit","input":{"file_path":"/c.go"}},{"type":"tool_use","id":"t5","name":"NotebookEdit","input":{"notebook_path":"/n.ipynb"}},{"type":"tool_use","id":"t6","name":"mcp__github__create_issue","input":{}},{"type":"tool_use","id":"t7","name":"WebSearch","input":{"query":"go"}},{"type":"tool_use","id":"t8","name":"WebFetch","input":{"url":"https://go.dev"}},{"type":"tool_use","id":"t9","name":"Task","input":{"description":"explore"}},{"type":"tool_use","id":"t10","name":"Agent","input":{}},{"type":"tool_use","id":"t11","name":"Read","input":{"file_path":"/a.go"}},{"type":"tool_use","id":"t12","name":"Grep","input":{}}`),
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				var got []canonical.ItemType
				for _, s := range ofType[*canonical.ItemStarted](evs) {
					got = append(got, s.ItemType)
				}
				require.Equal(t, []canonical.ItemType{
					canonical.ItemTypeCommandExecution, canonical.ItemTypeFileChange, canonical.ItemTypeFileChange, canonical.ItemTypeFileChange, canonical.ItemTypeFileChange,
					canonical.ItemTypeMCPToolCall, canonical.ItemTypeWebSearch, canonical.ItemTypeWebSearch, canonical.ItemTypeCollabAgentToolCall, canonical.ItemTypeCollabAgentToolCall,
					canonical.ItemTypeDynamicToolCall, canonical.ItemTypeDynamicToolCall,
				}, got)
				starts := ofType[*canonical.ItemStarted](evs)
				require.Equal(t, []string{"/n.ipynb"}, starts[4].Files)
				require.Equal(t, "github/create_issue", starts[5].Title)
			},
		},
		{
			name: "plans: TodoWrite sends the list, TaskCreate/TaskUpdate build it",
			given: []string{
				initLine,
				assistant("m1", `{"type":"tool_use","id":"t1","name":"TodoWrite","input":{"todos":[{"content":"a","status":"completed"},{"content":"b","status":"in_progress"}]}}`),
				assistant("m2", `{"type":"tool_use","id":"t2","name":"TaskCreate","input":{"subject":"x"}},{"type":"tool_use","id":"t3","name":"TaskCreate","input":{"subject":"y"}},{"type":"tool_use","id":"t4","name":"TaskUpdate","input":{"taskId":"1","status":"completed"}}`),
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				plans := ofType[*canonical.TurnPlanUpdated](evs)
				require.Len(t, plans, 4)
				require.Equal(t, []canonical.PlanStep{{Step: "a", Status: canonical.PlanStepCompleted}, {Step: "b", Status: canonical.PlanStepInProgress}}, plans[0].Plan)
				require.Equal(t, []canonical.PlanStep{{Step: "x", Status: canonical.PlanStepCompleted}, {Step: "y", Status: canonical.PlanStepPending}}, plans[3].Plan)
				require.Equal(t, canonical.ItemTypePlan, ofType[*canonical.ItemStarted](evs)[0].ItemType)
			},
		},
		{
			name: "a failed tool_result fails its item; sub-agent output names its parent",
			given: []string{
				initLine,
				assistant("m1", `{"type":"tool_use","id":"task1","name":"Task","input":{"description":"d"}}`),
				`{"type":"assistant","message":{"id":"m2","model":"m","content":[{"type":"tool_use","id":"b1","name":"Bash","input":{"command":"false"}}],"usage":{}},"parent_tool_use_id":"task1","session_id":"s1"}`,
				`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"b1","content":"exit 1","is_error":true}]},"parent_tool_use_id":"task1","session_id":"s1"}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				starts := ofType[*canonical.ItemStarted](evs)
				done := ofType[*canonical.ItemCompleted](evs)
				require.Equal(t, canonical.ItemStatusFailed, done[0].Status)
				var taskItem string
				for _, e := range evs {
					if s, ok := e.Payload.(*canonical.ItemStarted); ok && s.ItemType == canonical.ItemTypeCollabAgentToolCall {
						taskItem = e.ItemID
					}
				}
				require.Equal(t, taskItem, starts[1].ParentItemID)
				require.Equal(t, taskItem, done[0].ParentItemID)
			},
		},
		{
			name: "a tool's structured result gives its duration where it states one",
			given: []string{
				initLine,
				assistant("m1", `{"type":"tool_use","id":"g1","name":"Glob","input":{"pattern":"*.go"}},{"type":"tool_use","id":"t1","name":"Task","input":{"description":"d"}},{"type":"tool_use","id":"w1","name":"WebSearch","input":{"query":"q"}},{"type":"tool_use","id":"b1","name":"Bash","input":{"command":"ls"}}`),
				`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"g1","content":"a.go"}]},"tool_use_result":{"filenames":["a.go"],"durationMs":12,"numFiles":1,"truncated":false},"session_id":"s1"}`,
				`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"done"}]},"tool_use_result":{"content":[],"totalDurationMs":65000,"totalTokens":9},"session_id":"s1"}`,
				`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"w1","content":"r"}]},"tool_use_result":{"query":"q","results":[],"durationSeconds":1.2345},"session_id":"s1"}`,
				`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"b1","content":"a.go"}]},"tool_use_result":{"stdout":"a.go","stderr":"","interrupted":false,"isImage":false},"session_id":"s1"}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				got := map[string]*int64{}
				for _, c := range ofType[*canonical.ItemCompleted](evs) {
					got[c.ToolName] = c.DurationMs
				}
				require.Equal(t, map[string]*int64{"Glob": new(int64(12)), "Task": new(int64(65000)), "WebSearch": new(int64(1235)), "Bash": nil}, got)
			},
		},
		{
			name:     "result error subtypes and API errors: runtime.error + turn.completed{failed}",
			given:    []string{initLine, `{"type":"result","subtype":"error_max_turns","is_error":true,"errors":["max turns"],"session_id":"s1","usage":{"input_tokens":1,"output_tokens":1},"total_cost_usd":0}`, `{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"result":"API Error: 500","session_id":"s1","usage":{"input_tokens":0,"output_tokens":0},"total_cost_usd":0}`},
			expected: []canonical.Kind{canonical.KindThreadStarted, canonical.KindSessionConfigured, canonical.KindRuntimeError, canonical.KindTurnStarted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated, canonical.KindRuntimeError, canonical.KindTurnStarted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.TurnStateFailed, evs[4].Payload.(*canonical.TurnCompleted).State)
				require.Equal(t, "max turns", evs[4].Payload.(*canonical.TurnCompleted).ErrorMessage)
				require.Equal(t, canonical.TurnStateFailed, evs[8].Payload.(*canonical.TurnCompleted).State)
				require.NotEqual(t, evs[3].TurnID, evs[7].TurnID)
			},
		},
		{
			name: "cumulative cost and modelUsage become per-turn shares",
			given: []string{
				initLine, assistant("m1", `{"type":"text","text":"a"}`),
				`{"type":"result","subtype":"success","session_id":"s1","total_cost_usd":0.01,"usage":{"input_tokens":100,"output_tokens":3},"modelUsage":{"m":{"inputTokens":100,"outputTokens":3,"costUSD":0.01}}}`,
				assistant("m2", `{"type":"text","text":"b"}`),
				`{"type":"result","subtype":"success","session_id":"s1","total_cost_usd":0.03,"usage":{"input_tokens":200,"output_tokens":8},"modelUsage":{"m":{"inputTokens":300,"outputTokens":11,"costUSD":0.03}}}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				done := ofType[*canonical.TurnCompleted](evs)
				require.InDelta(t, 0.02, *done[1].TotalCostUSD, 1e-12)
				require.Equal(t, int64(200), done[1].ModelUsage["m"].InputTokens)
				require.Equal(t, int64(8), done[1].ModelUsage["m"].OutputTokens)
				totals := ofType[*canonical.ThreadTokenUsageUpdated](evs)
				require.Equal(t, int64(300), totals[len(totals)-1].Usage.InputTokens)
			},
		},
		{
			name: "costs lose the float noise Claude Code prints: first, later and started-over shares alike",
			given: []string{
				initLine, assistant("m1", `{"type":"text","text":"a"}`),
				`{"type":"result","subtype":"success","session_id":"s1","total_cost_usd":0.009479999999999999,"usage":{"input_tokens":100,"output_tokens":3},"modelUsage":{"m":{"inputTokens":100,"outputTokens":3,"costUSD":0.009479999999999999}}}`,
				assistant("m2", `{"type":"text","text":"b"}`),
				`{"type":"result","subtype":"success","session_id":"s1","total_cost_usd":0.047729999999999995,"usage":{"input_tokens":200,"output_tokens":8},"modelUsage":{"m":{"inputTokens":300,"outputTokens":11,"costUSD":0.047729999999999995}}}`,
				assistant("m3", `{"type":"text","text":"c"}`),
				`{"type":"result","subtype":"success","session_id":"s1","total_cost_usd":0.020804999999999997,"usage":{"input_tokens":50,"output_tokens":2},"modelUsage":{"m":{"inputTokens":50,"outputTokens":2,"costUSD":0.020804999999999997}}}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				done := ofType[*canonical.TurnCompleted](evs)
				require.Len(t, done, 3)
				// Exact: the shares are stored in numeric columns and summed there.
				for i, want := range []string{"0.00948", "0.03825", "0.020805"} {
					require.Equal(t, want, strconv.FormatFloat(*done[i].TotalCostUSD, 'f', -1, 64), "turn %d", i)
					require.Equal(t, want, strconv.FormatFloat(*done[i].ModelUsage["m"].CostUSD, 'f', -1, 64), "turn %d's model", i)
				}
			},
		},
		{
			name: "two runs' output in one file: the second run's cumulative counts start over",
			given: []string{
				initLine, assistant("m1", `{"type":"text","text":"a"}`),
				`{"type":"result","subtype":"success","session_id":"s1","total_cost_usd":0.05,"usage":{"input_tokens":500,"output_tokens":30},"modelUsage":{"m":{"inputTokens":500,"outputTokens":30,"costUSD":0.05}}}`,
				strings.ReplaceAll(initLine, `"s1"`, `"s2"`), assistant("m2", `{"type":"text","text":"b"}`),
				// Higher than s1's in every bucket: only the session id tells.
				`{"type":"result","subtype":"success","session_id":"s2","total_cost_usd":0.07,"usage":{"input_tokens":700,"output_tokens":40},"modelUsage":{"m":{"inputTokens":700,"outputTokens":40,"costUSD":0.07}}}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				done := ofType[*canonical.TurnCompleted](evs)
				require.Len(t, done, 2)
				require.InDelta(t, 0.07, *done[1].TotalCostUSD, 1e-12)
				require.Equal(t, int64(700), done[1].ModelUsage["m"].InputTokens)
				require.Equal(t, int64(40), done[1].ModelUsage["m"].OutputTokens)
				require.InDelta(t, 0.07, *done[1].ModelUsage["m"].CostUSD, 1e-12)
			},
		},
		{
			name: "a sub-agent's messages are in the turn's breakdown by model, not in its usage, as the result counts them",
			given: []string{
				initLine,
				`{"type":"assistant","message":{"id":"m1","model":"m","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Task","input":{}}],"usage":{"input_tokens":10,"output_tokens":5}},"parent_tool_use_id":null,"session_id":"s1","uuid":"a1"}`,
				`{"type":"assistant","message":{"id":"sub1","model":"haiku","role":"assistant","content":[{"type":"text","text":"looking"}],"usage":{"input_tokens":500,"output_tokens":3}},"parent_tool_use_id":"t1","session_id":"s1","uuid":"a2"}`,
				// A sub-agent's own partials, with its final usage.
				strings.Replace(partial(`{"type":"message_start","message":{"id":"sub2","model":"haiku","usage":{"input_tokens":700,"output_tokens":1}}}`), `"parent_tool_use_id":null`, `"parent_tool_use_id":"t1"`, 1),
				strings.Replace(partial(`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":700,"output_tokens":20}}`), `"parent_tool_use_id":null`, `"parent_tool_use_id":"t1"`, 1),
				// Cut off: no result; the turn's so-far reports are all it has.
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				u := ofType[*canonical.ThreadTokenUsageUpdated](evs)
				require.Len(t, u, 3, "the main message, then each sub-agent message, changes the breakdown")
				main := canonical.TokenUsage{InputTokens: 10, OutputTokens: 5}
				for _, r := range u {
					require.Equal(t, main, *r.Turn, "the turn's usage is the main line's, as the result's usage")
					require.Equal(t, main, r.Usage, "and so is the thread's total")
				}
				require.Equal(t, map[string]canonical.ModelUsage{
					"m":     {TokenUsage: main},
					"haiku": {TokenUsage: canonical.TokenUsage{InputTokens: 1200, OutputTokens: 23}},
				}, u[2].TurnModelUsage, "the sub-agent's spend is in the breakdown, as in the result's modelUsage")
				for _, e := range evs {
					if e.Type() == canonical.KindThreadTokenUsageUpdated {
						require.Equal(t, "m1", e.ProviderRefs.ProviderTurnID, "the turn's first main-line message names it")
					}
				}
			},
		},
		{
			name: "each session's thread counts its own usage: a new one from zero, one come back to from its own total",
			given: []string{
				initLine, assistant("m1", `{"type":"text","text":"a"}`),
				`{"type":"result","subtype":"success","session_id":"s1","usage":{"input_tokens":500,"output_tokens":30}}`,
				strings.ReplaceAll(initLine, `"s1"`, `"s2"`), strings.ReplaceAll(assistant("m2", `{"type":"text","text":"b"}`), `"s1"`, `"s2"`),
				`{"type":"result","subtype":"success","session_id":"s2","usage":{"input_tokens":700,"output_tokens":40}}`,
				// A reset moves to s3 from within s2.
				`{"type":"conversation_reset","new_conversation_id":"s3","session_id":"s2"}`,
				strings.ReplaceAll(assistant("m3", `{"type":"text","text":"c"}`), `"s1"`, `"s3"`),
				`{"type":"result","subtype":"success","session_id":"s3","usage":{"input_tokens":5,"output_tokens":1}}`,
				assistant("m4", `{"type":"text","text":"d"}`),
				`{"type":"result","subtype":"success","session_id":"s1","usage":{"input_tokens":100,"output_tokens":10}}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				var threads []string
				got := map[string][]int64{}
				for _, e := range evs {
					if p, ok := e.Payload.(*canonical.ThreadTokenUsageUpdated); ok && p.Last != nil {
						if !slices.Contains(threads, e.ProviderRefs.ProviderThreadID) {
							threads = append(threads, e.ProviderRefs.ProviderThreadID)
						}
						got[e.ProviderRefs.ProviderThreadID] = append(got[e.ProviderRefs.ProviderThreadID], p.Usage.InputTokens, p.Usage.OutputTokens)
					}
				}
				require.Equal(t, []string{"s1", "s2", "s3"}, threads)
				require.Equal(t, map[string][]int64{
					"s1": {500, 30, 600, 40},
					"s2": {700, 40},
					"s3": {5, 1},
				}, got)
			},
		},
		{
			name: "a cumulative count that went backwards in one session started over",
			given: []string{
				initLine, assistant("m1", `{"type":"text","text":"a"}`),
				`{"type":"result","subtype":"success","session_id":"s1","total_cost_usd":0.05,"usage":{"input_tokens":500,"output_tokens":30},"modelUsage":{"m":{"inputTokens":500,"outputTokens":30,"costUSD":0.05}}}`,
				assistant("m2", `{"type":"text","text":"b"}`),
				`{"type":"result","subtype":"success","session_id":"s1","total_cost_usd":0.02,"usage":{"input_tokens":300,"output_tokens":40},"modelUsage":{"m":{"inputTokens":300,"outputTokens":40,"costUSD":0.02}}}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				done := ofType[*canonical.TurnCompleted](evs)
				require.Len(t, done, 2)
				require.InDelta(t, 0.02, *done[1].TotalCostUSD, 1e-12)
				require.Equal(t, int64(300), done[1].ModelUsage["m"].InputTokens, "not 0: the count started over")
				require.Equal(t, int64(40), done[1].ModelUsage["m"].OutputTokens)
				require.InDelta(t, 0.02, *done[1].ModelUsage["m"].CostUSD, 1e-12)
			},
		},
		{
			name: "permission prompt: can_use_tool opens, the host's answer resolves, correlated by request_id",
			given: []string{
				initLine, assistant("m1", `{"type":"tool_use","id":"tu1","name":"Bash","input":{"command":"touch x"}}`),
				`{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"touch x"},"tool_use_id":"tu1"}}`,
				`{"dir":"client","msg":{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{"behavior":"deny","message":"no"}}}}`,
				`{"type":"control_request","request_id":"r2","request":{"subtype":"can_use_tool","tool_name":"Edit","input":{"file_path":"/a"},"tool_use_id":"tu2"}}`,
				`{"type":"control_cancel_request","request_id":"r2"}`,
				`{"type":"control_request","request_id":"r3","request":{"subtype":"can_use_tool","tool_name":"Write","input":{"file_path":"/a"},"tool_use_id":"tu3"}}`,
				`{"type":"control_response","response":{"subtype":"success","request_id":"r3","response":{"behavior":"allow","updatedInput":{}}}}`,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				var opened, resolved []canonical.Event
				for _, e := range evs {
					switch e.Type() { //nolint:exhaustive // only requests matter here
					case canonical.KindRequestOpened:
						opened = append(opened, e)
					case canonical.KindRequestResolved:
						resolved = append(resolved, e)
					}
				}
				require.Len(t, opened, 3)
				require.Len(t, resolved, 3)
				require.Equal(t, canonical.RequestTypeCommandExecutionApproval, opened[0].Payload.(*canonical.RequestOpened).RequestType)
				require.Equal(t, "touch x", opened[0].Payload.(*canonical.RequestOpened).Detail)
				require.Equal(t, canonical.RequestTypeFileChangeApproval, opened[1].Payload.(*canonical.RequestOpened).RequestType)
				require.Equal(t, opened[0].RequestID, resolved[0].RequestID)
				require.Equal(t, "deny", resolved[0].Payload.(*canonical.RequestResolved).Decision)
				require.Equal(t, "cancelled", resolved[1].Payload.(*canonical.RequestResolved).Decision)
				require.Equal(t, "allow", resolved[2].Payload.(*canonical.RequestResolved).Decision, "a bare control_response answering an open request is the host's")
				require.Equal(t, opened[0].ItemID, evs[3].ItemID, "the request names the tool call it is for")
				require.Equal(t, "claude.sdk.permission", opened[0].Raw.Source)
			},
		},
		{
			name:     "rate_limit_event is a rate-limit observation with its window",
			given:    []string{`{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1785412800,"rateLimitType":"seven_day","utilization":0.5},"uuid":"u","session_id":"s1"}`},
			expected: []canonical.Kind{canonical.KindAccountRateLimitsUpdated},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				w := evs[0].Payload.(*canonical.AccountRateLimitsUpdated).Windows[0]
				require.Equal(t, "seven_day", w.Name)
				require.Equal(t, "rejected", w.Status)
				require.InDelta(t, 50.0, *w.UsedPercent, 1e-9)
				require.Equal(t, int64(10080), *w.WindowMinutes)
				require.Equal(t, int64(1785412800), w.ResetsAt.Unix())
			},
		},
		{
			name:     "bad input is kept, not dropped",
			given:    []string{`{"type":"assistant"`, `{"type":"frobnicate"}`, `{"dir":"sideways","msg":{}}`, `{"type":"system","subtype":"brand_new"}`},
			expected: []canonical.Kind{canonical.KindRuntimeError, canonical.KindRuntimeWarning, canonical.KindRuntimeError, canonical.KindRuntimeWarning},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			evs := mapLines(t, tt.given...)
			if tt.expected != nil {
				require.Equal(t, tt.expected, adaptertest.Kinds(evs))
			}
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
	lines := adaptertest.ReadLines(f, "testdata/inventory.jsonl")
	for i, l := range lines {
		f.Add(l, lines[(i+1)%len(lines)])
	}
	adaptertest.Fuzz(f, claudestream.Adapter{}, silent)
}

func BenchmarkMap(b *testing.B) {
	var lines [][]byte
	for _, g := range recordings {
		for _, in := range adaptertest.Inputs(b, g, false) {
			lines = append(lines, in.Frames...)
		}
	}
	adaptertest.Bench(b, claudestream.Adapter{}, lines)
}

func TestSetSessionKeepsEachSessionsTotal(t *testing.T) {
	t.Parallel()
	var tr claudestream.Transcript
	tr.Total = canonical.TokenUsage{InputTokens: 7}
	tr.SetSession("s0")
	require.Equal(t, int64(7), tr.Total.InputTokens, "the first id named: what came before it was its own")
	for i := 1; i <= 17; i++ {
		tr.SetSession("s" + strconv.Itoa(i))
		require.Zero(t, tr.Total, "s%d is new", i)
		tr.Total = canonical.TokenUsage{InputTokens: int64(100 + i)}
	}
	tr.SetSession("s2")
	require.Equal(t, int64(102), tr.Total.InputTokens, "come back to: its own total")
	tr.SetSession("s0")
	require.Zero(t, tr.Total, "seventeen sessions later, s0's total is forgotten: the state stays bounded")
	require.LessOrEqual(t, len(tr.Earlier), 16)
	tr.SetSession("")
	require.Equal(t, "s0", tr.Session, "a frame naming no session stays in the current one")
}

// turnOf lists, per turn in the order the turns started, the final texts
// of its assistant messages, and what its turn.completed said.
type turnOf struct {
	Texts []string
	Done  *canonical.TurnCompleted
}

func turnsOf(t *testing.T, evs []canonical.Event) []turnOf {
	t.Helper()
	var order []string
	turns := map[string]*turnOf{}
	for _, e := range evs {
		switch p := e.Payload.(type) { //nolint:gochecksumtype // only turns and texts matter here
		case *canonical.TurnStarted:
			order = append(order, e.TurnID)
			turns[e.TurnID] = &turnOf{}
		case *canonical.ItemCompleted:
			if text := p.Content[canonical.StreamAssistantText]; text != "" {
				require.Contains(t, turns, e.TurnID, "%q is in no turn that started", text)
				turns[e.TurnID].Texts = append(turns[e.TurnID].Texts, text)
			}
		case *canonical.TurnCompleted:
			require.Nil(t, turns[e.TurnID].Done, "turn %s completed twice", e.TurnID)
			turns[e.TurnID].Done = p
		}
	}
	var out []turnOf
	for _, id := range order {
		out = append(out, *turns[id])
	}
	return out
}

// TestBackgroundSubAgent maps the recordings of a sub-agent run in the
// background: its turn ends while it runs, and its notification starts a
// turn of its own. `-p` writes the first turn's result after the second
// turn's message, with a modelUsage that counts both turns; the control
// protocol writes it on time, and the sub-agent's last frames after it.
func TestBackgroundSubAgent(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "..", "testdata", "recordings")
	sub := []string{"Listing the files.", "The project has README.md, go.mod and main.go."}
	first, second := "The sub-agent is listing the files; I'll report when it is done.", "The sub-agent found three files: README.md, go.mod and main.go."
	counts := func(in, cached, out int64) canonical.TokenUsage {
		return canonical.TokenUsage{InputTokens: in, CachedInputTokens: cached, OutputTokens: out}
	}
	for _, tc := range []struct {
		set string
		// haiku is the sub-agent's usage in each turn's share.
		haiku [2]canonical.TokenUsage
	}{
		{set: "claude-stream", haiku: [2]canonical.TokenUsage{counts(4200, 2000, 45), {}}},
		{set: "claude-stream-partial", haiku: [2]canonical.TokenUsage{counts(4200, 2000, 45), {}}},
		{set: "claude-control", haiku: [2]canonical.TokenUsage{counts(2000, 0, 20), counts(2200, 2000, 25)}},
	} {
		t.Run(tc.set, func(t *testing.T) {
			t.Parallel()
			var lines []string
			for _, l := range adaptertest.ReadLines(t, filepath.Join(dir, tc.set, "subagent-background.jsonl")) {
				lines = append(lines, string(l))
			}
			evs := mapLines(t, lines...)
			turns := turnsOf(t, evs)
			require.Len(t, turns, 2, "the launching turn and the notification's")
			// The two conversations write at once: the order between them
			// is the run's.
			require.ElementsMatch(t, []string{"I'll start a sub-agent in the background.", first, sub[0], sub[1]}, turns[0].Texts,
				"the sub-agent's messages are the launching turn's")
			require.Equal(t, []string{second}, turns[1].Texts)
			for i, want := range []canonical.TokenUsage{counts(6400, 3100, 60), counts(3500, 3300, 30)} {
				done := turns[i].Done
				require.NotNil(t, done, "turn %d ended", i+1)
				require.Equal(t, want, *done.Usage, "turn %d", i+1)
				require.Equal(t, want, done.ModelUsage["claude-sonnet-4-5"].TokenUsage, "turn %d: the main model's share is the turn's own", i+1)
				require.Equal(t, tc.haiku[i], done.ModelUsage["claude-haiku-4-5-20251001"].TokenUsage, "turn %d: the sub-agent's share", i+1)
			}
			for _, c := range ofType[*canonical.ItemCompleted](evs) {
				require.Equal(t, canonical.ItemStatusCompleted, c.Status, "%s %s %s", c.ItemType, c.ToolName, c.Detail)
			}
			tasks := ofType[*canonical.TaskCompleted](evs)
			require.Len(t, tasks, 1)
		})
	}
}
