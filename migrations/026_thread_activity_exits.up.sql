-- A turn whose agent exited runs no more, and its requests wait for no
-- answer. `ingest exec` and `ingest proxy` report the end of the agent's
-- process, which every adapter now maps to session.exited; a process
-- killed mid-turn left its thread active and its approvals pending in
-- thread_activity (025) for ever. Same columns: replaced in place, its
-- grant kept.
CREATE OR REPLACE VIEW thread_activity WITH (security_invoker = true) AS
SELECT t.tenant_id, t.thread_id, t.provider,
       coalesce(t.name, t.preview) AS title,
       CASE WHEN t.state IN ('archived', 'closed') THEN t.state
            WHEN last.state = 'in_progress' AND NOT last.exited THEN 'active'
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
    SELECT u.turn_id, u.state, u.model, u.started_at, u.ended_at, u.error_message,
           EXISTS (SELECT FROM sessions s
                   WHERE s.tenant_id = u.tenant_id AND s.session_id = u.session_id AND s.ended_at IS NOT NULL) AS exited
    FROM turns u
    WHERE u.tenant_id = t.tenant_id AND u.thread_id = t.thread_id
      AND coalesce(nullif(u.provider_turn_id, ''), u.turn_id::text) = (
          SELECT coalesce(nullif(w.provider_turn_id, ''), w.turn_id::text) FROM turns w
          WHERE w.tenant_id = t.tenant_id AND w.thread_id = t.thread_id
          ORDER BY w.started_at DESC NULLS LAST, w.updated_at DESC
          LIMIT 1)
    ORDER BY u.state = 'in_progress', u.session_id
    LIMIT 1) last ON true;
