package acp_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/pkg/adapters/acp"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// The project's own recordings (two agents), and the shared corpus when it
// is checked out next to the project (excerpts: partial).
var (
	recordings = []string{
		filepath.Join("..", "..", "..", "testdata", "recordings", "acp-gemini"),
		filepath.Join("..", "..", "..", "testdata", "recordings", "acp-claude-code"),
	}
	corpus = filepath.Join("..", "..", "..", "..", "shared", "corpus", "acp")
)

// silent reports frames whose every kind is documented to map to nothing.
func silent(frame []byte) bool {
	a := acp.Adapter{}
	kinds := a.Kinds(adapter.Frame{Bytes: frame, Dialect: acp.Dialect})
	for _, k := range kinds {
		r, ok := a.Rules().Lookup(k)
		if !ok || len(r.Emits) > 0 {
			return false
		}
	}
	return len(kinds) > 0
}

func TestInventory(t *testing.T) {
	t.Parallel()
	adaptertest.Inventory(t, acp.Adapter{}, "testdata/inventory.tsv", "testdata/inventory.jsonl")
}

func TestGolden(t *testing.T) {
	t.Parallel()
	adaptertest.Golden(t, acp.Adapter{}, "testdata/inventory.jsonl", "testdata/golden")
	// Recordings of two agents share case names: each agent has its directory.
	for _, dir := range recordings {
		adaptertest.Golden(t, acp.Adapter{}, filepath.Join(dir, "*.jsonl"), filepath.Join("testdata", "golden", filepath.Base(dir)))
	}
	if matches, _ := filepath.Glob(filepath.Join(corpus, "*.jsonl")); len(matches) > 0 {
		adaptertest.Golden(t, acp.Adapter{}, filepath.Join(corpus, "*.jsonl"), filepath.Join("testdata", "golden", "corpus"))
	}
}

func inputs(t *testing.T) []adaptertest.Input {
	t.Helper()
	in := adaptertest.Inputs(t, "testdata/inventory.jsonl", false)
	for _, dir := range recordings {
		for _, i := range adaptertest.Inputs(t, filepath.Join(dir, "*.jsonl"), false) {
			i.Name = filepath.Base(dir) + "/" + i.Name
			in = append(in, i)
		}
	}
	return append(in, adaptertest.Inputs(t, filepath.Join(corpus, "*.jsonl"), true)...)
}

func TestConformance(t *testing.T) {
	t.Parallel()
	in := inputs(t)
	adaptertest.Run(t, acp.Adapter{}, in, adaptertest.Features{Silent: silent})
	// No frame of a known kind is reported as unmapped drift on real input.
	for _, i := range in {
		for _, evs := range adaptertest.MapAll(t, acp.Adapter{}, adaptertest.Frames(acp.Dialect, i.Name, i.Frames)) {
			for _, e := range evs {
				if w, ok := e.Payload.(*canonical.RuntimeWarning); ok && strings.HasPrefix(w.Message, "unmapped ") {
					t.Errorf("%s: %q", i.Name, w.Message)
				}
			}
		}
	}
}

func mapLines(t *testing.T, provider canonical.Provider, lines ...string) []canonical.Event {
	t.Helper()
	s := acp.Adapter{}.NewSession(provider)
	var out []canonical.Event
	for i, l := range lines {
		f := adaptertest.Frames(acp.Dialect, "t", [][]byte{[]byte(l)})[0].WithOrdinal(uint64(i + 1))
		evs, err := s.Map(f)
		require.NoError(t, err)
		out = append(out, evs...)
	}
	return out
}

func client(msg string) string { return `{"dir":"client","msg":` + msg + `}` }
func agent(msg string) string  { return `{"dir":"agent","msg":` + msg + `}` }

