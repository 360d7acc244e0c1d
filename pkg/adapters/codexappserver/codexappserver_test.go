package codexappserver_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/pkg/adapters/codexappserver"
	"github.com/agentwire/agentwire/pkg/adapters/codexcommon"
	"github.com/agentwire/agentwire/pkg/canonical"
)

const (
	recordings = "../../../testdata/recordings/codex-app-server/*.jsonl"
	corpus     = "../../../../shared/corpus/codex-app-server/*.jsonl"
)

func TestInventory(t *testing.T) {
	t.Parallel()
	adaptertest.Inventory(t, codexappserver.Adapter{}, "testdata/inventory.tsv", "testdata/inventory.jsonl")
}

func TestGolden(t *testing.T) {
	t.Parallel()
	adaptertest.Golden(t, codexappserver.Adapter{}, "testdata/inventory.jsonl", "testdata/golden")
	adaptertest.Golden(t, codexappserver.Adapter{}, recordings, "testdata/golden")
	// The shared corpus, when it is checked out next to the project.
	if m, _ := filepath.Glob(corpus); len(m) > 0 {
		adaptertest.Golden(t, codexappserver.Adapter{}, corpus, "testdata/golden")
	}
}

// silent: serverRequest/resolved after the client's answer only confirms it.
func silent(frame []byte) bool {
	return strings.Contains(string(frame), `"method":"serverRequest/resolved"`)
}

func TestConformance(t *testing.T) {
	t.Parallel()
	inputs := adaptertest.Inputs(t, "testdata/inventory.jsonl", false)
	inputs = append(inputs, adaptertest.Inputs(t, recordings, false)...)
	inputs = append(inputs, adaptertest.Inputs(t, corpus, true)...)
	adaptertest.Run(t, codexappserver.Adapter{}, inputs, adaptertest.Features{Silent: silent})
}

// TestNoWarnings holds the recordings to zero runtime.warning: every frame
// Codex 0.171.0 sent in them is of a known kind.
func TestNoWarnings(t *testing.T) {
	t.Parallel()
	for _, in := range adaptertest.Inputs(t, recordings, false) {
		for _, e := range adaptertest.Flat(adaptertest.MapAll(t, codexappserver.Adapter{}, adaptertest.Frames(codexappserver.Dialect, in.Name, in.Frames))) {
			if w, ok := e.Payload.(*canonical.RuntimeWarning); ok && !strings.HasPrefix(w.Message, "Reconnecting") {
				t.Errorf("%s: runtime.warning %q", in.Name, w.Message)
			}
		}
	}
}

func mapLines(t *testing.T, lines ...string) []canonical.Event {
	t.Helper()
	return adaptertest.MapLines(t, codexappserver.Adapter{}, lines...)
}

const (
	turnStarted = `{"method":"turn/started","params":{"threadId":"th","turn":{"id":"tu","items":[],"status":"inProgress","error":null}},"emittedAtMs":1796216346110}`
	msgStarted  = `{"method":"item/started","params":{"item":{"type":"agentMessage","id":"m1","text":""},"threadId":"th","turnId":"tu","startedAtMs":1}}`
	msgDelta    = `{"method":"item/agentMessage/delta","params":{"threadId":"th","turnId":"tu","itemId":"m1","delta":"Hel"}}`
	msgDone     = `{"method":"item/completed","params":{"item":{"type":"agentMessage","id":"m1","text":"Hello"},"threadId":"th","turnId":"tu","completedAtMs":2}}`
	usage1      = `{"method":"thread/tokenUsage/updated","params":{"threadId":"th","turnId":"tu","tokenUsage":{"total":{"totalTokens":110,"inputTokens":100,"cachedInputTokens":60,"outputTokens":10,"reasoningOutputTokens":2},"last":{"totalTokens":110,"inputTokens":100,"cachedInputTokens":60,"outputTokens":10,"reasoningOutputTokens":2}}}}`
	turnDone    = `{"method":"turn/completed","params":{"threadId":"th","turn":{"id":"tu","items":[],"status":"completed","error":null,"durationMs":5}}}`
)

