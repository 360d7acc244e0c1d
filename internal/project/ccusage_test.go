package project_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/project"
)

// ccusageTotals are the token counts ccusage prints for a session, a day
// or a model of a day.
type ccusageTotals struct {
	Input       int64 `json:"inputTokens"`
	CacheRead   int64 `json:"cacheReadTokens"`
	CacheCreate int64 `json:"cacheCreationTokens"`
	Output      int64 `json:"outputTokens"`
	Reasoning   int64 `json:"reasoningOutputTokens"`
	Total       int64 `json:"totalTokens"`
	// The cost, in US dollars, as ccusage prices the tokens: named cost
	// in a Claude model row, totalCost in other Claude rows, costUSD in
	// Codex rows (whose model rows have none).
	Cost      float64 `json:"cost"`
	TotalCost float64 `json:"totalCost"`
	CostUSD   float64 `json:"costUSD"`
}

// tokens is t without its cost.
func (t ccusageTotals) tokens() ccusageTotals {
	t.Cost, t.TotalCost, t.CostUSD = 0, 0, 0
	return t
}

// usd is t's cost, whichever name it had.
func (t ccusageTotals) usd() float64 { return t.Cost + t.TotalCost + t.CostUSD }

// ccusageModels are a report's rows per model: Claude reports list them,
// Codex reports map them by name.
type ccusageModels map[string]ccusageTotals

func (m *ccusageModels) UnmarshalJSON(b []byte) error {
	var list []struct {
		ccusageTotals
		Model string `json:"modelName"`
	}
	if json.Unmarshal(b, &list) == nil {
		*m = ccusageModels{}
		for _, t := range list {
			// A Claude model row has no total.
			t.Total = t.Input + t.CacheRead + t.CacheCreate + t.Output
			(*m)[t.Model] = t.ccusageTotals
		}
		return nil
	}
	return json.Unmarshal(b, (*map[string]ccusageTotals)(m))
}

// ccusageRecord is testdata/ccusage/ccusage.json: what ccusage printed for
// each Claude Code session log and Codex rollout log, recorded by
// testdata/ccusage/record.sh.
type ccusageRecord struct {
	Version string `json:"ccusage"`
	Logs    map[string]struct {
		Session struct {
			Sessions []struct {
				ccusageTotals
				Claude ccusageModels `json:"modelBreakdowns"`
				Codex  ccusageModels `json:"models"`
			} `json:"sessions"`
			Totals ccusageTotals `json:"totals"`
		} `json:"session"`
		Daily struct {
			Daily []struct {
				ccusageTotals
				Date   string        `json:"date"`
				Claude ccusageModels `json:"modelBreakdowns"`
				Codex  ccusageModels `json:"models"`
			} `json:"daily"`
		} `json:"daily"`
	} `json:"logs"`
}

