-- The turn views count a turn once however many ingest sessions describe
-- it, as the usage views do (005_usage_once): a Claude stream and the
-- session log of the same run give one turn two rows, with the same
-- provider turn id (the id of the turn's first message) in the same
-- thread. Of such rows the views read one: a failed one if either failed
-- (the failure either saw wins, as in shared rows), else the smallest
-- session's. Rows projected before this migration have no provider turn
-- id until `agentwire project --rebuild`.
ALTER TABLE turns ADD COLUMN provider_turn_id text;

-- One row per turn as every session that reports it sees it.
CREATE VIEW turns_once WITH (security_invoker = true) AS
SELECT DISTINCT ON (tenant_id, turn_key(tenant_id, thread_id, provider_turn_id, turn_id)) *
FROM turns
ORDER BY tenant_id, turn_key(tenant_id, thread_id, provider_turn_id, turn_id),
    state IN ('failed', 'aborted', 'interrupted', 'cancelled') DESC, session_id;

-- Same columns as before: replaced in place, their grants kept.
CREATE OR REPLACE VIEW turn_durations WITH (security_invoker = true) AS
SELECT tenant_id, provider, coalesce(model, '') AS model, state,
       count(*) AS turns,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY coalesce(duration_ms, EXTRACT(EPOCH FROM ended_at - started_at) * 1000)))::numeric, 3) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY coalesce(duration_ms, EXTRACT(EPOCH FROM ended_at - started_at) * 1000)))::numeric, 3) AS p95_ms,
       round(max(coalesce(duration_ms, EXTRACT(EPOCH FROM ended_at - started_at) * 1000))::numeric, 3) AS max_ms
FROM turns_once GROUP BY 1, 2, 3, 4;

CREATE OR REPLACE VIEW turn_failures WITH (security_invoker = true) AS
SELECT tenant_id, provider, state, coalesce(error_class, '') AS error_class,
       coalesce(error_message, stop_reason, '') AS reason,
       count(*) AS turns, max(ended_at) AS last_seen
FROM turns_once
WHERE state NOT IN ('completed', 'in_progress') OR error_message IS NOT NULL
GROUP BY 1, 2, 3, 4, 5;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentwire_analyst') THEN
        GRANT SELECT ON turns_once TO agentwire_analyst;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'agentwire: cannot grant agentwire_analyst the view turns_once; grant analysts SELECT yourself';
END $$;
