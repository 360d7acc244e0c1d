-- A turn's usage is counted once however many ingest sessions report it.
--
-- Rows two sessions describe share a canonical id when the provider names
-- them (a Codex turn seen through its tap and its rollout). Claude names
-- no turns: its stream and the session log the same run writes derive
-- their turn ids each from their own frames, so one turn was two ledger
-- rows and the usage views counted its tokens and cost twice. Both see the
-- turn's first assistant message, whose id the Claude adapters now report
-- as the turn's provider id (claude-stream/2, claude-log/2).
--
-- The ledger is keyed by usage_key, the turn_key below: derived from the
-- tenant, the thread and the provider's turn id when the event names one,
-- else the canonical turn id. The smallest session's row is kept, as before.
-- Rows projected before this migration keep their turn id as key; run
-- `agentwire project --rebuild` to count such turns once too.
-- turn_key is a turn as every session that reports it sees it; the
-- projector keys the ledger with it and the turn views count by it.
CREATE FUNCTION turn_key(tenant text, thread uuid, provider_turn_id text, turn_id uuid) RETURNS uuid
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT coalesce(md5(tenant || '/' || thread || '/' || nullif(provider_turn_id, ''))::uuid, turn_id)
$$;

ALTER TABLE usage_ledger ADD COLUMN usage_key uuid;
UPDATE usage_ledger SET usage_key = turn_id;
ALTER TABLE usage_ledger ALTER COLUMN usage_key SET NOT NULL;
ALTER TABLE usage_ledger DROP CONSTRAINT usage_ledger_pkey;
ALTER TABLE usage_ledger ADD PRIMARY KEY (tenant_id, usage_key, model);
