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
-- item that never completes keeps its parts.
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

-- Every item with its texts as they stand, streamed parts included. A
-- session's own parts extend its column (its first text replaces what
-- another session filled in); when the owner of the row provided the
-- column, other sessions' parts are left out, else they extend the fill.
-- The bits are the columns' bits in items.session_columns.
CREATE VIEW item_texts WITH (security_invoker = true) AS
SELECT i.tenant_id, i.item_id, i.session_id, i.turn_id, i.item_type, i.status,
       CASE WHEN p.own0 IS NOT NULL THEN CASE WHEN (i.session_columns & 2048) <> 0 THEN coalesce(i.text_assistant, '') ELSE '' END || p.own0
            WHEN (i.session_columns & 2048) <> 0 OR p.other0 IS NULL THEN i.text_assistant
            ELSE coalesce(i.text_assistant, '') || p.other0 END AS text_assistant,
       CASE WHEN p.own1 IS NOT NULL THEN CASE WHEN (i.session_columns & 4096) <> 0 THEN coalesce(i.text_reasoning, '') ELSE '' END || p.own1
            WHEN (i.session_columns & 4096) <> 0 OR p.other1 IS NULL THEN i.text_reasoning
            ELSE coalesce(i.text_reasoning, '') || p.other1 END AS text_reasoning,
       CASE WHEN p.own2 IS NOT NULL THEN CASE WHEN (i.session_columns & 8192) <> 0 THEN coalesce(i.text_reasoning_summary, '') ELSE '' END || p.own2
            WHEN (i.session_columns & 8192) <> 0 OR p.other2 IS NULL THEN i.text_reasoning_summary
            ELSE coalesce(i.text_reasoning_summary, '') || p.other2 END AS text_reasoning_summary,
       CASE WHEN p.own3 IS NOT NULL THEN CASE WHEN (i.session_columns & 16384) <> 0 THEN coalesce(i.text_plan, '') ELSE '' END || p.own3
            WHEN (i.session_columns & 16384) <> 0 OR p.other3 IS NULL THEN i.text_plan
            ELSE coalesce(i.text_plan, '') || p.other3 END AS text_plan,
       CASE WHEN p.own4 IS NOT NULL THEN CASE WHEN (i.session_columns & 32768) <> 0 THEN coalesce(i.text_command_output, '') ELSE '' END || p.own4
            WHEN (i.session_columns & 32768) <> 0 OR p.other4 IS NULL THEN i.text_command_output
            ELSE coalesce(i.text_command_output, '') || p.other4 END AS text_command_output,
       CASE WHEN p.own5 IS NOT NULL THEN CASE WHEN (i.session_columns & 65536) <> 0 THEN coalesce(i.text_file_change, '') ELSE '' END || p.own5
            WHEN (i.session_columns & 65536) <> 0 OR p.other5 IS NULL THEN i.text_file_change
            ELSE coalesce(i.text_file_change, '') || p.other5 END AS text_file_change,
       CASE WHEN p.own6 IS NOT NULL THEN CASE WHEN (i.session_columns & 131072) <> 0 THEN coalesce(i.text_unknown, '') ELSE '' END || p.own6
            WHEN (i.session_columns & 131072) <> 0 OR p.other6 IS NULL THEN i.text_unknown
            ELSE coalesce(i.text_unknown, '') || p.other6 END AS text_unknown,
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
