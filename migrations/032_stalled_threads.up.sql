-- A thread whose last turn is still in progress, whose agent has not
-- exited and which waits for no answer, but from which nothing has been
-- heard for an hour, is stalled, not active. An agent killed without its
-- exit being seen (a log ingested from a file, a tap that lost its
-- process) or a log that ends mid-turn left its thread active for ever in
-- thread_activity (025, 029), at the top of "what are the agents working
-- on". An agent at work writes an event at least every few minutes (its
-- tools time out in minutes: Claude Code's Bash after 2 by default, 10 at
-- most), so a turn silent for an hour has died or hangs; either way,
-- someone should look at it.
--
-- The hour is the setting agentwire.stalled_after (an interval), for a
-- session or a role: SET agentwire.stalled_after = '15 min'. A thread that
-- waits for an approval waits for a person, not the agent: it stays
-- active. The time a thread was last heard from is its updated_at, the
-- time of its latest event, by the agent's clock (or, for a log that
-- states none, when it was written by or read).
--
-- Same columns as 029's thread_activity; replaced in place, its grant kept.
CREATE FUNCTION thread_stalled_after() RETURNS interval
LANGUAGE sql STABLE AS $$
    SELECT coalesce(nullif(current_setting('agentwire.stalled_after', true), '')::interval, interval '1 hour')
$$;

CREATE OR REPLACE VIEW thread_activity WITH (security_invoker = true) AS
SELECT t.tenant_id, t.thread_id, t.provider,
       coalesce(t.name, t.preview) AS title,
       CASE WHEN t.state IN ('archived', 'closed') THEN t.state
            WHEN last.state = 'in_progress' AND waiting.pending = 0 AND t.updated_at < now() - thread_stalled_after() THEN 'stalled'
            WHEN last.state = 'in_progress' THEN 'active'
            WHEN t.state = 'error' THEN 'error'
            ELSE 'idle' END AS status,
       last.turn_id AS last_turn_id, last.state AS last_turn_state, last.model AS last_turn_model,
       last.started_at AS last_turn_started_at, last.ended_at AS last_turn_ended_at,
       last.error_message AS last_turn_error,
       waiting.pending AS pending_requests,
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
    LIMIT 1) last ON true
CROSS JOIN LATERAL (
    SELECT count(*) AS pending FROM requests r
    WHERE r.tenant_id = t.tenant_id AND r.thread_id = t.thread_id AND r.resolved_at IS NULL
      AND NOT EXISTS (SELECT FROM sessions s
                      WHERE s.tenant_id = r.tenant_id AND s.session_id = r.session_id AND s.ended_at IS NOT NULL)) waiting;
