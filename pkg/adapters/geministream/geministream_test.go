package geministream_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/pkg/adapters/geministream"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// The project's own recordings, and the shared corpus when it is checked
// out next to the project.
var (
	recordings = filepath.Join("..", "..", "..", "testdata", "recordings", "gemini-stream")
	corpus     = filepath.Join("..", "..", "..", "..", "shared", "corpus", "gemini-stream")
)

func TestInventory(t *testing.T) {
	t.Parallel()
	adaptertest.Inventory(t, geministream.Adapter{}, "testdata/inventory.tsv", "testdata/inventory.jsonl")
}

func TestGolden(t *testing.T) {
	t.Parallel()
	adaptertest.Golden(t, geministream.Adapter{}, "testdata/inventory.jsonl", "testdata/golden")
	adaptertest.Golden(t, geministream.Adapter{}, filepath.Join(recordings, "*.jsonl"), "testdata/golden")
	if matches, _ := filepath.Glob(filepath.Join(corpus, "*")); len(matches) > 0 {
		// The corpus' .json file is `--output-format json` (one pretty
		// document), not stream-json: read as lines, as `agentwire map`
		// reads any file, every line is a validation error with its raw kept.
		adaptertest.Golden(t, geministream.Adapter{}, filepath.Join(corpus, "*.json*"), "testdata/golden")
	}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	inputs := adaptertest.Inputs(t, "testdata/inventory.jsonl", false)
	inputs = append(inputs, adaptertest.Inputs(t, filepath.Join(recordings, "*.jsonl"), false)...)
	inputs = append(inputs, adaptertest.Inputs(t, filepath.Join(corpus, "*.jsonl"), true)...)
	adaptertest.Run(t, geministream.Adapter{}, inputs, adaptertest.Features{})
	// Inventory kinds never map to an unmapped-kind warning on real input.
	for _, in := range inputs {
		for _, evs := range adaptertest.MapAll(t, geministream.Adapter{}, adaptertest.Frames(geministream.Dialect, in.Name, in.Frames)) {
			for _, e := range evs {
				if w, ok := e.Payload.(*canonical.RuntimeWarning); ok && strings.HasPrefix(w.Message, "unmapped ") {
					t.Errorf("%s: %q", in.Name, w.Message)
				}
			}
		}
	}
}

func mapLines(t *testing.T, lines ...string) []canonical.Event {
	t.Helper()
	return adaptertest.MapLines(t, geministream.Adapter{}, lines...)
}

