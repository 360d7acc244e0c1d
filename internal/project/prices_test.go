package project_test

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/internal/project"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// pricedTurn is one turn of pricedSession: its model, tokens, the cost
// the provider states (nil: none) and when it ended.
type pricedTurn struct {
	model string
	usage canonical.TokenUsage
	cost  *float64
	at    time.Time
}

// pricedSession is a session of provider in tenant made of turns.
func pricedSession(tenant string, provider canonical.Provider, key string, turns []pricedTurn) recording {
	ids := canonical.IDSpace{Tenant: tenant, Provider: provider, SessionKey: key}
	sid := ids.IngestSession()
	var evs []canonical.Event
	add := func(at time.Time, turn string, p canonical.Payload) {
		evs = append(evs, canonical.Event{
			EventID: ids.Event(uint64(len(evs)+1), 0), Tenant: tenant, Provider: provider, SessionID: sid,
			CreatedAt: at, TurnID: turn, MappingVersion: "prices/1", Payload: p,
		})
	}
	for i, tr := range turns {
		tid := ids.Derived(canonical.EntityTurn, uint64(i+1), 0)
		u := tr.usage
		add(tr.at.Add(-time.Second), tid, &canonical.TurnStarted{Model: tr.model})
		add(tr.at, tid, &canonical.TurnCompleted{State: canonical.TurnStateCompleted, Usage: &u, TotalCostUSD: tr.cost})
	}
	return recording{name: "prices/" + tenant + "/" + key, events: evs}
}

