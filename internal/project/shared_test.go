package project_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/internal/project"
	"github.com/agentwire/agentwire/pkg/adapters"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// sharedRecordings are the Codex recordings, app-server tap and rollout
// log alike, each ingested under reps session keys: every thread, turn and
// item of a scenario is described by 2×reps sessions, since canonical ids
// derive from Codex's own ids.
func sharedRecordings(t *testing.T, reps int) []recording {
	t.Helper()
	var paths []string
	for _, set := range []string{"codex-app-server", "codex-rollout"} {
		p, err := filepath.Glob("../../testdata/recordings/" + set + "/*.jsonl")
		require.NoError(t, err)
		paths = append(paths, p...)
	}
	sort.Strings(paths)
	var out []recording
	for rep := range reps {
		for _, p := range paths {
			r, ok := mapRecording(t, "acme", p, fmt.Sprintf("shared/%d/%s", rep, filepath.Base(p)))
			require.True(t, ok, p)
			out = append(out, r)
		}
	}
	return out
}

// TestSharedRows: many sessions sharing threads, turns and items are
// applied by parallel workers, in small batches held open a while so that
// transactions overlap: no deadlock is retried, and the tables are those
// one worker builds alone.
func TestSharedRows(t *testing.T) {
	t.Parallel()
	recs := sharedRecordings(t, 6)

	parallel := newEnv(t)
	parallel.publish(recs, 1)
	p := parallel.start(project.Config{Workers: 4, BatchSize: 8, BeforeCommit: func(int) { time.Sleep(time.Millisecond) }})

	serial := newEnv(t)
	serial.publish(recs, 1)
	serial.start(project.Config{Workers: 1})

	parallel.waitApplied("")
	serial.waitApplied("")
	require.Zero(t, p.Stats().Deadlocks.Load(), "deadlocks retried")
	require.Positive(t, p.Stats().Batches.Load())
	requireSameDump(t, serial.dump(), parallel.dump(), "the projection of one worker")
}

