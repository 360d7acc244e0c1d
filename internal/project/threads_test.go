package project_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/internal/project"
)

// TestThreadPreview: a thread the provider does not name keeps the start
// of the first message the user wrote in it, not a message the CLI
// injected before it, nor a later one, also when the later one is applied
// in another batch; cut at 200 characters, not bytes.
func TestThreadPreview(t *testing.T) {
	t.Parallel()
	first := strings.Repeat("é", 150) + strings.Repeat("x", 100) // 250 characters, 400 bytes
	log := []string{
		`{"type":"user","isMeta":true,"message":{"role":"user","content":"Caveat: the CLI says this"},"uuid":"u0","sessionId":"s1","timestamp":"2026-03-10T09:00:00Z"}`,
		`{"type":"user","message":{"role":"user","content":"` + first + `"},"uuid":"u1","sessionId":"s1","timestamp":"2026-03-10T09:00:01Z"}`,
		`{"type":"assistant","message":{"id":"m1","model":"m","role":"assistant","stop_reason":"end_turn","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":1,"output_tokens":1}},"uuid":"a1","sessionId":"s1","timestamp":"2026-03-10T09:00:02Z"}`,
		`{"type":"user","message":{"role":"user","content":"and then this"},"uuid":"u2","sessionId":"s1","timestamp":"2026-03-10T09:00:03Z"}`,
	}
	path := filepath.Join(t.TempDir(), "log.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(log, "\n")+"\n"), 0o600))
	rec, ok := mapAs(t, "claude-log", "acme", path, "")
	require.True(t, ok)
	// A batch of two events: the second prompt comes in a batch of its own.
	e := projectedBy(t, project.Config{Workers: 1, BatchSize: 2}, rec)

	var preview *string
	var threads int
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT count(*), max(preview) FROM threads`).Scan(&threads, &preview))
	require.Equal(t, 1, threads)
	require.NotNil(t, preview)
	require.True(t, utf8.ValidString(*preview))
	require.Equal(t, 200, utf8.RuneCountInString(*preview))
	require.Equal(t, first[:len(strings.Repeat("é", 150))+50], *preview)
}

// TestThreadPreviewOfWrappedPrompts: what the user asked, where the CLI
// wraps it. Codex's IDE extension sends the open tabs before it, under
// headings of its own; Claude Code's IDE extensions send the open file and
// the selection before it, in tags; Claude Code writes a slash command in
// tags. The thread's preview is what the user asked; the item keeps all
// of it.
func TestThreadPreviewOfWrappedPrompts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, dialect, preview, kept string
		log                          []string
	}{
		{
			name: "a Codex IDE prompt", dialect: "codex-rollout", preview: "Why is saving a team so slow?", kept: "# Context from my IDE setup:",
			log: []string{
				`{"timestamp":"2026-03-10T09:00:00Z","type":"session_meta","payload":{"id":"01997e76-d124-7592-9cac-2ec05abbca08","timestamp":"2026-03-10T09:00:00Z","cwd":"/w","originator":"codex_vscode","cli_version":"0.40.0"}}`,
				`{"timestamp":"2026-03-10T09:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"# Context from my IDE setup:\n\n## Open tabs:\n- route.ts: apps/api/route.ts\n\n## My request for Codex:\nWhy is saving a team so slow?\n","kind":"plain"}}`,
			},
		},
		{
			name: "a Claude Code slash command", dialect: "claude-log", preview: "/review the auth module", kept: "<command-message>",
			log: []string{
				`{"type":"user","message":{"role":"user","content":"<command-message>review is running…</command-message>\n<command-name>/review</command-name>\n<command-args>the auth module</command-args>"},"uuid":"u1","sessionId":"s1","timestamp":"2026-03-10T09:00:01Z"}`,
			},
		},
		{
			name: "a Claude Code prompt from an IDE", dialect: "claude-log", preview: "fix the failing test", kept: "<ide_selection>",
			log: []string{
				`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"<ide_opened_file>The user opened the file /a/b.ts in the IDE. This may or may not be related to the current task.</ide_opened_file>"},{"type":"text","text":"<ide_selection>The user selected the lines 1 to 2 from /a/b.ts:\nx\n\nThis may or may not be related to the current task.</ide_selection>"},{"type":"text","text":"fix the failing test"}]},"uuid":"u1","sessionId":"s1","timestamp":"2026-03-10T09:00:01Z"}`,
			},
		},
		{
			name: "a Claude Code slash command without arguments", dialect: "claude-log", preview: "/init", kept: "<command-name>",
			log: []string{
				`{"type":"user","message":{"role":"user","content":"<command-message>init is analyzing your codebase…</command-message>\n<command-name>/init</command-name>"},"uuid":"u1","sessionId":"s1","timestamp":"2026-03-10T09:00:01Z"}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "log.jsonl")
			require.NoError(t, os.WriteFile(path, []byte(strings.Join(tt.log, "\n")+"\n"), 0o600))
			rec, ok := mapAs(t, tt.dialect, "acme", path, "")
			require.True(t, ok)
			e := projectedBy(t, project.Config{}, rec)

			var preview, text *string
			require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT max(preview) FROM threads`).Scan(&preview))
			require.NotNil(t, preview)
			require.Equal(t, tt.preview, *preview)
			require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT max(text_unknown) FROM items WHERE item_type = 'user_message'`).Scan(&text))
			require.NotNil(t, text)
			require.Contains(t, *text, tt.kept, "the item keeps the whole message")
		})
	}
}

// through reads the recording at path up to the first line that contains
// cut, that line included, and then the line then (if any), into a file
// of its own: a log or a tap cut off where a test needs it, mapped as the
// recording's set would be.
func through(t *testing.T, tenant, path, cut, then string) recording {
	t.Helper()
	lines := adaptertest.ReadLines(t, path)
	n := slices.IndexFunc(lines, func(l []byte) bool { return bytes.Contains(l, []byte(cut)) })
	require.True(t, n >= 0 && n+1 < len(lines), "%s has no line with %q before its last", path, cut)
	lines = lines[:n+1]
	if then != "" {
		lines = append(lines, []byte(then))
	}
	set := filepath.Base(filepath.Dir(path))
	return mapLinesAs(t, dialectOf(set), tenant, set+"/"+strings.TrimSuffix(filepath.Base(path), ".jsonl"), "cut/"+set, lines)
}

// TestThreadActivity: what each thread is doing, whether its provider
// reports a thread status (the Codex app-server) or not (the others: their
// turns say it).
func TestThreadActivity(t *testing.T) {
	t.Parallel()
	const rec = "../../testdata/recordings/"
	type activity struct {
		// Status is the thread's while it is heard from, Silent once it
		// has been silent for longer than agentwire.stalled_after (an
		// hour by default; the recordings are days old).
		Status, Silent, LastTurnState string
		Pending                       int64
		// Turns is how many turns the turn views count (turns_once).
		Turns int64
		// Exits are the sessions' exits, kind:code.
		Exits string
		// Once is the state turns_once reads of each turn, Failures what
		// turn_failures makes of them (state: reason).
		Once, Failures string
		// Approvals are the approvals view's decisions and outcomes.
		Approvals string
	}
	// part is a recording, whole or up to the first line that contains
	// cut, then the line then.
	type part struct{ path, cut, then string }
	for _, tt := range []struct {
		name  string
		parts []part
		want  activity
	}{
		{"a Claude log whose turns all ended", []part{{rec + "claude-log/two-turns.jsonl", "", ""}},
			activity{"idle", "idle", "completed", 0, 2, "", "completed,completed", "", ""}},
		{"a Claude log cut off mid-turn, after a tool's result", []part{{rec + "claude-log/shell.jsonl", `"tool_result"`, ""}},
			activity{"active", "stalled", "in_progress", 0, 1, "", "in_progress", "", ""}},
		// The log's turn, which the usage it reported names, is the
		// stream's: one turn, which ended.
		{"the same cut log beside the stream of its run, which saw the turn end",
			[]part{{rec + "claude-log/shell.jsonl", `"tool_result"`, ""}, {rec + "claude-control/shell.jsonl", "", ""}},
			activity{"idle", "idle", "completed", 0, 1, "", "completed", "", ""}},
		// A thread waiting for a person's answer is not stalled.
		{"a Codex app-server tap waiting for an approval", []part{{rec + "codex-app-server/approval-allow.jsonl", "requestApproval", ""}},
			activity{"active", "active", "in_progress", 1, 1, "", "in_progress", "", "pending:pending"}},
		// ingest exec or proxy reports the process's end: nothing runs,
		// nothing waits; the turn, which never ended, reads interrupted
		// here as in the turn views.
		{"the same tap, whose agent was then killed", []part{{rec + "codex-app-server/approval-allow.jsonl", "requestApproval",
			`{"agentwire":"exit","code":137,"signal":"SIGKILL"}`}},
			activity{"idle", "idle", "interrupted", 0, 1, "error:137", "interrupted", "interrupted: the agent was killed by SIGKILL", "abandoned:abandoned"}},
		{"a Codex app-server thread in error after its failed turn", []part{{rec + "codex-app-server/error-500.jsonl", "", ""}},
			activity{"error", "error", "failed", 0, 1, "", "failed", "failed: We’re currently experiencing high demand, which may cause temporary errors.", ""}},
		{"a Codex rollout of two turns", []part{{rec + "codex-rollout/two-turns.jsonl", "", ""}},
			activity{"idle", "idle", "completed", 0, 2, "", "completed,completed", "", ""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var recs []recording
			for _, p := range tt.parts {
				if p.cut != "" {
					recs = append(recs, through(t, "acme", p.path, p.cut, p.then))
					continue
				}
				r, ok := mapRecording(t, "acme", p.path, "")
				require.True(t, ok)
				recs = append(recs, r)
			}
			e := projected(t, recs...)
			ctx := context.Background()
			var silent string
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT status FROM thread_activity`).Scan(&silent))
			tx, err := e.pool.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback(ctx) }()
			_, err = tx.Exec(ctx, `SET LOCAL agentwire.stalled_after = '1000 years'`)
			require.NoError(t, err)
			rows, err := tx.Query(ctx, `SELECT status, $1::text, coalesce(last_turn_state, ''), pending_requests,
				(SELECT count(*) FROM turns_once),
				(SELECT coalesce(string_agg(exit_kind || ':' || exit_code, ','), '') FROM sessions WHERE state = 'error' OR exit_code IS NOT NULL),
				(SELECT string_agg(state, ',' ORDER BY state) FROM turns_once),
				(SELECT coalesce(string_agg(state || ': ' || reason, ',' ORDER BY state), '') FROM turn_failures),
				(SELECT coalesce(string_agg(decision || ':' || outcome, ',' ORDER BY decision), '') FROM approvals)
				FROM thread_activity`, silent)
			require.NoError(t, err)
			got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[activity])
			require.NoError(t, err)
			require.Equal(t, []activity{tt.want}, got, "one thread, doing this")
			var inProgress int
			require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM threads_in_progress`).Scan(&inProgress))
			require.Equal(t, tt.want.Status == "active" || tt.want.Status == "stalled", inProgress == 1, "threads_in_progress holds the active and stalled threads")
			// The tables themselves, not only the views, say that nothing
			// runs in a session whose agent exited: the exit ended its
			// turns and items.
			var running string
			require.NoError(t, tx.QueryRow(ctx, `SELECT coalesce(string_agg(what, ','), '') FROM (
				SELECT 'turn ' || t.state AS what FROM turns t JOIN sessions s USING (tenant_id, session_id)
				WHERE s.ended_at IS NOT NULL AND t.state = 'in_progress'
				UNION ALL
				SELECT 'item ' || i.item_type FROM items i JOIN sessions s USING (tenant_id, session_id)
				WHERE s.ended_at IS NOT NULL AND i.status = 'inProgress') r`).Scan(&running))
			require.Empty(t, running, "nothing runs in an exited session")
			// The inbox lists the requests thread_activity counts, each
			// with what it asks about.
			var waiting, described int64
			require.NoError(t, tx.QueryRow(ctx, `SELECT count(*),
				count(*) FILTER (WHERE item_type IS NOT NULL AND coalesce(tool_name, command) IS NOT NULL AND thread_title IS NOT NULL)
				FROM requests_waiting`).Scan(&waiting, &described))
			require.Equal(t, tt.want.Pending, waiting, "requests_waiting holds the requests that wait")
			require.Equal(t, waiting, described, "each names its item's tool or command and its thread")
		})
	}
}

// TestStalledAfterSetting: agentwire.stalled_after moves the line between
// active and stalled, and a value that is no interval is an error that
// names it, not a silent default.
func TestStalledAfterSetting(t *testing.T) {
	t.Parallel()
	e := projected(t, through(t, "acme", "../../testdata/recordings/claude-log/shell.jsonl", `"tool_result"`, ""))
	ctx := context.Background()
	var silentFor time.Duration
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT (extract(epoch FROM now() - updated_at) * 1e9)::bigint FROM thread_activity`).Scan(&silentFor))
	status := func(setting string) (string, error) {
		tx, err := e.pool.Begin(ctx)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback(ctx) }()
		_, err = tx.Exec(ctx, `SELECT set_config('agentwire.stalled_after', $1, true)`, setting)
		require.NoError(t, err)
		var s string
		err = tx.QueryRow(ctx, `SELECT status FROM thread_activity`).Scan(&s)
		return s, err
	}
	for setting, want := range map[string]string{
		"": "stalled", // the default, an hour
		fmt.Sprintf("%d seconds", int64((silentFor + time.Hour).Seconds())): "active",
		fmt.Sprintf("%d seconds", int64((silentFor - time.Hour).Seconds())): "stalled",
	} {
		got, err := status(setting)
		require.NoError(t, err, setting)
		require.Equal(t, want, got, "agentwire.stalled_after = %q", setting)
	}
	_, err := status("soon")
	require.ErrorContains(t, err, `invalid input syntax for type interval: "soon"`)
}