func update(u string) string {
	return agent(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":` + u + `}}`)
}

const (
	initReq      = `{"dir":"client","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"c"}}}}`
	initGemini   = `{"dir":"agent","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"gemini-cli","title":"Gemini CLI","version":"0.61.0"}}}}`
	initClaude   = `{"dir":"agent","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"@zed-industries/claude-code-acp","title":"Claude Code"}}}}`
	initOther    = `{"dir":"agent","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"OpenCode Agent"}}}}`
	initNoInfo   = `{"dir":"agent","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}}`
	prompt2      = `{"dir":"client","msg":{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}}`
	prompt3      = `{"dir":"client","msg":{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"again"}]}}}`
	chunk        = `{"dir":"agent","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hel"}}}}}`
	chunk2       = `{"dir":"agent","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"lo"}}}}}`
	endTurn2     = `{"dir":"agent","msg":{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}}`
	cancelled2   = `{"dir":"agent","msg":{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}}`
	endTurn3     = `{"dir":"agent","msg":{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}}`
	toolCall     = `{"sessionUpdate":"tool_call","toolCallId":"t1","title":"ls","kind":"execute","status":"pending","rawInput":{"command":"ls"}}`
	permission0  = `{"dir":"agent","msg":{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1"},"options":[{"optionId":"yes","kind":"allow_once"},{"optionId":"no","kind":"reject_once"}]}}}`
	permissionE0 = `{"dir":"agent","msg":{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"e1","title":"main.go","kind":"edit"},"options":[{"optionId":"no","kind":"reject_once"}]}}}`
)

// usageTurns is two prompts of one ACP session: the first reports a
// cumulative usage of 100 input (50 cached) and 30 output tokens, the
// second the cumulative usage second (a JSON object).
func usageTurns(second string) []string {
	return []string{prompt2, agent(`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn","usage":{"totalTokens":130,"inputTokens":100,"outputTokens":30,"cachedReadTokens":50}}}`),
		prompt3, agent(`{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","usage":` + second + `}}`)}
}

// usageTurnKinds are the events of usageTurns.
var usageTurnKinds = []canonical.Kind{
	canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated,
	canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated,
}

func TestMap(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name     string
		provider canonical.Provider
		given    []string
		expected []canonical.Kind
		check    func(t *testing.T, evs []canonical.Event)
	}{
		{
			name:     "provider: the initialize response names the agent; the client's initialize maps to nothing",
			given:    []string{initReq, initGemini, prompt2},
			expected: []canonical.Kind{canonical.KindSessionConfigured, canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				for _, e := range evs {
					require.Equal(t, canonical.ProviderGemini, e.Provider)
				}
				cfg := evs[0].Payload.(*canonical.SessionConfigured).Config
				require.JSONEq(t, `{"name":"c"}`, string(cfg["clientInfo"]), "the client's initialize is reported with the answer")
				require.Contains(t, string(cfg["agentInfo"]), "gemini-cli")
				require.Equal(t, "initialize", evs[0].Raw.Method, "raw.method of a response names the request it answers")
				require.Equal(t, "cursor.acp.response", evs[0].Raw.Source)
			},
		},
		{
			name:     "provider: claude-code-acp is claude, another agent a slug of its name, no agentInfo cursor",
			given:    []string{initReq, initClaude},
			expected: []canonical.Kind{canonical.KindSessionConfigured},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.ProviderClaude, evs[0].Provider)
				require.Equal(t, canonical.Provider("opencode-agent"), mapLines(t, "", initReq, initOther)[0].Provider)
				require.Equal(t, canonical.ProviderCursor, mapLines(t, "", initReq, initNoInfo)[0].Provider)
			},
		},
		{
			name:     "provider: an override wins over agentInfo",
			provider: "acme",
			given:    []string{initReq, initGemini},
			expected: []canonical.Kind{canonical.KindSessionConfigured},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.Provider("acme"), evs[0].Provider)
			},
		},
		{
			name: "session/new: session and thread start, ready; the thread is the ACP session (native), the sessionId a provider ref",
			given: []string{
				client(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`),
				agent(`{"jsonrpc":"2.0","id":3,"result":{"sessionId":"s1","modes":{"currentModeId":"default","availableModes":[]}}}`),
			},
			expected: []canonical.Kind{canonical.KindSessionStateChanged, canonical.KindSessionStarted, canonical.KindThreadStarted, canonical.KindSessionStateChanged, canonical.KindSessionConfigured},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.SessionStateStarting, evs[0].Payload.(*canonical.SessionStateChanged).State)
				require.Equal(t, canonical.SessionStateReady, evs[3].Payload.(*canonical.SessionStateChanged).State)
				require.Equal(t, "s1", evs[1].ProviderRefs.ProviderSessionID)
				require.NotEmpty(t, evs[2].ThreadID)
				require.NotEqual(t, "s1", evs[2].ThreadID)
				require.Equal(t, evs[0].SessionID, evs[1].SessionID, "one canonical session: the agent process")
			},
		},
		{
			name:     "a turn brackets the updates between prompt and response; chunks are one message item with its whole text",
			given:    []string{prompt2, chunk, chunk2, endTurn2},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindContentDelta, canonical.KindItemCompleted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				turn := evs[0].TurnID
				for _, e := range evs {
					require.Equal(t, turn, e.TurnID)
				}
				require.Equal(t, "hi", evs[2].Payload.(*canonical.ItemCompleted).Content[canonical.StreamUnknown])
				require.Equal(t, "Hello", evs[6].Payload.(*canonical.ItemCompleted).Content[canonical.StreamAssistantText])
				done := evs[7].Payload.(*canonical.TurnCompleted)
				require.Equal(t, canonical.TurnStateCompleted, done.State)
				require.Equal(t, "end_turn", done.StopReason)
			},
		},
		{
			name:     "a second concurrent prompt supersedes the first: updates go to the new turn, the first ends cancelled with its own response",
			given:    []string{prompt2, chunk, prompt3, cancelled2, chunk2, endTurn3},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindItemCompleted, canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindTurnCompleted, canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindItemCompleted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				first, second := evs[0].TurnID, evs[6].TurnID
				require.NotEqual(t, first, second)
				require.Equal(t, first, evs[5].TurnID, "the first turn's text item ends in the first turn")
				require.Equal(t, first, evs[9].TurnID)
				require.Equal(t, canonical.TurnStateCancelled, evs[9].Payload.(*canonical.TurnCompleted).State)
				require.Equal(t, second, evs[11].TurnID)
				require.Equal(t, second, evs[13].TurnID)
				require.Equal(t, canonical.TurnStateCompleted, evs[13].Payload.(*canonical.TurnCompleted).State)
			},
		},
		{
			name:     "tool_call twice for one toolCallId is one item, started once; completed by its update",
			given:    []string{prompt2, update(toolCall), update(toolCall), update(`{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"content","content":{"type":"text","text":"a.go"}}]}`), endTurn2},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindItemUpdated, canonical.KindItemCompleted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, evs[3].ItemID, evs[5].ItemID)
				done := evs[5].Payload.(*canonical.ItemCompleted)
				require.Equal(t, canonical.ItemTypeCommandExecution, done.ItemType)
				require.Equal(t, "ls", done.Command)
				require.Equal(t, "a.go", done.Content[canonical.StreamCommandOutput])
				require.Equal(t, "t1", evs[5].ProviderRefs.ProviderItemID)
			},
		},
		{
			name:     "permission: request typed by the tool call's kind, options kept; the client's selection resolves it with the option's kind",
			given:    []string{prompt2, update(toolCall), permission0, client(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"yes"}}}`)},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindRequestOpened, canonical.KindRequestResolved},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				opened := evs[4].Payload.(*canonical.RequestOpened)
				require.Equal(t, canonical.RequestTypeCommandExecutionApproval, opened.RequestType)
				require.Contains(t, string(opened.Args), "allow_once")
				require.Equal(t, evs[4].RequestID, evs[5].RequestID)
				require.Equal(t, evs[3].ItemID, evs[4].ItemID, "the request is about the tool call item")
				require.Equal(t, "0", evs[5].ProviderRefs.ProviderRequestID)
				require.Equal(t, "allow_once", evs[5].Payload.(*canonical.RequestResolved).Decision)
			},
		},
		{
			name:     "a rejected permission for an unannounced edit: the item starts with the request and ends declined with the turn",
			given:    []string{prompt2, permissionE0, client(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"no"}}}`), endTurn2},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindRequestOpened, canonical.KindRequestResolved, canonical.KindItemCompleted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.RequestTypeFileChangeApproval, evs[4].Payload.(*canonical.RequestOpened).RequestType)
				require.Equal(t, "reject_once", evs[5].Payload.(*canonical.RequestResolved).Decision)
				require.Equal(t, canonical.ItemStatusDeclined, evs[6].Payload.(*canonical.ItemCompleted).Status)
				require.Equal(t, evs[3].ItemID, evs[6].ItemID)
			},
		},
		{
			name: "request ids: the agent's id 2 and the client's id 2 are different requests",
			given: []string{prompt2,
				agent(`{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/w/a.go"}}`),
				client(`{"jsonrpc":"2.0","id":2,"result":{"content":"package a"}}`),
				endTurn2},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindRequestOpened, canonical.KindRequestResolved, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.RequestTypeDynamicToolCall, evs[3].Payload.(*canonical.RequestOpened).RequestType)
				require.Equal(t, "/w/a.go", evs[3].Payload.(*canonical.RequestOpened).Detail)
				require.Equal(t, evs[3].RequestID, evs[4].RequestID)
				require.Equal(t, evs[0].TurnID, evs[5].TurnID, "the agent's response to prompt 2 still ends the turn")
			},
		},
		{
			name: "bare frames: a response is the client's when the agent has that id pending",
			given: []string{`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`,
				`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t9","kind":"execute"},"options":[]}}`,
				`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}`,
				`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"cancelled"}}`},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindRequestOpened, canonical.KindRequestResolved, canonical.KindItemCompleted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, "cancelled", evs[5].Payload.(*canonical.RequestResolved).Decision)
				require.Equal(t, canonical.ItemStatusDeclined, evs[6].Payload.(*canonical.ItemCompleted).Status)
				require.Equal(t, canonical.TurnStateCancelled, evs[7].Payload.(*canonical.TurnCompleted).State)
			},
		},
		{
			name:     "-32603 on a prompt (claude-code-acp after a denial) is a provider error and a failed turn",
			given:    []string{prompt2, agent(`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error: boom"}}`)},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindRuntimeError, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.ErrorClassProvider, evs[3].Payload.(*canonical.RuntimeError).Class)
				done := evs[4].Payload.(*canonical.TurnCompleted)
				require.Equal(t, canonical.TurnStateFailed, done.State)
				require.Equal(t, "Internal error: boom", done.ErrorMessage)
				require.Equal(t, evs[0].TurnID, evs[4].TurnID)
			},
		},
		{
			name:     "error classes: -32602 validation, -32000 permission (and auth.status on authenticate), -32800 cancels the turn, 500 provider",
			given:    []string{prompt2, agent(`{"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"cancelled"}}`), client(`{"jsonrpc":"2.0","id":4,"method":"authenticate","params":{"methodId":"x"}}`), agent(`{"jsonrpc":"2.0","id":4,"error":{"code":-32000,"message":"Authentication required"}}`), prompt3, agent(`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params"}}`), client(`{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{"sessionId":"s1","prompt":[]}}`), agent(`{"jsonrpc":"2.0","id":5,"error":{"code":500,"message":"Internal error encountered."}}`)},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindRuntimeError, canonical.KindTurnCompleted, canonical.KindAuthStatus, canonical.KindRuntimeError, canonical.KindAuthStatus, canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindRuntimeError, canonical.KindTurnCompleted, canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindRuntimeError, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.TurnStateCancelled, evs[4].Payload.(*canonical.TurnCompleted).State)
				require.Equal(t, canonical.ErrorClassPermission, evs[6].Payload.(*canonical.RuntimeError).Class)
				require.Equal(t, "Authentication required", evs[7].Payload.(*canonical.AuthStatus).Error)
				require.Equal(t, canonical.ErrorClassValidation, evs[11].Payload.(*canonical.RuntimeError).Class)
				require.Equal(t, canonical.ErrorClassProvider, evs[16].Payload.(*canonical.RuntimeError).Class)
				require.Equal(t, canonical.TurnStateFailed, evs[17].Payload.(*canonical.TurnCompleted).State)
			},
		},
		{
			name:     "plan and mode updates: turn.plan.updated and session.configured",
			given:    []string{prompt2, update(`{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"in_progress"}]}`), update(`{"sessionUpdate":"current_mode_update","currentModeId":"yolo"}`), endTurn2},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindTurnPlanUpdated, canonical.KindSessionConfigured, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, []canonical.PlanStep{{Step: "a", Status: canonical.PlanStepInProgress}}, evs[3].Payload.(*canonical.TurnPlanUpdated).Plan)
				require.JSONEq(t, `"yolo"`, string(evs[4].Payload.(*canonical.SessionConfigured).Config["currentModeId"]))
			},
		},
		{
			name:     "usage: ACP's cumulative usage becomes per-turn deltas and the thread total",
			given:    usageTurns(`{"totalTokens":200,"inputTokens":150,"outputTokens":50,"cachedReadTokens":60}`),
			expected: usageTurnKinds,
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.TokenUsage{InputTokens: 50, CachedInputTokens: 10, OutputTokens: 20}, *evs[8].Payload.(*canonical.TurnCompleted).Usage)
				require.Equal(t, canonical.TokenUsage{InputTokens: 150, CachedInputTokens: 60, OutputTokens: 50}, evs[9].Payload.(*canonical.ThreadTokenUsageUpdated).Usage)
			},
		},
		{
			name:     "usage: a cumulative count that falls is a new agent process's, counted whole and added to the thread's",
			given:    usageTurns(`{"totalTokens":45,"inputTokens":40,"outputTokens":5,"cachedReadTokens":0}`),
			expected: usageTurnKinds,
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.TokenUsage{InputTokens: 40, OutputTokens: 5}, *evs[8].Payload.(*canonical.TurnCompleted).Usage)
				require.Equal(t, canonical.TokenUsage{InputTokens: 140, CachedInputTokens: 50, OutputTokens: 35}, evs[9].Payload.(*canonical.ThreadTokenUsageUpdated).Usage)
			},
		},
		{
			name:     "bad input is kept, not dropped; an unknown update is a warning",
			given:    []string{`{"jsonrpc":"2.0","id":1`, update(`{"sessionUpdate":"frobnicate"}`), `{"jsonrpc":"2.0"}`, `{"dir":"sideways","msg":{}}`},
			expected: []canonical.Kind{canonical.KindRuntimeError, canonical.KindRuntimeWarning, canonical.KindRuntimeError, canonical.KindRuntimeError},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.ErrorClassValidation, evs[0].Payload.(*canonical.RuntimeError).Class)
				frame, err := evs[0].Raw.Frame()
				require.NoError(t, err)
				require.True(t, bytes.Equal([]byte(`{"jsonrpc":"2.0","id":1`), frame))
				require.Contains(t, evs[1].Payload.(*canonical.RuntimeWarning).Message, "session/update:frobnicate")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			evs := mapLines(t, tt.provider, tt.given...)
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