// rowsOf returns a table's rows as JSON objects keyed by the named column.
func (e *env) rowsOf(table, keyColumn string) map[string]map[string]any {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT to_jsonb(x) FROM `+table+` x`)
	require.NoError(e.t, err)
	out := map[string]map[string]any{}
	for rows.Next() {
		var m map[string]any
		require.NoError(e.t, rows.Scan(&m))
		out[fmt.Sprint(m[keyColumn])] = m
	}
	require.NoError(e.t, rows.Err())
	return out
}

// projected projects recordings one after the other with one worker, so
// that the first is applied before the second.
func projected(t *testing.T, recs ...recording) *env {
	t.Helper()
	return projectedBy(t, project.Config{Workers: 1}, recs...)
}

// projectedBy is projected by a projector configured so.
func projectedBy(t *testing.T, cfg project.Config, recs ...recording) *env {
	t.Helper()
	e := newEnv(t)
	for _, r := range recs {
		e.publish([]recording{r}, 1)
	}
	e.start(cfg)
	e.waitApplied("")
	return e
}

// TestTwoSessionsOneThread: a Codex app-server tap and the rollout log the
// same run wrote describe one thread, its turns and most of its items.
// Whichever is applied first, the rows are the same; each column holds one
// session's value (never a mix), and a value only one of them has is kept;
// a failure either saw wins; usage is counted once.
func TestTwoSessionsOneThread(t *testing.T) {
	t.Parallel()
	severity := map[string][]string{"state": {"in_progress", "completed", "cancelled", "interrupted", "aborted", "failed"},
		"status": {"inProgress", "completed", "declined", "failed"}}
	tables := map[string]string{"threads": "thread_id", "turns": "turn_id", "items": "item_id", "requests": "request_id"}
	for _, scenario := range []string{"error-500", "approval-deny", "multistep", "two-turns"} {
		t.Run(scenario, func(t *testing.T) {
			t.Parallel()
			tap, ok := mapRecording(t, "acme", "../../testdata/recordings/codex-app-server/"+scenario+".jsonl", "")
			require.True(t, ok)
			// The tap read from its recording after the fact: its frames
			// state no time, so its times are when ingest read them.
			for i := range tap.events {
				tap.events[i].CreatedAtIngested = true
			}
			roll, ok := mapRecording(t, "acme", "../../testdata/recordings/codex-rollout/"+scenario+".jsonl", "")
			require.True(t, ok)
			tapOnly, rollOnly := projected(t, tap), projected(t, roll)
			tapFirst, rollFirst := projected(t, tap, roll), projected(t, roll, tap)
			requireSameDump(t, tapFirst.dump(), rollFirst.dump(), "the projection with the tap applied first")

			shared := 0
			for table, keyColumn := range tables {
				a, b, merged := tapOnly.rowsOf(table, keyColumn), rollOnly.rowsOf(table, keyColumn), tapFirst.rowsOf(table, keyColumn)
				for k, m := range merged {
					ra, inA := a[k]
					rb, inB := b[k]
					require.True(t, inA || inB, "%s %s is in neither session's projection", table, k)
					if !inA || !inB {
						one := ra
						if !inA {
							one = rb
						}
						for c, v := range one {
							if c != "session_id" && c != "session_columns" {
								require.Equal(t, v, m[c], "%s %s: %s of the one session that has the row", table, k, c)
							}
						}
						continue
					}
					shared++
					// A time and whether ingest read it come from one session.
					for _, pair := range [][2]string{{"started_at", "started_at_ingested"}, {"ended_at", "ended_at_ingested"},
						{"completed_at", "completed_at_ingested"}, {"opened_at", "opened_at_ingested"}, {"resolved_at", "resolved_at_ingested"}} {
						if _, ok := m[pair[1]]; !ok {
							continue
						}
						got := [2]any{m[pair[0]], m[pair[1]]}
						require.True(t, got == [2]any{ra[pair[0]], ra[pair[1]]} || got == [2]any{rb[pair[0]], rb[pair[1]]},
							"%s %s: %s and %s = %v, of neither the tap (%v, %v) nor the rollout (%v, %v)", table, k, pair[0], pair[1], got,
							ra[pair[0]], ra[pair[1]], rb[pair[0]], rb[pair[1]])
					}
					for c, v := range m {
						va, vb := ra[c], rb[c]
						switch {
						case c == "session_id" || c == "session_columns":
						case c == "updated_at":
							require.Equal(t, max(va.(string), vb.(string)), v, "%s %s: %s", table, k, c) //nolint:forcetypeassert // a timestamp
						case severity[c] != nil && (table == "turns" || table == "items"):
							rank := func(s any) int { return slices.Index(severity[c], fmt.Sprint(s)) }
							want := va
							if rank(vb) > rank(va) {
								want = vb
							}
							require.Equal(t, want, v, "%s %s: %s is the most severe", table, k, c)
						case va == nil && vb == nil:
							require.Nil(t, v, "%s %s: %s", table, k, c)
						default:
							require.NotNil(t, v, "%s %s: %s is lost (tap %v, rollout %v)", table, k, c, va, vb)
							require.True(t, reflect.DeepEqual(v, va) || reflect.DeepEqual(v, vb),
								"%s %s: %s = %v is neither the tap's (%v) nor the rollout's (%v)", table, k, c, v, va, vb)
						}
					}
				}
			}
			require.Positive(t, shared, "the sessions share no row: the test tests nothing")

			// The user's messages are the same items in both: the tap's each
			// have a row of the rollout's, so the merge adds none.
			rolled := rollOnly.rowsOf("items", "item_id")
			for k, row := range tapOnly.rowsOf("items", "item_id") {
				if row["item_type"] == "user_message" {
					require.Contains(t, rolled, k, "the tap's user message %v is not the rollout's", row["text_unknown"])
				}
			}

			// Usage is counted once: the views show what one session shows.
			total := func(e *env) (n int64) {
				require.NoError(t, e.pool.QueryRow(context.Background(),
					`SELECT coalesce(sum(total_tokens), 0) FROM usage_by_day`).Scan(&n))
				return n
			}
			require.Equal(t, total(tapOnly), total(tapFirst))
			require.Equal(t, total(rollOnly), total(tapFirst))
			if scenario == "approval-deny" {
				// The rollout keeps no approval, but the call's output says
				// the user declined it: alone, it says so too.
				for name, e := range map[string]*env{"the tap": tapOnly, "the rollout": rollOnly, "both": tapFirst} {
					var status string
					require.NoError(t, e.pool.QueryRow(context.Background(),
						`SELECT status FROM items WHERE item_type = 'command_execution'`).Scan(&status))
					require.Equal(t, "declined", status, name)
				}
			}
			if scenario == "error-500" {
				// Each says the turn failed, and why: the rollout in its
				// task_complete, the tap in its turn/completed.
				for name, e := range map[string]*env{"the tap": tapOnly, "the rollout": rollOnly, "both": tapFirst} {
					var state, class, msg string
					require.NoError(t, e.pool.QueryRow(context.Background(),
						`SELECT state, coalesce(error_class, ''), coalesce(error_message, '') FROM turns`).Scan(&state, &class, &msg))
					require.Equal(t, []string{"failed", "provider_error"}, []string{state, class}, name)
					require.Contains(t, msg, "high demand", name)
				}
			}
		})
	}
}

// TestClaudeStreamAndLog: Claude Code's stream (here through the SDK's
// control protocol) and the session log the same run wrote describe the
// same turns under two canonical turn ids each (Claude names no turns).
// Both ingested, a turn's tokens are counted once, its cost (which only
// the stream states) is kept, the turn views count it once, and the
// result does not depend on the order the sessions come in or on how they
// are split into batches.
func TestClaudeStreamAndLog(t *testing.T) {
	t.Parallel()
	for _, scenario := range []string{"two-turns", "multistep", "shell", "approval-allow"} {
		t.Run(scenario, func(t *testing.T) {
			t.Parallel()
			stream, ok := mapRecording(t, "acme", "../../testdata/recordings/claude-control/"+scenario+".jsonl", "")
			require.True(t, ok)
			log, ok := mapRecording(t, "acme", "../../testdata/recordings/claude-log/"+scenario+".jsonl", "")
			require.True(t, ok)
			type usage struct {
				turns, tokens, timed int64
				cost                 string
			}
			usageOf := func(e *env) (u usage) {
				ctx := context.Background()
				require.NoError(t, e.pool.QueryRow(ctx,
					`SELECT coalesce(sum(turns), 0), coalesce(sum(total_tokens), 0), coalesce(sum(cost_usd), 0)::text FROM usage_by_day`).
					Scan(&u.turns, &u.tokens, &u.cost))
				require.NoError(t, e.pool.QueryRow(ctx, `SELECT coalesce(sum(turns), 0) FROM turn_durations`).Scan(&u.timed))
				return u
			}
			streamOnly, logOnly := usageOf(projected(t, stream)), usageOf(projected(t, log))
			require.Positive(t, streamOnly.tokens)
			require.Equal(t, streamOnly.turns, logOnly.turns, "the stream and the log see the same turns")
			require.Equal(t, streamOnly.timed, logOnly.timed, "the stream and the log see the same turns")
			require.Equal(t, streamOnly.tokens, logOnly.tokens, "the stream and the log see the same usage")
			require.Equal(t, "0", logOnly.cost, "the log states no cost")

			var dumps []string
			for _, cfg := range []project.Config{{Workers: 1}, {Workers: 1, BatchSize: 1}} {
				for _, recs := range [][]recording{{stream, log}, {log, stream}} {
					e := projectedBy(t, cfg, recs...)
					require.Equal(t, streamOnly, usageOf(e), "batch size %d, %s first", cfg.BatchSize, recs[0].name)
					dumps = append(dumps, e.dump())
				}
			}
			for _, d := range dumps[1:] {
				requireSameDump(t, dumps[0], d, "another order or batch size")
			}
		})
	}
}

// TestClaudeSubAgentCountedOnce: a run whose Claude Code sub-agent (the
// Task tool) used another model, recorded three ways: the stream, whose
// result counts the sub-agent's tokens in its modelUsage; the session
// log, which leaves them out; and the sub-agent's own transcript, whose
// turn counts them. Whichever of those are ingested, in whatever order
// and batches, the usage views count each model's tokens once, as the
// result states them. The log alone has no sub-agent's tokens to count.
func TestClaudeSubAgentCountedOnce(t *testing.T) {
	t.Parallel()
	run := mapSubagentRun(t, nil)
	var result struct {
		Usage      claudeCounts                 `json:"usage"`
		ModelUsage map[string]claudeModelCounts `json:"modelUsage"`
	}
	require.NoError(t, json.Unmarshal(run.result(t), &result))
	require.Len(t, result.ModelUsage, 2, "the recording's sub-agent runs on a model of its own")
	want := map[string]canonical.TokenUsage{}
	for m, c := range result.ModelUsage {
		want[m] = c.usage()
	}
	mainModel := ""
	for m, u := range want {
		if u == result.Usage.usage() {
			mainModel = m
		}
	}
	require.NotEmpty(t, mainModel, "the result's usage is its main conversation's, one model's")

	byModel := func(e *env) map[string]canonical.TokenUsage { return usageByModel(e, want) }
	stream, agent, logFirst, streamFirst := run.stream, run.agent, run.logFirst, run.streamFirst
	require.Equal(t, map[string]canonical.TokenUsage{mainModel: want[mainModel]}, byModel(projected(t, logFirst)),
		"the log alone: the main conversation's tokens")
	// Each combination once, in one of two batch shapes by turns: the
	// suite's time goes on projections.
	shapes := []project.Config{{Workers: 1}, {Workers: 2, BatchSize: 1}}
	for i, recs := range [][]recording{
		{stream}, {logFirst, agent}, {agent, streamFirst}, {stream, agent}, {agent, stream},
		{stream, streamFirst, agent}, {agent, streamFirst, stream}, {stream, logFirst, agent}, {agent, stream, logFirst},
	} {
		var names []string
		for _, r := range recs {
			names = append(names, r.name)
		}
		cfg := shapes[i%len(shapes)]
		require.Equal(t, want, byModel(projectedBy(t, cfg, recs...)), "%s, batches of %d", strings.Join(names, " + "), cfg.BatchSize)
	}
}

// usageByModel is what the usage views count of each model of want, for
// the models they count any of.
func usageByModel(e *env, want map[string]canonical.TokenUsage) map[string]canonical.TokenUsage {
	got := map[string]canonical.TokenUsage{}
	for m := range want {
		if u := e.usageSum(`usage_priced WHERE model = $1`, m); u != (canonical.TokenUsage{}) {
			got[m] = u
		}
	}
	return got
}

// TestClaudeBackgroundSubAgentCountedOnce: a sub-agent run in the
// background, recorded the same three ways. The launching turn ends while
// the sub-agent runs, so the stream counts the sub-agent's tokens in two
// results (each turn's share of the session's count), and its
// notification runs a second turn. Whatever is ingested, in whatever
// order and batches, the usage views count each model's tokens once, as
// the last result states the session's, and the turn views count two
// turns with every tool call a success.
func TestClaudeBackgroundSubAgentCountedOnce(t *testing.T) {
	t.Parallel()
	run := mapScenarioRun(t, "subagent-background", nil)
	var last struct {
		ModelUsage map[string]claudeModelCounts `json:"modelUsage"`
	}
	results := 0
	for _, l := range run.streamLines {
		var tap struct {
			Msg json.RawMessage `json:"msg"`
		}
		if json.Unmarshal(l, &tap) == nil && strings.Contains(string(tap.Msg), `"type":"result"`) {
			require.NoError(t, json.Unmarshal(tap.Msg, &last))
			results++
		}
	}
	require.Equal(t, 2, results, "the launching turn's result and the notification's turn's")
	require.Len(t, last.ModelUsage, 2, "the sub-agent runs on a model of its own")
	want := map[string]canonical.TokenUsage{}
	for m, c := range last.ModelUsage {
		want[m] = c.usage()
	}
	byModel := func(e *env) map[string]canonical.TokenUsage { return usageByModel(e, want) }
	stream, agent, logFirst, streamFirst := run.stream, run.agent, run.logFirst, run.streamFirst
	shapes := []project.Config{{Workers: 1}, {Workers: 2, BatchSize: 1}}
	for i, recs := range [][]recording{
		{stream}, {logFirst, agent}, {agent, streamFirst}, {stream, streamFirst}, {stream, logFirst, agent}, {agent, streamFirst, stream},
	} {
		var names []string
		for _, r := range recs {
			names = append(names, r.name)
		}
		cfg := shapes[i%len(shapes)]
		what := fmt.Sprintf("%s, batches of %d", strings.Join(names, " + "), cfg.BatchSize)
		e := projectedBy(t, cfg, recs...)
		require.Equal(t, want, byModel(e), what)
		var turns, failed int
		require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT count(*) FROM turns_once`).Scan(&turns))
		require.Equal(t, 2, turns, what)
		require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT count(*) FROM items WHERE status <> 'completed'`).Scan(&failed))
		require.Zero(t, failed, what)
	}
}

// TestClaudeSubAgentOnTheMainModel: the subagent recording with the
// sub-agent on the main conversation's model (its model renamed in every
// line, the result's two modelUsage entries made one). Of the launching
// turn's rows of that model, the stream's includes the sub-agent and the
// log's does not: the ledger keeps the stream's, which counts more, and
// the transcript's row counts only beside the log's. Whichever session id
// is the smaller, and with or without the transcript, the usage views
// count what the result states.
func TestClaudeSubAgentOnTheMainModel(t *testing.T) {
	t.Parallel()
	const main, sub = "claude-sonnet-4-5", "claude-haiku-4-5-20251001"
	var total canonical.TokenUsage
	run := mapSubagentRun(t, func(lines [][]byte) [][]byte {
		out := make([][]byte, len(lines))
		for i, l := range lines {
			out[i] = bytes.ReplaceAll(l, []byte(sub), []byte(main))
		}
		if i, msg := resultOf(t, lines); i >= 0 {
			// The stream: the sub-agent's tokens join the main model's.
			var result map[string]any
			var models struct {
				ModelUsage map[string]claudeModelCounts `json:"modelUsage"`
			}
			require.NoError(t, json.Unmarshal(msg, &result))
			require.NoError(t, json.Unmarshal(msg, &models))
			m, s := models.ModelUsage[main], models.ModelUsage[sub]
			merged := claudeModelCounts{Input: m.Input + s.Input, CacheRead: m.CacheRead + s.CacheRead,
				CacheWrite: m.CacheWrite + s.CacheWrite, Output: m.Output + s.Output}
			result["modelUsage"] = map[string]claudeModelCounts{main: merged}
			b, err := json.Marshal(map[string]any{"dir": "agent", "msg": result})
			require.NoError(t, err)
			out[i], total = b, merged.usage()
		}
		return out
	})
	require.NotZero(t, total.InputTokens)
	for name, recs := range map[string][]recording{
		"stream and transcript":                         {run.stream, run.agent},
		"log and transcript":                            {run.logFirst, run.agent},
		"stream and log, the log's session the larger":  {run.stream, run.streamFirst},
		"stream and log, the log's session the smaller": {run.logFirst, run.stream},
		"all three, the log's session the larger":       {run.stream, run.streamFirst, run.agent},
		"all three, the log's session the smaller":      {run.agent, run.logFirst, run.stream},
	} {
		require.Equal(t, total, projected(t, recs...).usageSum(`usage_priced`), name)
	}
}

// TestClaudeSubAgentTurnInItsLaunchingTurn: the turn of a sub-agent's own
// transcript is part of the turn that launched it, as the stream and older
// session logs show it. Whichever of the run's records are ingested, the
// turn views count one turn, and the thread's last turn is its own, not
// the sub-agent's: a launching turn still running after its sub-agent
// finished keeps the thread in progress, and a transcript that never
// states its end (the public logs of Claude Code 2.0 to 2.1.39 state no
// stop reason) leaves no thread in progress.
func TestClaudeSubAgentTurnInItsLaunchingTurn(t *testing.T) {
	t.Parallel()
	const mainModel = "claude-sonnet-4-5"
	run := mapSubagentRun(t, nil)
	type reading struct {
		turns                int64
		inProgress           int64
		lastState, lastModel string
	}
	read := func(e *env) (r reading) {
		ctx := context.Background()
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT coalesce(sum(turns), 0) FROM turn_durations`).Scan(&r.turns))
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM threads_in_progress`).Scan(&r.inProgress))
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT coalesce(last_turn_state, ''), coalesce(last_turn_model, '') FROM thread_activity`).
			Scan(&r.lastState, &r.lastModel))
		return r
	}
	ended := reading{turns: 1, lastState: "completed", lastModel: mainModel}
	for name, recs := range map[string][]recording{
		"the stream":             {run.stream},
		"the log":                {run.logFirst},
		"the log and transcript": {run.agent, run.logFirst},
		"all three":              {run.stream, run.agent, run.streamFirst},
	} {
		require.Equal(t, ended, read(projected(t, recs...)), name)
	}

	// cut maps a claude-log recording without its last assistant line and
	// what follows it: the end of its turn.
	cut := func(name string) recording {
		lines := adaptertest.ReadLines(t, "../../testdata/recordings/claude-log/"+name)
		last := len(lines) - 1
		for last > 0 && !bytes.Contains(lines[last], []byte(`"type":"assistant"`)) {
			last--
		}
		require.Positive(t, last)
		return mapLinesAs(t, dialectOf("claude-log"), "acme", name, "cut-"+name, lines[:last])
	}
	require.Equal(t, reading{turns: 1, inProgress: 1, lastState: "in_progress", lastModel: mainModel},
		read(projected(t, run.agent, cut("subagent.jsonl"))), "the launching turn cut off after its sub-agent's end")
	require.Equal(t, ended, read(projected(t, cut("subagent.agent-1.jsonl"), run.logFirst)),
		"the sub-agent's transcript cut off before its end")
}

