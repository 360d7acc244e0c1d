-- agentwire projections: the canonical event log and the state the projector
-- folds out of it. Every table carries tenant_id and row-level security; the
-- projector owns the tables (and so is not subject to the policies), analysts
-- get the agentwire_analyst role and see the tenant named by the
-- agentwire.tenant setting. Everything here can be truncated and rebuilt by
-- re-consuming RUNTIME from the start.

-- The canonical event log: one row per event, whatever its type.
CREATE TABLE events (
    tenant_id       text        NOT NULL,
    event_id        uuid        NOT NULL,
    type            text        NOT NULL,
    provider        text        NOT NULL,
    session_id      uuid        NOT NULL,
    thread_id       uuid,
    turn_id         uuid,
    item_id         uuid,
    request_id      uuid,
    created_at      timestamptz NOT NULL,
    mapping_version text        NOT NULL DEFAULT '',
    runtime_seq     bigint      NOT NULL,
    data            jsonb       NOT NULL,
    PRIMARY KEY (tenant_id, event_id)
);
CREATE INDEX events_session_idx ON events (tenant_id, session_id, runtime_seq);
CREATE INDEX events_type_time_idx ON events (tenant_id, type, created_at);

-- Where the projector is: per consumer and session, the last RUNTIME
-- sequence applied, written in the transaction that applied it.
CREATE TABLE projector_checkpoints (
    consumer    text        NOT NULL,
    tenant_id   text        NOT NULL,
    session_id  uuid        NOT NULL,
    last_seq    bigint      NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, tenant_id, session_id)
);

CREATE TABLE sessions (
    tenant_id      text        NOT NULL,
    session_id     uuid        NOT NULL,
    provider       text        NOT NULL,
    state          text,
    state_reason   text,
    model          text,
    cli_version    text,
    config         jsonb       NOT NULL DEFAULT '{}',
    started_at     timestamptz,
    ended_at       timestamptz,
    exit_kind      text,
    exit_code      integer,
    exit_reason    text,
    first_event_at timestamptz NOT NULL,
    last_event_at  timestamptz NOT NULL,
    event_count    bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, session_id)
);

CREATE TABLE threads (
    tenant_id                text        NOT NULL,
    thread_id                uuid        NOT NULL,
    session_id               uuid        NOT NULL,
    provider                 text        NOT NULL,
    provider_thread_id       text,
    state                    text,
    name                     text,
    metadata                 jsonb       NOT NULL DEFAULT '{}',
    input_tokens             bigint,
    cached_input_tokens      bigint,
    cache_write_input_tokens bigint,
    output_tokens            bigint,
    reasoning_output_tokens  bigint,
    context_window           bigint,
    started_at               timestamptz,
    updated_at               timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, thread_id)
);

CREATE TABLE turns (
    tenant_id                text        NOT NULL,
    turn_id                  uuid        NOT NULL,
    session_id               uuid        NOT NULL,
    thread_id                uuid,
    provider                 text        NOT NULL,
    state                    text        NOT NULL DEFAULT 'in_progress',
    model                    text,
    effort                   text,
    started_at               timestamptz,
    ended_at                 timestamptz,
    stop_reason              text,
    error_message            text,
    error_class              text,
    input_tokens             bigint,
    cached_input_tokens      bigint,
    cache_write_input_tokens bigint,
    output_tokens            bigint,
    reasoning_output_tokens  bigint,
    cost_usd                 double precision,
    duration_ms              bigint,
    plan                     jsonb,
    plan_explanation         text,
    diff                     text,
    updated_at               timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, turn_id)
);
CREATE INDEX turns_session_idx ON turns (tenant_id, session_id);

-- Items: the final text per stream kind lives in one column per kind; deltas
-- append to it, lifecycle content (item.completed above all) replaces it.
CREATE TABLE items (
    tenant_id              text        NOT NULL,
    item_id                uuid        NOT NULL,
    session_id             uuid        NOT NULL,
    thread_id              uuid,
    turn_id                uuid,
    provider               text        NOT NULL,
    item_type              text        NOT NULL DEFAULT 'unknown',
    status                 text,
    title                  text,
    detail                 text,
    tool_name              text,
    command                text,
    exit_code              integer,
    files                  text[],
    parent_item_id         uuid,
    text_assistant         text,
    text_reasoning         text,
    text_reasoning_summary text,
    text_plan              text,
    text_command_output    text,
    text_file_change       text,
    text_unknown           text,
    started_at             timestamptz,
    completed_at           timestamptz,
    updated_at             timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, item_id)
);
CREATE INDEX items_turn_idx ON items (tenant_id, turn_id);

CREATE TABLE requests (
    tenant_id    text        NOT NULL,
    request_id   uuid        NOT NULL,
    session_id   uuid        NOT NULL,
    thread_id    uuid,
    turn_id      uuid,
    item_id      uuid,
    provider     text        NOT NULL,
    request_type text        NOT NULL DEFAULT 'unknown',
    detail       text,
    args         jsonb,
    opened_at    timestamptz,
    resolved_at  timestamptz,
    decision     text,
    resolution   jsonb,
    latency_ms   bigint GENERATED ALWAYS AS (
        (EXTRACT(EPOCH FROM (resolved_at - opened_at)) * 1000)::bigint) STORED,
    PRIMARY KEY (tenant_id, request_id)
);