// TestModelPrices: the usage views price the tokens a provider states no
// cost for at model_prices: by the model's name without its release
// date, at the price of the turn's day, a tenant's own price before the
// list price and a provider's before every provider's; a stated cost is
// kept; a model without a price is counted as unpriced and listed, and
// its tokens are not priced as another model's; no tokens cost nothing.
// Analysts read the list prices and their own tenant's, not another's,
// and a rebuild keeps the prices.
func TestModelPrices(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := e.pool.Exec(ctx, sql, args...)
		require.NoError(t, err, sql)
	}
	day1 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	day2 := day1.Add(48 * time.Hour)
	// From day2 on, acme pays less for Sonnet; Cursor bills gpt-5 its own
	// way for everybody; globex has a price of its own, which acme must
	// not see.
	exec(`INSERT INTO model_prices (tenant_id, model, valid_from, input_usd_per_mtok, cached_input_usd_per_mtok, cache_write_usd_per_mtok, output_usd_per_mtok, source)
		VALUES ('acme', 'claude-sonnet-4-5', $1, 2, 0.2, 2.5, 10, 'acme contract'),
		       ('globex', 'claude-sonnet-4-5', '-infinity', 1, 0.1, 1, 1, 'globex contract')`, day2)
	exec(`INSERT INTO model_prices (provider, model, input_usd_per_mtok, output_usd_per_mtok) VALUES ('cursor', 'gpt-5', 1, 1)`)

	stated := 0.5
	sonnet := canonical.TokenUsage{InputTokens: 1000, CachedInputTokens: 10000, CacheWriteInputTokens: 2000, OutputTokens: 500, ReasoningOutputTokens: 100}
	gpt := canonical.TokenUsage{InputTokens: 2000, CachedInputTokens: 4000, OutputTokens: 100, ReasoningOutputTokens: 40}
	recs := []recording{
		pricedSession("acme", canonical.ProviderClaude, "claude", []pricedTurn{
			{model: "claude-sonnet-4-5-20250929", usage: sonnet, at: day1},
			{model: "claude-sonnet-4-5-20250929", usage: sonnet, at: day2},
			{model: "claude-sonnet-4-5", usage: sonnet, cost: &stated, at: day2.Add(time.Hour)},
			{model: "<synthetic>", at: day2.Add(2 * time.Hour)},
		}),
		pricedSession("acme", canonical.ProviderCodex, "codex", []pricedTurn{
			{model: "gpt-5", usage: gpt, at: day1},
			// Named like a priced model, but another one.
			{model: "gpt-5-turbo-preview", usage: gpt, at: day1},
		}),
		pricedSession("acme", canonical.ProviderCursor, "cursor", []pricedTurn{{model: "gpt-5", usage: gpt, at: day1}}),
		pricedSession("globex", canonical.ProviderClaude, "claude", []pricedTurn{{model: "claude-sonnet-4-5", usage: sonnet, at: day1}}),
	}
	e.publish(recs, 1)
	_, stop := e.run(project.Config{})
	e.waitApplied("")

	// Per turn, as Postgres prints them.
	perTurn := func() map[string]string {
		t.Helper()
		prices := map[string]string{}
		rows, err := e.pool.Query(ctx, `SELECT provider || ' ' || model || ' ' || occurred_at::date, coalesce(priced_as, '-'),
		coalesce(priced_cost_usd::text, '-'), coalesce(estimated_cost_usd::text, '-')
		FROM usage_priced WHERE tenant_id = 'acme' AND cost_usd IS NULL`)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var turn, as, priced, estimated string
			require.NoError(t, rows.Scan(&turn, &as, &priced, &estimated))
			require.Equal(t, priced, estimated, "%s: no stated cost, so the estimate is the price", turn)
			prices[turn] = as + " " + priced
		}
		require.NoError(t, rows.Err())
		return prices
	}
	want := map[string]string{
		// 1000 × 3 + 10000 × 0.3 + 2000 × 3.75 + 500 × 15, per million.
		"claude claude-sonnet-4-5-20250929 2026-05-04": "claude-sonnet-4-5 0.021",
		// acme's own price from day2: 1000 × 2 + 10000 × 0.2 + 2000 × 2.5 + 500 × 10.
		"claude claude-sonnet-4-5-20250929 2026-05-06": "claude-sonnet-4-5 0.014",
		"claude <synthetic> 2026-05-06":                "- 0",
		// 2000 × 1.25 + 4000 × 0.125 + 100 × 10 (reasoning is output).
		"codex gpt-5 2026-05-04":               "gpt-5 0.004",
		"codex gpt-5-turbo-preview 2026-05-04": "- -",
		// Cursor's price, cached tokens at the input price: (2000 + 4000) × 1 + 100 × 1.
		"cursor gpt-5 2026-05-04": "gpt-5 0.0061",
	}
	require.Equal(t, want, perTurn())

	var cost, estimated string
	var unpriced int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT cost_usd::text, estimated_cost_usd::text, unpriced_turns FROM usage_by_day
		WHERE tenant_id = 'acme' AND day = $1::date AND model = 'claude-sonnet-4-5'`, day2).Scan(&cost, &estimated, &unpriced))
	require.Equal(t, []string{"0.5", "0.5"}, []string{cost, estimated}, "a stated cost is the estimate")
	require.Zero(t, unpriced)
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT sum(estimated_cost_usd)::text, sum(unpriced_turns) FROM usage_by_month
		WHERE tenant_id = 'acme' AND provider = 'codex'`).Scan(&estimated, &unpriced))
	require.Equal(t, "0.004", estimated, "what is priced is summed")
	require.Equal(t, 1, unpriced, "and what is not, counted")
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT estimated_cost_usd::text FROM usage_by_session s
		JOIN sessions USING (tenant_id, session_id) WHERE s.tenant_id = 'acme' AND s.provider = 'claude'`).Scan(&estimated))
	require.Equal(t, "0.535", estimated, "0.021 + 0.014 + 0.5 + 0")
	var unpricedModels []string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT array_agg(tenant_id || ' ' || provider || ' ' || model || ' ' || turns || ' ' || total_tokens)
		FROM unpriced_models`).Scan(&unpricedModels))
	require.Equal(t, []string{"acme codex gpt-5-turbo-preview 1 6100"}, unpricedModels, "no tokens need no price")

	// An analyst of acme: the list prices and acme's, not globex's.
	tx, err := e.pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `SET LOCAL ROLE agentwire_analyst; SELECT set_config('agentwire.tenant', 'acme', true)`)
	require.NoError(t, err)
	var list, own, others int
	require.NoError(t, tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE tenant_id = ''), count(*) FILTER (WHERE tenant_id = 'acme'),
		count(*) FILTER (WHERE tenant_id NOT IN ('', 'acme')) FROM model_prices`).Scan(&list, &own, &others))
	require.Greater(t, list, 10)
	require.Equal(t, []int{1, 0}, []int{own, others})
	require.NoError(t, tx.QueryRow(ctx, `SELECT estimated_cost_usd::text FROM usage_by_day WHERE provider = 'codex' AND model = 'gpt-5'`).Scan(&estimated))
	require.Equal(t, "0.004", estimated, "the analyst's estimate is the owner's")
	require.NoError(t, tx.Rollback(ctx))

	// Refused: a model named with its release date (it would never be
	// looked up), a negative price.
	for _, bad := range []string{
		`INSERT INTO model_prices (model, input_usd_per_mtok, output_usd_per_mtok) VALUES ('claude-opus-4-1-20250805', 15, 75)`,
		`INSERT INTO model_prices (model, input_usd_per_mtok, output_usd_per_mtok) VALUES ('x', -1, 1)`,
	} {
		_, err := e.pool.Exec(ctx, bad)
		require.Error(t, err, bad)
	}

	// A rebuild keeps the prices an operator wrote: the same estimates.
	stop()
	_, err = project.New(e.pool, e.layout, project.Config{}, quiet()).PrepareRebuild(ctx)
	require.NoError(t, err)
	var n int
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM usage_ledger`).Scan(&n))
	require.Zero(t, n)
	e.start(project.Config{})
	e.waitApplied("")
	require.Equal(t, want, perTurn())
}

