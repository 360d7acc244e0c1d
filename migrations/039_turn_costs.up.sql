-- What did this turn cost? One row per row of turns, for the platforms
-- that ask it of one turn.
--
-- turns.cost_usd is what the provider stated for the turn, and only
-- Claude's stream states one: for Codex, Gemini and Claude Code's session
-- logs it is NULL. The usage views price every turn (usage_priced), but a
-- turn's ledger rows are found by its usage_key, not its turn_id: the
-- ledger keeps one session's rows for a turn two sessions describe (a
-- Claude stream and its session log give the turn two canonical ids, and
-- the rows are the one that counted the most), so the other session's
-- turn, joined by turn_id, had no usage and no cost.
--
-- turn_costs reads the ledger rows that count (usage_priced) by the
-- turn's key (turn_key, 005), so every row of a turn has its figures: the
-- tokens as the usage views count them (a Claude stream's turn with its
-- sub-agents' spend), what the provider stated, the estimate where it
-- stated nothing, how many of its models have no price, and whether the
-- turn has not ended yet (provisional: its usage so far). A turn two
-- sessions describe has two rows with the same figures: sum the usage
-- views, not this. A Claude Code 2.x sub-agent's spend from its own
-- transcript is on that transcript's turn (agent_id names the run), not
-- on the session log's launching turn. A codex exec row of a thread a
-- rollout describes has none (its rollout's turn has them, 030).
CREATE VIEW turn_costs WITH (security_invoker = true) AS
SELECT t.tenant_id, t.turn_id, t.session_id, t.thread_id, t.provider, t.agent_id, t.state, t.model,
       t.started_at, t.ended_at,
       c.models, c.input_tokens, c.cached_input_tokens, c.cache_write_input_tokens, c.output_tokens,
       c.reasoning_output_tokens, c.total_tokens, c.cost_usd, c.estimated_cost_usd, c.unpriced_models,
       c.provisional
FROM turns_read t
LEFT JOIN LATERAL (
    SELECT array_agg(u.model ORDER BY u.model) AS models,
           sum(u.input_tokens) AS input_tokens, sum(u.cached_input_tokens) AS cached_input_tokens,
           sum(u.cache_write_input_tokens) AS cache_write_input_tokens, sum(u.output_tokens) AS output_tokens,
           sum(u.reasoning_output_tokens) AS reasoning_output_tokens,
           sum(u.input_tokens + u.cached_input_tokens + u.cache_write_input_tokens + u.output_tokens) AS total_tokens,
           sum(u.cost_usd) AS cost_usd,
           sum(u.estimated_cost_usd) AS estimated_cost_usd,
           count(*) FILTER (WHERE u.estimated_cost_usd IS NULL) AS unpriced_models,
           bool_or(u.provisional) AS provisional
    FROM usage_priced u
    WHERE u.tenant_id = t.tenant_id
      AND u.usage_key = turn_key(t.tenant_id, t.thread_id, t.provider_turn_id, t.turn_id)
) c ON true;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentwire_analyst') THEN
        GRANT SELECT ON turn_costs TO agentwire_analyst;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'agentwire: cannot grant agentwire_analyst the view turn_costs; grant analysts SELECT yourself';
END $$;