// subagentRun is the subagent recording's control stream, the sub-agent's
// transcript, and the session log, mapped for tenant acme: the log twice,
// under ingest keys whose session ids sort one below the stream's
// (logFirst) and one above (streamFirst). The ledger keeps the smaller
// session's row of a turn and model, so the two take the two paths by
// which a transcript's rows count or not.
type subagentRun struct {
	streamLines           [][]byte
	stream, agent         recording
	logFirst, streamFirst recording
}

// mapSubagentRun maps the recording, each file's lines through edit
// first, when not nil.
func mapSubagentRun(t *testing.T, edit func([][]byte) [][]byte) subagentRun {
	t.Helper()
	return mapScenarioRun(t, "subagent", edit)
}

// mapScenarioRun is mapSubagentRun for the recordings of a scenario.
func mapScenarioRun(t *testing.T, scenario string, edit func([][]byte) [][]byte) subagentRun {
	t.Helper()
	const dir = "../../testdata/recordings/"
	read := func(path string) [][]byte {
		lines := adaptertest.ReadLines(t, dir+path)
		if edit != nil {
			lines = edit(lines)
		}
		return lines
	}
	run := subagentRun{streamLines: read("claude-control/" + scenario + ".jsonl")}
	run.stream = mapLinesAs(t, dialectOf("claude-control"), "acme", "stream", "stream", run.streamLines)
	run.agent = mapLinesAs(t, dialectOf("claude-log"), "acme", "transcript", "transcript", read("claude-log/"+scenario+".agent-1.jsonl"))
	logLines := read("claude-log/" + scenario + ".jsonl")
	for i := 0; run.logFirst.events == nil || run.streamFirst.events == nil; i++ {
		key := fmt.Sprintf("log-%d", i)
		log := mapLinesAs(t, dialectOf("claude-log"), "acme", "log", key, logLines)
		if log.events[0].SessionID < run.stream.events[0].SessionID {
			run.logFirst = log
		} else {
			run.streamFirst = log
		}
	}
	return run
}

