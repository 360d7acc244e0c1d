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

-- codex exec reports the thread's running token count at every turn's
-- end, not the turn's (codex-exec/7): a run that resumes a thread
-- (`codex exec resume`) carries the earlier runs' tokens. The adapter
-- counts a turn as the difference from the count its session saw last,
-- so a run resumed in an ingest session of its own (each `ingest exec`
-- is one) counted the earlier runs again in its first turn: a thread
-- resumed n times counted its first turn n + 1 times.
--
-- A run's ledger rows add up to its last count, and counts only grow from
-- one run of a thread to the next. So, of a thread's codex-exec sessions
-- ordered by their totals, the one before a session left the count that
-- session's first row carried over, when it is below that row: usage_priced
-- takes it off that row, bucket by bucket. exec_runs computes it for the
-- exec rows alone, in one pass (a window), not per row. The ledger keeps
-- the rows as the events said. Two captures of one run report equal
-- counts and take nothing off each other.
CREATE VIEW exec_runs WITH (security_invoker = true) AS
SELECT tenant_id, thread_id, session_id, first_turn, first_total,
       input_tokens, cached_input_tokens, cache_write_input_tokens, output_tokens, reasoning_output_tokens,
       carried_input_tokens, carried_cached_input_tokens, carried_cache_write_input_tokens,
       carried_output_tokens, carried_reasoning_output_tokens, carried_total
FROM (
    SELECT x.*,
           lag(x.input_tokens) OVER w AS carried_input_tokens,
           lag(x.cached_input_tokens) OVER w AS carried_cached_input_tokens,
           lag(x.cache_write_input_tokens) OVER w AS carried_cache_write_input_tokens,
           lag(x.output_tokens) OVER w AS carried_output_tokens,
           lag(x.reasoning_output_tokens) OVER w AS carried_reasoning_output_tokens,
           lag(x.total) OVER w AS carried_total
    FROM (
        SELECT u.tenant_id, u.thread_id, u.session_id,
               (array_agg(u.turn_id ORDER BY u.occurred_at, u.turn_id))[1] AS first_turn,
               (array_agg(u.input_tokens + u.cached_input_tokens + u.cache_write_input_tokens + u.output_tokens
                          ORDER BY u.occurred_at, u.turn_id))[1] AS first_total,
               sum(u.input_tokens)::bigint AS input_tokens, sum(u.cached_input_tokens)::bigint AS cached_input_tokens,
               sum(u.cache_write_input_tokens)::bigint AS cache_write_input_tokens,
               sum(u.output_tokens)::bigint AS output_tokens, sum(u.reasoning_output_tokens)::bigint AS reasoning_output_tokens,
               sum(u.input_tokens + u.cached_input_tokens + u.cache_write_input_tokens + u.output_tokens)::bigint AS total
        FROM usage_ledger u
        JOIN sessions s ON s.tenant_id = u.tenant_id AND s.session_id = u.session_id AND s.dialect = 'codex-exec'
        WHERE u.thread_id IS NOT NULL
        GROUP BY u.tenant_id, u.thread_id, u.session_id) x
    WINDOW w AS (PARTITION BY x.tenant_id, x.thread_id ORDER BY x.total, x.session_id)
) r;

-- 029's turns_once, 023's tool_calls_by_tool and 022's usage_priced,
-- without exec runs of recorded threads. They read the session's dialect
-- first and call exec_run_of_recorded_thread for codex-exec rows alone (OR
-- evaluates its arms in order): a SQL function call for every row, 20 µs
-- each, doubled the time of a scan of the ledger. Their columns are
-- unchanged.
CREATE OR REPLACE VIEW turns_once WITH (security_invoker = true) AS
SELECT DISTINCT ON (r.tenant_id, turn_key(r.tenant_id, r.thread_id, r.provider_turn_id, r.turn_id)) r.*
FROM turns_read r
LEFT JOIN sessions s ON s.tenant_id = r.tenant_id AND s.session_id = r.session_id
WHERE s.dialect IS DISTINCT FROM 'codex-exec' OR NOT exec_run_of_recorded_thread(r.tenant_id, r.session_id, r.thread_id)
ORDER BY r.tenant_id, turn_key(r.tenant_id, r.thread_id, r.provider_turn_id, r.turn_id),
    r.state IN ('failed', 'aborted', 'interrupted', 'cancelled') DESC, r.state = 'in_progress', r.session_id;

