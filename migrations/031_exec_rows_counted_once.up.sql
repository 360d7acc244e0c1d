-- The rows of codex exec runs, counted once and as their own (030 made
-- the rule; this makes it read fast and live in one place).
--
-- codex_recorded_turns is the turns of Codex threads a rollout or
-- app-server session describes: where such a thread also has codex exec
-- rows, those rows are left out of what counts turns, calls and tokens.
-- 030's views asked exec_run_of_recorded_thread for every codex-exec row.
-- A SQL function with a sub-select is never inlined: each row paid a call
-- and its lookups, about 17 us, so with 200k codex-exec ledger rows in
-- threads of three turns (as CI runs of codex exec make them) usage_priced
-- took 3.7 s where the same rows of rollout sessions took 0.3 s, and
-- turns_once 4.4 s against 0.9 s. The views now ask it as a NOT EXISTS on
-- codex_recorded_turns, which the planner hashes, building the hash only
-- when a codex-exec row asks (OR evaluates its arms in order): 0.8 s and
-- 1.4 s, and a database without codex exec rows pays nothing.
--
-- usage_counted is the ledger rows that count, each with its own tokens:
-- the first row of a run resumed in an ingest session of its own less the
-- count the earlier run left (exec_runs, 030). usage_priced prices it. The
-- price lookup was restated with every change to which rows count (011,
-- 022, 030); it now reads usage_counted, where such changes go.
--
-- turns_once's token columns are the turn's own in the same way: it kept
-- the carried count, so a thread resumed n times showed its first turn's
-- tokens n + 1 times to whoever summed turns. exec_runs is joined before
-- the sort DISTINCT ON needs: joined after it, every turn was sorted a
-- second time. turns and usage_ledger keep what the events said.
--
-- The views keep their rows and columns.
CREATE VIEW codex_recorded_turns WITH (security_invoker = true) AS
SELECT o.tenant_id, o.thread_id, o.turn_id, o.session_id
FROM turns o
JOIN sessions os ON os.tenant_id = o.tenant_id AND os.session_id = o.session_id
WHERE o.thread_id IS NOT NULL AND os.dialect IN ('codex-rollout', 'codex-app-server');

-- 030's function, for ad-hoc queries, on the same view.
CREATE OR REPLACE FUNCTION exec_run_of_recorded_thread(p_tenant text, p_session uuid, p_thread uuid) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT p_thread IS NOT NULL
       AND EXISTS (SELECT FROM sessions s
                   WHERE s.tenant_id = p_tenant AND s.session_id = p_session AND s.dialect = 'codex-exec')
       AND EXISTS (SELECT FROM codex_recorded_turns o WHERE o.tenant_id = p_tenant AND o.thread_id = p_thread)
$$;

CREATE VIEW usage_counted WITH (security_invoker = true) AS
SELECT u.tenant_id, u.turn_id, u.model, u.provider, u.session_id, u.thread_id, u.occurred_at,
       t.input_tokens, t.cached_input_tokens, t.cache_write_input_tokens, t.output_tokens,
       t.reasoning_output_tokens, u.cost_usd, u.usage_key, u.provisional
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
WHERE s.dialect IS DISTINCT FROM 'codex-exec' OR u.thread_id IS NULL
       OR NOT EXISTS (SELECT FROM codex_recorded_turns o WHERE o.tenant_id = u.tenant_id AND o.thread_id = u.thread_id);

CREATE OR REPLACE VIEW usage_priced WITH (security_invoker = true) AS
SELECT u.tenant_id, u.turn_id, u.model, u.provider, u.session_id, u.thread_id, u.occurred_at,
       u.input_tokens, u.cached_input_tokens, u.cache_write_input_tokens, u.output_tokens,
       u.reasoning_output_tokens, u.cost_usd, u.usage_key,
       p.model AS priced_as,
       c.priced_cost_usd,
       coalesce(u.cost_usd, c.priced_cost_usd) AS estimated_cost_usd,
       u.provisional