// result is the stream's result message.
func (r subagentRun) result(t *testing.T) json.RawMessage {
	t.Helper()
	i, msg := resultOf(t, r.streamLines)
	require.GreaterOrEqual(t, i, 0, "the stream has a result")
	return msg
}

// resultOf finds the result among a Claude control tap's lines: its index
// and message, or -1 when there is none (a log's lines).
func resultOf(t *testing.T, lines [][]byte) (int, json.RawMessage) {
	t.Helper()
	for i, l := range lines {
		var tap struct {
			Msg json.RawMessage `json:"msg"`
		}
		if json.Unmarshal(l, &tap) != nil || len(tap.Msg) == 0 {
			continue
		}
		var kind struct {
			Type string `json:"type"`
		}
		require.NoError(t, json.Unmarshal(tap.Msg, &kind))
		if kind.Type == "result" {
			return i, tap.Msg
		}
	}
	return -1, nil
}

// TestDeltasOfTheOtherSession: of two sessions on one item, the larger
// streams a text as deltas and the smaller (the row's owner) has none for
// it. The row is the same whichever is applied first, and holds that text:
// applied first, the larger session owned the row and built it; applied
// second, its deltas were dropped as another session's.
func TestDeltasOfTheOtherSession(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	spaces := []canonical.IDSpace{
		{Tenant: "acme", Provider: canonical.ProviderCodex, SessionKey: "one"},
		{Tenant: "acme", Provider: canonical.ProviderCodex, SessionKey: "two"},
	}
	slices.SortFunc(spaces, func(a, b canonical.IDSpace) int { return strings.Compare(a.IngestSession(), b.IngestSession()) })
	item := spaces[0].Native(canonical.EntityItem, "th", "call-1")
	rec := func(ids canonical.IDSpace, payloads ...canonical.Payload) recording {
		var evs []canonical.Event
		for i, p := range payloads {
			evs = append(evs, canonical.Event{EventID: ids.Event(uint64(i+1), 0), Tenant: "acme", Provider: canonical.ProviderCodex,
				SessionID: ids.IngestSession(), CreatedAt: at.Add(time.Duration(i) * time.Millisecond), ItemID: item,
				MappingVersion: "fixture/1", Payload: p})
		}
		return recording{name: "deltas/" + ids.SessionKey, events: evs}
	}
	command := canonical.ItemTypeCommandExecution
	owner := rec(spaces[0], &canonical.ItemStarted{ItemType: command, Command: "ls"},
		&canonical.ItemCompleted{ItemType: command, Status: canonical.ItemStatusCompleted, Command: "ls"})
	streamer := rec(spaces[1], &canonical.ItemStarted{ItemType: command},
		&canonical.ContentDelta{StreamKind: canonical.StreamCommandOutput, Delta: "a.go\n"},
		&canonical.ContentDelta{StreamKind: canonical.StreamCommandOutput, Delta: "b.go\n"},
		&canonical.ItemCompleted{ItemType: command, Status: canonical.ItemStatusCompleted})
	ownerFirst, streamerFirst := projected(t, owner, streamer), projected(t, streamer, owner)
	requireSameDump(t, ownerFirst.dump(), streamerFirst.dump(), "the projection with the streaming session applied first")
	row := ownerFirst.rowsOf("items", "item_id")[item]
	require.Equal(t, "a.go\nb.go\n", row["text_command_output"])
	require.Equal(t, "ls", row["command"])
}