CREATE OR REPLACE VIEW tool_calls_by_tool WITH (security_invoker = true) AS
SELECT i.tenant_id, i.provider, coalesce(i.tool_name, i.item_type) AS tool,
       count(*) AS calls,
       count(*) FILTER (WHERE i.status = 'completed' AND coalesce(i.exit_code, 0) = 0) AS succeeded,
       count(*) FILTER (WHERE i.status IN ('failed', 'declined') OR i.exit_code <> 0) AS failed,
       round(count(*) FILTER (WHERE i.status = 'completed' AND coalesce(i.exit_code, 0) = 0)::numeric
             / nullif(count(*) FILTER (WHERE i.status IS DISTINCT FROM 'inProgress'), 0), 4) AS success_rate,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY coalesce(i.duration_ms, stated_span_ms(i.started_at, i.completed_at, i.started_at_ingested, i.completed_at_ingested))))::numeric, 3) AS p50_ms,
       round((percentile_cont(0.95) WITHIN GROUP (ORDER BY coalesce(i.duration_ms, stated_span_ms(i.started_at, i.completed_at, i.started_at_ingested, i.completed_at_ingested))))::numeric, 3) AS p95_ms
FROM items i
LEFT JOIN sessions s ON s.tenant_id = i.tenant_id AND s.session_id = i.session_id
WHERE (i.tool_name IS NOT NULL
       OR i.item_type IN ('command_execution', 'file_change', 'mcp_tool_call', 'dynamic_tool_call',
                          'collab_agent_tool_call', 'web_search', 'image_view'))
  AND i.by_user IS NOT TRUE
  AND (s.dialect IS DISTINCT FROM 'codex-exec' OR NOT exec_run_of_recorded_thread(i.tenant_id, i.session_id, i.thread_id))
GROUP BY 1, 2, 3;

-- usage_priced also takes off a resumed run's first row the tokens it
-- carried over (exec_runs).
CREATE OR REPLACE VIEW usage_priced WITH (security_invoker = true) AS
SELECT u.tenant_id, u.turn_id, u.model, u.provider, u.session_id, u.thread_id, u.occurred_at,
       t.input_tokens, t.cached_input_tokens, t.cache_write_input_tokens, t.output_tokens,
       t.reasoning_output_tokens, u.cost_usd, u.usage_key,
       p.model AS priced_as,
       c.priced_cost_usd,
       coalesce(u.cost_usd, c.priced_cost_usd) AS estimated_cost_usd,
       u.provisional
FROM usage_ledger u
LEFT JOIN sessions s ON s.tenant_id = u.tenant_id AND s.session_id = u.session_id
LEFT JOIN exec_runs k ON k.tenant_id = u.tenant_id AND k.thread_id = u.thread_id AND k.session_id = u.session_id
    AND k.first_turn = u.turn_id AND k.carried_total < k.first_total
CROSS JOIN LATERAL (
    SELECT greatest(u.input_tokens - coalesce(k.carried_input_tokens, 0), 0) AS input_tokens,
           greatest(u.cached_input_tokens - coalesce(k.carried_cached_input_tokens, 0), 0) AS cached_input_tokens,
           greatest(u.cache_write_input_tokens - coalesce(k.carried_cache_write_input_tokens, 0), 0) AS cache_write_input_tokens,
           greatest(u.output_tokens - coalesce(k.carried_output_tokens, 0), 0) AS output_tokens,
           greatest(u.reasoning_output_tokens - coalesce(k.carried_reasoning_output_tokens, 0), 0) AS reasoning_output_tokens
) t
LEFT JOIN LATERAL (
    SELECT * FROM model_prices mp
    WHERE mp.model = price_model_name(u.model)
      AND mp.tenant_id IN ('', u.tenant_id) AND mp.provider IN ('', u.provider)
      AND mp.valid_from <= u.occurred_at
    ORDER BY mp.tenant_id DESC, mp.provider DESC, mp.valid_from DESC
    LIMIT 1
) p ON true
CROSS JOIN LATERAL (
    SELECT CASE WHEN t.input_tokens + t.cached_input_tokens + t.cache_write_input_tokens + t.output_tokens = 0 THEN 0
        ELSE trim_scale((t.input_tokens * p.input_usd_per_mtok
            + t.cached_input_tokens * coalesce(p.cached_input_usd_per_mtok, p.input_usd_per_mtok)
            + t.cache_write_input_tokens * coalesce(p.cache_write_usd_per_mtok, p.input_usd_per_mtok)
            + t.output_tokens * p.output_usd_per_mtok) / 1000000)
    END AS priced_cost_usd
) c
WHERE s.dialect IS DISTINCT FROM 'codex-exec' OR NOT exec_run_of_recorded_thread(u.tenant_id, u.session_id, u.thread_id);

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentwire_analyst') THEN
        GRANT SELECT ON exec_runs TO agentwire_analyst;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'agentwire: cannot grant agentwire_analyst the view exec_runs; grant analysts SELECT yourself';
END $$;
