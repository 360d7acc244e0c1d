package normalize_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// TestBadInputFlows pushes broken frames through the pipeline between good
// ones: each becomes its canonical error (or warning) event with the raw
// frame kept — inline, or by reference for the 5 MB frame — every event a
// subscriber receives decodes, and the good frames around them still map.
func TestBadInputFlows(t *testing.T) {
	t.Parallel()

	good := []byte(`{"type":"turn.started"}`)
	huge := append([]byte(`{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"`), bytes.Repeat([]byte("x"), 5<<20)...)
	huge = append(huge, `"}}`...)
	deep := []byte(strings.Repeat("[", 10000) + strings.Repeat("]", 10000))
	bad := [][]byte{
		[]byte("not json at all"),
		[]byte(`{"type":"turn.completed","usage":{"input_tok`),
		huge,
		[]byte("{\"type\":\"error\",\"message\":\"\xff\xfe\"}"),
		deep,
		[]byte(`{"type":"thread.frobnicated"}`),
	}
	var lines [][]byte
	for _, b := range bad {
		lines = append(lines, good, b)
	}
	// A long file with every tenth line broken.
	for i := range 20000 {
		if i%10 == 9 {
			lines = append(lines, []byte(`{"type":"item.completed","item":`))
		} else {
			lines = append(lines, good)
		}
	}
	sessions := []session{{key: "file:bad.jsonl", dialect: "codex-exec", lines: lines}}
	want := expected(t, "default", sessions)

	url, js, layout := setup(t, bus.Config{})
	startNormalizers(t, url, 1, bus.Config{})
	publish(t, layout, "default", sessions, false)
	got, events := collect(t, js, total(want))
	require.Equal(t, want, got)

	errorsSeen, refs, cutText := 0, 0, false
	for _, e := range events {
		if c, ok := e.Payload.(*canonical.ItemCompleted); ok {
			cutText = cutText || strings.Contains(c.Content[canonical.StreamAssistantText], "truncated by agentwire")
		}
		if e.Type() == canonical.KindRuntimeError {
			errorsSeen++
		}
		require.NotNil(t, e.Raw)
		if e.Raw.Encoding == canonical.RawRef {
			refs++
			ref, err := e.Raw.Reference()
			require.NoError(t, err)
			require.Equal(t, len(huge), ref.Bytes)
			require.Equal(t, bus.RawObjects, ref.Bucket)
			continue
		}
		_, err := e.Raw.Frame()
		require.NoError(t, err)
	}
	require.GreaterOrEqual(t, errorsSeen, 2000+4, "every broken line is an error event")
	require.Positive(t, refs, "the 5 MB frame's events carry a reference")
	require.True(t, cutText, "the 5 MB message's text is cut to fit a message, with a mark")
}
