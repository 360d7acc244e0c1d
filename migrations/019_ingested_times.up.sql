-- A time that is only when ingest read the frame is no time of the
-- frame's. Frames that state no time of their own (codex exec --json,
-- Claude's stream-json, ACP and app-server taps) are timed when they are
-- read: live, that is when they were written; read from a log after the
-- fact, it is how fast the file was read, and the views' durations and
-- latencies of such logs were about 0 (approvals answered in 0 ms, turns
-- of 0.04 ms). Their events now say so (createdAtIngested), and each
-- time of a span is kept with whether it was such a time. A span with
-- one is unknown, as a backward one is (015): the views count the turn,
-- call or request and leave it out of their durations and latencies, and
-- requests.latency_ms is NULL for it. The times are kept, for ordering
-- and days. Rows projected before this migration have NULL for these
-- columns (not known) until `agentwire project --rebuild`.
ALTER TABLE turns ADD COLUMN started_at_ingested boolean, ADD COLUMN ended_at_ingested boolean;
ALTER TABLE items ADD COLUMN started_at_ingested boolean, ADD COLUMN completed_at_ingested boolean;
ALTER TABLE requests ADD COLUMN opened_at_ingested boolean, ADD COLUMN resolved_at_ingested boolean;
COMMENT ON COLUMN turns.started_at_ingested IS 'started_at is when ingest read a log written earlier, not when the turn started';
COMMENT ON COLUMN turns.ended_at_ingested IS 'ended_at is when ingest read a log written earlier, not when the turn ended';
COMMENT ON COLUMN items.started_at_ingested IS 'started_at is when ingest read a log written earlier, not when the item started';
COMMENT ON COLUMN items.completed_at_ingested IS 'completed_at is when ingest read a log written earlier, not when the item completed';
COMMENT ON COLUMN requests.opened_at_ingested IS 'opened_at is when ingest read a log written earlier, not when the request opened';
COMMENT ON COLUMN requests.resolved_at_ingested IS 'resolved_at is when ingest read a log written earlier, not when the request was resolved';

-- The span in milliseconds, NULL when either end is a time ingest read,
-- it ended before it started, or it has not ended.
CREATE FUNCTION stated_span_ms(started timestamptz, ended timestamptz, started_ingested boolean, ended_ingested boolean)
RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE WHEN started_ingested IS NOT TRUE AND ended_ingested IS NOT TRUE THEN span_ms(started, ended) END
$$;

DROP VIEW approvals;
ALTER TABLE requests DROP COLUMN latency_ms;
ALTER TABLE requests ADD COLUMN latency_ms bigint GENERATED ALWAYS AS (
    CASE WHEN resolved_at >= opened_at AND opened_at_ingested IS NOT TRUE AND resolved_at_ingested IS NOT TRUE
         THEN (EXTRACT(EPOCH FROM (resolved_at - opened_at)) * 1000)::bigint END) STORED;

CREATE VIEW approvals WITH (security_invoker = true) AS
SELECT tenant_id, provider, request_type, coalesce(decision, CASE WHEN resolved_at IS NULL THEN 'pending' ELSE 'none' END) AS decision,
       count(*) AS requests,
       round(avg(latency_ms), 3) AS avg_latency_ms,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms))::numeric, 3) AS p50_latency_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms))::numeric, 3) AS p95_latency_ms,
       -- One value per group: the group's decision names it.
       min(coalesce(decision_outcome(decision), CASE WHEN resolved_at IS NULL THEN 'pending' ELSE 'none' END)) AS outcome
FROM requests GROUP BY 1, 2, 3, 4;

-- turns_once reads every column of turns: replaced to take the new ones
-- (appended, so its columns and grants are kept).
CREATE OR REPLACE VIEW turns_once WITH (security_invoker = true) AS
SELECT DISTINCT ON (tenant_id, turn_key(tenant_id, thread_id, provider_turn_id, turn_id)) *
FROM turns
ORDER BY tenant_id, turn_key(tenant_id, thread_id, provider_turn_id, turn_id),
    state IN ('failed', 'aborted', 'interrupted', 'cancelled') DESC, session_id;

CREATE OR REPLACE VIEW turn_durations WITH (security_invoker = true) AS
SELECT tenant_id, provider, coalesce(model, '') AS model, state,
       count(*) AS turns,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY coalesce(duration_ms, stated_span_ms(started_at, ended_at, started_at_ingested, ended_at_ingested))))::numeric, 3) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY coalesce(duration_ms, stated_span_ms(started_at, ended_at, started_at_ingested, ended_at_ingested))))::numeric, 3) AS p95_ms,
       round(max(coalesce(duration_ms, stated_span_ms(started_at, ended_at, started_at_ingested, ended_at_ingested)))::numeric, 3) AS max_ms
FROM turns_once GROUP BY 1, 2, 3, 4;

CREATE OR REPLACE VIEW tool_calls_by_tool WITH (security_invoker = true) AS
SELECT tenant_id, provider, coalesce(tool_name, item_type) AS tool,
       count(*) AS calls,
       count(*) FILTER (WHERE status = 'completed' AND coalesce(exit_code, 0) = 0) AS succeeded,
       count(*) FILTER (WHERE status IN ('failed', 'declined') OR exit_code <> 0) AS failed,
       round(count(*) FILTER (WHERE status = 'completed' AND coalesce(exit_code, 0) = 0)::numeric
             / nullif(count(*) FILTER (WHERE status IS DISTINCT FROM 'inProgress'), 0), 4) AS success_rate,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY coalesce(duration_ms, stated_span_ms(started_at, completed_at, started_at_ingested, completed_at_ingested))))::numeric, 3) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY coalesce(duration_ms, stated_span_ms(started_at, completed_at, started_at_ingested, completed_at_ingested))))::numeric, 3) AS p95_ms
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