// corpus maps the public transcripts of real runs (../shared/corpus, when
// it is there), each in the dialect ingest sniffs for it, for tenant.
func corpus(t *testing.T, tenant string) []recording {
	t.Helper()
	paths, err := filepath.Glob("../../../shared/corpus/*/*.jsonl")
	require.NoError(t, err)
	var out []recording
	for _, p := range paths {
		lines := adaptertest.ReadLines(t, p)
		dialect, ok := adapters.Sniff(lines)
		if !ok {
			continue
		}
		name := "corpus/" + filepath.Base(filepath.Dir(p)) + "/" + filepath.Base(p)
		out = append(out, mapLinesAs(t, dialect, tenant, name, name, lines))
	}
	return out
}

// TestProjectionWhereverBatchesEnd: the recordings and the public
// transcripts, projected by two workers in batches of up to 1024 events
// and by one in batches of 7, give the same tables. Where batches end
// differs after every restart of a projector, and sessions' batches
// interleave in any order; a row that depended on either (a thread's
// usage did, when a running count went down) would differ.
func TestProjectionWhereverBatchesEnd(t *testing.T) {
	t.Parallel()
	recs := append(recordings(t, "acme"), corpus(t, "acme")...)
	var dumps []string
	for _, cfg := range []project.Config{{Workers: 2}, {Workers: 1, BatchSize: 7}} {
		dumps = append(dumps, projectedBy(t, cfg, recs...).dump())
	}
	requireSameDump(t, dumps[0], dumps[1], "the projection in batches of 1024")
}