// TestPricesAgreeWithStatedCosts: where Claude states what a turn cost
// per model (its stream's result frame), the turn's tokens at
// model_prices come to the same dollars, in the recordings and in the
// public transcripts of real runs (when ../shared is there): the list
// prices are the ones the provider charges. Server-side web searches
// ($10 per thousand) are in the stated cost and not in the price (the
// ledger keeps tokens): they are taken off, from the event's own count.
func TestPricesAgreeWithStatedCosts(t *testing.T) {
	t.Parallel()
	recs := recordings(t, "acme")
	corpus, err := filepath.Glob("../../../shared/corpus/claude-stream/*.jsonl")
	require.NoError(t, err)
	for _, path := range corpus {
		r, ok := mapAs(t, "claude-stream", "corpus", path, "corpus/"+filepath.Base(path))
		require.True(t, ok, path)
		recs = append(recs, r)
	}
	e := newEnv(t)
	e.publish(recs, 1)
	e.start(project.Config{})
	e.waitApplied("")
	rows, err := e.pool.Query(context.Background(), `SELECT u.tenant_id, u.model, price_model_name(u.model), u.cost_usd::float8, u.priced_cost_usd::float8,
			coalesce((SELECT sum((ev.data #>> ARRAY['payload', 'modelUsage', u.model, 'webSearchRequests'])::int8)
			          FROM events ev WHERE ev.tenant_id = u.tenant_id AND ev.turn_id = u.turn_id AND ev.type = 'turn.completed'), 0)
		FROM usage_priced u
		WHERE u.cost_usd IS NOT NULL AND u.input_tokens + u.cached_input_tokens + u.cache_write_input_tokens + u.output_tokens > 0`)
	require.NoError(t, err)
	defer rows.Close()
	compared := map[string]int{}
	searched := 0
	for rows.Next() {
		var tenant, model, priceName string
		var stated float64
		var priced *float64
		var searches int64
		require.NoError(t, rows.Scan(&tenant, &model, &priceName, &stated, &priced, &searches))
		require.NotNil(t, priced, "%s has no price", model)
		require.InDelta(t, stated-float64(searches)*10/1000, *priced, 1e-9, "%s %s", tenant, model)
		compared[tenant+" "+priceName]++
		if searches > 0 {
			searched++
		}
	}
	require.NoError(t, rows.Err())
	require.GreaterOrEqual(t, compared["acme claude-sonnet-4-5"], 15, "too few stated costs compared: %v", compared)
	if len(corpus) > 0 {
		for _, m := range []string{"claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5"} {
			require.Positive(t, compared["corpus "+m], "no stated cost of %s in the transcripts: %v", m, compared)
		}
		require.Positive(t, searched, "no turn with web searches in the transcripts")
	}
}

