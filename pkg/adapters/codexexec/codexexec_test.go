package codexexec_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/pkg/adapters/codexexec"
	"github.com/agentwire/agentwire/pkg/canonical"
)

func TestInventory(t *testing.T) {
	t.Parallel()
	adaptertest.Inventory(t, codexexec.Adapter{}, "testdata/inventory.tsv", "testdata/inventory.jsonl")
}

const (
	recordings = "../../../testdata/recordings/codex-exec/*.jsonl"
	corpus     = "../../../../shared/corpus/codex-exec/*.jsonl"
)

func TestGolden(t *testing.T) {
	t.Parallel()
	adaptertest.Golden(t, codexexec.Adapter{}, "testdata/inventory.jsonl", "testdata")
	adaptertest.Golden(t, codexexec.Adapter{}, recordings, "testdata/golden")
	// The shared corpus, when it is checked out next to the project.
	if m, _ := filepath.Glob(corpus); len(m) > 0 {
		adaptertest.Golden(t, codexexec.Adapter{}, corpus, "testdata/golden")
	}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	inputs := adaptertest.Inputs(t, "testdata/inventory.jsonl", false)
	inputs = append(inputs, adaptertest.Inputs(t, recordings, false)...)
	// Real transcripts from public projects, when the shared corpus is
	// checked out next to the project; many are excerpts.
	inputs = append(inputs, adaptertest.Inputs(t, corpus, true)...)
	adaptertest.Run(t, codexexec.Adapter{}, inputs, adaptertest.Features{})
}

