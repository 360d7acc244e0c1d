-- A Claude Code sub-agent's run is part of the turn that launched it, in
-- the turn views as in the usage views (035).
--
-- Claude Code 2.x writes a sub-agent's lines to a transcript of its own,
-- whose turn shares the launching thread and names its run
-- (turns.agent_id). The stream and older session logs show the same run
-- inside the launching turn. So the turn views said different things of
-- one run depending on what was ingested:
--   * turns_once, so turn_durations and turn_failures, counted a turn more
--     per sub-agent run when its transcript was ingested, with the
--     sub-agent's model and duration;
--   * thread_activity took the latest turn to start as the thread's last
--     turn. A sub-agent's turn starts inside the launching one: while that
--     turn still ran after its sub-agent had finished, the thread read as
--     idle, with the sub-agent's model, and threads_in_progress left it
--     out. A transcript that never states its end (the public logs of Claude
--     Code 2.0 to 2.1.39 state no stop reason) left its thread stalled after
--     the launching turn had ended.
-- The turn views now leave out the turns that name a run; their tokens
-- still count through usage_counted (035). The rows stay in turns, and
-- turns_read has agent_id for whoever asks about the runs themselves.
--
-- turns_read and turns_once also gain turns.usage_final (034), which
-- neither had: a column added to turns is appended to them (029).
-- turns_once leaves agent_id out: it would always be NULL there.
CREATE OR REPLACE VIEW turns_read WITH (security_invoker = true) AS
SELECT t.tenant_id, t.turn_id, t.session_id, t.thread_id, t.provider,
       CASE WHEN cut.short THEN 'interrupted' ELSE t.state END AS state,
       t.model, t.effort, t.started_at,
       CASE WHEN cut.short THEN s.ended_at ELSE t.ended_at END AS ended_at,
       t.stop_reason,
       CASE WHEN cut.short THEN coalesce(t.error_message, s.exit_reason, 'the agent exited') ELSE t.error_message END AS error_message,
       t.error_class, t.input_tokens, t.cached_input_tokens, t.cache_write_input_tokens, t.output_tokens,
       t.reasoning_output_tokens, t.cost_usd, t.duration_ms, t.plan, t.plan_explanation, t.diff, t.updated_at,
       t.session_columns, t.provider_turn_id, t.started_at_ingested, t.ended_at_ingested,
       t.usage_final, t.agent_id
FROM turns t
LEFT JOIN sessions s ON s.tenant_id = t.tenant_id AND s.session_id = t.session_id
CROSS JOIN LATERAL (SELECT t.state = 'in_progress' AND s.ended_at IS NOT NULL AS short) cut;

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
       r.session_columns, r.provider_turn_id, r.started_at_ingested, r.ended_at_ingested,
       r.usage_final
FROM turns_read r
LEFT JOIN sessions s ON s.tenant_id = r.tenant_id AND s.session_id = r.session_id
LEFT JOIN exec_runs k ON k.tenant_id = r.tenant_id AND k.thread_id = r.thread_id AND k.session_id = r.session_id
    AND k.first_turn = r.turn_id AND k.carried_total < k.first_total
WHERE r.agent_id IS NULL
  AND (s.dialect IS DISTINCT FROM 'codex-exec' OR r.thread_id IS NULL
       OR NOT EXISTS (SELECT FROM codex_recorded_turns o WHERE o.tenant_id = r.tenant_id AND o.thread_id = r.thread_id))
ORDER BY r.tenant_id, turn_key(r.tenant_id, r.thread_id, r.provider_turn_id, r.turn_id),
    r.state IN ('failed', 'aborted', 'interrupted', 'cancelled') DESC, r.state = 'in_progress', r.session_id;

-- 032's thread_activity, its last turn the latest of the thread's own.
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
    WHERE u.tenant_id = t.tenant_id AND u.thread_id = t.thread_id AND u.agent_id IS NULL
      AND coalesce(nullif(u.provider_turn_id, ''), u.turn_id::text) = (
          SELECT coalesce(nullif(w.provider_turn_id, ''), w.turn_id::text) FROM turns w
          WHERE w.tenant_id = t.tenant_id AND w.thread_id = t.thread_id AND w.agent_id IS NULL
          ORDER BY w.started_at DESC NULLS LAST, w.updated_at DESC
          LIMIT 1)
    ORDER BY u.state IN ('failed', 'aborted', 'interrupted', 'cancelled') DESC, u.state = 'in_progress', u.session_id
    LIMIT 1) last ON true
CROSS JOIN LATERAL (
    SELECT count(*) AS pending FROM requests r
    WHERE r.tenant_id = t.tenant_id AND r.thread_id = t.thread_id AND r.resolved_at IS NULL
      AND NOT EXISTS (SELECT FROM sessions s
                      WHERE s.tenant_id = r.tenant_id AND s.session_id = r.session_id AND s.ended_at IS NOT NULL)) waiting;

-- 033's threads_in_progress, its prefilter on the same turns.
CREATE OR REPLACE VIEW threads_in_progress WITH (security_invoker = true) AS
SELECT a.* FROM thread_activity a
WHERE a.status IN ('active', 'stalled')
  AND EXISTS (SELECT FROM turns u WHERE u.tenant_id = a.tenant_id AND u.thread_id = a.thread_id
                  AND u.state = 'in_progress' AND u.agent_id IS NULL);