// TestKinds: a response's kind is the method of the request it answers,
// which only the session knows.
func TestKinds(t *testing.T) {
	t.Parallel()
	s := acp.Adapter{}.NewSession("")
	ck, ok := s.(adapter.ContextKinds)
	require.True(t, ok)
	frames := adaptertest.Frames(acp.Dialect, "k", [][]byte{[]byte(client(`{"jsonrpc":"2.0","id":7,"method":"session/list","params":{}}`)), []byte(agent(`{"jsonrpc":"2.0","id":7,"result":{"sessions":[]}}`))})
	_, err := s.Map(frames[0])
	require.NoError(t, err)
	require.Equal(t, []string{"session/list"}, ck.KindsOf(frames[1]))
	require.Equal(t, []string{"response"}, acp.Adapter{}.Kinds(frames[1]), "without context a response is just a response")
	var evs []json.RawMessage
	got, err := s.Map(frames[1])
	require.NoError(t, err)
	for _, e := range got {
		doc, err := canonical.Encode(e)
		require.NoError(t, err)
		evs = append(evs, doc)
	}
	require.Len(t, evs, 1)
	require.Contains(t, string(evs[0]), `"method":"session/list"`)
}

// FuzzMap maps arbitrary frames: never a panic, every event validates and
// round-trips through its JSON document.
func FuzzMap(f *testing.F) {
	lines := adaptertest.ReadLines(f, "testdata/inventory.jsonl")
	for i, l := range lines {
		f.Add(lines[max(i-1, 0)], l)
	}
	adaptertest.Fuzz(f, acp.Adapter{}, silent)
}

func BenchmarkMap(b *testing.B) {
	var lines [][]byte
	for _, dir := range recordings {
		for _, in := range adaptertest.Inputs(b, filepath.Join(dir, "*.jsonl"), false) {
			lines = append(lines, in.Frames...)
		}
	}
	adaptertest.Bench(b, acp.Adapter{}, lines)
}
