-- The threads whose latest turn is in progress, active or stalled (032):
-- thread_activity's rows of those statuses. thread_activity works out a
-- thread's status from its latest turn, its session and its requests, so
-- asking it for the active threads of a long history worked out every
-- thread's: 1.4 s for 66k threads. A thread whose latest turn is in
-- progress has a turn in progress, and few threads do: the EXISTS below
-- lets the planner find those first (a hash semi-join on turns) and work
-- out their status alone, 0.17 s for the same threads. Its columns are
-- thread_activity's.
CREATE VIEW threads_in_progress WITH (security_invoker = true) AS
SELECT a.* FROM thread_activity a
WHERE a.status IN ('active', 'stalled')
  AND EXISTS (SELECT FROM turns u WHERE u.tenant_id = a.tenant_id AND u.thread_id = a.thread_id AND u.state = 'in_progress');

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentwire_analyst') THEN
        GRANT SELECT ON threads_in_progress TO agentwire_analyst;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'agentwire: cannot grant agentwire_analyst the view threads_in_progress; grant analysts SELECT yourself';
END $$;
