package project_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/project"
	"github.com/agentwire/agentwire/pkg/canonical"
	"github.com/agentwire/agentwire/pkg/canonical/wire"
)

// fixture is two turns of one Codex session on two days of March 2026:
// a successful Bash call (2 s) approved in 500 ms, costing $0.1, then a
// failed one (1.004 s) declined in 1500 ms, costing $0.2, a third turn
// whose clocks ran backwards, and two unmapped frames. The figures are
// chosen so that floating point would show: 0.1 + 0.2 is
// 0.30000000000000004 in float8, and the calls' p95 is 1950.1999999999998.
func fixture(tenant string) recording {
	ids := canonical.IDSpace{Tenant: tenant, Provider: canonical.ProviderCodex, SessionKey: "fixture"}
	sid := ids.IngestSession()
	n := 0
	var evs []canonical.Event
	add := func(at time.Time, turn, item, req string, p canonical.Payload) {
		n++
		evs = append(evs, canonical.Event{
			EventID: ids.Event(uint64(n), 0), Tenant: tenant, Provider: canonical.ProviderCodex, SessionID: sid, //nolint:gosec // n > 0
			CreatedAt: at, TurnID: turn, ItemID: item, RequestID: req, MappingVersion: "fixture/1", Payload: p,
		})
	}
	cfg := map[string]json.RawMessage{"model": json.RawMessage(`"gpt-x"`), "cli_version": json.RawMessage(`"1.2.3"`)}
	day1 := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	add(day1, "", "", "", &canonical.SessionConfigured{Config: cfg})
	code0, code1 := 0, 1
	turn := func(i int, at time.Time, exit *int, status canonical.ItemStatus, toolMs, approvalMs int, decision string,
		state canonical.TurnState, errMsg string, u canonical.TokenUsage, cost float64, dur int64) {
		tid := ids.Derived(canonical.EntityTurn, uint64(i), 0)    //nolint:gosec // i > 0
		iid := ids.Derived(canonical.EntityItem, uint64(i), 0)    //nolint:gosec // i > 0
		rid := ids.Derived(canonical.EntityRequest, uint64(i), 0) //nolint:gosec // i > 0
		ms := func(d int) time.Time { return at.Add(time.Duration(d) * time.Millisecond) }
		add(at, tid, "", "", &canonical.TurnStarted{Model: "gpt-x"})
		add(ms(1000), tid, iid, "", &canonical.ItemStarted{ItemType: canonical.ItemTypeCommandExecution, ToolName: "Bash", Command: "ls"})
		add(ms(1000), tid, iid, rid, &canonical.RequestOpened{RequestType: canonical.RequestTypeCommandExecutionApproval})
		add(ms(1000+approvalMs), tid, iid, rid, &canonical.RequestResolved{RequestType: canonical.RequestTypeCommandExecutionApproval, Decision: decision})
		add(ms(1000+toolMs), tid, iid, "", &canonical.ItemCompleted{ItemType: canonical.ItemTypeCommandExecution, Status: status, ToolName: "Bash", ExitCode: exit})
		add(ms(int(dur)), tid, "", "", &canonical.TurnCompleted{State: state, ErrorMessage: errMsg, Usage: &u, TotalCostUSD: &cost, DurationMs: &dur})
	}
	turn(1, day1, &code0, canonical.ItemStatusCompleted, 2000, 500, "accept", canonical.TurnStateCompleted, "",
		canonical.TokenUsage{InputTokens: 100, CachedInputTokens: 50, OutputTokens: 10, ReasoningOutputTokens: 2}, 0.1, 4000)
	// A command the user typed, not a call of the agent's: only its start
	// says so.
	iu := ids.Derived(canonical.EntityItem, 8, 0)
	add(day1.Add(1500*time.Millisecond), ids.Derived(canonical.EntityTurn, 1, 0), iu, "", &canonical.ItemStarted{ItemType: canonical.ItemTypeCommandExecution, Command: "git status", ByUser: true})
	add(day1.Add(1600*time.Millisecond), ids.Derived(canonical.EntityTurn, 1, 0), iu, "", &canonical.ItemCompleted{ItemType: canonical.ItemTypeCommandExecution, Status: canonical.ItemStatusCompleted, Command: "git status", ExitCode: &code0})
	// A frame of the first turn that could not be read: not a failure.
	add(day1.Add(time.Second), ids.Derived(canonical.EntityTurn, 1, 0), "", "", &canonical.RuntimeError{
		Class: canonical.ErrorClassValidation, Message: "response_item could not be read"})
	day2 := day1.Add(24 * time.Hour)
	turn(2, day2, &code1, canonical.ItemStatusFailed, 1004, 1500, "decline", canonical.TurnStateFailed, "boom",
		canonical.TokenUsage{InputTokens: 200, OutputTokens: 20}, 0.2, 2000)
	// A call whose start and end carry one time (Codex rollouts of 2025)
	// and the duration the provider measured: the view reads that.
	stated := int64(300)
	tid2, rid := ids.Derived(canonical.EntityTurn, 2, 0), ids.Derived(canonical.EntityItem, 3, 0)
	add(day2, tid2, rid, "", &canonical.ItemStarted{ItemType: canonical.ItemTypeDynamicToolCall, ToolName: "Read"})
	add(day2, tid2, rid, "", &canonical.ItemCompleted{ItemType: canonical.ItemTypeDynamicToolCall, Status: canonical.ItemStatusCompleted,
		ToolName: "Read", DurationMs: &stated})
	// A turn, a call and an approval whose clocks ran backwards (Claude
	// Code writes a local command's lines out of order): counted, with no
	// duration or latency.
	skew := day2.Add(10 * time.Second)
	tid4, iid4, rid4 := ids.Derived(canonical.EntityTurn, 4, 0), ids.Derived(canonical.EntityItem, 4, 0), ids.Derived(canonical.EntityRequest, 4, 0)
	add(skew, tid4, "", "", &canonical.TurnStarted{Model: "gpt-skew"})
	add(skew, tid4, iid4, "", &canonical.ItemStarted{ItemType: canonical.ItemTypeDynamicToolCall, ToolName: "Grep"})
	add(skew, tid4, iid4, rid4, &canonical.RequestOpened{RequestType: canonical.RequestTypeFileChangeApproval})
	add(skew.Add(-20*time.Millisecond), tid4, iid4, rid4, &canonical.RequestResolved{RequestType: canonical.RequestTypeFileChangeApproval, Decision: "accept"})
	add(skew.Add(-5*time.Millisecond), tid4, iid4, "", &canonical.ItemCompleted{ItemType: canonical.ItemTypeDynamicToolCall, Status: canonical.ItemStatusCompleted, ToolName: "Grep"})
	add(skew.Add(-61*time.Millisecond), tid4, "", "", &canonical.TurnCompleted{State: canonical.TurnStateCompleted})
	// A turn, a call and an approval of a log read after the fact, whose
	// frames state no time: each time but the turn's start is when ingest
	// read the frame, a millisecond apart. Counted, with no duration or
	// latency.
	read := day2.Add(20 * time.Second)
	tid7, iid7, rid7 := ids.Derived(canonical.EntityTurn, 7, 0), ids.Derived(canonical.EntityItem, 7, 0), ids.Derived(canonical.EntityRequest, 7, 0)
	add(read, tid7, "", "", &canonical.TurnStarted{Model: "gpt-read"})
	from := len(evs)
	add(read.Add(time.Millisecond), tid7, iid7, "", &canonical.ItemStarted{ItemType: canonical.ItemTypeDynamicToolCall, ToolName: "Glob"})
	add(read.Add(2*time.Millisecond), tid7, iid7, rid7, &canonical.RequestOpened{RequestType: canonical.RequestTypeApplyPatchApproval})
	add(read.Add(3*time.Millisecond), tid7, iid7, rid7, &canonical.RequestResolved{RequestType: canonical.RequestTypeApplyPatchApproval, Decision: "accept"})
	add(read.Add(4*time.Millisecond), tid7, iid7, "", &canonical.ItemCompleted{ItemType: canonical.ItemTypeDynamicToolCall, Status: canonical.ItemStatusCompleted, ToolName: "Glob"})
	add(read.Add(5*time.Millisecond), tid7, "", "", &canonical.TurnCompleted{State: canonical.TurnStateCompleted})
	for i := from; i < len(evs); i++ {
		evs[i].CreatedAtIngested = true
	}
	// Four runs of one hook: one measured (40 ms, over a 100 ms span), one
	// failed after 60 ms, one whose end the log never reports, one timed
	// when ingest read it.
	hooks := day2.Add(30 * time.Second)
	for i, run := range []struct {
		ms       int
		outcome  canonical.HookOutcome
		measured int64
		ingested bool
	}{{100, canonical.HookOutcomeSuccess, 40, false}, {60, canonical.HookOutcomeError, 0, false}, {0, "", 0, false}, {1, canonical.HookOutcomeSuccess, 0, true}} {
		id := fmt.Sprintf("hook-%d", i)
		at := hooks.Add(time.Duration(i) * time.Second)
		add(at, "", "", "", &canonical.HookStarted{HookID: id, HookName: "PreToolUse:Bash", HookEvent: "PreToolUse", Command: "guard.sh"})
		if run.outcome != "" {
			done := &canonical.HookCompleted{HookID: id, Outcome: run.outcome}
			if run.measured > 0 {
				done.DurationMs = &run.measured
			}
			add(at.Add(time.Duration(run.ms)*time.Millisecond), "", "", "", done)
		}
		if run.ingested {
			evs[len(evs)-1].CreatedAtIngested, evs[len(evs)-2].CreatedAtIngested = true, true
		}
	}
	// Two turns failed alike: their messages differ in the request id.
	for i, req := range []string{"99cdbe04acfb0b34-AMS", "99cdc9b14d7266f1-AMS"} {
		tid := ids.Derived(canonical.EntityTurn, uint64(5+i), 0)
		add(skew.Add(time.Duration(i)*time.Second), tid, "", "", &canonical.TurnStarted{Model: "gpt-fail"})
		add(skew.Add(time.Duration(i)*time.Second), tid, "", "", &canonical.TurnCompleted{State: canonical.TurnStateFailed,
			ErrorMessage: "exceeded retry limit, last status: 401 Unauthorized, request id: " + req})
	}
	for range 2 {
		add(day2.Add(time.Minute), "", "", "", &canonical.RuntimeWarning{Message: "unmapped codex-exec frame kind weird",
			Detail: json.RawMessage(`{"dialect":"codex-exec","kind":"weird"}`)})
	}
	return recording{name: "fixture/" + tenant, events: evs}
}

