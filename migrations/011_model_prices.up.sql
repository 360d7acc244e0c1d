-- What the tokens cost where the provider does not say.
--
-- Only Claude's stream result states a cost; Claude Code's session logs,
-- Codex and Gemini state tokens alone, so cost_usd was NULL for most
-- turns and "what did this cost" had no answer. The ledger's tokens are
-- now priced from model_prices, list prices per million tokens, and the
-- usage views add estimated_cost_usd: the stated cost where there is one,
-- else the priced tokens (ccusage prices the same way; TestCCUsage holds
-- the views to its figures). unpriced_turns counts the ledger rows of a
-- model nobody priced, whose cost the estimate leaves out; the view
-- unpriced_models lists those models, to be priced by adding rows.
--
-- A price applies from valid_from on (a change is a new row, so turns
-- keep the price of their day). tenant_id '' and provider '' are every
-- tenant's and every provider's; a tenant's own row (a negotiated price)
-- wins over the list price, and a provider's (a runtime that bills the
-- model its own way) over the model's. The model is named as the
-- provider reports it, without a trailing release date
-- (claude-sonnet-4-5-20250929 is priced as claude-sonnet-4-5): a
-- different name is a different model, never the nearest match, so an
-- unknown model stays unpriced rather than priced as another.
--
-- Not modelled: prices that depend on a request's size (Sonnet's and
-- Gemini Pro's dearer tokens beyond 200k of context: the ledger keeps
-- turns, not requests), Anthropic's one-hour cache writes (the ledger
-- has one cache-write count, priced at the five-minute rate, as ccusage
-- does), batch and priority tiers.
-- price_model_name is the name a model is priced under: without a
-- trailing release date (-20250929, -2025-04-14).
CREATE FUNCTION price_model_name(model text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
RETURN regexp_replace(model, '-(\d{8}|\d{4}-\d{2}-\d{2})$', '');

CREATE TABLE model_prices (
    tenant_id                 text        NOT NULL DEFAULT '',
    provider                  text        NOT NULL DEFAULT '',
    model                     text        NOT NULL,
    valid_from                timestamptz NOT NULL DEFAULT '-infinity',
    input_usd_per_mtok        numeric     NOT NULL CHECK (input_usd_per_mtok >= 0),
    -- NULL: the provider sells no such token; priced as uncached input.
    cached_input_usd_per_mtok numeric     CHECK (cached_input_usd_per_mtok >= 0),
    cache_write_usd_per_mtok  numeric     CHECK (cache_write_usd_per_mtok >= 0),
    output_usd_per_mtok       numeric     NOT NULL CHECK (output_usd_per_mtok >= 0),
    source                    text        NOT NULL DEFAULT '',
    PRIMARY KEY (tenant_id, provider, model, valid_from),
    CHECK (model <> '' AND model = price_model_name(model))
);

ALTER TABLE model_prices ENABLE ROW LEVEL SECURITY;
-- List prices are nobody's data; a tenant's own prices are its own.
CREATE POLICY tenant_isolation ON model_prices
    USING (tenant_id = '' OR tenant_id = ANY ((SELECT visible_tenants())::text[]));

INSERT INTO model_prices (model, input_usd_per_mtok, cached_input_usd_per_mtok, cache_write_usd_per_mtok, output_usd_per_mtok, source) VALUES
    -- Anthropic: cache reads at 0.1 and five-minute cache writes at 1.25
    -- of the input price.
    ('claude-opus-4-6',   5,    0.5,   6.25,  25, 'Anthropic list price'),
    ('claude-opus-4-5',   5,    0.5,   6.25,  25, 'Anthropic list price'),
    ('claude-opus-4-1',  15,    1.5,  18.75,  75, 'Anthropic list price'),
    ('claude-opus-4',    15,    1.5,  18.75,  75, 'Anthropic list price'),
    ('claude-sonnet-4-6', 3,    0.3,   3.75,  15, 'Anthropic list price, up to 200k tokens of context'),
    ('claude-sonnet-4-5', 3,    0.3,   3.75,  15, 'Anthropic list price, up to 200k tokens of context'),
    ('claude-sonnet-4',   3,    0.3,   3.75,  15, 'Anthropic list price, up to 200k tokens of context'),
    ('claude-3-7-sonnet', 3,    0.3,   3.75,  15, 'Anthropic list price'),
    ('claude-haiku-4-5',  1,    0.1,   1.25,   5, 'Anthropic list price'),
    ('claude-3-5-haiku',  0.8,  0.08,  1,      4, 'Anthropic list price'),
    -- OpenAI: input counts uncached tokens only (the canonical model's),
    -- output includes reasoning; no cache writes are sold.
    ('gpt-5.5',           5,    0.5,   NULL,  30, 'OpenAI list price'),
    ('gpt-5.4',           2.5,  0.25,  NULL,  15, 'OpenAI list price'),
    ('gpt-5.4-mini',      0.75, 0.075, NULL, 4.5, 'OpenAI list price'),
    ('gpt-5.3-codex',     1.75, 0.175, NULL,  14, 'OpenAI list price'),
    ('gpt-5.2-codex',     1.75, 0.175, NULL,  14, 'OpenAI list price'),
    ('gpt-5.2',           1.75, 0.175, NULL,  14, 'OpenAI list price'),
    ('gpt-5.1-codex',     1.25, 0.125, NULL,  10, 'OpenAI list price'),
    ('gpt-5.1',           1.25, 0.125, NULL,  10, 'OpenAI list price'),
    ('gpt-5-codex',       1.25, 0.125, NULL,  10, 'OpenAI list price'),
    ('gpt-5',             1.25, 0.125, NULL,  10, 'OpenAI list price'),
    ('gpt-5-mini',        0.25, 0.025, NULL,   2, 'OpenAI list price'),
    ('o3',                2,    0.5,   NULL,   8, 'OpenAI list price'),
    -- Google: up to 200k tokens of context (Pro).
    ('gemini-2.5-pro',    1.25, 0.125, NULL,  10, 'Google list price, up to 200k tokens of context'),
    ('gemini-2.5-flash',  0.3,  0.03,  NULL, 2.5, 'Google list price');

-- usage_priced is the ledger with each row's price: the price row that
-- applies (the tenant's own before the list price, the provider's
-- before every provider's, then the latest that had begun), what the
-- tokens cost at it (exact: numeric), and the estimate the usage views
-- sum.
CREATE VIEW usage_priced WITH (security_invoker = true) AS
SELECT u.*, p.model AS priced_as,
       c.priced_cost_usd,
       coalesce(u.cost_usd, c.priced_cost_usd) AS estimated_cost_usd
FROM usage_ledger u
LEFT JOIN LATERAL (
    SELECT * FROM model_prices mp
    WHERE mp.model = price_model_name(u.model)
      AND mp.tenant_id IN ('', u.tenant_id) AND mp.provider IN ('', u.provider)
      AND mp.valid_from <= u.occurred_at
    ORDER BY mp.tenant_id DESC, mp.provider DESC, mp.valid_from DESC
    LIMIT 1
) p ON true
-- No tokens cost nothing, priced or not (Claude Code's "<synthetic>"
-- error messages). trim_scale: the division's twenty decimals are zeros
-- past the price's own.
CROSS JOIN LATERAL (
    SELECT CASE WHEN u.input_tokens + u.cached_input_tokens + u.cache_write_input_tokens + u.output_tokens = 0 THEN 0
        ELSE trim_scale((u.input_tokens * p.input_usd_per_mtok
            + u.cached_input_tokens * coalesce(p.cached_input_usd_per_mtok, p.input_usd_per_mtok)
            + u.cache_write_input_tokens * coalesce(p.cache_write_usd_per_mtok, p.input_usd_per_mtok)
            + u.output_tokens * p.output_usd_per_mtok) / 1000000)
    END AS priced_cost_usd
) c;

-- The usage views gain the estimate and how many turns it leaves out
-- (their columns so far unchanged: replaced in place, grants kept).
CREATE OR REPLACE VIEW usage_by_day WITH (security_invoker = true) AS
SELECT tenant_id, (occurred_at AT TIME ZONE 'UTC')::date AS day, provider, model,
       count(*) AS turns,
       sum(input_tokens) AS input_tokens, sum(cached_input_tokens) AS cached_input_tokens,
       sum(cache_write_input_tokens) AS cache_write_input_tokens, sum(output_tokens) AS output_tokens,
       sum(reasoning_output_tokens) AS reasoning_output_tokens,
       sum(input_tokens + cached_input_tokens + cache_write_input_tokens + output_tokens) AS total_tokens,
       sum(cost_usd) AS cost_usd,
       sum(estimated_cost_usd) AS estimated_cost_usd,
       count(*) FILTER (WHERE estimated_cost_usd IS NULL) AS unpriced_turns
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
       count(*) FILTER (WHERE estimated_cost_usd IS NULL) AS unpriced_turns
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
       count(*) FILTER (WHERE u.estimated_cost_usd IS NULL) AS unpriced_turns
FROM usage_priced u
LEFT JOIN sessions s ON s.tenant_id = u.tenant_id AND s.session_id = u.session_id
GROUP BY 1, 2, 3, 4;

-- The models whose turns have neither a stated cost nor a price: what to
-- add to model_prices.
CREATE VIEW unpriced_models WITH (security_invoker = true) AS
SELECT tenant_id, provider, model, count(*) AS turns,
       sum(input_tokens + cached_input_tokens + cache_write_input_tokens + output_tokens) AS total_tokens,
       min(occurred_at) AS first_turn_at, max(occurred_at) AS last_turn_at
FROM usage_priced
WHERE estimated_cost_usd IS NULL
GROUP BY 1, 2, 3;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentwire_analyst') THEN
        GRANT SELECT ON model_prices, usage_priced, unpriced_models TO agentwire_analyst;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'agentwire: cannot grant agentwire_analyst the model prices; grant analysts SELECT yourself';
END $$;