// TestAnyOrderWhereverBatchesEnd: recorded events of every dialect, drawn
// at random into one session (seeded), in any order and repeated, a third
// of them with a field left out: a turn's events after its end, deltas
// before their item, states and counts reported again, a field stated
// then left empty. No agent emits such a session; a fold that kept
// anything otherwise than the upsert does across batches would differ
// here. Projected in one batch and in batches of 1 to 3, the rows are the
// same. The usage ledger is left out:
// in such draws a turn ends twice with its count broken down by other
// models, or two turns of one session share the provider's turn id, and
// which of their rows stand depends on where batches end. No agent does
// either; TestProjectionWhereverBatchesEnd compares the ledger on real
// orders, TestTurnUsageWhereverBatchesEnd on counts after a turn's end.
func TestAnyOrderWhereverBatchesEnd(t *testing.T) {
	t.Parallel()
	var drawn []canonical.Event
	for _, r := range recordings(t, "acme") {
		drawn = append(drawn, r.events...)
	}
	for seed := range 6 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(seed), 0)) //nolint:gosec // a test's reproducible draw
			session := uuid.NewSHA1(uuid.NameSpaceURL, fmt.Appendf(nil, "any-order-%d", seed)).String()
			rec := recording{name: fmt.Sprint("any order ", seed)}
			for range 300 {
				e := drawn[rng.IntN(len(drawn))]
				e.SessionID = session
				rec.events = append(rec.events, e)
			}
			scramble(t, rng, &rec, false)
			var dumps []string
			for _, cfg := range []project.Config{{Workers: 1}, {Workers: 1, BatchSize: 1 + seed%3}} {
				dumps = append(dumps, projectedBy(t, cfg, rec).dump("usage_ledger"))
			}
			requireSameDump(t, dumps[0], dumps[1], "the projection in one batch")
		})
	}
}

