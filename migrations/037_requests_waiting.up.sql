-- The requests that wait for an answer, one row each: a platform's inbox
-- of approvals and questions. approvals (028) counts them and
-- thread_activity (036) counts a thread's, but a platform that shows the
-- approval itself read requests WHERE resolved_at IS NULL, and got the
-- requests of agents that had exited too, which nobody can answer any
-- more (approvals calls them abandoned). Here, as there, a request of a
-- session that exited waits for nothing.
--
-- Each row names what it asks about: its item's type, tool, command and
-- files, and its thread's title as thread_activity gives it.
CREATE VIEW requests_waiting WITH (security_invoker = true) AS
SELECT r.tenant_id, r.request_id, r.provider, r.request_type, r.opened_at,
       r.detail, r.args,
       i.item_type, i.tool_name, i.command, i.files,
       coalesce(t.name, t.preview) AS thread_title,
       r.session_id, r.thread_id, r.turn_id, r.item_id
FROM requests r
LEFT JOIN items i ON i.tenant_id = r.tenant_id AND i.item_id = r.item_id
LEFT JOIN threads t ON t.tenant_id = r.tenant_id AND t.thread_id = r.thread_id
WHERE r.resolved_at IS NULL
  AND NOT EXISTS (SELECT FROM sessions s
                  WHERE s.tenant_id = r.tenant_id AND s.session_id = r.session_id AND s.ended_at IS NOT NULL);

-- Few requests wait at a time among all ever made: the inbox reads those
-- alone.
CREATE INDEX requests_waiting_idx ON requests (tenant_id, opened_at) WHERE resolved_at IS NULL;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentwire_analyst') THEN
        GRANT SELECT ON requests_waiting TO agentwire_analyst;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'agentwire: cannot grant agentwire_analyst the view requests_waiting; grant analysts SELECT yourself';
END $$;
