-- A span whose end comes before its start is not a duration. The
-- times are the providers' clocks, and they do run backwards between
-- frames: Claude Code writes a local command's log lines out of order
-- (a turn closed 61 ms before it opened), and a row two sessions describe
-- can take its start from one capture and its end from the other (README,
-- "Rows two sessions describe"). Counted, such spans went into the views'
-- percentiles as negative milliseconds. Now a backward span is unknown,
-- as a span not yet ended is: the views count the turn, call or request
-- and leave it out of their durations and latencies, and
-- requests.latency_ms is NULL for it. The times themselves are kept as
-- the providers stated them.

-- latency_ms is generated: its expression changes with the column, which
-- the approvals view reads.
DROP VIEW approvals;
ALTER TABLE requests DROP COLUMN latency_ms;
ALTER TABLE requests ADD COLUMN latency_ms bigint GENERATED ALWAYS AS (
    CASE WHEN resolved_at >= opened_at THEN (EXTRACT(EPOCH FROM (resolved_at - opened_at)) * 1000)::bigint END) STORED;

CREATE VIEW approvals WITH (security_invoker = true) AS
SELECT tenant_id, provider, request_type, coalesce(decision, CASE WHEN resolved_at IS NULL THEN 'pending' ELSE 'none' END) AS decision,
       count(*) AS requests,
       round(avg(latency_ms), 3) AS avg_latency_ms,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms))::numeric, 3) AS p50_latency_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms))::numeric, 3) AS p95_latency_ms,
       -- One value per group: the group's decision names it.
       min(coalesce(decision_outcome(decision), CASE WHEN resolved_at IS NULL THEN 'pending' ELSE 'none' END)) AS outcome
FROM requests GROUP BY 1, 2, 3, 4;

-- The span in milliseconds, NULL when it ended before it started or has
-- not ended.
CREATE FUNCTION span_ms(started timestamptz, ended timestamptz) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE WHEN ended >= started THEN EXTRACT(EPOCH FROM ended - started) * 1000 END
$$;

-- Same columns as before: replaced in place, their grants kept.
CREATE OR REPLACE VIEW turn_durations WITH (security_invoker = true) AS
SELECT tenant_id, provider, coalesce(model, '') AS model, state,
       count(*) AS turns,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY coalesce(duration_ms, span_ms(started_at, ended_at))))::numeric, 3) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY coalesce(duration_ms, span_ms(started_at, ended_at))))::numeric, 3) AS p95_ms,
       round(max(coalesce(duration_ms, span_ms(started_at, ended_at)))::numeric, 3) AS max_ms
FROM turns_once GROUP BY 1, 2, 3, 4;

CREATE OR REPLACE VIEW tool_calls_by_tool WITH (security_invoker = true) AS
SELECT tenant_id, provider, coalesce(tool_name, item_type) AS tool,
       count(*) AS calls,
       count(*) FILTER (WHERE status = 'completed' AND coalesce(exit_code, 0) = 0) AS succeeded,
       count(*) FILTER (WHERE status IN ('failed', 'declined') OR exit_code <> 0) AS failed,
       round(count(*) FILTER (WHERE status = 'completed' AND coalesce(exit_code, 0) = 0)::numeric
             / nullif(count(*) FILTER (WHERE status IS DISTINCT FROM 'inProgress'), 0), 4) AS success_rate,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY coalesce(duration_ms, span_ms(started_at, completed_at))))::numeric, 3) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY coalesce(duration_ms, span_ms(started_at, completed_at))))::numeric, 3) AS p95_ms
FROM items
WHERE tool_name IS NOT NULL
   OR item_type IN ('command_execution', 'file_change', 'mcp_tool_call', 'dynamic_tool_call',
                    'collab_agent_tool_call', 'web_search', 'image_view')
GROUP BY 1, 2, 3;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentwire_analyst') THEN
        GRANT SELECT ON approvals TO agentwire_analyst;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'agentwire: cannot grant agentwire_analyst the view approvals; grant analysts SELECT yourself';
END $$;