FROM usage_counted u
LEFT JOIN LATERAL (
    SELECT * FROM model_prices mp
    WHERE mp.model = price_model_name(u.model)
      AND mp.tenant_id IN ('', u.tenant_id) AND mp.provider IN ('', u.provider)
      AND mp.valid_from <= u.occurred_at
    ORDER BY mp.tenant_id DESC, mp.provider DESC, mp.valid_from DESC
    LIMIT 1
) p ON true
CROSS JOIN LATERAL (
    SELECT CASE WHEN u.input_tokens + u.cached_input_tokens + u.cache_write_input_tokens + u.output_tokens = 0 THEN 0
        ELSE trim_scale((u.input_tokens * p.input_usd_per_mtok
            + u.cached_input_tokens * coalesce(p.cached_input_usd_per_mtok, p.input_usd_per_mtok)
            + u.cache_write_input_tokens * coalesce(p.cache_write_usd_per_mtok, p.input_usd_per_mtok)
            + u.output_tokens * p.output_usd_per_mtok) / 1000000)
    END AS priced_cost_usd
) c;

CREATE OR REPLACE VIEW turns_once WITH (security_invoker = true) AS
SELECT DISTINCT ON (r.tenant_id, turn_key(r.tenant_id, r.thread_id, r.provider_turn_id, r.turn_id))
       r.tenant_id, r.turn_id, r.session_id, r.thread_id, r.provider, r.state, r.model, r.effort,
       r.started_at, r.ended_at, r.stop_reason, r.error_message, r.error_class,
       CASE WHEN k.session_id IS NULL THEN r.input_tokens
            ELSE greatest(r.input_tokens - k.carried_input_tokens, 0) END AS input_tokens,
       CASE WHEN k.session_id IS NULL THEN r.cached_input_tokens
            ELSE greatest(r.cached_input_tokens - k.carried_cached_input_tokens, 0) END AS cached_input_tokens,
       CASE WHEN k.session_id IS NULL THEN r.cache_write_input_tokens
            ELSE greatest(r.cache_write_input_tokens - k.carried_cache_write_input_tokens, 0) END AS cache_write_input_tokens,
       CASE WHEN k.session_id IS NULL THEN r.output_tokens
            ELSE greatest(r.output_tokens - k.carried_output_tokens, 0) END AS output_tokens,
       CASE WHEN k.session_id IS NULL THEN r.reasoning_output_tokens
            ELSE greatest(r.reasoning_output_tokens - k.carried_reasoning_output_tokens, 0) END AS reasoning_output_tokens,
       r.cost_usd, r.duration_ms, r.plan, r.plan_explanation, r.diff, r.updated_at,
       r.session_columns, r.provider_turn_id, r.started_at_ingested, r.ended_at_ingested
FROM turns_read r
LEFT JOIN sessions s ON s.tenant_id = r.tenant_id AND s.session_id = r.session_id
LEFT JOIN exec_runs k ON k.tenant_id = r.tenant_id AND k.thread_id = r.thread_id AND k.session_id = r.session_id
    AND k.first_turn = r.turn_id AND k.carried_total < k.first_total
WHERE s.dialect IS DISTINCT FROM 'codex-exec' OR r.thread_id IS NULL
       OR NOT EXISTS (SELECT FROM codex_recorded_turns o WHERE o.tenant_id = r.tenant_id AND o.thread_id = r.thread_id)
ORDER BY r.tenant_id, turn_key(r.tenant_id, r.thread_id, r.provider_turn_id, r.turn_id),
    r.state IN ('failed', 'aborted', 'interrupted', 'cancelled') DESC, r.state = 'in_progress', r.session_id;

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
       OR NOT EXISTS (SELECT FROM codex_recorded_turns o WHERE o.tenant_id = i.tenant_id AND o.thread_id = i.thread_id))
GROUP BY 1, 2, 3;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentwire_analyst') THEN
        GRANT SELECT ON codex_recorded_turns, usage_counted TO agentwire_analyst;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'agentwire: cannot grant agentwire_analyst the views codex_recorded_turns and usage_counted; grant analysts SELECT yourself';
END $$;
