package adapters_test

import (
	"encoding/json"
	"path/filepath"
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
