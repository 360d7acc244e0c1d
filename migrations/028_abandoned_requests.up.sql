-- A request whose agent exited before anyone answered it waits for
-- nothing: approvals called it pending for ever. It is "abandoned" now,
-- in its decision and its outcome, beside pending (still waiting) and
-- none (resolved without a decision). An agent exits as session.exited,
-- which `ingest exec` and `ingest proxy` report.
CREATE OR REPLACE VIEW approvals WITH (security_invoker = true) AS
SELECT r.tenant_id, r.provider, r.request_type,
       coalesce(r.decision, waiting.state) AS decision,
       count(*) AS requests,
       round(avg(r.latency_ms), 3) AS avg_latency_ms,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY r.latency_ms))::numeric, 3) AS p50_latency_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY r.latency_ms))::numeric, 3) AS p95_latency_ms,
       -- One value per group: the group's decision names it.
       min(coalesce(decision_outcome(r.decision), waiting.state)) AS outcome
FROM requests r
CROSS JOIN LATERAL (
    SELECT CASE WHEN r.resolved_at IS NOT NULL THEN 'none'
                WHEN EXISTS (SELECT FROM sessions s
                             WHERE s.tenant_id = r.tenant_id AND s.session_id = r.session_id AND s.ended_at IS NOT NULL)
                THEN 'abandoned'
                ELSE 'pending' END AS state) waiting
GROUP BY 1, 2, 3, 4;