func TestMap(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name     string
		given    []string
		expected []canonical.Kind
		check    func(t *testing.T, evs []canonical.Event)
	}{
		{
			name:     "turn ids come from turn.id; items are scoped by thread and turn; emittedAtMs is the time",
			given:    []string{turnStarted, msgStarted, msgDelta, msgDone, turnDone},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindItemCompleted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.NotEmpty(t, evs[0].TurnID)
				require.Equal(t, evs[0].TurnID, evs[4].TurnID)
				require.Equal(t, "tu", evs[0].ProviderRefs.ProviderTurnID)
				require.Equal(t, int64(1796216346110), evs[0].CreatedAt.UnixMilli())
				require.Equal(t, evs[1].ItemID, evs[3].ItemID)
				d := evs[2].Payload.(*canonical.ContentDelta)
				require.Equal(t, canonical.StreamAssistantText, d.StreamKind)
				require.Equal(t, "Hello", evs[3].Payload.(*canonical.ItemCompleted).Content[canonical.StreamAssistantText], "item/completed is authoritative")
				require.Equal(t, canonical.TurnStateCompleted, evs[4].Payload.(*canonical.TurnCompleted).State)
			},
		},
		{
			name: "a command's exit code and duration are the completion's; a start carries neither",
			given: []string{turnStarted,
				`{"method":"item/completed","params":{"threadId":"th","turnId":"tu","item":{"type":"commandExecution","id":"c1","command":"ls","status":"completed","exitCode":0,"durationMs":209,"aggregatedOutput":"a\n"}}}`,
				turnDone},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				started, done := evs[1].Payload.(*canonical.ItemStarted), evs[2].Payload.(*canonical.ItemCompleted)
				require.Nil(t, started.ExitCode)
				require.Nil(t, started.DurationMs)
				require.Equal(t, new(0), done.ExitCode)
				require.Equal(t, new(int64(209)), done.DurationMs)
			},
		},
		{
			name: "a command the user typed (source userShell) is by the user; the agent's is not",
			given: []string{turnStarted,
				`{"method":"item/started","params":{"threadId":"th","turnId":"tu","item":{"type":"commandExecution","id":"u1","command":"git status","status":"inProgress","source":"userShell"}}}`,
				`{"method":"item/completed","params":{"threadId":"th","turnId":"tu","item":{"type":"commandExecution","id":"u1","command":"git status","status":"completed","exitCode":0,"source":"userShell"}}}`,
				`{"method":"item/completed","params":{"threadId":"th","turnId":"tu","item":{"type":"commandExecution","id":"c1","command":"ls","status":"completed","exitCode":0,"source":"agent"}}}`,
				`{"method":"item/completed","params":{"threadId":"th","turnId":"tu","item":{"type":"commandExecution","id":"c2","command":"pwd","status":"completed","exitCode":0,"source":{"unexpected":true}}}}`,
				turnDone},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindItemCompleted,
				canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.True(t, evs[1].Payload.(*canonical.ItemStarted).ByUser)
				require.True(t, evs[2].Payload.(*canonical.ItemCompleted).ByUser)
				require.False(t, evs[4].Payload.(*canonical.ItemCompleted).ByUser)
				require.False(t, evs[6].Payload.(*canonical.ItemCompleted).ByUser, "a source of another shape is not the user's")
			},
		},
		{
			name: "user messages are keyed by turn and text; a second one alike in the turn is an item of its own",
			given: []string{turnStarted,
				`{"method":"item/started","params":{"threadId":"th","turnId":"tu","item":{"type":"userMessage","id":"u1","content":[{"type":"text","text":"go on"}]}}}`,
				`{"method":"item/completed","params":{"threadId":"th","turnId":"tu","item":{"type":"userMessage","id":"u1","content":[{"type":"text","text":"go on"}]}}}`,
				`{"method":"item/started","params":{"threadId":"th","turnId":"tu","item":{"type":"userMessage","id":"u2","content":[{"type":"text","text":"go on"}]}}}`,
				`{"method":"item/completed","params":{"threadId":"th","turnId":"tu","item":{"type":"userMessage","id":"u2","content":[{"type":"text","text":"go on"}]}}}`,
				turnDone},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted,
				canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				ids := canonical.IDSpace{Tenant: evs[0].Tenant, Provider: canonical.ProviderCodex, SessionKey: "t"}
				byText := ids.Native(canonical.EntityItem, "th", "tu", codexcommon.UserMessageKey("go on"))
				require.Equal(t, byText, evs[1].ItemID, "keyed by text, as codex-rollout keys it")
				require.Equal(t, byText, evs[2].ItemID)
				require.NotEqual(t, byText, evs[3].ItemID, "the second message alike is another item")
				require.Equal(t, evs[3].ItemID, evs[4].ItemID)
				require.Equal(t, "u2", evs[4].ProviderRefs.ProviderItemID)
			},
		},
		{
			name:     "a failed turn carries its error into turn.completed and a runtime.error",
			given:    []string{turnStarted, `{"method":"turn/completed","params":{"threadId":"th","turn":{"id":"tu","items":[],"status":"failed","error":{"message":"boom","codexErrorInfo":"internalServerError","additionalDetails":"upstream 500"}}}}`},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindRuntimeError, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				e := evs[1].Payload.(*canonical.RuntimeError)
				require.Equal(t, "boom", e.Message)
				require.Equal(t, canonical.ErrorClassProvider, e.Class)
				require.Contains(t, string(e.Detail), "internalServerError")
				require.Contains(t, string(e.Detail), "upstream 500")
				done := evs[2].Payload.(*canonical.TurnCompleted)
				require.Equal(t, canonical.TurnStateFailed, done.State)
				require.Equal(t, "boom", done.ErrorMessage)
			},
		},
		{
			name: "turn status interrupted and inProgress",
			given: []string{turnStarted, `{"method":"turn/completed","params":{"threadId":"th","turn":{"id":"tu","status":"interrupted"}}}`,
				`{"method":"turn/completed","params":{"threadId":"th","turn":{"id":"t2","status":"inProgress"}}}`},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindTurnCompleted, canonical.KindTurnStarted, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.TurnStateInterrupted, evs[1].Payload.(*canonical.TurnCompleted).State)
				require.Equal(t, canonical.TurnStateInterrupted, evs[3].Payload.(*canonical.TurnCompleted).State)
			},
		},
		{
			name: "error with willRetry is a warning and does not end the turn",
			given: []string{turnStarted, `{"method":"error","params":{"error":{"message":"Reconnecting... 1/2","codexErrorInfo":{"responseStreamDisconnected":{"httpStatusCode":429}}},"willRetry":true,"threadId":"th","turnId":"tu"}}`,
				`{"method":"error","params":{"error":{"message":"401","codexErrorInfo":"unauthorized"},"willRetry":false,"threadId":"th","turnId":"tu"}}`, turnDone},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindRuntimeWarning, canonical.KindRuntimeError, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.ErrorClassPermission, evs[2].Payload.(*canonical.RuntimeError).Class)
			},
		},
		{
			name: "server request resolved by the client's answer; JSON-RPC ids of the two directions do not collide",
			given: []string{
				`{"dir":"client","msg":{"id":0,"method":"thread/start","params":{"cwd":"/w"}}}`,
				`{"dir":"agent","msg":{"method":"item/commandExecution/requestApproval","id":0,"params":{"threadId":"th","turnId":"tu","itemId":"c1","reason":"Write outside?","command":"touch ../x"}}}`,
				`{"dir":"agent","msg":{"id":0,"result":{"thread":{"id":"th"},"model":"gpt-5"}}}`,
				`{"dir":"client","msg":{"id":0,"result":{"decision":"decline"}}}`,
				`{"dir":"agent","msg":{"method":"serverRequest/resolved","params":{"threadId":"th","requestId":0}}}`,
			},
			expected: []canonical.Kind{canonical.KindSessionConfigured, canonical.KindRequestOpened, canonical.KindSessionConfigured, canonical.KindRequestResolved},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				open := evs[1].Payload.(*canonical.RequestOpened)
				require.Equal(t, canonical.RequestTypeCommandExecutionApproval, open.RequestType)
				require.Equal(t, "Write outside?", open.Detail)
				require.Equal(t, evs[1].RequestID, evs[3].RequestID)
				require.Equal(t, "0", evs[3].ProviderRefs.ProviderRequestID)
				require.Equal(t, "decline", evs[3].Payload.(*canonical.RequestResolved).Decision)
				require.Contains(t, string(evs[2].Payload.(*canonical.SessionConfigured).Config["model"]), "gpt-5")
			},
		},
		{
			name: "serverRequest/resolved resolves when the answer was not seen",
			given: []string{
				`{"method":"item/tool/requestUserInput","id":"r1","params":{"threadId":"th","turnId":"tu","itemId":"i","questions":[{"id":"q","question":"Which?"}]}}`,
				`{"method":"serverRequest/resolved","params":{"threadId":"th","requestId":"r1"}}`,
			},
			expected: []canonical.Kind{canonical.KindUserInputRequested, canonical.KindRequestOpened, canonical.KindRequestResolved},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.RequestTypeToolUserInput, evs[1].Payload.(*canonical.RequestOpened).RequestType)
				require.Equal(t, evs[1].RequestID, evs[2].RequestID)
			},
		},
		{
			name: "deltas: plan, reasoning summary with summaryIndex, reasoning text with contentIndex, command output",
			given: []string{
				`{"method":"item/plan/delta","params":{"threadId":"th","turnId":"tu","itemId":"p","delta":"1."}}`,
				`{"method":"item/reasoning/summaryTextDelta","params":{"threadId":"th","turnId":"tu","itemId":"r","delta":"a","summaryIndex":1}}`,
				`{"method":"item/reasoning/textDelta","params":{"threadId":"th","turnId":"tu","itemId":"r","delta":"b","contentIndex":2}}`,
				`{"method":"item/commandExecution/outputDelta","params":{"threadId":"th","turnId":"tu","itemId":"c","delta":"ok\n"}}`,
			},
			expected: []canonical.Kind{canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindContentDelta, canonical.KindItemStarted, canonical.KindContentDelta},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.StreamPlanText, evs[1].Payload.(*canonical.ContentDelta).StreamKind)
				s := evs[3].Payload.(*canonical.ContentDelta)
				require.Equal(t, canonical.StreamReasoningSummaryText, s.StreamKind)
				require.Equal(t, 1, *s.SummaryIndex)
				r := evs[4].Payload.(*canonical.ContentDelta)
				require.Equal(t, canonical.StreamReasoningText, r.StreamKind)
				require.Equal(t, 2, *r.ContentIndex)
				require.Equal(t, evs[2].ItemID, evs[4].ItemID)
				require.Equal(t, canonical.StreamCommandOutput, evs[6].Payload.(*canonical.ContentDelta).StreamKind)
			},
		},
		{
			name:     "usage: thread totals on tokenUsage, the turn's share on turn/completed",
			given:    []string{turnStarted, usage1, turnDone},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindThreadTokenUsageUpdated, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				want := canonical.TokenUsage{InputTokens: 40, CachedInputTokens: 60, OutputTokens: 10, ReasoningOutputTokens: 2}
				require.Equal(t, want, evs[1].Payload.(*canonical.ThreadTokenUsageUpdated).Usage)
				require.Equal(t, want, *evs[2].Payload.(*canonical.TurnCompleted).Usage)
				// The turn's usage so far, under the turn's ids, before it ends.
				require.Equal(t, want, *evs[1].Payload.(*canonical.ThreadTokenUsageUpdated).Turn)
				require.Equal(t, evs[2].TurnID, evs[1].TurnID)
				require.Equal(t, "tu", evs[1].ProviderRefs.ProviderTurnID)
			},
		},
		{
			name:     "global notifications map with session-level ids only",
			given:    []string{`{"method":"account/rateLimits/updated","params":{"rateLimits":{"primary":{"usedPercent":40,"windowDurationMins":300,"resetsAt":1771890497},"secondary":null}}}`, `{"method":"configWarning","params":{"summary":"bad key","path":"config.toml"}}`},
			expected: []canonical.Kind{canonical.KindAccountRateLimitsUpdated, canonical.KindConfigWarning},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Empty(t, evs[0].ThreadID)
				require.NotEmpty(t, evs[0].SessionID)
				w := evs[0].Payload.(*canonical.AccountRateLimitsUpdated).Windows
				require.Len(t, w, 1)
				require.Equal(t, "primary", w[0].Name)
				require.InDelta(t, 40.0, *w[0].UsedPercent, 0)
				require.Equal(t, int64(300), *w[0].WindowMinutes)
			},
		},
		{
			name:     "bad input is kept, not dropped",
			given:    []string{`{"method":`, `{"method":"thread/frobnicated","params":{}}`, `{"dir":"sideways","msg":{}}`},
			expected: []canonical.Kind{canonical.KindRuntimeError, canonical.KindRuntimeWarning, canonical.KindRuntimeError},
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
	adaptertest.Fuzz(f, codexappserver.Adapter{}, adaptertest.AnyFrame)
}

func BenchmarkMap(b *testing.B) {
	var lines [][]byte
	for _, in := range adaptertest.Inputs(b, recordings, false) {
		lines = append(lines, in.Frames...)
	}
	adaptertest.Bench(b, codexappserver.Adapter{}, lines)
}
