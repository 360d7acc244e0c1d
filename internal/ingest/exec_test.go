package ingest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/ingest"
)

func TestExec(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	res, err := f.in.Exec(t.Context(), ingest.ExecOptions{
		Args:    []string{"sh", "-c", `printf '{"type":"turn.started"}\n\n{"broken\n'; echo 'warn: slow' >&2; printf '\377\n' >&2; exit 3`},
		Session: ingest.Session{Dialect: "codex-exec"},
	})
	require.NoError(t, err)
	require.Equal(t, 3, res.ExitCode)
	require.True(t, strings.HasPrefix(res.SessionKey, "exec:sh:"), res.SessionKey)
	require.Equal(t, uint64(2), res.Stdout)
	require.Equal(t, uint64(2), res.Stderr)
	require.Equal(t, uint64(5), res.Frames)

	msgs := bySession(f.raw(t))[res.SessionKey]
	require.Len(t, msgs, 5)
	var stdout, stderr []string
	for i, m := range msgs {
		require.Equal(t, "codex-exec", m.header.Get(bus.HeaderDialect))
		require.Equal(t, res.SessionKey, m.header.Get(bus.HeaderSessionKey))
		require.Equal(t, []string{string(rune('1' + i))}, m.header.Values(bus.HeaderOrdinal))
		if i == len(msgs)-1 {
			var exit ingest.ExitFrame
			require.NoError(t, json.Unmarshal(m.data, &exit))
			require.Equal(t, ingest.ExitFrame{Agentwire: "exit", Code: 3}, exit)
			require.JSONEq(t, `{"agentwire":"exit","code":3}`, string(m.data))
			continue
		}
		if strings.HasPrefix(string(m.data), `{"agentwire":"stderr"`) {
			stderr = append(stderr, string(m.data))
		} else {
			stdout = append(stdout, string(m.data))
		}
	}
	require.Equal(t, []string{`{"type":"turn.started"}`, `{"broken`}, stdout)
	require.Equal(t, []string{`{"agentwire":"stderr","line":"warn: slow"}`, `{"agentwire":"stderr","lineBase64":"/w=="}`}, stderr)
}

func TestModelFromArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"codex", "exec", "--json", "-m", "gpt-5.1-codex", "fix the test"}, "gpt-5.1-codex"},
		{[]string{"/usr/local/bin/codex", "exec", "--model=gpt-5", "x"}, "gpt-5"},
		{[]string{"codex", "exec", "-c", `model="gpt-5.2"`, "x"}, "gpt-5.2"},
		{[]string{"codex", "--config=model='o3'", "exec", "x"}, "o3"},
		{[]string{"codex", "exec", "-c", "model_reasoning_effort=high", "x"}, ""},
		{[]string{"claude", "-p", "--model", "claude-sonnet-4-5", "--model", "claude-opus-4-5"}, "claude-opus-4-5"},
		{[]string{"gemini.exe", "-m", "gemini-2.5-pro"}, "gemini-2.5-pro"},
		{[]string{"codex", "exec", "--", "-m", "not a flag"}, ""},
		{[]string{"codex", "exec", "-m"}, ""},
		{[]string{"codex", "exec", "hello"}, ""},
		{[]string{"python", "-m", "runner"}, ""},
		{[]string{"npx", "-y", "@openai/codex@0.171.0", "exec", "-m", "gpt-5.5", "x"}, "gpt-5.5"},
		{[]string{"bunx", "@anthropic-ai/claude-code", "--model", "claude-opus-4-6"}, "claude-opus-4-6"},
		{[]string{"npx", "some-tool", "-m", "x"}, ""},
		{[]string{"npx", "-y"}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, ingest.ModelFromArgs(tt.args), "%q", tt.args)
	}
}

