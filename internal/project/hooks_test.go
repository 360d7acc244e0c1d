package project_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestHookRuns: a Claude Code log writes a line per hook command it runs,
// all of an event's commands (and a tool's PreToolUse and PostToolUse
// hooks) under the tool use id. Each is a row of hooks with its event,
// name and command. The Stop hooks that stop_hook_summary reports end
// with its outcome, the error that names a command charged to that one;
// others end where a newer CLI attaches their end, with its output.
func TestHookRuns(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	ts := func(ms int) string { return at.Add(time.Duration(ms) * time.Millisecond).Format(time.RFC3339Nano) }
	hook := func(ms int, tool, event, command string) string {
		return `{"type":"progress","data":{"type":"hook_progress","hookEvent":"` + event + `","hookName":"` + event + `:Bash","command":"` + command +
			`"},"toolUseID":"` + tool + `","parentToolUseID":"` + tool + `","uuid":"h` + tool + event + command + `","sessionId":"s1","timestamp":"` + ts(ms) + `"}`
	}
	log := []string{
		`{"type":"user","message":{"role":"user","content":"go"},"uuid":"u1","sessionId":"s1","timestamp":"` + ts(0) + `"}`,
		hook(10, "toolu_1", "PreToolUse", "log.sh"),
		hook(11, "toolu_1", "PreToolUse", "guard.sh"),
		// Newer CLIs attach the end of every hook run.
		`{"type":"attachment","attachment":{"type":"hook_success","hookName":"PreToolUse:Bash","hookEvent":"PreToolUse","toolUseID":"toolu_1",` +
			`"stdout":"logged","exitCode":0,"command":"log.sh","durationMs":4},"uuid":"a1","sessionId":"s1","timestamp":"` + ts(15) + `"}`,
		`{"type":"attachment","attachment":{"type":"hook_blocking_error","hookName":"PreToolUse:Bash","hookEvent":"PreToolUse","toolUseID":"toolu_1",` +
			`"blockingError":{"blockingError":"not allowed","command":"guard.sh"}},"uuid":"a2","sessionId":"s1","timestamp":"` + ts(16) + `"}`,
		hook(20, "toolu_1", "PostToolUse", "log.sh"),
		hook(30, "stop_1", "Stop", "log.sh"),
		hook(31, "stop_1", "Stop", "check.sh"),
		`{"type":"system","subtype":"stop_hook_summary","hookInfos":[{"command":"log.sh","durationMs":180},{"command":"check.sh"}],` +
			`"hookErrors":["check.sh: exit status 2"],"toolUseID":"stop_1","uuid":"s","sessionId":"s1","timestamp":"` + ts(250) + `"}`,
	}
	path := filepath.Join(t.TempDir(), "claude-log", "hooks.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o750))
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(log, "\n")+"\n"), 0o600))
	rec, ok := mapAs(t, "claude-log", "acme", path, "")
	require.True(t, ok)
	e := projected(t, rec)

	rows, err := e.pool.Query(context.Background(), `
		SELECT hook_event, hook_name, command, coalesce(outcome, ''), coalesce(output, '') || coalesce(stdout, '') || coalesce(exit_code::text, ''),
		       coalesce(duration_ms, extract(epoch FROM completed_at - started_at) * 1000, -1)::int, turn_id IS NOT NULL
		FROM hooks ORDER BY started_at`)
	require.NoError(t, err)
	type run struct {
		event, name, command, outcome, output string
		ms                                    int
		inTurn                                bool
	}
	var got []run
	for rows.Next() {
		var r run
		require.NoError(t, rows.Scan(&r.event, &r.name, &r.command, &r.outcome, &r.output, &r.ms, &r.inTurn))
		got = append(got, r)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []run{
		{"PreToolUse", "PreToolUse:Bash", "log.sh", "success", "logged0", 4, true}, // as measured
		{"PreToolUse", "PreToolUse:Bash", "guard.sh", "error", "not allowed", 5, true},
		{"PostToolUse", "PostToolUse:Bash", "log.sh", "", "", -1, true},
		{"Stop", "Stop:Bash", "log.sh", "success", "", 180, true},
		{"Stop", "Stop:Bash", "check.sh", "error", "check.sh: exit status 2", 219, true},
	}, got)
}
