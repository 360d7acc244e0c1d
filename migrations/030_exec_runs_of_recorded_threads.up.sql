-- Each Codex turn once when a thread was captured twice: through `codex
-- exec --json` and through the rollout file the same runs wrote (or the
-- app-server that ran them). `agentwire ingest file` with no path reads
-- ~/.codex/sessions, so a team that captures codex exec also has its
-- rollouts. The exec stream names no turn, no call id and no model, so
-- its turns, items and usage cannot be paired with the rollout's one by
-- one: every turn counted twice, once unpriced (model unknown).
--
-- The rollout is the whole thread (every `exec resume` appends to it),
-- with the provider's ids, model and times. So the rows of an exec run
-- whose thread has a rollout or app-server session are left out of what
-- counts turns, calls and tokens: turns_once (and turn_durations and
-- turn_failures on it), tool_calls_by_tool and usage_priced (and the
-- usage views on it). The rows stay in their tables.
--
-- sessions.dialect says what a session was mapped from: the projector
-- writes it from the events' mapping version; rows projected before are
-- filled from the event log.
ALTER TABLE sessions ADD COLUMN dialect text;

UPDATE sessions s SET dialect = (
    SELECT split_part(e.mapping_version, '/', 1) FROM events e
    WHERE e.tenant_id = s.tenant_id AND e.session_id = s.session_id
      AND e.mapping_version LIKE '_%/%' AND e.mapping_version NOT LIKE 'agentwire-%'
    ORDER BY e.runtime_seq LIMIT 1)
WHERE s.dialect IS NULL;

-- Whether a row of this session and thread is a codex exec run's view of
-- a thread a rollout or app-server session describes.
CREATE FUNCTION exec_run_of_recorded_thread(p_tenant text, p_session uuid, p_thread uuid) RETURNS boolean
LANGUAGE sql STABLE AS $$
    SELECT p_thread IS NOT NULL
       AND EXISTS (SELECT FROM sessions s
                   WHERE s.tenant_id = p_tenant AND s.session_id = p_session AND s.dialect = 'codex-exec')
       AND EXISTS (SELECT FROM turns o JOIN sessions os ON os.tenant_id = o.tenant_id AND os.session_id = o.session_id
                   WHERE o.tenant_id = p_tenant AND o.thread_id = p_thread
                     AND os.dialect IN ('codex-rollout', 'codex-app-server'))
$$;

-- 029's turns_once, without exec runs of recorded threads.
CREATE OR REPLACE VIEW turns_once WITH (security_invoker = true) AS
SELECT DISTINCT ON (tenant_id, turn_key(tenant_id, thread_id, provider_turn_id, turn_id)) *
FROM turns_read r
WHERE NOT exec_run_of_recorded_thread(r.tenant_id, r.session_id, r.thread_id)
ORDER BY tenant_id, turn_key(tenant_id, thread_id, provider_turn_id, turn_id),
    state IN ('failed', 'aborted', 'interrupted', 'cancelled') DESC, state = 'in_progress', session_id;

-- 023's tool_calls_by_tool, likewise.
CREATE OR REPLACE VIEW tool_calls_by_tool WITH (security_invoker = true) AS
SELECT tenant_id, provider, coalesce(tool_name, item_type) AS tool,
       count(*) AS calls,
       count(*) FILTER (WHERE status = 'completed' AND coalesce(exit_code, 0) = 0) AS succeeded,
       count(*) FILTER (WHERE status IN ('failed', 'declined') OR exit_code <> 0) AS failed,
       round(count(*) FILTER (WHERE status = 'completed' AND coalesce(exit_code, 0) = 0)::numeric
             / nullif(count(*) FILTER (WHERE status IS DISTINCT FROM 'inProgress'), 0), 4) AS success_rate,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY coalesce(duration_ms, stated_span_ms(started_at, completed_at, started_at_ingested, completed_at_ingested))))::numeric, 3) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY coalesce(duration_ms, stated_span_ms(started_at, completed_at, started_at_ingested, completed_at_ingested))))::numeric, 3) AS p95_ms
FROM items i
WHERE (tool_name IS NOT NULL
       OR item_type IN ('command_execution', 'file_change', 'mcp_tool_call', 'dynamic_tool_call',
                        'collab_agent_tool_call', 'web_search', 'image_view'))
  AND by_user IS NOT TRUE
  AND NOT exec_run_of_recorded_thread(i.tenant_id, i.session_id, i.thread_id)
GROUP BY 1, 2, 3;

-- 022's usage_priced, likewise.
CREATE OR REPLACE VIEW usage_priced WITH (security_invoker = true) AS
SELECT u.tenant_id, u.turn_id, u.model, u.provider, u.session_id, u.thread_id, u.occurred_at,
       u.input_tokens, u.cached_input_tokens, u.cache_write_input_tokens, u.output_tokens,
       u.reasoning_output_tokens, u.cost_usd, u.usage_key,
       p.model AS priced_as,
       c.priced_cost_usd,
       coalesce(u.cost_usd, c.priced_cost_usd) AS estimated_cost_usd,
       u.provisional
FROM usage_ledger u
LEFT JOIN LATERAL (
    SELECT * FROM model_prices mp
    WHERE mp.model = price_model_name(u.model)
      AND mp.tenant_id IN ('', u.tenant_id) AND mp.provider IN ('', u.provider)
      AND mp.valid_from <= u.occurred_at
    ORDER BY mp.tenant_id DESC, mp.provider DESC, mp.valid_from DESC
    LIMIT 1
) p ON true
CROSS JOIN LATERAL (
    SELECT CASE WHEN u.input_tokens + u.cached_input_tokens + u.cache_write_input_tokens + u.output_tokens = 0 THEN 0
        ELSE trim_scale((u.input_tokens * p.input_usd_per_mtok
            + u.cached_input_tokens * coalesce(p.cached_input_usd_per_mtok, p.input_usd_per_mtok)
            + u.cache_write_input_tokens * coalesce(p.cache_write_usd_per_mtok, p.input_usd_per_mtok)
            + u.output_tokens * p.output_usd_per_mtok) / 1000000)
    END AS priced_cost_usd
) c
WHERE NOT exec_run_of_recorded_thread(u.tenant_id, u.session_id, u.thread_id);