// TestTwoSessionsAnyOrder: the tap and the rollout of one Codex run, each
// session's events in a random order (seeded) with a third of them
// missing a field, give the same rows whichever session is applied first,
// and when two workers apply both at once in batches of 1 to 3. The rows
// the two sessions share merge column by column (see shared in sql.go); a
// merge that depended on the order sessions or batches came in would
// differ here. The usage ledger is left out: a count that names no model
// takes the turn's model as known when it is written, which is the other
// session's when that one came first (TestTwoSessionsOneThread compares
// the ledger on real orders, where the model comes before the count).
func TestTwoSessionsAnyOrder(t *testing.T) {
	t.Parallel()
	for _, scenario := range []string{"error-500", "approval-deny", "multistep", "two-turns"} {
		for seed := range 2 {
			t.Run(fmt.Sprint(scenario, "/", seed), func(t *testing.T) {
				t.Parallel()
				rng := rand.New(rand.NewPCG(uint64(seed), 1)) //nolint:gosec // a test's reproducible draw
				var recs []recording
				for _, dialect := range []string{"codex-app-server", "codex-rollout"} {
					r, ok := mapRecording(t, "acme", "../../testdata/recordings/"+dialect+"/"+scenario+".jsonl", "")
					require.True(t, ok)
					scramble(t, rng, &r, true)
					recs = append(recs, r)
				}
				tapFirst := projected(t, recs[0], recs[1]).dump("usage_ledger")
				requireSameDump(t, tapFirst, projected(t, recs[1], recs[0]).dump("usage_ledger"), "the tap applied first")
				e := newEnv(t)
				e.publish(recs, 1)
				e.start(project.Config{Workers: 2, BatchSize: 1 + seed%3})
				e.waitApplied("")
				requireSameDump(t, tapFirst, e.dump("usage_ledger"), "the tap applied first")
			})
		}
	}
}

// scramble gives r's events new ids and times a second apart, in their
// order (shuffled first when shuffle is set), and leaves a field out of a
// third of them (leftOut).
func scramble(t *testing.T, rng *rand.Rand, r *recording, shuffle bool) {
	t.Helper()
	if shuffle {
		rng.Shuffle(len(r.events), func(i, j int) { r.events[i], r.events[j] = r.events[j], r.events[i] })
	}
	base := r.events[0].CreatedAt
	for i := range r.events {
		e := &r.events[i]
		e.EventID = uuid.NewSHA1(uuid.NameSpaceURL, fmt.Appendf(nil, "%s/%s/%d", r.name, e.SessionID, i)).String()
		e.CreatedAt = base.Add(time.Duration(i) * time.Second)
		if rng.IntN(3) == 0 {
			e.Payload = leftOut(t, rng, *e)
		}
	}
}