// TestCommandLineModel: codex exec never names its model; the model its
// command line names (ingest's model frame, first in the session) prices
// its turns.
func TestCommandLineModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	lines := adaptertest.ReadLines(t, "../../testdata/recordings/codex-exec/plain.jsonl")
	lines = append([][]byte{[]byte(`{"agentwire":"model","model":"gpt-5.1-codex"}`)}, lines...)
	e.publish([]recording{mapLinesAs(t, "codex-exec", "acme", "codex-exec/plain", "exec:codex:1", lines)}, 1)
	e.start(project.Config{})
	e.waitApplied("")

	var model, pricedAs, sessionModel string
	var cost *float64
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT u.model, u.priced_as, u.estimated_cost_usd::float8, s.model FROM usage_priced u
		JOIN sessions s USING (tenant_id, session_id) WHERE u.tenant_id = 'acme'`).Scan(&model, &pricedAs, &cost, &sessionModel))
	require.Equal(t, "gpt-5.1-codex", model)
	require.Equal(t, "gpt-5.1-codex", pricedAs)
	require.Equal(t, "gpt-5.1-codex", sessionModel)
	require.NotNil(t, cost)
	require.Positive(t, *cost)
}

// TestExecResumedRuns: each codex exec run captured in an ingest session
// of its own, the second resuming the first's thread (the two-turns
// recording cut where the second run starts). The second run reports
// the thread's running count; its turn counts only its own tokens, and
// the thread sums to codex's count.
func TestExecResumedRuns(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	lines := adaptertest.ReadLines(t, "../../testdata/recordings/codex-exec/two-turns.jsonl")
	second := 1 + slices.IndexFunc(lines[1:], func(l []byte) bool { return bytes.Contains(l, []byte(`"thread.started"`)) })
	require.Positive(t, second)
	// Session keys that make the first run the smaller session id, so it
	// owns the thread's row: the thread's usage must still be the second
	// run's count, the greater.
	var keys [2]string
	for k := 0; keys[0] == ""; k++ {
		a, b := "exec:codex:a"+strconv.Itoa(k), "exec:codex:b"+strconv.Itoa(k)
		id := func(key string) string {
			return canonical.IDSpace{Tenant: "acme", Provider: canonical.ProviderCodex, SessionKey: key}.IngestSession()
		}
		if id(a) < id(b) {
			keys = [2]string{a, b}
		}
	}
	var recs []recording
	for i, run := range [][][]byte{lines[:second], lines[second:]} {
		recs = append(recs, mapLinesAs(t, "codex-exec", "acme", "codex-exec/two-turns", keys[i], run))
	}
	e.publish(recs, 1)
	e.start(project.Config{})
	e.waitApplied("")

	// codex's counts: 1200 in, 5 out; then 2500 in (1200 cached), 13 out.
	// Each run's own tokens, per session, in the usage and in the turns
	// counted once.
	want := map[string]canonical.TokenUsage{
		recs[0].events[0].SessionID: {InputTokens: 1200, OutputTokens: 5},
		recs[1].events[0].SessionID: {InputTokens: 100, CachedInputTokens: 1200, OutputTokens: 8},
	}
	for _, view := range []string{"usage_priced", "turns_once"} {
		rows, err := e.pool.Query(ctx, `SELECT session_id, input_tokens, cached_input_tokens, output_tokens FROM `+view+` WHERE tenant_id = 'acme'`)
		require.NoError(t, err)
		got := map[string]canonical.TokenUsage{}
		for rows.Next() {
			var sid string
			var u canonical.TokenUsage
			require.NoError(t, rows.Scan(&sid, &u.InputTokens, &u.CachedInputTokens, &u.OutputTokens))
			got[sid] = u
		}
		require.NoError(t, rows.Err())
		require.Equal(t, want, got, view)
	}
	var ledger int64
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT sum(input_tokens) FROM usage_ledger WHERE tenant_id = 'acme'`).Scan(&ledger))
	require.Equal(t, int64(2500), ledger, "the ledger keeps what the events said")
	var thread canonical.TokenUsage
	var owner string
	require.NoError(t, e.pool.QueryRow(ctx, `SELECT input_tokens, cached_input_tokens, output_tokens, session_id FROM threads WHERE tenant_id = 'acme'`).Scan(
		&thread.InputTokens, &thread.CachedInputTokens, &thread.OutputTokens, &owner))
	require.Equal(t, recs[0].events[0].SessionID, owner)
	require.Equal(t, canonical.TokenUsage{InputTokens: 1300, CachedInputTokens: 1200, OutputTokens: 13}, thread, "the thread's usage is codex's count")
}
