-- The usage views say how much of what they count is the usage so far of
-- turns that had not ended (016's provisional ledger rows): a log cut off
-- mid-turn, or a turn still running. usage_priced was created before the
-- ledger had the column (its u.* froze the columns then): the column is
-- appended to it, and provisional_turns to the views that read it, in
-- place (their columns so far unchanged, grants kept).
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
) c;

CREATE OR REPLACE VIEW usage_by_day WITH (security_invoker = true) AS
SELECT tenant_id, (occurred_at AT TIME ZONE 'UTC')::date AS day, provider, model,
       count(*) AS turns,
       sum(input_tokens) AS input_tokens, sum(cached_input_tokens) AS cached_input_tokens,
       sum(cache_write_input_tokens) AS cache_write_input_tokens, sum(output_tokens) AS output_tokens,
       sum(reasoning_output_tokens) AS reasoning_output_tokens,
       sum(input_tokens + cached_input_tokens + cache_write_input_tokens + output_tokens) AS total_tokens,
       sum(cost_usd) AS cost_usd,
       sum(estimated_cost_usd) AS estimated_cost_usd,
       count(*) FILTER (WHERE estimated_cost_usd IS NULL) AS unpriced_turns,
       count(*) FILTER (WHERE provisional) AS provisional_turns
FROM usage_priced GROUP BY 1, 2, 3, 4;

CREATE OR REPLACE VIEW usage_by_month WITH (security_invoker = true) AS
SELECT tenant_id, date_trunc('month', occurred_at AT TIME ZONE 'UTC')::date AS month, provider, model,
       count(*) AS turns,
       sum(input_tokens) AS input_tokens, sum(cached_input_tokens) AS cached_input_tokens,
       sum(cache_write_input_tokens) AS cache_write_input_tokens, sum(output_tokens) AS output_tokens,
       sum(reasoning_output_tokens) AS reasoning_output_tokens,
       sum(input_tokens + cached_input_tokens + cache_write_input_tokens + output_tokens) AS total_tokens,
       sum(cost_usd) AS cost_usd,
       sum(estimated_cost_usd) AS estimated_cost_usd,
       count(*) FILTER (WHERE estimated_cost_usd IS NULL) AS unpriced_turns,
       count(*) FILTER (WHERE provisional) AS provisional_turns
FROM usage_priced GROUP BY 1, 2, 3, 4;

CREATE OR REPLACE VIEW usage_by_session WITH (security_invoker = true) AS
SELECT u.tenant_id, u.session_id, u.provider, s.model AS session_model,
       min(u.occurred_at) AS first_turn_at, max(u.occurred_at) AS last_turn_at,
       count(DISTINCT u.turn_id) AS turns,
       sum(u.input_tokens) AS input_tokens, sum(u.cached_input_tokens) AS cached_input_tokens,
       sum(u.cache_write_input_tokens) AS cache_write_input_tokens, sum(u.output_tokens) AS output_tokens,
       sum(u.reasoning_output_tokens) AS reasoning_output_tokens,
       sum(u.input_tokens + u.cached_input_tokens + u.cache_write_input_tokens + u.output_tokens) AS total_tokens,
       sum(u.cost_usd) AS cost_usd,
       sum(u.estimated_cost_usd) AS estimated_cost_usd,
       count(*) FILTER (WHERE u.estimated_cost_usd IS NULL) AS unpriced_turns,
       count(DISTINCT u.turn_id) FILTER (WHERE u.provisional) AS provisional_turns
FROM usage_priced u
LEFT JOIN sessions s ON s.tenant_id = u.tenant_id AND s.session_id = u.session_id
GROUP BY 1, 2, 3, 4;
