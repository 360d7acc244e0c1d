-- A request's decision in the provider's words (allow_once, accept,
-- approved_for_session, reject_once, decline, abort, ...) as one outcome
-- that compares across providers: approved, denied, cancelled, else
-- other; NULL without a decision. The approvals view shows it beside the
-- decision, and analysts may call the function in their own queries.
CREATE FUNCTION decision_outcome(decision text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE
    WHEN d IS NULL THEN NULL
    WHEN d IN ('allow', 'allow_once', 'allow_always', 'accept', 'acceptforsession', 'acceptwithexecpolicyamendment',
        'approved', 'approved_for_session', 'proceed_once', 'proceed_always', 'proceed_always_server',
        'proceed_always_tool') THEN 'approved'
    WHEN d IN ('deny', 'denied', 'decline', 'reject', 'reject_once', 'reject_always') THEN 'denied'
    WHEN d IN ('cancel', 'cancelled', 'canceled', 'abort') THEN 'cancelled'
    ELSE 'other'
END
FROM (SELECT lower(replace(decision, '-', '_')) AS d) x
$$;

CREATE OR REPLACE VIEW approvals WITH (security_invoker = true) AS
SELECT tenant_id, provider, request_type, coalesce(decision, CASE WHEN resolved_at IS NULL THEN 'pending' ELSE 'none' END) AS decision,
       count(*) AS requests,
       round(avg(latency_ms), 3) AS avg_latency_ms,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms))::numeric, 3) AS p50_latency_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms))::numeric, 3) AS p95_latency_ms,
       -- One value per group: the group's decision names it.
       min(coalesce(decision_outcome(decision), CASE WHEN resolved_at IS NULL THEN 'pending' ELSE 'none' END)) AS outcome
FROM requests GROUP BY 1, 2, 3, 4;
