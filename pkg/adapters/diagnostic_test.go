package adapters_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/pkg/adapters"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// recordingOf names a recording of each dialect, whose first lines give
// the session some state before the diagnostic frames come.
var recordingOf = map[string]string{
	"acp":              "acp-gemini/shell.jsonl",
	"claude-log":       "claude-log/shell.jsonl",
	"claude-stream":    "claude-stream/shell.jsonl",
	"codex-app-server": "codex-app-server/shell.jsonl",
	"codex-exec":       "codex-exec/shell.jsonl",
	"codex-rollout":    "codex-rollout/shell.jsonl",
	"gemini-stream":    "gemini-stream/shell.jsonl",
}

// TestDiagnosticFrames: the frames `ingest exec` and `ingest proxy` add to
// a session (the agent's standard error lines, its exit status) read the
// same in every dialect, under their own mapping version, and leave the
// adapter's state as it was. Before, each dialect mapped them as frames
// it could not decode: a validation error per stderr line and one for
// every exit, and no session ever exited.
func TestDiagnosticFrames(t *testing.T) {
	t.Parallel()
	type want struct {
		kinds    []canonical.Kind
		message  string // of the first event
		exitKind canonical.ExitKind
		exitCode *int
	}
	frames := []struct {
		frame string
		want  want
	}{
		{`{"agentwire":"stderr","line":"warning: config.toml: unknown key"}`,
			want{[]canonical.Kind{canonical.KindRuntimeWarning}, "warning: config.toml: unknown key", "", nil}},
		{`{"agentwire":"stderr","line":""}`,
			want{[]canonical.Kind{canonical.KindRuntimeWarning}, "an empty line on standard error", "", nil}},
		{`{"agentwire":"stderr","lineBase64":"/w=="}`,
			want{[]canonical.Kind{canonical.KindRuntimeWarning}, "a line on standard error that is not UTF-8", "", nil}},
		{`{"agentwire":"exit","code":0}`,
			want{[]canonical.Kind{canonical.KindSessionExited}, "the agent exited", canonical.ExitGraceful, new(0)}},
		{`{"agentwire":"exit","code":143,"signal":"SIGTERM"}`,
			want{[]canonical.Kind{canonical.KindSessionExited}, "the agent was stopped by SIGTERM", canonical.ExitGraceful, new(143)}},
		{`{"agentwire":"exit","code":2}`,
			want{[]canonical.Kind{canonical.KindRuntimeError, canonical.KindSessionExited}, "the agent exited with status 2", canonical.ExitError, new(2)}},
		{`{"agentwire":"exit","code":137,"signal":"SIGKILL"}`,
			want{[]canonical.Kind{canonical.KindRuntimeError, canonical.KindSessionExited}, "the agent was killed by SIGKILL", canonical.ExitError, new(137)}},
		{`{"agentwire":"exit","code":-1,"error":"wait: no child processes"}`,
			want{[]canonical.Kind{canonical.KindRuntimeError, canonical.KindSessionExited}, "the agent's exit status could not be read: wait: no child processes", canonical.ExitError, nil}},
		{`{"agentwire":"model","model":"gpt-5.1-codex"}`,
			want{[]canonical.Kind{canonical.KindSessionConfigured}, "", "", nil}},
		{`{"agentwire":"model","model":" "}`,
			want{[]canonical.Kind{canonical.KindRuntimeWarning}, "a model frame that names no model", "", nil}},
		{`{"agentwire":"heartbeat"}`,
			want{[]canonical.Kind{canonical.KindRuntimeWarning}, `unknown diagnostic frame "heartbeat"`, "", nil}},
		{`{"agentwire":"exit","code":"zero"}`,
			want{[]canonical.Kind{canonical.KindRuntimeError}, "", "", nil}},
	}
	for _, d := range adapters.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			a, err := adapters.Lookup(d)
			require.NoError(t, err)
			for _, k := range []string{"agentwire:model", "agentwire:stderr", "agentwire:exit"} {
				_, ok := a.Rules().Lookup(k)
				require.True(t, ok, "the mapping table documents %s", k)
			}
			rec, ok := recordingOf[d]
			require.True(t, ok, "name a recording of %s", d)
			lines := readLines(t, filepath.Join("..", "..", "testdata", "recordings", rec))[:3]
			for _, f := range frames {
				lines = append(lines, []byte(f.frame))
			}
			all := make([]adapter.Frame, len(lines))
			for i, l := range lines {
				all[i] = frameOf(d, i+1, l)
			}
			s := a.NewSession("")
			provider := a.Provider()
			for _, f := range all[:3] {
				evs, err := s.Map(f)
				require.NoError(t, err)
				for _, e := range evs {
					// An ACP agent names its provider as it starts.
					provider = e.Provider
				}
			}
			before := stateOf(t, s)
			for i, f := range frames {
				evs, err := s.Map(all[3+i])
				require.NoError(t, err)
				// The first exit also ends the work the recording's first
				// lines left running: TestExitEndsRunningWork.
				evs = slices.DeleteFunc(evs, func(e canonical.Event) bool {
					return e.Type() == canonical.KindItemCompleted || e.Type() == canonical.KindTurnCompleted
				})
				kinds := make([]canonical.Kind, len(evs))
				for j, e := range evs {
					kinds[j] = e.Type()
					require.NoError(t, canonical.Validate(e), f.frame)
					require.Equal(t, adapter.DiagnosticVersion, e.MappingVersion, f.frame)
					require.Equal(t, provider, e.Provider, f.frame)
					require.Empty(t, e.ThreadID+e.TurnID, "a diagnostic is the session's: %s", f.frame)
					require.JSONEq(t, f.frame, string(e.Raw.Payload), "raw is the frame: %s", f.frame)
				}
				require.Equal(t, f.want.kinds, kinds, f.frame)
				if f.want.message != "" {
					require.Equal(t, f.want.message, firstMessage(evs[0].Payload), f.frame)
				}
				if c, ok := evs[0].Payload.(*canonical.SessionConfigured); ok {
					require.JSONEq(t, `"gpt-5.1-codex"`, string(c.Config["model"]), f.frame)
				}
				if ex, ok := evs[len(evs)-1].Payload.(*canonical.SessionExited); ok {
					require.Equal(t, f.want.exitKind, ex.ExitKind, f.frame)
					require.Equal(t, f.want.exitCode, ex.ExitCode, f.frame)
					require.Equal(t, f.want.message, ex.Reason, f.frame)
				}
			}
			require.Equal(t, before, stateOf(t, s), "diagnostic frames leave the adapter's state alone")
			// An unknown one is drift, counted with the unmapped kinds.
			evs, err := s.Map(frameOf(d, len(all)+1, []byte(`{"agentwire":"heartbeat"}`)))
			require.NoError(t, err)
			require.JSONEq(t, `{"kind":"agentwire:heartbeat","dialect":"`+d+`"}`, string(evs[0].Payload.(*canonical.RuntimeWarning).Detail))
		})
	}
}

