-- A turn's usage columns hold its own count, stated at its end, or else
-- the latest count reported on the way (a log cut off mid-turn; Codex
-- counts the tokens of a turn interrupted after its turn_aborted). A
-- report that came after the end, in a later batch than the end, replaced
-- the turn's own count: the row depended on where batches ended, and
-- disagreed with the usage ledger, which keeps the own count. The
-- projector now says which the row holds, and a count reported on the way
-- no longer replaces an own one.
ALTER TABLE turns ADD COLUMN usage_final boolean;
COMMENT ON COLUMN turns.usage_final IS
    'the usage columns are the count the turn stated at its end (false: the latest it reported before; NULL: no usage)';

-- Rows projected before: the ledger holds a turn's own count as rows that
-- are not provisional. (In WHERE, so that the test is one join over the
-- ledger, not a scan of it per turn: it has no index by turn.)
UPDATE turns SET usage_final = false WHERE input_tokens IS NOT NULL;
UPDATE turns t SET usage_final = true
WHERE t.input_tokens IS NOT NULL AND EXISTS (
    SELECT FROM usage_ledger l
    WHERE l.tenant_id = t.tenant_id AND l.turn_id = t.turn_id AND l.session_id = t.session_id AND NOT l.provisional);
