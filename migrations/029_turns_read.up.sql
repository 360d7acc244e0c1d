-- One place for how a turn reads once its agent exited. 026 and 027 each
-- wrote the rule (a turn still running when its session exited runs no
-- more) and the order among the rows two sessions give one turn, and read
-- it differently: thread_activity said the last turn of a killed agent
-- was in_progress where turns_once and turn_failures said interrupted.
--
-- turns_read is turns with that rule applied, row by row, and nothing
-- else: a plain view, so a filter by thread or session reaches the
-- indexes of turns. turns_once and thread_activity read it. Its columns are
-- those of turns; a column later added to turns is appended here and then
-- to turns_once, which selects them all.
CREATE VIEW turns_read WITH (security_invoker = true) AS
SELECT t.tenant_id, t.turn_id, t.session_id, t.thread_id, t.provider,
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
CROSS JOIN LATERAL (SELECT t.state = 'in_progress' AND s.ended_at IS NOT NULL AS short) cut;

-- Of the rows of one turn: a failed one if any failed, else one that
-- ended, else the smallest session's.
CREATE OR REPLACE VIEW turns_once WITH (security_invoker = true) AS
SELECT DISTINCT ON (tenant_id, turn_key(tenant_id, thread_id, provider_turn_id, turn_id)) *
FROM turns_read
ORDER BY tenant_id, turn_key(tenant_id, thread_id, provider_turn_id, turn_id),
    state IN ('failed', 'aborted', 'interrupted', 'cancelled') DESC, state = 'in_progress', session_id;

-- The latest turn of a thread is read as turns_once reads it; requests of
-- an exited session wait for nothing, as in approvals (028).
CREATE OR REPLACE VIEW thread_activity WITH (security_invoker = true) AS
SELECT t.tenant_id, t.thread_id, t.provider,
       coalesce(t.name, t.preview) AS title,
       CASE WHEN t.state IN ('archived', 'closed') THEN t.state
            WHEN last.state = 'in_progress' THEN 'active'
            WHEN t.state = 'error' THEN 'error'
            ELSE 'idle' END AS status,
       last.turn_id AS last_turn_id, last.state AS last_turn_state, last.model AS last_turn_model,
       last.started_at AS last_turn_started_at, last.ended_at AS last_turn_ended_at,
       last.error_message AS last_turn_error,
       (SELECT count(*) FROM requests r
        WHERE r.tenant_id = t.tenant_id AND r.thread_id = t.thread_id AND r.resolved_at IS NULL
          AND NOT EXISTS (SELECT FROM sessions s
                          WHERE s.tenant_id = r.tenant_id AND s.session_id = r.session_id AND s.ended_at IS NOT NULL)) AS pending_requests,
       t.updated_at
FROM threads t
LEFT JOIN LATERAL (
    SELECT u.turn_id, u.state, u.model, u.started_at, u.ended_at, u.error_message
    FROM turns_read u
    WHERE u.tenant_id = t.tenant_id AND u.thread_id = t.thread_id
      AND coalesce(nullif(u.provider_turn_id, ''), u.turn_id::text) = (
          SELECT coalesce(nullif(w.provider_turn_id, ''), w.turn_id::text) FROM turns w
          WHERE w.tenant_id = t.tenant_id AND w.thread_id = t.thread_id
          ORDER BY w.started_at DESC NULLS LAST, w.updated_at DESC
          LIMIT 1)
    ORDER BY u.state IN ('failed', 'aborted', 'interrupted', 'cancelled') DESC, u.state = 'in_progress', u.session_id
    LIMIT 1) last ON true;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentwire_analyst') THEN
        GRANT SELECT ON turns_read TO agentwire_analyst;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'agentwire: cannot grant agentwire_analyst the view turns_read; grant analysts SELECT yourself';
END $$;
