-- The turn views count a turn whose agent exited as interrupted, not as
-- running. A live capture (`ingest exec`, `ingest proxy`) reports the end
-- of the agent's process as session.exited; a turn it never finished
-- stayed in_progress, so turn_failures missed every crash ("the agent was
-- killed by SIGKILL") and turn_durations counted those turns as running
-- for ever. The turn's row keeps what the events said; turns_once reads
-- such a turn as interrupted at the exit, with the exit's reason.
--
-- And of the rows two sessions give one turn (a Claude stream and the
-- session log of the same run), one that ended is read before one still
-- running: a log cut off mid-turn beside the stream that saw the turn end
-- counted it as running when its session id was the smaller.
--
-- turns_once names its columns now, as it changes two of them; a column
-- later added to turns must be added here too (appended, so the columns
-- and the grant are kept).
CREATE OR REPLACE VIEW turns_once WITH (security_invoker = true) AS
SELECT DISTINCT ON (t.tenant_id, turn_key(t.tenant_id, t.thread_id, t.provider_turn_id, t.turn_id))
       t.tenant_id, t.turn_id, t.session_id, t.thread_id, t.provider,
       CASE WHEN cut.short THEN 'interrupted' ELSE t.state END AS state,
       t.model, t.effort, t.started_at,
       CASE WHEN cut.short THEN s.ended_at ELSE t.ended_at END AS ended_at,
       t.stop_reason,
       CASE WHEN cut.short THEN coalesce(t.error_message, s.exit_reason, 'the agent exited') ELSE t.error_message END AS error_message,
       t.error_class, t.input_tokens, t.cached_input_tokens, t.cache_write_input_tokens, t.output_tokens,
       t.reasoning_output_tokens, t.cost_usd, t.duration_ms, t.plan, t.plan_explanation, t.diff, t.updated_at,
       t.session_columns, t.provider_turn_id, t.started_at_ingested, t.ended_at_ingested
FROM turns t
LEFT JOIN sessions s ON s.tenant_id = t.tenant_id AND s.session_id = t.session_id
CROSS JOIN LATERAL (SELECT t.state = 'in_progress' AND s.ended_at IS NOT NULL AS short) cut
ORDER BY t.tenant_id, turn_key(t.tenant_id, t.thread_id, t.provider_turn_id, t.turn_id),
    (cut.short OR t.state IN ('failed', 'aborted', 'interrupted', 'cancelled')) DESC,
    (t.state = 'in_progress' AND NOT cut.short), t.session_id;
