-- Which hooks run, how often they fail and how long they take: hook_runs,
-- by provider, event, hook and command. A run's duration is the one the
-- provider measured (020), else the span between the lines that start and
-- end it, left out as the other views leave spans out (015, 019): hooks
-- keep, beside each time, whether it was only when ingest read a log.
-- no_outcome counts runs whose end the log never reports (Claude Code's
-- older logs report only the Stop hooks' ends).
ALTER TABLE hooks ADD COLUMN started_at_ingested boolean, ADD COLUMN completed_at_ingested boolean;
COMMENT ON COLUMN hooks.started_at_ingested IS 'started_at is when ingest read a log written earlier, not when the run started';
COMMENT ON COLUMN hooks.completed_at_ingested IS 'completed_at is when ingest read a log written earlier, not when the run ended';

CREATE VIEW hook_runs WITH (security_invoker = true) AS
SELECT tenant_id, provider, coalesce(hook_event, 'unknown') AS hook_event, coalesce(hook_name, '') AS hook_name,
       coalesce(command, '') AS command,
       count(*) AS runs,
       count(*) FILTER (WHERE outcome = 'success') AS succeeded,
       count(*) FILTER (WHERE outcome = 'error') AS failed,
       count(*) FILTER (WHERE outcome = 'cancelled') AS cancelled,
       count(*) FILTER (WHERE outcome IS NULL) AS no_outcome,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY coalesce(duration_ms,
           stated_span_ms(started_at, completed_at, started_at_ingested, completed_at_ingested))))::numeric, 3) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY coalesce(duration_ms,
           stated_span_ms(started_at, completed_at, started_at_ingested, completed_at_ingested))))::numeric, 3) AS p95_ms
FROM hooks GROUP BY 1, 2, 3, 4, 5;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentwire_analyst') THEN
        GRANT SELECT ON hook_runs TO agentwire_analyst;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'agentwire: cannot grant agentwire_analyst the view hook_runs; grant analysts SELECT yourself';
END $$;