func TestViews(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.publish([]recording{fixture("acme")}, 1)
	e.start(project.Config{})
	e.waitApplied("")
	ctx := context.Background()
	q := func(sql string, dst ...any) {
		t.Helper()
		require.NoError(t, e.pool.QueryRow(ctx, sql).Scan(dst...), sql)
	}

	// Figures are compared as Postgres prints them: what an analyst sees.
	var days, turns int
	var in, cached, out, total int64
	var cost string
	q(`SELECT count(*), sum(turns) FROM usage_by_day WHERE tenant_id = 'acme'`, &days, &turns)
	require.Equal(t, []int{2, 2}, []int{days, turns})
	q(`SELECT input_tokens, cached_input_tokens, output_tokens, cost_usd::text FROM usage_by_day WHERE day = '2026-03-10'`, &in, &cached, &out, &cost)
	require.Equal(t, []int64{100, 50, 10}, []int64{in, cached, out})
	require.Equal(t, "0.1", cost)
	q(`SELECT turns, input_tokens, output_tokens, total_tokens, cost_usd::text FROM usage_by_month WHERE month = '2026-03-01' AND model = 'gpt-x' AND provider = 'codex'`,
		&turns, &in, &out, &total, &cost)
	require.Equal(t, []int64{2, 300, 30, 380}, []int64{int64(turns), in, out, total})
	require.Equal(t, "0.3", cost)
	q(`SELECT turns, total_tokens, cost_usd::text FROM usage_by_session WHERE session_model = 'gpt-x'`, &turns, &total, &cost)
	require.Equal(t, []int64{2, 380}, []int64{int64(turns), total})
	require.Equal(t, "0.3", cost)
	q(`SELECT sum(cost_usd)::text FROM turns WHERE tenant_id = 'acme'`, &cost)
	require.Equal(t, "0.3", cost)

	var calls, ok, failed int
	var rate, p50, p95 string
	q(`SELECT calls, succeeded, failed, success_rate::text, p50_ms::text, p95_ms::text FROM tool_calls_by_tool WHERE tool = 'Bash'`, &calls, &ok, &failed, &rate, &p50, &p95)
	require.Equal(t, []int{2, 1, 1}, []int{calls, ok, failed})
	require.Equal(t, []string{"0.5000", "1502.000", "1950.200"}, []string{rate, p50, p95})
	q(`SELECT calls, p50_ms::text FROM tool_calls_by_tool WHERE tool = 'Read'`, &calls, &p50)
	require.Equal(t, 1, calls)
	require.Equal(t, "300.000", p50, "the provider's duration, not the 0 ms between two stamps of one time")
	q(`SELECT count(*) FROM tool_calls_by_tool WHERE tool = 'command_execution'`, &calls)
	require.Zero(t, calls, "a command the user ran is no tool call")
	var byUser *bool
	q(`SELECT by_user FROM items WHERE command = 'git status'`, &byUser)
	require.Equal(t, new(true), byUser, "said by the start, kept by the completion")

	for decision, want := range map[string][2]string{"accept": {"500.000", "approved"}, "decline": {"1500.000", "denied"}} {
		var n int
		var avg, outcome string
		q(`SELECT requests, avg_latency_ms::text, p50_latency_ms::text, outcome FROM approvals WHERE request_type = 'command_execution_approval' AND decision = '`+decision+`'`, &n, &avg, &p50, &outcome)
		require.Equal(t, 1, n)
		require.Equal(t, []string{want[0], want[0], want[1]}, []string{avg, p50, outcome}, decision)
	}
	// Every provider's spelling of a decision has its outcome.
	for outcome, decisions := range map[string][]string{
		"approved":  {"allow", "allow_once", "allow-always", "accept", "acceptForSession", "acceptWithExecpolicyAmendment", "approved", "approved_for_session", "proceed_once"},
		"denied":    {"deny", "denied", "decline", "reject_once", "reject_always"},
		"cancelled": {"cancel", "cancelled", "abort"},
		"other":     {"maybe"},
	} {
		for _, d := range decisions {
			var got string
			q(`SELECT decision_outcome('`+d+`')`, &got)
			require.Equal(t, outcome, got, d)
		}
	}

	for state, want := range map[string]string{"completed": "4000.000", "failed": "2000.000"} {
		var n int
		var maxMs string
		q(`SELECT turns, p50_ms::text, max_ms::text FROM turn_durations WHERE model = 'gpt-x' AND state = '`+state+`'`, &n, &p50, &maxMs)
		require.Equal(t, 1, n)
		require.Equal(t, []string{want, want}, []string{p50, maxMs}, state)
	}
	// Counted, with no duration or latency: a turn, a call and an
	// approval whose spans are unknown.
	noSpans := func(model, tool, requestType, why string) {
		t.Helper()
		var n int
		var p50, maxMs, avg *string
		var outcome string
		q(`SELECT turns, p50_ms::text, max_ms::text FROM turn_durations WHERE model = '`+model+`'`, &n, &p50, &maxMs)
		require.Equal(t, 1, n)
		require.Nil(t, p50, "a turn %s has no duration", why)
		require.Nil(t, maxMs)
		q(`SELECT calls, p50_ms::text FROM tool_calls_by_tool WHERE tool = '`+tool+`'`, &n, &p50)
		require.Equal(t, 1, n)
		require.Nil(t, p50, "a call %s has no duration", why)
		q(`SELECT requests, avg_latency_ms::text, p50_latency_ms::text, outcome FROM approvals WHERE request_type = '`+requestType+`'`, &n, &avg, &p50, &outcome)
		require.Equal(t, []any{1, "approved"}, []any{n, outcome})
		require.Nil(t, avg, "a request %s has no latency", why)
		require.Nil(t, p50)
		q(`SELECT latency_ms::text FROM requests WHERE request_type = '`+requestType+`'`, &avg)
		require.Nil(t, avg)
	}
	noSpans("gpt-skew", "Grep", "file_change_approval", "that ended before it started")
	noSpans("gpt-read", "Glob", "apply_patch_approval", "whose times are only when ingest read it")
	var stated, ingested int
	q(`SELECT count(*) FILTER (WHERE latency_ms IS NOT NULL), count(*) FILTER (WHERE opened_at_ingested AND resolved_at_ingested) FROM requests`, &stated, &ingested)
	require.Equal(t, []int{2, 1}, []int{stated, ingested}, "the times are kept, and said to be read")

	var n int
	var runs [4]int
	q(`SELECT runs, succeeded, failed, no_outcome, p50_ms::text, p95_ms::text FROM hook_runs WHERE command = 'guard.sh' AND hook_event = 'PreToolUse'`,
		&runs[0], &runs[1], &runs[2], &runs[3], &p50, &p95)
	require.Equal(t, [4]int{4, 2, 1, 1}, runs)
	require.Equal(t, []string{"50.000", "59.000"}, []string{p50, p95}, "the measured 40 ms and the 60 ms span; not the run read after the fact")
	q(`SELECT count(*) FROM turn_failures WHERE state = 'completed'`, &n)
	require.Zero(t, n, "an unreadable frame is not the turn's failure")
	var reason, example string
	q(`SELECT reason, turns, example FROM turn_failures WHERE state = 'failed' AND reason = 'boom'`, &reason, &n, &example)
	require.Equal(t, []any{"boom", 1, "boom"}, []any{reason, n, example})
	// One failure, whatever request id each occurrence names.
	q(`SELECT reason, turns, example FROM turn_failures WHERE state = 'failed' AND reason <> 'boom'`, &reason, &n, &example)
	require.Equal(t, []any{"exceeded retry limit, last status: 401 Unauthorized, request id: <id>", 2,
		"exceeded retry limit, last status: 401 Unauthorized, request id: 99cdbe04acfb0b34-AMS"}, []any{reason, n, example})

	var version, kind string
	q(`SELECT cli_version, kind, count FROM unmapped_kinds_by_version WHERE provider = 'codex'`, &version, &kind, &n)
	require.Equal(t, []string{"1.2.3", "weird"}, []string{version, kind})
	require.Equal(t, 2, n)
}