// leftOut is e's payload with one of the fields it states, drawn by rng,
// left out (its zero value), or the payload as it is when the event would
// not be valid without it.
func leftOut(t *testing.T, rng *rand.Rand, e canonical.Event) canonical.Payload {
	t.Helper()
	v := reflect.ValueOf(e.Payload)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return e.Payload
	}
	out := reflect.New(v.Elem().Type())
	out.Elem().Set(v.Elem())
	var stated []int
	for i := range out.Elem().NumField() {
		if f := out.Elem().Field(i); f.CanSet() && !f.IsZero() {
			stated = append(stated, i)
		}
	}
	if len(stated) == 0 {
		return e.Payload
	}
	f := out.Elem().Field(stated[rng.IntN(len(stated))])
	f.Set(reflect.Zero(f.Type()))
	p, ok := reflect.TypeAssert[canonical.Payload](out)
	require.True(t, ok)
	original := e.Payload
	if e.Payload = p; canonical.Validate(e) != nil {
		return original
	}
	return p
}

// withEvents is a recorded codex exec session and a function that makes
// more events of its first turn, each a second after the one before, for
// a test to append: what no recording has, on rows a recording made.
func withEvents(t *testing.T, name string) (recording, func(canonical.Payload) canonical.Event) {
	t.Helper()
	rec, ok := mapRecording(t, "acme", "../../testdata/recordings/codex-exec/shell.jsonl", "")
	require.True(t, ok)
	var base canonical.Event
	for _, e := range rec.events {
		if e.TurnID != "" {
			base = e
			break
		}
	}
	require.NotEmpty(t, base.TurnID)
	n := 0
	return rec, func(p canonical.Payload) canonical.Event {
		e := base
		n++
		e.EventID = uuid.NewSHA1(uuid.NameSpaceURL, fmt.Appendf(nil, "%s-%d", name, n)).String()
		e.CreatedAt = e.CreatedAt.Add(time.Duration(n) * time.Second)
		e.Payload = p
		require.NoError(t, canonical.Validate(e), "%T", p)
		return e
	}
}

// TestStatedValuesKeptWhereverBatchesEnd: an event that states nothing of
// a column (a thread started again without the provider's id, a task
// restated without its description or summary, a second exit without a
// reason) leaves what an earlier event of the session stated, in the same
// batch as in an earlier one: the rows are the same in batches of one
// event as in one batch.
func TestStatedValuesKeptWhereverBatchesEnd(t *testing.T) {
	t.Parallel()
	rec, event := withEvents(t, "stated")
	rec.events = append(rec.events,
		event(&canonical.ThreadStarted{ProviderThreadID: "thread-1"}),
		event(&canonical.ThreadStarted{}),
		event(&canonical.TaskStarted{TaskID: "task-1", Description: "index the repo", TaskType: "local_agent"}),
		event(&canonical.TaskStarted{TaskID: "task-1"}),
		event(&canonical.TaskCompleted{TaskID: "task-1", Status: canonical.TaskStatus("completed"), Summary: "indexed"}),
		event(&canonical.TaskCompleted{TaskID: "task-1", Status: canonical.TaskStatus("completed")}),
		event(&canonical.SessionExited{Reason: "killed", ExitKind: canonical.ExitError}),
		event(&canonical.SessionExited{}),
	)
	ctx := context.Background()
	var dumps []string
	for _, cfg := range []project.Config{{Workers: 1}, {Workers: 1, BatchSize: 1}} {
		e := projectedBy(t, cfg, rec)
		var thread, description, taskType, summary, reason, exitKind *string
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT (SELECT provider_thread_id FROM threads),
				(SELECT description FROM tasks), (SELECT task_type FROM tasks), (SELECT summary FROM tasks),
				(SELECT exit_reason FROM sessions), (SELECT exit_kind FROM sessions)`).
			Scan(&thread, &description, &taskType, &summary, &reason, &exitKind))
		got := []*string{thread, description, taskType, summary, reason, exitKind}
		want := []string{"thread-1", "index the repo", "local_agent", "indexed", "killed", "error"}
		for i := range want {
			require.NotNil(t, got[i], "batches of %d (0: up to 1024): %s", cfg.BatchSize, want[i])
			require.Equal(t, want[i], *got[i], "batches of %d (0: up to 1024)", cfg.BatchSize)
		}
		dumps = append(dumps, e.dump())
	}
	requireSameDump(t, dumps[0], dumps[1], "the projection in one batch")
}
