-- A Claude Code sub-agent's tokens, counted once however many of the run's
-- records are ingested.
--
-- The result of a Claude turn (claude-stream) counts what the turn's
-- sub-agents (the Task tool) used in its modelUsage, so its ledger rows
-- include their spend; the session log of Claude Code 2.x leaves it out and
-- writes each sub-agent's lines to a transcript of its own
-- (<session>/subagents/agent-<id>.jsonl), whose turns have ledger rows of
-- their own. `agentwire ingest file` with no path reads those logs, so a run
-- whose stream was ingested too counted each sub-agent twice: in the
-- stream's turn and in the transcript's.
--
-- A transcript's turns now name their run (turns.agent_id: Claude Code's
-- agentId), as the stream's task of the same run does (tasks.task_id, the
-- task_started frame's task_id). usage_counted leaves a transcript turn's
-- row of a model out where the ledger's row of that model for the turn
-- that started the run is that stream's own (the same session, not
-- provisional): it includes the run's spend on the model. Where the ledger
-- kept the session log's row (the smaller session's, per model), which
-- leaves it out, the transcript's row counts.
ALTER TABLE turns ADD COLUMN agent_id text;
COMMENT ON COLUMN turns.agent_id IS
    'the sub-agent run the turn belongs to, as its own transcript names it (Claude Code''s agentId; the launching session''s tasks.task_id)';

-- The view starts from the few turns that name a run (without the first
-- index it reads every turn), and looks up the runs' tasks by id, without
-- the session. With 200k ledger rows of 100k turns, 2k of them sub-agents',
-- usage_counted takes about 142 ms (150 without the first index), against
-- 95 ms without the rule: most of the difference is the lookup of each
-- run's launching row, one per sub-agent turn.
CREATE INDEX turns_agent_idx ON turns (tenant_id, agent_id) WHERE agent_id IS NOT NULL;
CREATE INDEX tasks_task_idx ON tasks (tenant_id, task_id);

CREATE OR REPLACE VIEW usage_counted WITH (security_invoker = true) AS
SELECT u.tenant_id, u.turn_id, u.model, u.provider, u.session_id, u.thread_id, u.occurred_at,
       t.input_tokens, t.cached_input_tokens, t.cache_write_input_tokens, t.output_tokens,
       t.reasoning_output_tokens, u.cost_usd, u.usage_key, u.provisional
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
WHERE (s.dialect IS DISTINCT FROM 'codex-exec' OR u.thread_id IS NULL
       OR NOT EXISTS (SELECT FROM codex_recorded_turns o WHERE o.tenant_id = u.tenant_id AND o.thread_id = u.thread_id))
  AND NOT EXISTS (
    SELECT FROM turns a
    JOIN tasks r ON r.tenant_id = a.tenant_id AND r.task_id = a.agent_id AND r.thread_id = a.thread_id
    JOIN turns c ON c.tenant_id = r.tenant_id AND c.turn_id = r.turn_id
    JOIN usage_ledger m ON m.tenant_id = c.tenant_id
        AND m.usage_key = turn_key(c.tenant_id, c.thread_id, c.provider_turn_id, c.turn_id)
        AND m.session_id = r.session_id AND NOT m.provisional
    -- The outer row only here, in WHERE: so the planner makes the test one
    -- hashed anti-join, not a sub-plan run for every ledger row.
    WHERE a.tenant_id = u.tenant_id AND a.turn_id = u.turn_id AND m.model = u.model AND a.agent_id IS NOT NULL);