// firstMessage is what a diagnostic's first event says: a warning's or
// an error's message, an exit's reason.
func firstMessage(p canonical.Payload) string {
	if w, ok := p.(*canonical.RuntimeWarning); ok {
		return w.Message
	}
	if e, ok := p.(*canonical.RuntimeError); ok {
		return e.Message
	}
	if x, ok := p.(*canonical.SessionExited); ok {
		return x.Reason
	}
	return ""
}

// frameOf is the ordinal-th frame of a session of dialect.
func frameOf(dialect string, ordinal int, b []byte) adapter.Frame {
	return adapter.Frame{Bytes: b, Dialect: dialect, Tenant: "acme", SessionKey: "diagnostic", Ordinal: uint64(ordinal), //nolint:gosec // ordinals are positive
		ReceivedAt: time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC).Add(time.Duration(ordinal) * time.Millisecond)}
}

// stateOf is the state in a session's snapshot, without the last ordinal.
func stateOf(t *testing.T, s adapter.Session) string {
	t.Helper()
	b, err := s.Snapshot()
	require.NoError(t, err)
	var snap struct {
		State json.RawMessage `json:"state"`
	}
	require.NoError(t, json.Unmarshal(b, &snap))
	return string(snap.State)
}

// TestDiagnosticLongLine: a long standard error line is cut in the
// warning's message, at a character, and kept whole in raw.
func TestDiagnosticLongLine(t *testing.T) {
	t.Parallel()
	line := ""
	for len(line) < 1500 {
		line += "é"
	}
	frame, err := json.Marshal(map[string]string{"agentwire": "stderr", "line": line})
	require.NoError(t, err)
	evs, ok := adapter.Diagnostic(frameOf("codex-exec", 1, frame), canonical.ProviderCodex)
	require.True(t, ok)
	require.Len(t, evs, 1)
	msg := evs[0].Payload.(*canonical.RuntimeWarning).Message
	require.LessOrEqual(t, len(msg), 1000+len("…"))
	require.Equal(t, line[:1000]+"…", msg)
	require.JSONEq(t, string(frame), string(evs[0].Raw.Payload))
	_, ok = adapter.Diagnostic(frameOf("codex-exec", 2, []byte(`{"type":"turn.started"}`)), canonical.ProviderCodex)
	require.False(t, ok, "an agent's frame is not a diagnostic")
}