const (
	initA   = `{"type":"init","timestamp":"2026-12-02T13:01:08.015Z","session_id":"s-1","model":"gemini-2.5-flash"}`
	userA   = `{"type":"message","timestamp":"2026-12-02T13:01:08.017Z","role":"user","content":"Say hello."}`
	deltaA  = `{"type":"message","timestamp":"2026-12-02T13:01:08.164Z","role":"assistant","content":"Hel","delta":true}`
	deltaB  = `{"type":"message","timestamp":"2026-12-02T13:01:08.165Z","role":"assistant","content":"lo!","delta":true}`
	resultA = `{"type":"result","timestamp":"2026-12-02T13:01:08.249Z","status":"success","stats":{"total_tokens":1003,"input_tokens":1000,"output_tokens":3,"cached":0,"input":1000,"duration_ms":234,"tool_calls":0}}`
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
			name:  "deltas stream into one message item that completes with the whole text at the turn's end",
			given: []string{initA, userA, deltaA, deltaB, resultA},
			expected: []canonical.Kind{
				canonical.KindSessionStarted, canonical.KindThreadStarted, canonical.KindSessionConfigured,
				canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted,
				canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindContentDelta,
				canonical.KindItemCompleted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated,
			},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				msg := evs[9].Payload.(*canonical.ItemCompleted)
				require.Equal(t, "Hello!", msg.Content[canonical.StreamAssistantText])
				require.Equal(t, evs[6].ItemID, evs[9].ItemID)
				require.Equal(t, evs[3].TurnID, evs[10].TurnID)
				require.Equal(t, "s-1", evs[0].ProviderRefs.ProviderSessionID)
				require.NotEqual(t, "s-1", evs[0].ThreadID)
				require.Equal(t, "2026-12-02T13:01:08.164Z", evs[7].CreatedAt.Format("2006-01-02T15:04:05.000Z"), "the frame's timestamp is the event time")
			},
		},
		{
			name: "usage: input_tokens is the whole prompt, cached part of it, input not counted again; the rest of total_tokens is reasoning",
			given: []string{userA, `{"type":"result","status":"success","stats":{"total_tokens":3852,"input_tokens":3750,"output_tokens":70,"cached":2200,"input":1550,"duration_ms":669,` +
				`"models":{"gemini-2.5-flash":{"total_tokens":3852,"input_tokens":3750,"output_tokens":70,"cached":2200,"input":1550}}}}`},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				done := evs[3].Payload.(*canonical.TurnCompleted)
				want := canonical.TokenUsage{InputTokens: 1550, CachedInputTokens: 2200, OutputTokens: 102, ReasoningOutputTokens: 32}
				require.Equal(t, want, *done.Usage)
				require.Equal(t, int64(3852), done.Usage.TotalTokens(), "the canonical total is Gemini's total_tokens")
				require.Equal(t, want, done.ModelUsage["gemini-2.5-flash"].TokenUsage)
				require.Equal(t, int64(669), *done.DurationMs)
			},
		},
		{
			name: "a model without a name in the stats is left out of the turn's model usage",
			given: []string{userA, `{"type":"result","status":"success","stats":{"total_tokens":10,"input_tokens":10,` +
				`"models":{"":{"total_tokens":4,"input_tokens":4},"gemini-2.5-flash":{"total_tokens":6,"input_tokens":6}}}}`},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				var done []*canonical.TurnCompleted
				for _, e := range evs {
					require.NoError(t, canonical.Validate(e))
					if p, ok := e.Payload.(*canonical.TurnCompleted); ok {
						done = append(done, p)
					}
				}
				require.Len(t, done, 1)
				require.Len(t, done[0].ModelUsage, 1)
				require.Equal(t, int64(6), done[0].ModelUsage["gemini-2.5-flash"].InputTokens)
			},
		},
		{
			name:     "tool_use and tool_result pair by tool_id; an error result is a failed item; text before a tool is its own message",
			given:    []string{userA, deltaA, `{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"ls"}}`, `{"type":"tool_result","tool_id":"t1","status":"error","error":{"type":"x","message":"boom"}}`, deltaB, resultA},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindItemCompleted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, evs[6].ItemID, evs[7].ItemID)
				require.Equal(t, "t1", evs[7].ProviderRefs.ProviderItemID)
				done := evs[7].Payload.(*canonical.ItemCompleted)
				require.Equal(t, canonical.ItemStatusFailed, done.Status)
				require.Equal(t, canonical.ItemTypeCommandExecution, done.ItemType)
				require.Equal(t, "boom", done.Detail)
				require.Equal(t, "Hel", evs[5].Payload.(*canonical.ItemCompleted).Content[canonical.StreamAssistantText])
				require.NotEqual(t, evs[4].ItemID, evs[9].ItemID, "text after the tool is a second message")
			},
		},
		{
			name:     "two init frames (a --resume process): one thread, two session starts, two turns with distinct ids",
			given:    []string{initA, userA, deltaA, resultA, initA, userA, deltaB, resultA},
			expected: []canonical.Kind{canonical.KindSessionStarted, canonical.KindThreadStarted, canonical.KindSessionConfigured, canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindItemCompleted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated, canonical.KindSessionStarted, canonical.KindSessionConfigured, canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindContentDelta, canonical.KindItemCompleted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.NotEmpty(t, evs[11].Payload.(*canonical.SessionStarted).Resume)
				require.Equal(t, evs[1].ThreadID, evs[13].ThreadID)
				require.NotEqual(t, evs[3].TurnID, evs[13].TurnID)
				require.Equal(t, int64(2000), evs[20].Payload.(*canonical.ThreadTokenUsageUpdated).Usage.InputTokens, "the thread total spans both processes")
			},
		},
		{
			name:     "a failed result is a runtime.error and a failed turn; a process that ends without result fails its turn at the next init",
			given:    []string{userA, `{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: 500]"},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0}}`, userA, initA},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindRuntimeError, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated, canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindTurnCompleted, canonical.KindSessionStarted, canonical.KindThreadStarted, canonical.KindSessionConfigured},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.ErrorClassProvider, evs[3].Payload.(*canonical.RuntimeError).Class)
				done := evs[4].Payload.(*canonical.TurnCompleted)
				require.Equal(t, canonical.TurnStateFailed, done.State)
				require.Equal(t, "[API Error: 500]", done.ErrorMessage)
				require.Equal(t, canonical.TurnStateFailed, evs[9].Payload.(*canonical.TurnCompleted).State)
			},
		},
		{
			name:     "error severity: warning is a warning, error an error",
			given:    []string{`{"type":"error","severity":"warning","message":"slow"}`, `{"type":"error","severity":"error","message":"bad"}`},
			expected: []canonical.Kind{canonical.KindRuntimeWarning, canonical.KindRuntimeError},
		},
		{
			name:     "bad input is kept, not dropped",
			given:    []string{`{"type":"init"`, `{"type":"frobnicate"}`, `{"role":"user"}`, `{`},
			expected: []canonical.Kind{canonical.KindRuntimeError, canonical.KindRuntimeWarning, canonical.KindRuntimeError, canonical.KindRuntimeError},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.ErrorClassValidation, evs[0].Payload.(*canonical.RuntimeError).Class)
				frame, err := evs[0].Raw.Frame()
				require.NoError(t, err)
				require.True(t, bytes.Equal([]byte(`{"type":"init"`), frame))
				require.Equal(t, canonical.RawText, evs[0].Raw.Encoding)
				require.Contains(t, evs[1].Payload.(*canonical.RuntimeWarning).Message, "frobnicate")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			evs := mapLines(t, tt.given...)
			require.Equal(t, tt.expected, adaptertest.Kinds(evs))
			for _, e := range evs {
				require.NoError(t, canonical.Validate(e))
				require.Equal(t, canonical.ProviderGemini, e.Provider)
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
	adaptertest.Fuzz(f, geministream.Adapter{}, nil)
}

func BenchmarkMap(b *testing.B) {
	var lines [][]byte
	for _, in := range adaptertest.Inputs(b, filepath.Join(recordings, "*.jsonl"), false) {
		lines = append(lines, in.Frames...)
	}
	adaptertest.Bench(b, geministream.Adapter{}, lines)
}
