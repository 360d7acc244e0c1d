-- The usage of a turn that has not ended is in the ledger too. A log cut
-- off mid-turn (a crashed session, a transcript copied while it ran) never
-- states its last turn's usage, and the views left those tokens out,
-- though ccusage counts them. Adapters now report a turn's usage so far
-- (thread.token-usage.updated's turn), and the projector keeps it as a
-- provisional row: one per usage_key, the smallest reporting session's,
-- replaced by the turn's own rows when it ends with a usage.
ALTER TABLE usage_ledger ADD COLUMN provisional boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN usage_ledger.provisional IS
    'the usage of a turn that had not ended when written (its usage so far); replaced when the turn ends with its own';