// TestToolCallsCutShort: a call its turn cut short (an interrupt, or the
// agent's exit) is counted apart from the calls that failed on their own,
// and its time until the interrupt is no duration of the tool.
func TestToolCallsCutShort(t *testing.T) {
	t.Parallel()
	ids := canonical.IDSpace{Tenant: "acme", Provider: canonical.ProviderClaude, SessionKey: "cut"}
	sid := ids.IngestSession()
	at := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	var evs []canonical.Event
	add := func(ms int, turn, item string, p canonical.Payload) {
		evs = append(evs, canonical.Event{
			EventID: ids.Event(uint64(len(evs)+1), 0), Tenant: "acme", Provider: canonical.ProviderClaude, SessionID: sid,
			CreatedAt: at.Add(time.Duration(ms) * time.Millisecond), TurnID: turn, ItemID: item, MappingVersion: "fixture/1", Payload: p,
		})
	}
	// call runs Bash in turn i from start to end (ms), ending it with
	// status, or leaving it running when status is "".
	call := func(i, start, end int, status canonical.ItemStatus) {
		tid := ids.Derived(canonical.EntityTurn, uint64(i), 0) //nolint:gosec // i > 0
		iid := ids.Derived(canonical.EntityItem, uint64(i), 0) //nolint:gosec // i > 0
		add(start, tid, iid, &canonical.ItemStarted{ItemType: canonical.ItemTypeCommandExecution, ToolName: "Bash"})
		if status != "" {
			add(end, tid, iid, &canonical.ItemCompleted{ItemType: canonical.ItemTypeCommandExecution, ToolName: "Bash", Status: status})
		}
	}
	turn := func(i, start, end int, state canonical.TurnState, calls func()) {
		tid := ids.Derived(canonical.EntityTurn, uint64(i), 0) //nolint:gosec // i > 0
		add(start, tid, "", &canonical.TurnStarted{})
		calls()
		if state != "" {
			add(end, tid, "", &canonical.TurnCompleted{State: state})
		}
	}
	// A call that succeeded in 1 s.
	turn(1, 0, 2000, canonical.TurnStateCompleted, func() { call(1, 100, 1100, canonical.ItemStatusCompleted) })
	// A call the user interrupted after a minute: Claude writes its
	// refused result just before the interrupt that ends the turn.
	turn(2, 10000, 70020, canonical.TurnStateInterrupted, func() { call(2, 10000, 70000, canonical.ItemStatusFailed) })
	// A call that failed in 3 s, after which the agent went on writing
	// until the user interrupted it: the tool's own failure.
	turn(3, 80000, 90000, canonical.TurnStateInterrupted, func() {
		call(3, 80000, 83000, canonical.ItemStatusFailed)
		add(84000, ids.Derived(canonical.EntityTurn, 3, 0), ids.Derived(canonical.EntityItem, 30, 0),
			&canonical.ItemStarted{ItemType: canonical.ItemTypeAssistantMessage})
	})
	// The same, from a log read after the fact, whose frames state no
	// time: every time is the read's, so the failure cannot be told from
	// the interrupt, and stays a failure.
	from := len(evs)
	turn(5, 95000, 95003, canonical.TurnStateInterrupted, func() { call(5, 95001, 95002, canonical.ItemStatusFailed) })
	for i := from; i < len(evs); i++ {
		evs[i].CreatedAtIngested = true
	}
	// A call Claude's stream declines when the user cancels its turn.
	turn(6, 96000, 97000, canonical.TurnStateCancelled, func() { call(6, 96000, 97000, canonical.ItemStatusDeclined) })
	// A call still running when the agent was killed, as mapped before the
	// exit ended running work: the turn reads interrupted at the exit.
	turn(4, 100000, 0, "", func() { call(4, 100000, 0, "") })
	add(400000, "", "", &canonical.SessionExited{Reason: "the agent was killed by SIGKILL", ExitKind: canonical.ExitError})

	e := newEnv(t)
	e.publish([]recording{{name: "cut/acme", events: evs}}, 1)
	e.start(project.Config{})
	e.waitApplied("")
	var calls, ok, failed, interrupted int
	var rate, p50, p95 string
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT calls, succeeded, failed, interrupted, success_rate::text, p50_ms::text, p95_ms::text
		FROM tool_calls_by_tool WHERE tool = 'Bash'`).Scan(&calls, &ok, &failed, &interrupted, &rate, &p50, &p95))
	require.Equal(t, []int{6, 1, 2, 3}, []int{calls, ok, failed, interrupted})
	require.Equal(t, []string{"0.3333", "2000.000", "2900.000"}, []string{rate, p50, p95},
		"the calls that ended on their own and were timed: 1 s and 3 s, not the minute until the interrupt")
	rows, err := e.pool.Query(context.Background(), `SELECT item_id::text FROM items_cut_short ORDER BY 1`)
	require.NoError(t, err)
	cut, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	// The message the agent was writing when the user interrupted it was
	// cut short too.
	want := []string{ids.Derived(canonical.EntityItem, 2, 0), ids.Derived(canonical.EntityItem, 30, 0), ids.Derived(canonical.EntityItem, 4, 0),
		ids.Derived(canonical.EntityItem, 6, 0)}
	slices.Sort(want)
	require.Equal(t, want, cut)
}

// TestTurnCosts: every row of a turn has what the turn cost, found by its
// key: a turn two sessions describe has it on both rows, though the
// ledger keeps one session's; a turn the provider stated no cost for is
// priced; a model without a price is counted; a turn not ended has its
// usage so far.
func TestTurnCosts(t *testing.T) {
	t.Parallel()
	const tenant = "acme"
	at := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	type turn struct {
		provider canonical.Provider
		ref      string // the provider's turn id
		usage    canonical.TokenUsage
		model    string
		cost     *float64 // stated
		ended    bool
	}
	var recs []recording
	var turnIDs []string
	session := func(key string, turns ...turn) {
		ids := canonical.IDSpace{Tenant: tenant, Provider: turns[0].provider, SessionKey: key}
		thread := canonical.IDSpace{Tenant: tenant, Provider: turns[0].provider}.Native(canonical.EntityThread, "th-"+string(turns[0].provider))
		var evs []canonical.Event
		add := func(turnID string, tu turn, p canonical.Payload) {
			evs = append(evs, canonical.Event{
				EventID: ids.Event(uint64(len(evs)+1), 0), Tenant: tenant, Provider: tu.provider, SessionID: ids.IngestSession(),
				CreatedAt: at.Add(time.Duration(len(evs)) * time.Second), ThreadID: thread, TurnID: turnID,
				ProviderRefs: canonical.ProviderRefs{ProviderTurnID: tu.ref}, MappingVersion: "fixture/1", Payload: p,
			})
		}
		for i, tu := range turns {
			id := ids.Derived(canonical.EntityTurn, uint64(i+1), 0)
			turnIDs = append(turnIDs, id)
			add(id, tu, &canonical.TurnStarted{Model: tu.model})
			models := map[string]canonical.ModelUsage{tu.model: {TokenUsage: tu.usage, CostUSD: tu.cost}}
			if tu.ended {
				add(id, tu, &canonical.TurnCompleted{State: canonical.TurnStateCompleted, Usage: &tu.usage, TotalCostUSD: tu.cost, ModelUsage: models})
			} else {
				add(id, tu, &canonical.ThreadTokenUsageUpdated{Usage: tu.usage, Turn: &tu.usage, TurnModelUsage: models})
			}
		}
		recs = append(recs, recording{name: key, events: evs})
	}
	stated := 0.05
	// One Claude turn through its stream (which counted more and stated a
	// cost) and its session log: two turn ids, one ledger row.
	session("stream", turn{provider: canonical.ProviderClaude, ref: "msg_1", model: "claude-sonnet-4-5", ended: true, cost: &stated,
		usage: canonical.TokenUsage{InputTokens: 10, CachedInputTokens: 1000, CacheWriteInputTokens: 100, OutputTokens: 9}})
	session("log", turn{provider: canonical.ProviderClaude, ref: "msg_1", model: "claude-sonnet-4-5", ended: true,
		usage: canonical.TokenUsage{InputTokens: 10, CachedInputTokens: 1000, CacheWriteInputTokens: 100, OutputTokens: 5}})
	// Codex turns: one priced at the list price (1M input at $2.50, 100k
	// output at $15 per million), one of a model without a price, one not
	// ended.
	session("codex",
		turn{provider: canonical.ProviderCodex, ref: "t1", model: "gpt-5.4", ended: true,
			usage: canonical.TokenUsage{InputTokens: 1000000, OutputTokens: 100000, ReasoningOutputTokens: 40000}},
		turn{provider: canonical.ProviderCodex, ref: "t2", model: "gpt-unpriced", ended: true,
			usage: canonical.TokenUsage{InputTokens: 7, OutputTokens: 3}},
		turn{provider: canonical.ProviderCodex, ref: "t3", model: "gpt-5.4", usage: canonical.TokenUsage{InputTokens: 2000000}})

	e := newEnv(t)
	e.publish(recs, 1)
	e.start(project.Config{})
	e.waitApplied("")
	type costs struct {
		models         []string
		total, output  *int64
		cost, estimate *string
		unpriced       int
		provisional    *bool
	}
	read := func(turnID string) costs {
		t.Helper()
		var c costs
		require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT models, total_tokens, output_tokens, cost_usd::text,
			estimated_cost_usd::text, unpriced_models, provisional FROM turn_costs WHERE turn_id = $1`, turnID).
			Scan(&c.models, &c.total, &c.output, &c.cost, &c.estimate, &c.unpriced, &c.provisional))
		return c
	}
	claude := costs{models: []string{"claude-sonnet-4-5"}, total: new(int64(1119)), output: new(int64(9)),
		cost: new("0.05"), estimate: new("0.05"), provisional: new(false)}
	require.Equal(t, claude, read(turnIDs[0]), "the stream's turn")
	require.Equal(t, claude, read(turnIDs[1]), "the log's turn: the same turn, the row the ledger kept")
	require.Equal(t, costs{models: []string{"gpt-5.4"}, total: new(int64(1100000)), output: new(int64(100000)),
		estimate: new("4"), provisional: new(false)}, read(turnIDs[2]), "priced at the list price")
	require.Equal(t, costs{models: []string{"gpt-unpriced"}, total: new(int64(10)), output: new(int64(3)),
		unpriced: 1, provisional: new(false)}, read(turnIDs[3]), "no price: counted, not estimated")
	require.Equal(t, costs{models: []string{"gpt-5.4"}, total: new(int64(2000000)), output: new(int64(0)),
		estimate: new("5"), provisional: new(true)}, read(turnIDs[4]), "not ended: its usage so far")
}

