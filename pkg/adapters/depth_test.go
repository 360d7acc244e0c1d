package adapters_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/jsonscan"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// deepFrames are frames of each dialect with a member the adapter copies
// into a payload (a tool's input, a turn's context), where DEEP stands for
// JSON nested as deep as a test needs.
var deepFrames = []struct{ dialect, recording, frame string }{
	{"codex-rollout", "codex-rollout/plain.jsonl", `{"timestamp":"2026-12-02T12:58:53.600Z","type":"turn_context","payload":{"cwd":"/x","model":"m","extra":DEEP}}`},
	{"codex-exec", "codex-exec/plain.jsonl", `{"type":"item.completed","item":{"id":"item_9","type":"mcp_tool_call","server":"s","tool":"t","arguments":DEEP,"status":"completed"}}`},
	{"codex-app-server", "codex-app-server/plain.jsonl", `{"dir":"agent","msg":{"method":"item/started","params":{"threadId":"t","turnId":"u","item":{"type":"mcpToolCall","id":"i9","server":"s","tool":"t","arguments":DEEP}}}}`},
	{"claude-stream", "claude-stream/plain.jsonl", `{"type":"assistant","message":{"id":"m9","role":"assistant","content":[{"type":"tool_use","id":"tu9","name":"Bash","input":DEEP}]},"session_id":"3ff28293-5f53-4d69-b455-5d0c996f5dc6"}`},
	{"claude-log", "claude-log/plain.jsonl", `{"type":"assistant","timestamp":"2026-12-02T12:56:47.000Z","sessionId":"012745ef-0859-46d6-9d66-0d41d2bf0f8a","uuid":"u9","message":{"id":"m9","role":"assistant","content":[{"type":"tool_use","id":"tu9","name":"Bash","input":DEEP}]}}`},
	{"gemini-stream", "gemini-stream/plain.jsonl", `{"type":"tool_use","timestamp":"2026-12-02T13:01:07.600Z","tool_name":"x","tool_id":"t9","parameters":DEEP}`},
	{"acp", "acp-gemini/plain.jsonl", `{"dir":"agent","msg":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"tc9","title":"t","rawInput":DEEP}}}}`},
}

// nestedTo is template with DEEP replaced so the frame nests depth levels.
func nestedTo(t *testing.T, template string, depth int) []byte {
	t.Helper()
	const probe = 20
	around := jsonscan.Check([]byte(strings.Replace(template, "DEEP", strings.Repeat("[", probe)+strings.Repeat("]", probe), 1))).Depth - probe
	k := depth - around
	b := []byte(strings.Replace(template, "DEEP", strings.Repeat("[", k)+strings.Repeat("]", k), 1))
	info := jsonscan.Check(b)
	require.True(t, info.Valid)
	require.Equal(t, depth, info.Depth)
	return b
}

// TestFramesNestedTooDeep: a frame nested deeper than an event can carry
// maps to one runtime.error that keeps it, and changes nothing else of
// its session. Its adapter copied the deep part into a payload, and the
// event could not be encoded (past encoding/json's 10000 levels) or
// validated: the normalizer dead-lettered the frame. A frame nested as
// deep as the limit maps as before.
func TestFramesNestedTooDeep(t *testing.T) {
	t.Parallel()
	for _, tc := range deepFrames {
		t.Run(tc.dialect, func(t *testing.T) {
			t.Parallel()
			recording := readLines(t, "../../testdata/recordings/"+tc.recording)
			start := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
			mapAll := func(lines [][]byte) [][]canonical.Event { return mapSession(t, tc.dialect, start, lines...) }
			types := func(frames [][]canonical.Event) (ts []canonical.Kind) {
				for _, evs := range frames {
					for _, e := range evs {
						ts = append(ts, e.Type())
					}
				}
				return ts
			}
			plain := types(mapAll(recording))

			for _, depth := range []int{canonical.MaxJSONDepth + 1, 10005} {
				deep := nestedTo(t, tc.frame, depth)
				lines := append([][]byte{recording[0], deep}, recording[1:]...)
				mapped := mapAll(lines)
				require.Len(t, mapped[1], 1, "depth %d", depth)
				e := mapped[1][0]
				require.Equal(t, canonical.KindRuntimeError, e.Type())
				p := e.Payload.(*canonical.RuntimeError)
				require.Equal(t, canonical.ErrorClassValidation, p.Class)
				require.Contains(t, p.Message, fmt.Sprintf("nests %d levels deep, deeper than the %d", depth, canonical.MaxJSONDepth))
				raw, err := e.Raw.Frame()
				require.NoError(t, err)
				require.Equal(t, deep, raw, "the frame is kept")
				require.Equal(t, plain, types(append(mapped[:1:1], mapped[2:]...)), "the session maps on as if the frame were not there")
			}

			atLimit := mapAll([][]byte{recording[0], nestedTo(t, tc.frame, canonical.MaxJSONDepth)})
			for _, e := range atLimit[1] {
				if p, ok := e.Payload.(*canonical.RuntimeError); ok {
					require.NotContains(t, p.Message, "levels deep")
				}
			}
		})
	}
}
