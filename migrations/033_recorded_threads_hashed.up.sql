-- The views that leave out a codex exec run's rows when a rollout or
-- app-server session describes its thread (030) asked
-- exec_run_of_recorded_thread for every codex-exec row. A SQL function
-- with a sub-select is never inlined, so each row paid a function call
-- and its two lookups: with 200k codex-exec ledger rows (threads of three
-- turns, as CI runs of codex exec make), usage_priced took 3.7 s where the
-- same rows of rollout sessions took 0.3 s, and turns_once 4.4 s (031
-- writes turns_once so already).
--
-- The same test, written in the views as NOT EXISTS, is one the planner
-- can hash: it reads the recorded threads once per query, and only when a
-- codex-exec row asks (OR evaluates its arms in order), so a database
-- without codex exec rows pays nothing. Same rows and columns; the
-- function stays, for ad-hoc queries.

CREATE OR REPLACE VIEW tool_calls_by_tool WITH (security_invoker = true) AS
SELECT i.tenant_id, i.provider, coalesce(i.tool_name, i.item_type) AS tool,
       count(*) AS calls,
       count(*) FILTER (WHERE i.status = 'completed' AND coalesce(i.exit_code, 0) = 0) AS succeeded,
       count(*) FILTER (WHERE i.status IN ('failed', 'declined') OR i.exit_code <> 0) AS failed,
       round(count(*) FILTER (WHERE i.status = 'completed' AND coalesce(i.exit_code, 0) = 0)::numeric
             / nullif(count(*) FILTER (WHERE i.status IS DISTINCT FROM 'inProgress'), 0), 4) AS success_rate,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY coalesce(i.duration_ms, stated_span_ms(i.started_at, i.completed_at, i.started_at_ingested, i.completed_at_ingested))))::numeric, 3) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY coalesce(i.duration_ms, stated_span_ms(i.started_at, i.completed_at, i.started_at_ingested, i.completed_at_ingested))))::numeric, 3) AS p95_ms
FROM items i
LEFT JOIN sessions s ON s.tenant_id = i.tenant_id AND s.session_id = i.session_id
WHERE (i.tool_name IS NOT NULL
       OR i.item_type IN ('command_execution', 'file_change', 'mcp_tool_call', 'dynamic_tool_call',
                          'collab_agent_tool_call', 'web_search', 'image_view'))
  AND i.by_user IS NOT TRUE
  AND (s.dialect IS DISTINCT FROM 'codex-exec' OR i.thread_id IS NULL
       OR NOT EXISTS (SELECT FROM turns o JOIN sessions os ON os.tenant_id = o.tenant_id AND os.session_id = o.session_id
                      WHERE o.tenant_id = i.tenant_id AND o.thread_id = i.thread_id
                        AND os.dialect IN ('codex-rollout', 'codex-app-server')))
GROUP BY 1, 2, 3;

CREATE OR REPLACE VIEW usage_priced WITH (security_invoker = true) AS
SELECT u.tenant_id, u.turn_id, u.model, u.provider, u.session_id, u.thread_id, u.occurred_at,
       t.input_tokens, t.cached_input_tokens, t.cache_write_input_tokens, t.output_tokens,
       t.reasoning_output_tokens, u.cost_usd, u.usage_key,
       p.model AS priced_as,
       c.priced_cost_usd,
       coalesce(u.cost_usd, c.priced_cost_usd) AS estimated_cost_usd,
       u.provisional
FROM usage_ledger u
LEFT JOIN sessions s ON s.tenant_id = u.tenant_id AND s.session_id = u.session_id
LEFT JOIN exec_runs k ON k.tenant_id = u.tenant_id AND k.thread_id = u.thread_id AND k.session_id = u.session_id
    AND k.first_turn = u.turn_id AND k.carried_total < k.first_total
CROSS JOIN LATERAL (
    SELECT greatest(u.input_tokens - coalesce(k.carried_input_tokens, 0), 0) AS input_tokens,
           greatest(u.cached_input_tokens - coalesce(k.carried_cached_input_tokens, 0), 0) AS cached_input_tokens,
           greatest(u.cache_write_input_tokens - coalesce(k.carried_cache_write_input_tokens, 0), 0) AS cache_write_input_tokens,
           greatest(u.output_tokens - coalesce(k.carried_output_tokens, 0), 0) AS output_tokens,
           greatest(u.reasoning_output_tokens - coalesce(k.carried_reasoning_output_tokens, 0), 0) AS reasoning_output_tokens
) t
LEFT JOIN LATERAL (
    SELECT * FROM model_prices mp
    WHERE mp.model = price_model_name(u.model)
      AND mp.tenant_id IN ('', u.tenant_id) AND mp.provider IN ('', u.provider)
      AND mp.valid_from <= u.occurred_at
    ORDER BY mp.tenant_id DESC, mp.provider DESC, mp.valid_from DESC
    LIMIT 1
) p ON true
CROSS JOIN LATERAL (
    SELECT CASE WHEN t.input_tokens + t.cached_input_tokens + t.cache_write_input_tokens + t.output_tokens = 0 THEN 0
        ELSE trim_scale((t.input_tokens * p.input_usd_per_mtok
            + t.cached_input_tokens * coalesce(p.cached_input_usd_per_mtok, p.input_usd_per_mtok)
            + t.cache_write_input_tokens * coalesce(p.cache_write_usd_per_mtok, p.input_usd_per_mtok)
            + t.output_tokens * p.output_usd_per_mtok) / 1000000)
    END AS priced_cost_usd
) c
WHERE s.dialect IS DISTINCT FROM 'codex-exec' OR u.thread_id IS NULL
       OR NOT EXISTS (SELECT FROM turns o JOIN sessions os ON os.tenant_id = o.tenant_id AND os.session_id = o.session_id
                      WHERE o.tenant_id = u.tenant_id AND o.thread_id = u.thread_id
                        AND os.dialect IN ('codex-rollout', 'codex-app-server'));