// TestExecModelFrame: the model the command line names opens the session,
// before anything the agent wrote.
func TestExecModelFrame(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	codex := filepath.Join(t.TempDir(), "codex")
	require.NoError(t, os.WriteFile(codex, []byte("#!/bin/sh\necho '{\"type\":\"thread.started\",\"thread_id\":\"t\"}'\n"), 0o755)) //nolint:gosec // a test agent
	res, err := f.in.Exec(t.Context(), ingest.ExecOptions{
		Args:    []string{codex, "exec", "--json", "-m", "gpt-5.1-codex", "fix the test"},
		Session: ingest.Session{Dialect: "codex-exec"},
	})
	require.NoError(t, err)
	require.Equal(t, uint64(3), res.Frames)
	msgs := bySession(f.raw(t))[res.SessionKey]
	require.Len(t, msgs, 3)
	require.JSONEq(t, `{"agentwire":"model","model":"gpt-5.1-codex"}`, string(msgs[0].data))
	require.Equal(t, []string{"1"}, msgs[0].header.Values(bus.HeaderOrdinal))
	require.JSONEq(t, `{"type":"thread.started","thread_id":"t"}`, string(msgs[1].data))
	require.JSONEq(t, `{"agentwire":"exit","code":0}`, string(msgs[2].data))
}

// TestExecSessionContinues: a second run of a named session, from another
// process (a new Publisher), numbers its frames after the first run's, so
// none is taken for a duplicate.
func TestExecSessionContinues(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	run := func(in *ingest.Ingester, line string) {
		t.Helper()
		_, err := in.Exec(t.Context(), ingest.ExecOptions{
			Args:    []string{"sh", "-c", "echo '" + line + "'"},
			Session: ingest.Session{Key: "resumed", Dialect: "codex-exec"},
		})
		require.NoError(t, err)
	}
	run(f.in, `{"run":1}`)
	second := connectFixture(t, f.srv)
	run(second.in, `{"run":2}`)

	msgs := bySession(f.raw(t))["resumed"]
	require.Len(t, msgs, 4)
	var got []string
	for i, m := range msgs {
		require.Equal(t, []string{string(rune('1' + i))}, m.header.Values(bus.HeaderOrdinal))
		got = append(got, string(m.data))
	}
	require.JSONEq(t, `{"run":1}`, got[0])
	require.JSONEq(t, `{"run":2}`, got[2])
}

func TestExecSignals(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	// A forwarded SIGTERM reaches the command, which exits its own way.
	// It is sent once the shell says its trap is set: sent before, it
	// would end the shell the default way.
	sigs := make(chan os.Signal, 1)
	type outcome struct {
		res ingest.ExecResult
		err error
	}
	exited := make(chan outcome, 1)
	go func() {
		res, err := f.in.Exec(t.Context(), ingest.ExecOptions{
			Args:    []string{"sh", "-c", `trap 'echo "{\"got\":\"TERM\"}"; exit 7' TERM; echo '{"trap":"set"}'; while :; do sleep 0.02; done`},
			Session: ingest.Session{Key: "trap", Dialect: "codex-exec"},
			Signals: sigs,
		})
		exited <- outcome{res, err}
	}()
	for deadline := time.Now().Add(30 * time.Second); len(bySession(f.raw(t))["trap"]) == 0; time.Sleep(20 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the shell did not say its trap was set")
	}
	sigs <- syscall.SIGTERM
	o := <-exited
	require.NoError(t, o.err)
	require.Equal(t, 7, o.res.ExitCode)
	msgs := bySession(f.raw(t))["trap"]
	require.Len(t, msgs, 3)
	require.JSONEq(t, `{"trap":"set"}`, string(msgs[0].data))
	require.JSONEq(t, `{"got":"TERM"}`, string(msgs[1].data))
	require.JSONEq(t, `{"agentwire":"exit","code":7}`, string(msgs[2].data))

	// Killed by a signal: 128+n and its name.
	res, err := f.in.Exec(t.Context(), ingest.ExecOptions{
		Args:    []string{"sh", "-c", `kill -KILL $$`},
		Session: ingest.Session{Key: "killed", Dialect: "codex-exec"},
	})
	require.NoError(t, err)
	require.Equal(t, 137, res.ExitCode)
	msgs = bySession(f.raw(t))["killed"]
	require.Len(t, msgs, 1)
	require.JSONEq(t, `{"agentwire":"exit","code":137,"signal":"SIGKILL"}`, string(msgs[0].data))

	// The command cannot start: an error, nothing published.
	_, err = f.in.Exec(t.Context(), ingest.ExecOptions{Args: []string{"/nonexistent/agent"}, Session: ingest.Session{Key: "none", Dialect: "codex-exec"}})
	require.ErrorContains(t, err, "/nonexistent/agent")
	require.Empty(t, bySession(f.raw(t))["none"])
}
