-- Figures an analyst reads as printed.
--
-- Money is numeric: cost_usd was double precision, and its sums showed
-- binary rounding (0.1 + 0.2 = 0.30000000000000004 dollars, drifting
-- further over millions of turns). A provider states a cost as a decimal;
-- numeric keeps that decimal, and sums of it are exact.
--
-- Durations and latencies in the views are milliseconds rounded to the
-- microsecond (numeric, three decimals): percentiles interpolate in
-- floating point and printed figures such as 2209.3999999999933.
--
-- A view's column types cannot change in place: the views that read
-- cost_usd, or change type, are made anew and granted again.
DROP VIEW usage_by_day, usage_by_month, usage_by_session, tool_calls_by_tool, approvals, turn_durations;

ALTER TABLE turns ALTER COLUMN cost_usd TYPE numeric;
ALTER TABLE usage_ledger ALTER COLUMN cost_usd TYPE numeric;

CREATE VIEW usage_by_day WITH (security_invoker = true) AS
SELECT tenant_id, (occurred_at AT TIME ZONE 'UTC')::date AS day, provider, model,
       count(*) AS turns,
       sum(input_tokens) AS input_tokens, sum(cached_input_tokens) AS cached_input_tokens,
       sum(cache_write_input_tokens) AS cache_write_input_tokens, sum(output_tokens) AS output_tokens,
       sum(reasoning_output_tokens) AS reasoning_output_tokens,
       sum(input_tokens + cached_input_tokens + cache_write_input_tokens + output_tokens) AS total_tokens,
       sum(cost_usd) AS cost_usd
FROM usage_ledger GROUP BY 1, 2, 3, 4;

CREATE VIEW usage_by_month WITH (security_invoker = true) AS
SELECT tenant_id, date_trunc('month', occurred_at AT TIME ZONE 'UTC')::date AS month, provider, model,
       count(*) AS turns,
       sum(input_tokens) AS input_tokens, sum(cached_input_tokens) AS cached_input_tokens,
       sum(cache_write_input_tokens) AS cache_write_input_tokens, sum(output_tokens) AS output_tokens,
       sum(reasoning_output_tokens) AS reasoning_output_tokens,
       sum(input_tokens + cached_input_tokens + cache_write_input_tokens + output_tokens) AS total_tokens,
       sum(cost_usd) AS cost_usd
FROM usage_ledger GROUP BY 1, 2, 3, 4;

CREATE VIEW usage_by_session WITH (security_invoker = true) AS
SELECT u.tenant_id, u.session_id, u.provider, s.model AS session_model,
       min(u.occurred_at) AS first_turn_at, max(u.occurred_at) AS last_turn_at,
       count(DISTINCT u.turn_id) AS turns,
       sum(u.input_tokens) AS input_tokens, sum(u.cached_input_tokens) AS cached_input_tokens,
       sum(u.cache_write_input_tokens) AS cache_write_input_tokens, sum(u.output_tokens) AS output_tokens,
       sum(u.reasoning_output_tokens) AS reasoning_output_tokens,
       sum(u.input_tokens + u.cached_input_tokens + u.cache_write_input_tokens + u.output_tokens) AS total_tokens,
       sum(u.cost_usd) AS cost_usd
FROM usage_ledger u
LEFT JOIN sessions s ON s.tenant_id = u.tenant_id AND s.session_id = u.session_id
GROUP BY 1, 2, 3, 4;

-- Tool calls: items that name a tool or run a command, finished or not.
CREATE VIEW tool_calls_by_tool WITH (security_invoker = true) AS
SELECT tenant_id, provider, coalesce(tool_name, item_type) AS tool,
       count(*) AS calls,
       count(*) FILTER (WHERE status = 'completed' AND coalesce(exit_code, 0) = 0) AS succeeded,
       count(*) FILTER (WHERE status IN ('failed', 'declined') OR exit_code <> 0) AS failed,
       round(count(*) FILTER (WHERE status = 'completed' AND coalesce(exit_code, 0) = 0)::numeric
             / nullif(count(*) FILTER (WHERE status IS DISTINCT FROM 'inProgress'), 0), 4) AS success_rate,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM completed_at - started_at) * 1000))::numeric, 3) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM completed_at - started_at) * 1000))::numeric, 3) AS p95_ms
FROM items
WHERE tool_name IS NOT NULL
   OR item_type IN ('command_execution', 'file_change', 'mcp_tool_call', 'dynamic_tool_call',
                    'collab_agent_tool_call', 'web_search', 'image_view')
GROUP BY 1, 2, 3;

CREATE VIEW approvals WITH (security_invoker = true) AS
SELECT tenant_id, provider, request_type, coalesce(decision, CASE WHEN resolved_at IS NULL THEN 'pending' ELSE 'none' END) AS decision,
       count(*) AS requests,
       round(avg(latency_ms), 3) AS avg_latency_ms,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms))::numeric, 3) AS p50_latency_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms))::numeric, 3) AS p95_latency_ms
FROM requests GROUP BY 1, 2, 3, 4;

CREATE VIEW turn_durations WITH (security_invoker = true) AS
SELECT tenant_id, provider, coalesce(model, '') AS model, state,
       count(*) AS turns,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY coalesce(duration_ms, EXTRACT(EPOCH FROM ended_at - started_at) * 1000)))::numeric, 3) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY coalesce(duration_ms, EXTRACT(EPOCH FROM ended_at - started_at) * 1000)))::numeric, 3) AS p95_ms,
       round(max(coalesce(duration_ms, EXTRACT(EPOCH FROM ended_at - started_at) * 1000))::numeric, 3) AS max_ms
FROM turns GROUP BY 1, 2, 3, 4;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentwire_analyst') THEN
        GRANT SELECT ON usage_by_day, usage_by_month, usage_by_session, tool_calls_by_tool, approvals,
            turn_durations TO agentwire_analyst;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'agentwire: cannot grant agentwire_analyst the views; grant analysts SELECT yourself';
END $$;