// TestFailureReason: failure_reason masks what names one occurrence of a
// failure and keeps what says which failure it is.
func TestFailureReason(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for msg, want := range map[string]string{
		// Kept: status codes, error names, model names, the provider's words.
		"boom":                      "boom",
		"API Error: 529 overloaded": "API Error: 529 overloaded",
		"model claude-sonnet-4-5-20250929 not found":                                         "model claude-sonnet-4-5-20250929 not found",
		`{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}`: `{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}`,
		// Masked: ids, ports, times, delays.
		"exceeded retry limit, last status: 401 Unauthorized, request id: 99cdbe04acfb0b34-AMS": "exceeded retry limit, last status: 401 Unauthorized, request id: <id>",
		"Request-ID: req_011CUt7n9Zb8 failed at 14:03:22":                                       "Request-ID: <id> failed at <time>",
		"rate limited (req_id=abc-123) in session 0b7e1c2a-1111-4222-8333-444455556666":         "rate limited (req_id=<id>) in session <id>",
		"trace 5f2b8c1d9e0a4b3c7d6e: failed":                                                    "trace <id>: failed",
		"check your inference gateway (127.0.0.1:44263).":                                       "check your inference gateway (127.0.0.1:<port>).",
		"try again at 9:01 AM.":                                                                 "try again at <time>.",
		"rate limited until 2026-03-10T09:00:01.123Z":                                           "rate limited until <time>",
		"Suggested retry after 1s.":                                                             "Suggested retry after <duration>.",
		"Please try again in 20.5 seconds.":                                                     "Please try again in <duration>.",
	} {
		var got string
		require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT failure_reason($1)`, msg).Scan(&got))
		require.Equal(t, want, got, msg)
	}
}

// TestRLS: the analyst role, set to tenant A, reads no row of tenant B, in
// any table or view; with no tenant set it reads nothing.
func TestRLS(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Each tenant has an item still streaming: its text is in parts.
	streaming := func(tenant string) recording {
		ids := canonical.IDSpace{Tenant: tenant, Provider: canonical.ProviderCodex, SessionKey: "streaming"}
		return streamed(ids, ids.Native(canonical.EntityItem, "th", "call-1"),
			&canonical.ItemStarted{ItemType: canonical.ItemTypeCommandExecution}, output("a"))
	}
	e.publish([]recording{fixture("acme"), fixture("globex"), streaming("acme"), streaming("globex")}, 1)
	e.start(project.Config{})
	e.waitApplied("")
	ctx := context.Background()
	relations := append([]string{"events"}, projectionTables...)
	relations = append(relations, "item_texts", "usage_by_day", "usage_by_month", "usage_by_session", "tool_calls_by_tool", "approvals",
		"turns_once", "turn_durations", "turn_failures", "unmapped_kinds_by_version", "usage_priced", "unpriced_models", "hook_runs", "thread_activity", "turns_read", "exec_runs",
		"threads_in_progress", "codex_recorded_turns", "usage_counted", "requests_waiting", "items_cut_short", "turn_costs")
	// Every table and view analysts can read is in the list: a new one
	// is checked here or fails. Two are checked elsewhere: model_prices
	// holds the list prices every tenant reads (tenant ''), and
	// TestModelPrices checks a tenant's own; tenant_members shows a role
	// its own bindings (TestRLSBoundRole).
	rows, err := e.pool.Query(ctx, `SELECT c.relname::text FROM pg_class c
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'v')
		  AND has_table_privilege('agentwire_analyst', c.oid, 'SELECT') ORDER BY 1`)
	require.NoError(t, err)
	readable, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	for _, r := range readable {
		if r != "model_prices" && r != "tenant_members" {
			require.Contains(t, relations, r, "analysts read %s: add it to this test", r)
		}
	}
	asAnalyst := func(tenant string, f func(tx pgx.Tx)) {
		tx, err := e.pool.Begin(ctx)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback(ctx) }()
		_, err = tx.Exec(ctx, `SET LOCAL ROLE agentwire_analyst`)
		require.NoError(t, err)
		if tenant != "" {
			_, err = tx.Exec(ctx, `SELECT set_config('agentwire.tenant', $1, true)`, tenant)
			require.NoError(t, err)
		}
		f(tx)
	}
	asAnalyst("acme", func(tx pgx.Tx) {
		for _, r := range relations {
			var mine, others int
			require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE tenant_id = 'acme'), count(*) FILTER (WHERE tenant_id <> 'acme') FROM `+r).Scan(&mine, &others), r)
			require.Zero(t, others, r)
			if r != "tasks" && r != "rate_limit_observations" && r != "threads" && r != "thread_activity" && r != "turn_failures" && r != "unpriced_models" && r != "exec_runs" && r != "threads_in_progress" && r != "codex_recorded_turns" && r != "requests_waiting" && r != "items_cut_short" {
				require.Positive(t, mine, r)
			}
		}
		_, err := tx.Exec(ctx, `SELECT last_seq FROM projector_checkpoints`)
		require.Error(t, err, "analysts must not read the checkpoints")
	})
	asAnalyst("", func(tx pgx.Tx) {
		var n int
		require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&n))
		require.Zero(t, n)
	})
	// The owner (the projector) sees both tenants.
	var tenants int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(DISTINCT tenant_id) FROM events`).Scan(&tenants))
	require.Equal(t, 2, tenants)
}

// TestRLSBoundRole: a role bound to tenant acme in tenant_members reads no
// row of globex, whatever it sets agentwire.tenant to, and keeps its
// binding after SET ROLE to the unbound agentwire_analyst; it reads its
// own bindings only and cannot add one.
func TestRLSBoundRole(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	// Roles belong to the cluster, which other tests share: a name of
	// this test's own, dropped at the end.
	role := "awtest_bound_" + e.schema
	other := role + "_other"
	for _, r := range []string{role, other} {
		if _, err := e.pool.Exec(ctx, `CREATE ROLE `+pgx.Identifier{r}.Sanitize()+` NOLOGIN IN ROLE agentwire_analyst`); err != nil {
			t.Skipf("cannot create a role here: %v", err)
		}
		t.Cleanup(func() {
			_, _ = e.pool.Exec(context.WithoutCancel(ctx), `DROP ROLE IF EXISTS `+pgx.Identifier{r}.Sanitize())
		})
	}
	_, err := e.pool.Exec(ctx, `INSERT INTO tenant_members (role_name, tenant_id) VALUES ($1, 'acme'), ($2, 'globex')`, role, other)
	require.NoError(t, err)
	// A misspelt role would bind nothing and leave the intended role
	// unbound: refused.
	_, err = e.pool.Exec(ctx, `INSERT INTO tenant_members (role_name, tenant_id) VALUES ($1, 'acme')`, strings.ToUpper(role))
	require.ErrorContains(t, err, "tenant_members: there is no role '"+strings.ToUpper(role)+"'")
	e.publish([]recording{fixture("acme"), fixture("globex")}, 1)
	e.start(project.Config{})
	e.waitApplied("")

	relations := append([]string{"events"}, projectionTables...)
	relations = append(relations, "usage_by_day", "usage_by_session", "tool_calls_by_tool", "approvals", "turns_once")
	// tenants counts, per tenant, the rows of every relation a
	// transaction reads after running setup (which picks the role) and
	// setting agentwire.tenant to tenant ("" leaves it unset).
	tenants := func(setup []string, tenant string) map[string]int {
		tx, err := e.pool.Begin(ctx)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback(ctx) }()
		for _, q := range setup {
			_, err = tx.Exec(ctx, q)
			require.NoError(t, err, q)
		}
		if tenant != "" {
			_, err = tx.Exec(ctx, `SELECT set_config('agentwire.tenant', $1, true)`, tenant)
			require.NoError(t, err)
		}
		seen := map[string]int{}
		for _, r := range relations {
			rows, err := tx.Query(ctx, `SELECT tenant_id, count(*) FROM `+r+` GROUP BY 1`)
			require.NoError(t, err, r)
			for rows.Next() {
				var id string
				var n int
				require.NoError(t, rows.Scan(&id, &n))
				seen[id] += n
			}
			require.NoError(t, rows.Err(), r)
		}
		return seen
	}
	asRole := []string{`SET LOCAL ROLE ` + pgx.Identifier{role}.Sanitize()}

	acme := tenants(asRole, "")
	require.Positive(t, acme["acme"], "bound to acme, the role reads acme without naming it")
	require.Zero(t, acme["globex"])
	require.Equal(t, acme, tenants(asRole, "acme"), "naming its own tenant changes nothing")
	require.Empty(t, tenants(asRole, "globex"), "naming another tenant reads nothing, not that tenant")

	// Logged in as the bound role, then SET ROLE to the unbound analyst
	// role it is a member of: the binding still holds. SESSION
	// AUTHORIZATION needs a superuser, as a login would not.
	var super bool
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super))
	if super {
		escaped := []string{`SET LOCAL SESSION AUTHORIZATION ` + pgx.Identifier{role}.Sanitize(), `SET LOCAL ROLE agentwire_analyst`}
		require.Empty(t, tenants(escaped, "globex"))
		require.Equal(t, acme, tenants(escaped, ""))
	}

	// The unbound analyst role still picks its tenant with the setting.
	unbound := []string{`SET LOCAL ROLE agentwire_analyst`}
	require.Zero(t, tenants(unbound, "globex")["acme"])
	require.Positive(t, tenants(unbound, "globex")["globex"])

	tx, err := e.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, asRole[0])
	require.NoError(t, err)
	var bindings []string
	rows, err := tx.Query(ctx, `SELECT role_name || ':' || tenant_id FROM tenant_members`)
	require.NoError(t, err)
	for rows.Next() {
		var b string
		require.NoError(t, rows.Scan(&b))
		bindings = append(bindings, b)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []string{role + ":acme"}, bindings, "a role reads its own bindings only")
	_, err = tx.Exec(ctx, `INSERT INTO tenant_members (role_name, tenant_id) VALUES ($1, 'globex')`, role)
	require.Error(t, err, "a role cannot bind itself to a tenant")
}

// refusedDelta is the fixture with a command-output delta of its first
// item inserted as RUNTIME's fourth event, which the log of e refuses (a
// check constraint of the test's): an event Postgres cannot store.
func refusedDelta(e *env) (recording, canonical.Event) {
	e.t.Helper()
	_, err := e.pool.Exec(context.Background(), `ALTER TABLE events ADD CONSTRAINT refused_by_the_test
		CHECK (data->'payload'->>'delta' IS DISTINCT FROM 'refused by the test')`)
	require.NoError(e.t, err)
	r := fixture("acme")
	bad := r.events[2] // the first item.started: same session, turn and item
	bad.EventID = canonical.IDSpace{Tenant: "acme", Provider: canonical.ProviderCodex, SessionKey: "bad"}.Event(1, 0)
	bad.Payload = &canonical.ContentDelta{StreamKind: canonical.StreamCommandOutput, Delta: "refused by the test"}
	r.events = append(r.events[:3:3], append([]canonical.Event{bad}, r.events[3:]...)...)
	return r, bad
}

// TestDeadLetter: an event Postgres cannot store goes to
// deadletter.project.<tenant> with the reason; the rest of its batch is
// applied.
func TestDeadLetter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, bad := refusedDelta(e)
	e.publish([]recording{r}, 1)
	p := e.start(project.Config{})
	e.waitApplied("")
	require.Equal(t, uint64(1), p.Stats().DeadLettered.Load())
	var n int
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT count(*) FROM events`).Scan(&n))
	require.Equal(t, len(r.events)-1, n)

	st, err := e.layout.JS.Stream(context.Background(), "DEADLETTER")
	require.NoError(t, err)
	m, err := st.GetLastMsgForSubject(context.Background(), "deadletter.project.acme")
	require.NoError(t, err)
	require.Contains(t, m.Header.Get("Agentwire-Reason"), "cannot be applied")
	require.Equal(t, bad.EventID, m.Header.Get("ce-id"))

	// Delivered again from the start, the bad event is behind its
	// session's checkpoint: skipped, not dead-lettered twice.
	before := e.dump()
	_, err = e.layout.JS.ResetConsumerToSequence(context.Background(), bus.RuntimeStream, bus.ProjectConsumer, 1)
	require.NoError(t, err)
	e.waitApplied("")
	require.Equal(t, uint64(1), p.Stats().DeadLettered.Load())
	require.Equal(t, before, e.dump())
}

