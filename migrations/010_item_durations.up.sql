-- How long a tool or command item ran, as the provider measured it, where
-- it says (Codex: the app-server's durationMs, the rollout's end events
-- and the duration_seconds its CLIs of 2025 wrote into shell output). The
-- Codex rollouts of 2025 stamp a shell call and its output with one time,
-- so completed_at - started_at made every such call last 0 ms; the tool
-- view prefers the stated duration, as turn_durations does for turns.
-- Rows projected before this migration have none until
-- `agentwire project --rebuild`.
ALTER TABLE items ADD COLUMN duration_ms bigint;

-- Same columns as before: replaced in place, its grant kept.
CREATE OR REPLACE VIEW tool_calls_by_tool WITH (security_invoker = true) AS
SELECT tenant_id, provider, coalesce(tool_name, item_type) AS tool,
       count(*) AS calls,
       count(*) FILTER (WHERE status = 'completed' AND coalesce(exit_code, 0) = 0) AS succeeded,
       count(*) FILTER (WHERE status IN ('failed', 'declined') OR exit_code <> 0) AS failed,
       round(count(*) FILTER (WHERE status = 'completed' AND coalesce(exit_code, 0) = 0)::numeric
             / nullif(count(*) FILTER (WHERE status IS DISTINCT FROM 'inProgress'), 0), 4) AS success_rate,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY coalesce(duration_ms, EXTRACT(EPOCH FROM completed_at - started_at) * 1000)))::numeric, 3) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY coalesce(duration_ms, EXTRACT(EPOCH FROM completed_at - started_at) * 1000)))::numeric, 3) AS p95_ms
FROM items
WHERE tool_name IS NOT NULL
   OR item_type IN ('command_execution', 'file_change', 'mcp_tool_call', 'dynamic_tool_call',
                    'collab_agent_tool_call', 'web_search', 'image_view')
GROUP BY 1, 2, 3;