func mapLines(t *testing.T, lines ...string) []canonical.Event {
	t.Helper()
	return adaptertest.MapLines(t, codexexec.Adapter{}, lines...)
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
			name:     "an item reported only on completion is opened first",
			given:    []string{`{"type":"turn.started"}`, `{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"4"}}`},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, evs[1].ItemID, evs[2].ItemID)
				require.Equal(t, evs[0].TurnID, evs[2].TurnID)
				done := evs[2].Payload.(*canonical.ItemCompleted)
				require.Equal(t, "4", done.Content[canonical.StreamAssistantText])
				require.Equal(t, canonical.ItemTypeAssistantMessage, done.ItemType)
				require.Nil(t, evs[1].Payload.(*canonical.ItemStarted).Content, "the synthesized start carries no final content")
			},
		},
		{
			name:     "usage: a count that fell started anew: the turn's own; cached taken out of input; thread total accumulates",
			given:    []string{`{"type":"turn.started"}`, `{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":60,"output_tokens":5}}`, `{"type":"turn.started"}`, `{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":1}}`},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated, canonical.KindTurnStarted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.TokenUsage{InputTokens: 40, CachedInputTokens: 60, OutputTokens: 5}, *evs[1].Payload.(*canonical.TurnCompleted).Usage)
				require.Equal(t, canonical.TokenUsage{InputTokens: 50, CachedInputTokens: 60, OutputTokens: 6}, evs[5].Payload.(*canonical.ThreadTokenUsageUpdated).Usage)
				require.NotEqual(t, evs[0].TurnID, evs[3].TurnID, "two turns get distinct ids")
			},
		},
		{
			// codex 0.171: exec reports the thread's running count, and
			// `exec resume` carries the earlier run's over (the two-turns
			// recording and its rollout's last_token_usage).
			name: "usage: a resumed thread's count carries the earlier run's; a new thread's does not",
			given: []string{`{"type":"thread.started","thread_id":"a"}`, `{"type":"turn.started"}`,
				`{"type":"turn.completed","usage":{"input_tokens":1200,"cached_input_tokens":0,"output_tokens":5}}`,
				`{"type":"thread.started","thread_id":"a"}`, `{"type":"turn.started"}`,
				`{"type":"turn.completed","usage":{"input_tokens":2500,"cached_input_tokens":1200,"output_tokens":13,"reasoning_output_tokens":3}}`,
				`{"type":"thread.started","thread_id":"b"}`, `{"type":"turn.started"}`,
				`{"type":"turn.completed","usage":{"input_tokens":2000,"cached_input_tokens":0,"output_tokens":1}}`},
			expected: []canonical.Kind{canonical.KindThreadStarted, canonical.KindTurnStarted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated,
				canonical.KindThreadStarted, canonical.KindTurnStarted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated,
				canonical.KindThreadStarted, canonical.KindTurnStarted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.TokenUsage{InputTokens: 1200, OutputTokens: 5}, *evs[2].Payload.(*canonical.TurnCompleted).Usage)
				resumed := canonical.TokenUsage{InputTokens: 100, CachedInputTokens: 1200, OutputTokens: 8, ReasoningOutputTokens: 3}
				require.Equal(t, resumed, *evs[6].Payload.(*canonical.TurnCompleted).Usage, "the resumed run's turn without the first run's tokens")
				total := evs[7].Payload.(*canonical.ThreadTokenUsageUpdated)
				require.Equal(t, canonical.TokenUsage{InputTokens: 1300, CachedInputTokens: 1200, OutputTokens: 13, ReasoningOutputTokens: 3}, total.Usage, "the thread's total is codex's count")
				require.Equal(t, resumed, *total.Last)
				require.Equal(t, canonical.TokenUsage{InputTokens: 2000, OutputTokens: 1}, *evs[10].Payload.(*canonical.TurnCompleted).Usage, "another thread's count is its own")
				require.Equal(t, canonical.TokenUsage{InputTokens: 2000, OutputTokens: 1}, evs[11].Payload.(*canonical.ThreadTokenUsageUpdated).Usage, "another thread's total starts at zero")
			},
		},
		{
			name:     "a failed turn is an error and a failed completion",
			given:    []string{`{"type":"turn.started"}`, `{"type":"error","message":"Reconnecting... 1/5"}`, `{"type":"turn.failed","error":{"message":"401 Unauthorized"}}`},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindRuntimeWarning, canonical.KindRuntimeError, canonical.KindTurnCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				done := evs[3].Payload.(*canonical.TurnCompleted)
				require.Equal(t, canonical.TurnStateFailed, done.State)
				require.Equal(t, "401 Unauthorized", done.ErrorMessage)
				require.Equal(t, canonical.ErrorClassPermission, evs[2].Payload.(*canonical.RuntimeError).Class, "an authentication failure")
			},
		},
		{
			name: "the same item id in two threads is two items, in two turns",
			given: []string{`{"type":"thread.started","thread_id":"a"}`, `{"type":"turn.started"}`, `{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"x"}}`,
				`{"type":"thread.started","thread_id":"b"}`, `{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"y"}}`},
			expected: []canonical.Kind{canonical.KindThreadStarted, canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted,
				canonical.KindThreadStarted, canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.NotEqual(t, evs[3].ItemID, evs[7].ItemID)
				require.NotEqual(t, evs[3].ThreadID, evs[7].ThreadID)
				require.Equal(t, "item_0", evs[3].ProviderRefs.ProviderItemID)
				require.Equal(t, evs[1].TurnID, evs[3].TurnID)
				require.NotEqual(t, evs[1].TurnID, evs[7].TurnID, "a run's items are not in the turn the run before left open")
				require.Equal(t, evs[5].TurnID, evs[7].TurnID)
			},
		},
		{
			// A log read from the middle of a run (a file cut, a capture
			// started late): its items are in the turn its turn.completed
			// ends, which starts with the first of them.
			name: "a log that starts mid-turn: the first item opens the turn the completion ends",
			given: []string{`{"type":"item.completed","item":{"id":"item_3","type":"command_execution","command":"ls","exit_code":0,"status":"completed"}}`,
				`{"type":"item.completed","item":{"id":"item_4","type":"agent_message","text":"done"}}`,
				`{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":2}}`,
				`{"type":"thread.started","thread_id":"a"}`, `{"type":"turn.started"}`},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindItemStarted, canonical.KindItemCompleted, canonical.KindItemStarted, canonical.KindItemCompleted,
				canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated, canonical.KindThreadStarted, canonical.KindTurnStarted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				turn := evs[0].TurnID
				require.NotEmpty(t, turn)
				for _, i := range []int{1, 2, 3, 4, 5} {
					require.Equal(t, turn, evs[i].TurnID, "event %d (%s)", i, evs[i].Type())
				}
				require.Equal(t, canonical.TurnStateCompleted, evs[5].Payload.(*canonical.TurnCompleted).State)
				require.NotEqual(t, turn, evs[8].TurnID, "the next run's turn is another")
			},
		},
		{
			name:     "usage keys: cached_input_tokens, cache_write_input_tokens, reasoning_output_tokens",
			given:    []string{`{"type":"turn.started"}`, `{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":50,"cache_write_input_tokens":20,"output_tokens":30,"reasoning_output_tokens":12}}`},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindTurnCompleted, canonical.KindThreadTokenUsageUpdated},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.TokenUsage{InputTokens: 30, CachedInputTokens: 50, CacheWriteInputTokens: 20, OutputTokens: 30, ReasoningOutputTokens: 12}, *evs[1].Payload.(*canonical.TurnCompleted).Usage)
			},
		},
		{
			name:     "no turn id on the wire: each turn gets a derived one; an auth failure is a permission error",
			given:    []string{`{"type":"turn.started"}`, `{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized"}}`, `{"type":"turn.started"}`},
			expected: []canonical.Kind{canonical.KindTurnStarted, canonical.KindRuntimeError, canonical.KindTurnCompleted, canonical.KindTurnStarted},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.NotEmpty(t, evs[0].TurnID)
				require.Empty(t, evs[0].ProviderRefs.ProviderTurnID)
				require.Equal(t, evs[0].TurnID, evs[2].TurnID)
				require.NotEqual(t, evs[0].TurnID, evs[3].TurnID)
				require.Equal(t, canonical.ErrorClassPermission, evs[1].Payload.(*canonical.RuntimeError).Class)
			},
		},
		{
			name:     "bad input is kept, not dropped",
			given:    []string{`{"type":"turn.started"`, `{"type":"thread.frobnicated"}`, `{"item":{}}`},
			expected: []canonical.Kind{canonical.KindRuntimeError, canonical.KindRuntimeWarning, canonical.KindRuntimeError},
			check: func(t *testing.T, evs []canonical.Event) {
				t.Helper()
				require.Equal(t, canonical.ErrorClassValidation, evs[0].Payload.(*canonical.RuntimeError).Class)
				frame, err := evs[0].Raw.Frame()
				require.NoError(t, err)
				require.True(t, bytes.Equal([]byte(`{"type":"turn.started"`), frame), "raw keeps the broken frame: %q", frame)
				require.Equal(t, canonical.RawText, evs[0].Raw.Encoding)
				require.Contains(t, evs[1].Payload.(*canonical.RuntimeWarning).Message, "thread.frobnicated")
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
	adaptertest.Fuzz(f, codexexec.Adapter{}, nil)
}

func BenchmarkMap(b *testing.B) {
	var lines [][]byte
	for _, in := range adaptertest.Inputs(b, recordings, false) {
		lines = append(lines, in.Frames...)
	}
	adaptertest.Bench(b, codexexec.Adapter{}, lines)
}