// TestDeadLetterBeforeCommit: while the dead letters cannot be written
// (the DEADLETTER stream gone), a batch holding an event Postgres refuses
// is not committed, so the event is not lost past its session's
// checkpoint; once they can, the batch commits and the event is there.
// The dead letter used to be published after the commit, and a failure
// only logged: the event was acked, in neither the log nor the dead
// letters.
func TestDeadLetterBeforeCommit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	r, bad := refusedDelta(e)
	require.NoError(t, e.layout.JS.DeleteStream(ctx, "DEADLETTER"))
	e.publish([]recording{r}, 1)
	p := e.start(project.Config{})
	require.Eventually(t, func() bool { return p.Stats().Retries.Load() > 0 }, 30*time.Second, 50*time.Millisecond,
		"the batch is retried while its dead letter cannot be written")
	// The bad event is RUNTIME's fourth. The events before it may have
	// made a batch of their own (a batch is what has arrived), but neither
	// it nor anything after it in its session is committed.
	var n int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE runtime_seq >= 4`).Scan(&n))
	require.Zero(t, n, "nothing of the batch is committed before its dead letter is written")

	_, err := bus.Ensure(ctx, e.layout.JS, bus.Config{})
	require.NoError(t, err)
	e.waitApplied("")
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&n))
	require.Equal(t, len(r.events)-1, n)
	require.Equal(t, uint64(1), p.Stats().DeadLettered.Load())
	st, err := e.layout.JS.Stream(ctx, "DEADLETTER")
	require.NoError(t, err)
	m, err := st.GetLastMsgForSubject(ctx, "deadletter.project.acme")
	require.NoError(t, err)
	require.Equal(t, bad.EventID, m.Header.Get("ce-id"))
}

// TestUnstorableCharacters: what Postgres refuses in valid events (U+0000
// in text and JSON, a lone surrogate escaped in JSON) is stored as U+FFFD;
// the events are applied, not dead-lettered, and the item's output and
// status are there.
func TestUnstorableCharacters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	r := fixture("acme")
	delta := r.events[2] // the first item.started: same session, turn and item
	delta.EventID = canonical.IDSpace{Tenant: "acme", Provider: canonical.ProviderCodex, SessionKey: "nul"}.Event(1, 0)
	delta.Payload = &canonical.ContentDelta{StreamKind: canonical.StreamCommandOutput, Delta: "a\x00b"}
	opened := *r.events[3].Payload.(*canonical.RequestOpened)
	opened.Args = json.RawMessage(`{"cmd":"cut \ud83d","nul":"\u0000"}`)
	r.events[3].Payload = &opened
	completed := *r.events[5].Payload.(*canonical.ItemCompleted)
	completed.Content = map[canonical.StreamKind]string{canonical.StreamCommandOutput: "a\x00b\x00"}
	r.events[5].Payload = &completed
	r.events = append(r.events[:3:3], append([]canonical.Event{delta}, r.events[3:]...)...)
	e.publish([]recording{r}, 1)
	p := e.start(project.Config{})
	e.waitApplied("")
	require.Zero(t, p.Stats().DeadLettered.Load())

	var logged int
	var stored, output, status, args string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&logged))
	require.Equal(t, len(r.events), logged)
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT data->'payload'->>'delta' FROM events WHERE event_id = $1`, delta.EventID).Scan(&stored))
	require.Equal(t, "a\uFFFDb", stored)
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT text_command_output, status FROM items WHERE item_id = $1`, delta.ItemID).Scan(&output, &status))
	require.Equal(t, "a\uFFFDb\uFFFD", output, "the completion's output is the item's, as Postgres can store it")
	require.Equal(t, string(canonical.ItemStatusCompleted), status)
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT args::text FROM requests WHERE request_id = $1`, r.events[4].RequestID).Scan(&args))
	require.JSONEq(t, `{"cmd":"cut \ufffd","nul":"\ufffd"}`, args)
}

