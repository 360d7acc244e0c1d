-- A turn's tokens in turns_once are the turn's own, as in usage_priced
-- (030): the first turn of a `codex exec resume` run captured in an ingest
-- session of its own carries the earlier runs' count, which exec_runs
-- gives and usage_priced takes off. turns_once kept it, so a thread
-- resumed n times showed its first turn's tokens n + 1 times to whoever
-- summed turns. turns keeps what the events said.
--
-- The same rows and columns as 030's turns_once; the five token columns
-- have the carried-over count taken off, bucket by bucket. A turn no
-- exec run carried into reads as before. exec_runs is joined before the
-- sort DISTINCT ON needs: joined after it, the plan sorted every turn a
-- second time (a fifth more time on 200k turns; joined before, alike).
-- Whether a rollout or app-server session describes the thread is asked
-- as a NOT EXISTS the planner can hash, not through
-- exec_run_of_recorded_thread (see 033).
CREATE OR REPLACE VIEW turns_once WITH (security_invoker = true) AS
SELECT DISTINCT ON (r.tenant_id, turn_key(r.tenant_id, r.thread_id, r.provider_turn_id, r.turn_id))
       r.tenant_id, r.turn_id, r.session_id, r.thread_id, r.provider, r.state, r.model, r.effort,
       r.started_at, r.ended_at, r.stop_reason, r.error_message, r.error_class,
       CASE WHEN k.session_id IS NULL THEN r.input_tokens
            ELSE greatest(r.input_tokens - k.carried_input_tokens, 0) END AS input_tokens,
       CASE WHEN k.session_id IS NULL THEN r.cached_input_tokens
            ELSE greatest(r.cached_input_tokens - k.carried_cached_input_tokens, 0) END AS cached_input_tokens,
       CASE WHEN k.session_id IS NULL THEN r.cache_write_input_tokens
            ELSE greatest(r.cache_write_input_tokens - k.carried_cache_write_input_tokens, 0) END AS cache_write_input_tokens,
       CASE WHEN k.session_id IS NULL THEN r.output_tokens
            ELSE greatest(r.output_tokens - k.carried_output_tokens, 0) END AS output_tokens,
       CASE WHEN k.session_id IS NULL THEN r.reasoning_output_tokens
            ELSE greatest(r.reasoning_output_tokens - k.carried_reasoning_output_tokens, 0) END AS reasoning_output_tokens,
       r.cost_usd, r.duration_ms, r.plan, r.plan_explanation, r.diff, r.updated_at,
       r.session_columns, r.provider_turn_id, r.started_at_ingested, r.ended_at_ingested
FROM turns_read r
LEFT JOIN sessions s ON s.tenant_id = r.tenant_id AND s.session_id = r.session_id
LEFT JOIN exec_runs k ON k.tenant_id = r.tenant_id AND k.thread_id = r.thread_id AND k.session_id = r.session_id
    AND k.first_turn = r.turn_id AND k.carried_total < k.first_total
WHERE s.dialect IS DISTINCT FROM 'codex-exec' OR r.thread_id IS NULL
       OR NOT EXISTS (SELECT FROM turns o JOIN sessions os ON os.tenant_id = o.tenant_id AND os.session_id = o.session_id
                      WHERE o.tenant_id = r.tenant_id AND o.thread_id = r.thread_id
                        AND os.dialect IN ('codex-rollout', 'codex-app-server'))
ORDER BY r.tenant_id, turn_key(r.tenant_id, r.thread_id, r.provider_turn_id, r.turn_id),
    r.state IN ('failed', 'aborted', 'interrupted', 'cancelled') DESC, r.state = 'in_progress', r.session_id;
