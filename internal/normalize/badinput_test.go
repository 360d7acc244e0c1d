package normalize_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/normalize"
	"github.com/agentwire/agentwire/pkg/adapters"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
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

// TestAdapterPanic: an adapter that panics on a frame (a bug) has that
// frame dead-lettered with the reason, the frame as it came; the normalizer
// keeps running and maps the session's next frames.
func TestAdapterPanic(t *testing.T) {
	t.Parallel()
	lines := adaptertest.ReadLines(t, "../../testdata/recordings/codex-exec/shell.jsonl")[:4]
	const victim = 2
	sessions := []session{{key: "file:panic.jsonl", dialect: "codex-exec", lines: lines}}

	// What the session maps to without the frame: the adapter never saw it.
	a, err := adapters.Lookup("codex-exec")
	require.NoError(t, err)
	offline := a.NewSession("")
	want := map[string][]string{}
	for i, l := range lines {
		if i+1 == victim {
			continue
		}
		f := adaptertest.Frames("codex-exec", sessions[0].key, [][]byte{l})[0]
		f.Tenant, f.Ordinal, f.ReceivedAt = "default", uint64(i+1), receivedAt
		evs, err := offline.Map(f)
		require.NoError(t, err)
		for _, e := range evs {
			want[e.SessionID] = append(want[e.SessionID], e.EventID)
		}
	}

	_, js, layout := setup(t, bus.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	norm, err := normalize.New(ctx, layout, normalize.WithMapHook(normalize.Config{}, func(f adapter.Frame) {
		if f.Ordinal == victim {
			panic("a bug")
		}
	}), quietLog(t))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- norm.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	publish(t, layout, "default", sessions, false)
	got, _ := collect(t, js, total(want))
	require.Equal(t, want, got)
	require.Equal(t, uint64(1), norm.Stats().DeadLettered.Load())

	st, err := js.Stream(context.Background(), "DEADLETTER")
	require.NoError(t, err)
	m, err := st.GetLastMsgForSubject(context.Background(), "deadletter.normalize.default")
	require.NoError(t, err)
	require.Contains(t, m.Header.Get(bus.HeaderReason), "adapter bug")
	require.Contains(t, m.Header.Get(bus.HeaderReason), "a bug")
	require.Equal(t, lines[victim-1], m.Data)
}