// publishUndecodable publishes the fixture's events with an undecodable
// copy of its fourth one (its headers, a broken document) before it, and
// returns the fixture.
func publishUndecodable(e *env) recording {
	e.t.Helper()
	r := fixture("acme")
	e.publish([]recording{{events: r.events[:3]}}, 1)
	bad, err := wire.ToNATS(r.events[3])
	require.NoError(e.t, err)
	bad.Header.Del(bus.HeaderMsgID) // the stream would drop the good one after it
	bad.Data = []byte(`{"broken"`)
	_, err = e.layout.JS.PublishMsg(context.Background(), bad)
	require.NoError(e.t, err)
	e.publish([]recording{{events: r.events[3:]}}, 1)
	return r
}

// TestUndecodable: an event that does not decode goes to
// deadletter.project.<tenant> with the reason and its delivery ends there;
// the rest of its session is applied, and a projector started afterwards
// gets nothing again.
func TestUndecodable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	r := publishUndecodable(e)

	p, stop := e.run(project.Config{})
	e.waitApplied("")
	require.Equal(t, uint64(1), p.Stats().DeadLettered.Load())
	require.EqualValues(t, len(r.events), p.Stats().Applied.Load())
	st, err := e.layout.JS.Stream(ctx, "DEADLETTER")
	require.NoError(t, err)
	m, err := st.GetLastMsgForSubject(ctx, "deadletter.project.acme")
	require.NoError(t, err)
	require.Contains(t, m.Header.Get(bus.HeaderReason), "undecodable event")
	require.Equal(t, `{"broken"`, string(m.Data))
	stop()

	again := e.start(project.Config{})
	time.Sleep(500 * time.Millisecond)
	require.Zero(t, again.Stats().DeadLettered.Load()+again.Stats().Applied.Load()+again.Stats().Skipped.Load(),
		"a projector started afterwards got deliveries again")
}