CREATE TABLE tasks (
    tenant_id      text        NOT NULL,
    session_id     uuid        NOT NULL,
    task_id        text        NOT NULL,
    provider       text        NOT NULL,
    thread_id      uuid,
    turn_id        uuid,
    description    text,
    task_type      text,
    status         text,
    summary        text,
    last_tool_name text,
    usage          jsonb,
    started_at     timestamptz,
    completed_at   timestamptz,
    updated_at     timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, session_id, task_id)
);

CREATE TABLE hooks (
    tenant_id    text        NOT NULL,
    session_id   uuid        NOT NULL,
    hook_id      text        NOT NULL,
    provider     text        NOT NULL,
    turn_id      uuid,
    hook_name    text,
    hook_event   text,
    outcome      text,
    output       text,
    stdout       text,
    stderr       text,
    exit_code    integer,
    started_at   timestamptz,
    completed_at timestamptz,
    PRIMARY KEY (tenant_id, session_id, hook_id)
);

-- One row per observed window of each account.rate-limits.updated event
-- (window '' when the snapshot names none).
CREATE TABLE rate_limit_observations (
    tenant_id      text        NOT NULL,
    event_id       uuid        NOT NULL,
    window_name    text        NOT NULL,
    session_id     uuid        NOT NULL,
    provider       text        NOT NULL,
    observed_at    timestamptz NOT NULL,
    used_percent   double precision,
    window_minutes bigint,
    resets_at      timestamptz,
    status         text,
    snapshot       jsonb,
    PRIMARY KEY (tenant_id, event_id, window_name)
);

-- The usage ledger: what each turn used, per model (from turn.completed:
-- its modelUsage breakdown, or its usage under the turn's model).
CREATE TABLE usage_ledger (
    tenant_id                text        NOT NULL,
    turn_id                  uuid        NOT NULL,
    model                    text        NOT NULL,
    provider                 text        NOT NULL,
    session_id               uuid        NOT NULL,
    thread_id                uuid,
    occurred_at              timestamptz NOT NULL,
    input_tokens             bigint      NOT NULL,
    cached_input_tokens      bigint      NOT NULL,
    cache_write_input_tokens bigint      NOT NULL,
    output_tokens            bigint      NOT NULL,
    reasoning_output_tokens  bigint      NOT NULL,
    cost_usd                 double precision,
    PRIMARY KEY (tenant_id, turn_id, model)
);
CREATE INDEX usage_ledger_time_idx ON usage_ledger (tenant_id, occurred_at);

-- The drift radar: provider frame kinds no mapping knows, from runtime.warning
-- events whose detail names a kind.
CREATE TABLE unmapped_kinds (
    tenant_id   text        NOT NULL,
    provider    text        NOT NULL,
    cli_version text        NOT NULL,
    dialect     text        NOT NULL,
    kind        text        NOT NULL,
    count       bigint      NOT NULL,
    first_seen  timestamptz NOT NULL,
    last_seen   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, provider, cli_version, dialect, kind)
);

-- Analyst views. security_invoker makes them apply the caller's row-level
-- security, so an analyst sees the same tenant through a view as through
-- the tables.
CREATE VIEW usage_by_day WITH (security_invoker = true) AS
SELECT tenant_id, (occurred_at AT TIME ZONE 'UTC')::date AS day, provider, model,
       count(*) AS turns,
       sum(input_tokens) AS input_tokens, sum(cached_input_tokens) AS cached_input_tokens,
       sum(cache_write_input_tokens) AS cache_write_input_tokens, sum(output_tokens) AS output_tokens,
       sum(reasoning_output_tokens) AS reasoning_output_tokens,
       sum(input_tokens + cached_input_tokens + cache_write_input_tokens + output_tokens) AS total_tokens,
       sum(cost_usd) AS cost_usd
FROM usage_ledger GROUP BY 1, 2, 3, 4;

CREATE VIEW usage_by_month WITH (security_invoker = true) AS
SELECT tenant_id, date_trunc('month', occurred_at AT TIME ZONE 'UTC')::date AS month, provider, model,
       count(*) AS turns,
       sum(input_tokens) AS input_tokens, sum(cached_input_tokens) AS cached_input_tokens,
       sum(cache_write_input_tokens) AS cache_write_input_tokens, sum(output_tokens) AS output_tokens,
       sum(reasoning_output_tokens) AS reasoning_output_tokens,
       sum(input_tokens + cached_input_tokens + cache_write_input_tokens + output_tokens) AS total_tokens,
       sum(cost_usd) AS cost_usd
FROM usage_ledger GROUP BY 1, 2, 3, 4;

