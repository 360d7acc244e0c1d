-- What each thread is doing now, the question an agent platform asks of a
-- thread. threads.state holds what a provider reports of its threads, and
-- only the Codex app-server reports a status (active, idle, systemError:
-- error); the other providers report at most a compaction, a marker, not
-- a status. So 135 of the 146 threads of the public transcripts had no
-- state. Their turns say it: a thread whose latest turn runs is active,
-- else idle, unless the provider said it is archived, closed or in error.
--
-- A platform reads this by thread: the turns and the open requests of a
-- thread are found by index, not by a scan of every turn.
CREATE INDEX turns_thread_idx ON turns (tenant_id, thread_id, started_at);
CREATE INDEX requests_open_idx ON requests (tenant_id, thread_id) WHERE resolved_at IS NULL;

-- The latest turn is the one started last. Two sessions can describe one
-- turn (a Claude stream and the session log of the same run: the same
-- provider turn id, two rows); if either saw it end, it has ended, as a
-- log cut off mid-turn beside a stream that went on must not keep the
-- thread active.
CREATE VIEW thread_activity WITH (security_invoker = true) AS
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
        WHERE r.tenant_id = t.tenant_id AND r.thread_id = t.thread_id AND r.resolved_at IS NULL) AS pending_requests,
       t.updated_at
FROM threads t
LEFT JOIN LATERAL (
    SELECT u.turn_id, u.state, u.model, u.started_at, u.ended_at, u.error_message
    FROM turns u
    WHERE u.tenant_id = t.tenant_id AND u.thread_id = t.thread_id
      AND coalesce(nullif(u.provider_turn_id, ''), u.turn_id::text) = (
          SELECT coalesce(nullif(w.provider_turn_id, ''), w.turn_id::text) FROM turns w
          WHERE w.tenant_id = t.tenant_id AND w.thread_id = t.thread_id
          ORDER BY w.started_at DESC NULLS LAST, w.updated_at DESC
          LIMIT 1)
    ORDER BY u.state = 'in_progress', u.session_id
    LIMIT 1) last ON true;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentwire_analyst') THEN
        GRANT SELECT ON thread_activity TO agentwire_analyst;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'agentwire: cannot grant agentwire_analyst the view thread_activity; grant analysts SELECT yourself';
END $$;