// TestUndecodableDeadLetterFails: while an undecodable event cannot be
// dead-lettered (the DEADLETTER stream gone), its run starts over instead
// of acking past it (acks are cumulative); once it can, the event is
// dead-lettered and every other one applied once.
func TestUndecodableDeadLetterFails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	require.NoError(t, e.layout.JS.DeleteStream(ctx, "DEADLETTER"))
	r := publishUndecodable(e)

	p := e.start(project.Config{})
	require.Eventually(t, func() bool { return p.Stats().Restarts.Load() > 0 }, 60*time.Second, 50*time.Millisecond,
		"the run starts over while the event cannot be dead-lettered")
	_, err := bus.Ensure(ctx, e.layout.JS, bus.Config{})
	require.NoError(t, err)
	e.waitApplied("")
	require.Equal(t, uint64(1), p.Stats().DeadLettered.Load())
	require.EqualValues(t, len(r.events), p.Stats().Applied.Load(), "each event applied once")
}

// TestFoldPanic: a bug of the projector's own that panics on one event
// dead-letters that event with the reason; the projector keeps running
// and applies every other event.
func TestFoldPanic(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := fixture("acme")
	victim := r.events[4].EventID
	e.publish([]recording{r}, 1)
	p := e.start(project.WithFoldHook(project.Config{}, func(ev *canonical.Event) {
		if ev.EventID == victim {
			panic("a bug")
		}
	}))
	e.waitApplied("")
	require.Equal(t, uint64(1), p.Stats().DeadLettered.Load())
	require.EqualValues(t, len(r.events)-1, p.Stats().Applied.Load())
	require.Zero(t, p.Stats().Restarts.Load())

	st, err := e.layout.JS.Stream(context.Background(), "DEADLETTER")
	require.NoError(t, err)
	m, err := st.GetLastMsgForSubject(context.Background(), "deadletter.project.acme")
	require.NoError(t, err)
	require.Equal(t, victim, m.Header.Get("ce-id"))
	require.Contains(t, m.Header.Get("Agentwire-Reason"), "projector bug")
	require.Contains(t, m.Header.Get("Agentwire-Reason"), "a bug")
}
