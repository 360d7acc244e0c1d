-- Commands the user ran, not the agent: a shell command typed into the CLI
-- (Codex's user shell), a local slash command (Claude Code's /clear,
-- /model). They are items, but not the agent's tool calls, so
-- tool_calls_by_tool leaves them out; before, Claude's local commands
-- counted there as command_execution calls of 0 ms.
ALTER TABLE items ADD COLUMN by_user boolean;
COMMENT ON COLUMN items.by_user IS 'true when the user ran it, not the agent (a user shell or local slash command); NULL when no event said so';

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
WHERE (tool_name IS NOT NULL
       OR item_type IN ('command_execution', 'file_change', 'mcp_tool_call', 'dynamic_tool_call',
                        'collab_agent_tool_call', 'web_search', 'image_view'))
  AND by_user IS NOT TRUE
GROUP BY 1, 2, 3;
