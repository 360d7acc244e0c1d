-- A tool call its turn cut short is not the tool's failure.
--
-- When a user interrupts a turn (Esc in Claude Code, a new prompt or an
-- abort in Codex) or the agent exits, the calls still running end with
-- the turn: `failed`, or `declined` in Claude's stream. A call the user
-- refuses in Claude Code interrupts the turn too; Claude writes its
-- result a few milliseconds before the interrupt (13 ms at most in the
-- public transcripts). Codex and the exit (agentwire-diagnostic/3) end
-- the calls at the turn's end itself. tool_calls_by_tool counted all of
-- them as failures and put their time until the interrupt into p50/p95:
-- in the public transcripts a 15-minute command a new prompt cut short,
-- and a two-and-a-half-minute wait for a sub-agent's output, each one
-- call among a handful of its tool's.
--
-- items_cut_short is the items their turn cut short: the turn ended
-- interrupted, cancelled or aborted (as turns_read reads it, so a turn
-- still running at its agent's exit counts, whatever mapping version
-- wrote it), and the item ended failed or declined within a second
-- before the turn's end, or never ended at all. A call that failed
-- earlier in such a turn, after which the agent went on, failed on its
-- own. So does a failed call whose end, or its turn's, is only when
-- ingest read a log written earlier (019): such times are a read's, a
-- millisecond apart or all one, and cannot tell the two apart.
--
-- tool_calls_by_tool keeps its columns and adds `interrupted`, the calls
-- cut short: `failed` and success_rate count the calls that ended on
-- their own, and p50/p95 their durations; `calls` is still every call.
CREATE VIEW items_cut_short WITH (security_invoker = true) AS
SELECT i.tenant_id, i.item_id, i.session_id, i.thread_id, i.turn_id, i.provider, i.item_type, i.tool_name,
       i.started_at, i.completed_at, t.state AS turn_state, t.ended_at AS turn_ended_at
FROM items i
JOIN turns_read t ON t.tenant_id = i.tenant_id AND t.turn_id = i.turn_id
WHERE t.state IN ('interrupted', 'cancelled', 'aborted')
  AND (i.status = 'inProgress'
       OR (i.status IN ('failed', 'declined') AND i.completed_at >= t.ended_at - interval '1 second'
           AND i.completed_at_ingested IS NOT TRUE AND t.ended_at_ingested IS NOT TRUE));

CREATE OR REPLACE VIEW tool_calls_by_tool WITH (security_invoker = true) AS
SELECT i.tenant_id, i.provider, coalesce(i.tool_name, i.item_type) AS tool,
       count(*) AS calls,
       count(*) FILTER (WHERE i.status = 'completed' AND coalesce(i.exit_code, 0) = 0) AS succeeded,
       count(*) FILTER (WHERE (i.status IN ('failed', 'declined') OR i.exit_code <> 0) AND NOT cut.short) AS failed,
       round(count(*) FILTER (WHERE i.status = 'completed' AND coalesce(i.exit_code, 0) = 0)::numeric
             / nullif(count(*) FILTER (WHERE i.status IS DISTINCT FROM 'inProgress' AND NOT cut.short), 0), 4) AS success_rate,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY CASE WHEN NOT cut.short THEN coalesce(i.duration_ms, stated_span_ms(i.started_at, i.completed_at, i.started_at_ingested, i.completed_at_ingested)) END))::numeric, 3) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY CASE WHEN NOT cut.short THEN coalesce(i.duration_ms, stated_span_ms(i.started_at, i.completed_at, i.started_at_ingested, i.completed_at_ingested)) END))::numeric, 3) AS p95_ms,
       count(*) FILTER (WHERE cut.short) AS interrupted
FROM items i
LEFT JOIN sessions s ON s.tenant_id = i.tenant_id AND s.session_id = i.session_id
LEFT JOIN items_cut_short c ON c.tenant_id = i.tenant_id AND c.item_id = i.item_id
CROSS JOIN LATERAL (SELECT c.item_id IS NOT NULL AS short) cut
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
        GRANT SELECT ON items_cut_short TO agentwire_analyst;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'agentwire: cannot grant agentwire_analyst the view items_cut_short; grant analysts SELECT yourself';
END $$;