// TestExitEndsRunningWork: when ingest sees the agent's process end, the
// turns and items the session started and never ended end with it, in
// every dialect and across a snapshot: a subscriber, like the turns and
// items tables, saw them running for ever before. What had ended is left
// alone, and a second exit ends nothing.
func TestExitEndsRunningWork(t *testing.T) {
	t.Parallel()
	kill := []byte(`{"agentwire":"exit","code":137,"signal":"SIGKILL"}`)
	for _, d := range adapters.Dialects() {
		t.Run(d, func(t *testing.T) {
			t.Parallel()
			a, err := adapters.Lookup(d)
			require.NoError(t, err)
			lines := readLines(t, filepath.Join("..", "..", "testdata", "recordings", recordingOf[d]))
			// Map the recording until a turn and an item run, reading
			// what runs from the events themselves.
			s := a.NewSession("")
			turns, items := map[string]canonical.Event{}, map[string]canonical.Event{}
			n := 0
			for n < len(lines) && (len(turns) == 0 || len(items) == 0) {
				evs, err := s.Map(frameOf(d, n+1, lines[n]))
				require.NoError(t, err)
				running(turns, items, evs)
				n++
			}
			require.NotEmpty(t, turns, "%s runs a turn", recordingOf[d])
			require.NotEmpty(t, items, "%s runs an item", recordingOf[d])

			snap, err := s.Snapshot()
			require.NoError(t, err)
			restored := a.NewSession("")
			require.NoError(t, restored.Restore(snap))
			evs, err := restored.Map(frameOf(d, n+1, kill))
			require.NoError(t, err)
			require.Equal(t, canonical.KindRuntimeError, evs[0].Type())
			require.Equal(t, canonical.KindSessionExited, evs[len(evs)-1].Type())
			ended := evs[1 : len(evs)-1]
			require.Len(t, ended, len(items)+len(turns), "every running item and turn ends, nothing else")
			for i, e := range ended {
				require.NoError(t, canonical.Validate(e))
				require.Equal(t, adapter.DiagnosticVersion, e.MappingVersion)
				if i < len(items) {
					c, ok := e.Payload.(*canonical.ItemCompleted)
					require.True(t, ok, "items end first: %s", e.Type())
					start, ok := items[e.ItemID]
					require.True(t, ok, "item %s was running", e.ItemID)
					require.Equal(t, canonical.ItemStatusFailed, c.Status)
					require.Equal(t, start.Payload.(*canonical.ItemStarted).ItemType, c.ItemType)
					require.Equal(t, "the agent exited before the item ended: the agent was killed by SIGKILL", c.Detail)
					require.Equal(t, [3]string{start.SessionID, start.ThreadID, start.TurnID}, [3]string{e.SessionID, e.ThreadID, e.TurnID})
					continue
				}
				c, ok := e.Payload.(*canonical.TurnCompleted)
				require.True(t, ok, "then turns: %s", e.Type())
				start, ok := turns[e.TurnID]
				require.True(t, ok, "turn %s was running", e.TurnID)
				require.Equal(t, canonical.TurnStateInterrupted, c.State)
				require.Equal(t, "the agent was killed by SIGKILL", c.ErrorMessage)
				require.Nil(t, c.Usage, "a count is the provider's to state")
				require.Equal(t, [2]string{start.SessionID, start.ThreadID}, [2]string{e.SessionID, e.ThreadID})
			}
			again, err := restored.Map(frameOf(d, n+2, kill))
			require.NoError(t, err)
			require.Equal(t, []canonical.Kind{canonical.KindRuntimeError, canonical.KindSessionExited}, kinds(again), "nothing runs after the exit")

			// The whole recording, then the exit: only what the
			// recording left running ends.
			s = a.NewSession("")
			clear(turns)
			clear(items)
			for i, l := range lines {
				evs, err := s.Map(frameOf(d, i+1, l))
				require.NoError(t, err)
				running(turns, items, evs)
			}
			evs, err = s.Map(frameOf(d, len(lines)+1, []byte(`{"agentwire":"exit","code":0}`)))
			require.NoError(t, err)
			require.Len(t, evs, 1+len(items)+len(turns), "%v", kinds(evs))
		})
	}
}

// running follows the turns and items events start and end, by id.
func running(turns, items map[string]canonical.Event, evs []canonical.Event) {
	for _, e := range evs {
		switch e.Payload.(type) { //nolint:gochecksumtype // only what starts or ends a turn or an item
		case *canonical.TurnStarted:
			turns[e.TurnID] = e
		case *canonical.TurnCompleted, *canonical.TurnAborted:
			delete(turns, e.TurnID)
		case *canonical.ItemStarted:
			items[e.ItemID] = e
		case *canonical.ItemCompleted:
			delete(items, e.ItemID)
		}
	}
}

func kinds(evs []canonical.Event) []canonical.Kind {
	out := make([]canonical.Kind, len(evs))
	for i, e := range evs {
		out[i] = e.Type()
	}
	return out
}