// TestCCUsage: for Claude Code's session logs and Codex's rollout logs,
// the usage views give the token counts ccusage prints for the same logs,
// per session and per day and model (UTC days): the recordings, and a
// Claude log derived from one with cache writes, a repeated message line,
// and a second turn on the next day with another model. Each log is its
// own tenant, as ccusage was run on each log alone (see record.sh for
// why).
//
// Cost: neither log states one, so cost_usd is NULL; ccusage prices the
// tokens from its own table of list prices (LiteLLM's, in the version
// recorded), and estimated_cost_usd, the tokens at model_prices, must
// come to the same dollars per session, per day and per model of a day.
func TestCCUsage(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/ccusage/ccusage.json")
	require.NoError(t, err)
	var rec ccusageRecord
	require.NoError(t, json.Unmarshal(b, &rec))
	require.NotEmpty(t, rec.Logs)

	tenantOf := func(name string) string { return "cc-" + strings.ReplaceAll(name, "/", "-") }
	var recs []recording
	names := make([]string, 0, len(rec.Logs))
	for name := range rec.Logs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join("../../testdata/recordings", name+".jsonl")
		if strings.HasPrefix(name, "ccusage/") {
			path = filepath.Join("testdata", name+".jsonl")
		}
		dialect := "claude-log"
		if strings.HasPrefix(name, "codex-rollout/") {
			dialect = "codex-rollout"
		}
		r, ok := mapAs(t, dialect, tenantOf(name), path, "ccusage/"+name)
		require.True(t, ok)
		recs = append(recs, r)
	}
	e := newEnv(t)
	e.publish(recs, 1)
	e.start(project.Config{})
	e.waitApplied("")

	ctx := context.Background()
	// sums returns the views' token counts, and their estimated cost as
	// Cost: compare it with usd(), the rest with tokens().
	sums := func(sql string, args ...any) ccusageTotals {
		t.Helper()
		var got ccusageTotals
		var unpriced int
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT coalesce(sum(input_tokens), 0), coalesce(sum(cached_input_tokens), 0),
			coalesce(sum(cache_write_input_tokens), 0), coalesce(sum(output_tokens), 0), coalesce(sum(reasoning_output_tokens), 0),
			coalesce(sum(total_tokens), 0), coalesce(sum(estimated_cost_usd), 0)::float8, coalesce(sum(unpriced_turns), 0) FROM `+sql, args...).
			Scan(&got.Input, &got.CacheRead, &got.CacheCreate, &got.Output, &got.Reasoning, &got.Total, &got.Cost, &unpriced))
		require.Zero(t, unpriced, "turns of a model without a price: %s %v", sql, args)
		return got
	}
	// ccusage adds floating-point dollars (0.020805000000000004); the
	// views' are exact.
	sameCost := func(want float64, got ccusageTotals, msg ...any) {
		t.Helper()
		require.InDelta(t, want, got.Cost, 1e-12, msg...)
	}
	days := 0
	for _, name := range names {
		log, tenant := rec.Logs[name], tenantOf(name)
		// Per session.
		got := sums(`usage_by_session WHERE tenant_id = $1`, tenant)
		require.Equal(t, log.Session.Totals.tokens(), got.tokens(), name)
		sameCost(log.Session.Totals.usd(), got, name)
		var perSession float64
		for _, s := range log.Session.Sessions {
			perSession += s.usd()
		}
		sameCost(perSession, got, "%s: the sessions' costs", name)
		var sessions int
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(*) FROM usage_by_session WHERE tenant_id = $1 AND total_tokens > 0`, tenant).Scan(&sessions))
		require.Len(t, log.Session.Sessions, sessions, "%s: sessions that used tokens", name)
		for _, s := range log.Session.Sessions {
			var models []string
			require.NoError(t, e.pool.QueryRow(ctx, `SELECT coalesce(array_agg(DISTINCT model ORDER BY model), '{}') FROM usage_ledger
				WHERE tenant_id = $1 AND input_tokens + cached_input_tokens + cache_write_input_tokens + output_tokens > 0`, tenant).Scan(&models))
			used := slices.Sorted(maps.Keys(s.Claude))
			if s.Codex != nil {
				used = slices.Sorted(maps.Keys(s.Codex))
			}
			require.Equal(t, used, models, name)
		}
		// Per day and model.
		want := []string{}
		for _, d := range log.Daily.Daily {
			byModel := d.Claude
			if d.Codex != nil {
				byModel = d.Codex
			}
			sameCost(d.usd(), sums(`usage_by_day WHERE tenant_id = $1 AND day = $2::date`, tenant, d.Date), "%s: %s", name, d.Date)
			for model, m := range byModel {
				days++
				want = append(want, d.Date+" "+model)
				got := sums(`usage_by_day WHERE tenant_id = $1 AND day = $2::date AND model = $3`, tenant, d.Date, model)
				require.Equal(t, m.tokens(), got.tokens(), "%s: %s %s", name, d.Date, model)
				if d.Claude != nil {
					sameCost(m.usd(), got, "%s: %s %s", name, d.Date, model)
				}
			}
		}
		var have []string
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT coalesce(array_agg(day::text || ' ' || model ORDER BY day, model), '{}') FROM usage_by_day
			WHERE tenant_id = $1 AND total_tokens > 0`, tenant).Scan(&have))
		sort.Strings(want)
		require.Equal(t, want, have, "%s: days and models that used tokens", name)
		// Cost: not stated by the logs, so not given; only estimated.
		var costs, estimates int
		require.NoError(t, e.pool.QueryRow(ctx, `SELECT count(cost_usd), count(estimated_cost_usd) FROM usage_by_day WHERE tenant_id = $1`, tenant).Scan(&costs, &estimates))
		require.Zero(t, costs, "%s: a cost the log does not state", name)
		if log.Session.Totals.Total > 0 {
			require.Positive(t, estimates, "%s: no estimate", name)
		}
	}
	require.GreaterOrEqual(t, days, 14, "too few days compared")
}
