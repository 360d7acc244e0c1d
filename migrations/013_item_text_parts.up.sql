-- Streamed item text is stored as it arrives, not rewritten as it grows.
--
-- The projector used to append each batch's deltas to the item's text
-- column. Postgres rewrites a whole value to change it, so when events
-- trickle in (a live agent, one delta per batch) every delta rewrote all
-- the text before it: a 4 MB command output streamed in 4 kB chunks
-- rewrote about 2 GB (each copy TOASTed and WAL-logged again). Now a batch's
-- deltas of an item that has not completed are inserted here as one part,
-- and the parts are folded into the item's column once, by the batch that
-- completes the item (its item.completed); lifecycle content that replaces
-- a column (item.completed's text is authoritative) deletes the session's
-- parts of it instead. Each delta is written a bounded number of times.
--
-- While an item streams, `items` holds the text up to its last lifecycle
-- content and this table the rest: the view item_texts puts them
-- together, with the rules of rows two sessions describe (README.md). An
-- item that never completes keeps its parts, and so do deltas that come
-- after an item's item.completed, until another completion.
CREATE TABLE item_text_parts (
    tenant_id  text   NOT NULL,
    item_id    uuid   NOT NULL,
    session_id uuid   NOT NULL,
    -- The item text column, in the order of items' text_* columns:
    -- assistant, reasoning, reasoning summary, plan, command output,
    -- file change, unknown.
    stream     smallint NOT NULL CHECK (stream BETWEEN 0 AND 6),
    -- The order parts were applied in: a session's batches are applied one
    -- after the other.
    seq        bigint GENERATED ALWAYS AS IDENTITY,
    text       text   NOT NULL,
    PRIMARY KEY (tenant_id, item_id, session_id, stream, seq)
);

-- lz4, as every long column since 003_lz4, where the server has it.
DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 140000 THEN
        EXECUTE 'ALTER TABLE item_text_parts ALTER COLUMN text SET COMPRESSION lz4';
    END IF;
EXCEPTION WHEN feature_not_supported THEN
    NULL;
END $$;

ALTER TABLE item_text_parts ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON item_text_parts USING (tenant_id = ANY ((SELECT visible_tenants())::text[]));

-- A text column as it stands: col, what items holds; owned, whether the
-- row's owner provided it; own and other, the parts of the owner and of
-- the other sessions. The owner's parts extend its own text, and replace
-- a fill (its first text replaces what another session filled in); the
-- other sessions' parts extend only a column the owner never provided.
-- Inlined into the view (a SQL function).
CREATE FUNCTION item_text(col text, owned boolean, own text, other text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN own IS NOT NULL THEN CASE WHEN owned THEN coalesce(col, '') ELSE '' END || own
                WHEN owned OR other IS NULL THEN col
                ELSE coalesce(col, '') || other END
$$;

-- Every item with its texts as they stand, streamed parts included. The
-- bits are the text columns' bits in items.session_columns.
CREATE VIEW item_texts WITH (security_invoker = true) AS
SELECT i.tenant_id, i.item_id, i.session_id, i.turn_id, i.item_type, i.status,
       item_text(i.text_assistant, (i.session_columns & 2048) <> 0, p.own0, p.other0) AS text_assistant,
       item_text(i.text_reasoning, (i.session_columns & 4096) <> 0, p.own1, p.other1) AS text_reasoning,
       item_text(i.text_reasoning_summary, (i.session_columns & 8192) <> 0, p.own2, p.other2) AS text_reasoning_summary,
       item_text(i.text_plan, (i.session_columns & 16384) <> 0, p.own3, p.other3) AS text_plan,
       item_text(i.text_command_output, (i.session_columns & 32768) <> 0, p.own4, p.other4) AS text_command_output,
       item_text(i.text_file_change, (i.session_columns & 65536) <> 0, p.own5, p.other5) AS text_file_change,
       item_text(i.text_unknown, (i.session_columns & 131072) <> 0, p.own6, p.other6) AS text_unknown,
       i.updated_at
FROM items i
LEFT JOIN LATERAL (
    SELECT
           string_agg(p.text, '' ORDER BY p.seq) FILTER (WHERE p.stream = 0 AND p.session_id = i.session_id) AS own0,
           string_agg(p.text, '' ORDER BY p.seq) FILTER (WHERE p.stream = 0 AND p.session_id <> i.session_id) AS other0,
           string_agg(p.text, '' ORDER BY p.seq) FILTER (WHERE p.stream = 1 AND p.session_id = i.session_id) AS own1,
           string_agg(p.text, '' ORDER BY p.seq) FILTER (WHERE p.stream = 1 AND p.session_id <> i.session_id) AS other1,
           string_agg(p.text, '' ORDER BY p.seq) FILTER (WHERE p.stream = 2 AND p.session_id = i.session_id) AS own2,
           string_agg(p.text, '' ORDER BY p.seq) FILTER (WHERE p.stream = 2 AND p.session_id <> i.session_id) AS other2,
           string_agg(p.text, '' ORDER BY p.seq) FILTER (WHERE p.stream = 3 AND p.session_id = i.session_id) AS own3,
           string_agg(p.text, '' ORDER BY p.seq) FILTER (WHERE p.stream = 3 AND p.session_id <> i.session_id) AS other3,
           string_agg(p.text, '' ORDER BY p.seq) FILTER (WHERE p.stream = 4 AND p.session_id = i.session_id) AS own4,
           string_agg(p.text, '' ORDER BY p.seq) FILTER (WHERE p.stream = 4 AND p.session_id <> i.session_id) AS other4,
           string_agg(p.text, '' ORDER BY p.seq) FILTER (WHERE p.stream = 5 AND p.session_id = i.session_id) AS own5,
           string_agg(p.text, '' ORDER BY p.seq) FILTER (WHERE p.stream = 5 AND p.session_id <> i.session_id) AS other5,
           string_agg(p.text, '' ORDER BY p.seq) FILTER (WHERE p.stream = 6 AND p.session_id = i.session_id) AS own6,
           string_agg(p.text, '' ORDER BY p.seq) FILTER (WHERE p.stream = 6 AND p.session_id <> i.session_id) AS other6
    FROM item_text_parts p
    WHERE p.tenant_id = i.tenant_id AND p.item_id = i.item_id
) p ON true;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentwire_analyst') THEN
        GRANT SELECT ON item_text_parts, item_texts TO agentwire_analyst;
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'agentwire: cannot grant agentwire_analyst the item texts; grant analysts SELECT yourself';
END $$;