CREATE VIEW usage_by_session WITH (security_invoker = true) AS
SELECT u.tenant_id, u.session_id, u.provider, s.model AS session_model,
       min(u.occurred_at) AS first_turn_at, max(u.occurred_at) AS last_turn_at,
       count(DISTINCT u.turn_id) AS turns,
       sum(u.input_tokens) AS input_tokens, sum(u.cached_input_tokens) AS cached_input_tokens,
       sum(u.cache_write_input_tokens) AS cache_write_input_tokens, sum(u.output_tokens) AS output_tokens,
       sum(u.reasoning_output_tokens) AS reasoning_output_tokens,
       sum(u.input_tokens + u.cached_input_tokens + u.cache_write_input_tokens + u.output_tokens) AS total_tokens,
       sum(u.cost_usd) AS cost_usd
FROM usage_ledger u
LEFT JOIN sessions s ON s.tenant_id = u.tenant_id AND s.session_id = u.session_id
GROUP BY 1, 2, 3, 4;

-- Tool calls: items that name a tool or run a command, finished or not.
CREATE VIEW tool_calls_by_tool WITH (security_invoker = true) AS
SELECT tenant_id, provider, coalesce(tool_name, item_type) AS tool,
       count(*) AS calls,
       count(*) FILTER (WHERE status = 'completed' AND coalesce(exit_code, 0) = 0) AS succeeded,
       count(*) FILTER (WHERE status IN ('failed', 'declined') OR exit_code <> 0) AS failed,
       round(count(*) FILTER (WHERE status = 'completed' AND coalesce(exit_code, 0) = 0)::numeric
             / nullif(count(*) FILTER (WHERE status IS DISTINCT FROM 'inProgress'), 0), 4) AS success_rate,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM completed_at - started_at) * 1000) AS p50_ms,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY EXTRACT(EPOCH FROM completed_at - started_at) * 1000) AS p95_ms
FROM items
WHERE tool_name IS NOT NULL
   OR item_type IN ('command_execution', 'file_change', 'mcp_tool_call', 'dynamic_tool_call',
                    'collab_agent_tool_call', 'web_search', 'image_view')
GROUP BY 1, 2, 3;

CREATE VIEW approvals WITH (security_invoker = true) AS
SELECT tenant_id, provider, request_type, coalesce(decision, CASE WHEN resolved_at IS NULL THEN 'pending' ELSE 'none' END) AS decision,
       count(*) AS requests,
       avg(latency_ms)::double precision AS avg_latency_ms,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) AS p50_latency_ms,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95_latency_ms
FROM requests GROUP BY 1, 2, 3, 4;

CREATE VIEW turn_durations WITH (security_invoker = true) AS
SELECT tenant_id, provider, coalesce(model, '') AS model, state,
       count(*) AS turns,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY coalesce(duration_ms, EXTRACT(EPOCH FROM ended_at - started_at) * 1000)) AS p50_ms,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY coalesce(duration_ms, EXTRACT(EPOCH FROM ended_at - started_at) * 1000)) AS p95_ms,
       max(coalesce(duration_ms, EXTRACT(EPOCH FROM ended_at - started_at) * 1000)) AS max_ms
FROM turns GROUP BY 1, 2, 3, 4;

CREATE VIEW turn_failures WITH (security_invoker = true) AS
SELECT tenant_id, provider, state, coalesce(error_class, '') AS error_class,
       coalesce(error_message, stop_reason, '') AS reason,
       count(*) AS turns, max(ended_at) AS last_seen
FROM turns
WHERE state NOT IN ('completed', 'in_progress') OR error_message IS NOT NULL
GROUP BY 1, 2, 3, 4, 5;

CREATE VIEW unmapped_kinds_by_version WITH (security_invoker = true) AS
SELECT tenant_id, provider, cli_version, dialect, kind, count, first_seen, last_seen
FROM unmapped_kinds;

-- Row-level security: a policy per table keyed on the agentwire.tenant
-- setting; unset, an analyst sees nothing.
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['events', 'projector_checkpoints', 'sessions', 'threads', 'turns', 'items',
                             'requests', 'tasks', 'hooks', 'rate_limit_observations', 'usage_ledger', 'unmapped_kinds']
    LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I USING (tenant_id = current_setting(''agentwire.tenant'', true))', t);
    END LOOP;
END $$;

-- The analyst role is cluster-wide; several schemas (or databases) may
-- create it at once, and a server that denies CREATEROLE still gets the
-- tables, without the grants.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentwire_analyst') THEN
        BEGIN
            CREATE ROLE agentwire_analyst NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
                  WHEN insufficient_privilege THEN
                      RAISE NOTICE 'agentwire: cannot create role agentwire_analyst; grant analysts SELECT yourself';
                      RETURN;
        END;
    END IF;
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO agentwire_analyst', current_schema());
    GRANT SELECT ON events, sessions, threads, turns, items, requests, tasks, hooks,
        rate_limit_observations, usage_ledger, unmapped_kinds, usage_by_day, usage_by_month,
        usage_by_session, tool_calls_by_tool, approvals, turn_durations, turn_failures,
        unmapped_kinds_by_version TO agentwire_analyst;
END $$;
