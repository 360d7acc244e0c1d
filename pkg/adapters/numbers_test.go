package adapters_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOutlandishValues: frames whose numbers no provider sends (counts
// that add up past int64, a cost whose rounding overflows, nanoseconds
// beyond a second) or that lack an id the model requires still map to
// events that validate and encode. Each of these made an invalid event: a
// total wrapped to a negative count, an infinite cost, a negative
// duration, a task without an id.
func TestOutlandishValues(t *testing.T) {
	t.Parallel()
	const big = "4611686018427387903" // MaxInt64/2, the most a count may say
	for _, tc := range []struct {
		name, dialect string
		lines         []string
	}{
		{"codex-exec: two turns' usage past int64", "codex-exec", []string{
			`{"type":"thread.started","thread_id":"t1"}`,
			`{"type":"turn.started"}`,
			`{"type":"turn.completed","usage":{"input_tokens":` + big + `,"output_tokens":0}}`,
			`{"type":"turn.started"}`,
			`{"type":"turn.completed","usage":{"input_tokens":` + big + `,"output_tokens":0}}`,
		}},
		{"codex-rollout: usage records past int64", "codex-rollout", []string{
			`{"timestamp":"2026-12-02T12:58:53.614Z","type":"token_usage_record","payload":{"usage":{"input_tokens":` + big + `,"output_tokens":0}}}`,
			`{"timestamp":"2026-12-02T12:58:53.614Z","type":"token_usage_record","payload":{"usage":{"input_tokens":` + big + `,"output_tokens":0}}}`,
		}},
		{"claude-stream: results past int64", "claude-stream", []string{
			`{"type":"result","subtype":"success","is_error":false,"session_id":"s1","usage":{"input_tokens":` + big + `,"output_tokens":1}}`,
			`{"type":"result","subtype":"success","is_error":false,"session_id":"s1","usage":{"input_tokens":` + big + `,"output_tokens":1}}`,
		}},
		{"gemini-stream: results past int64", "gemini-stream", []string{
			`{"type":"result","timestamp":"2026-12-02T13:01:07.882Z","status":"success","stats":{"input_tokens":` + big + `,"output_tokens":0}}`,
			`{"type":"result","timestamp":"2026-12-02T13:01:07.882Z","status":"success","stats":{"input_tokens":` + big + `,"output_tokens":0}}`,
		}},
		{"claude-stream: a cost whose rounding overflows", "claude-stream", []string{
			`{"type":"result","subtype":"success","is_error":false,"session_id":"s1","total_cost_usd":1e300,"usage":{"input_tokens":1,"output_tokens":1}}`,
			`{"type":"result","subtype":"success","is_error":false,"session_id":"s1","total_cost_usd":1e308,"usage":{"input_tokens":1,"output_tokens":1}}`,
		}},
		{"codex-rollout: nanoseconds beyond a second", "codex-rollout", []string{
			`{"timestamp":"2026-12-02T12:58:53.614Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t"}}`,
			`{"timestamp":"2026-12-02T12:58:53.614Z","type":"event_msg","payload":{"type":"exec_command_end","call_id":"c1","command":["ls"],"exit_code":0,"duration":{"secs":9223372036854774,"nanos":9223372036854775807}}}`,
			`{"timestamp":"2026-12-02T12:58:53.614Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t"}}`,
		}},
		{"codex-app-server: an import without an id", "codex-app-server", []string{
			`{"dir":"agent","msg":{"method":"externalAgentConfig/import/progress","params":{}}}`,
			`{"dir":"agent","msg":{"method":"externalAgentConfig/import/completed","params":{"importId":""}}}`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := 0
			for _, evs := range mapSession(t, tc.dialect, time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC), tc.lines...) {
				n += len(evs)
			}
			require.Positive(t, n)
		})
	}
}
