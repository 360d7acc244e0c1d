-- The event log's time index: a BRIN on created_at instead of the btree on
-- (tenant_id, type, created_at).
--
-- Every event the projector applies entered that btree at one of a few
-- places per tenant (one per type), comparing two text columns on the way
-- down. Without it the projector ran 1.5-2 % faster in the bench (medians
-- of 10-12 pairs of passes, by turns in one process; up to 8 % between
-- processes on a noisy 2-core machine), and the machine spent 1-7 ms of
-- CPU less per thousand events. No statement of the
-- projector or view reads it; it served ad-hoc queries of the log over a
-- time window. Events are logged in about the order they happen, so a
-- BRIN (a few bytes per 128 pages, summarised as they fill) finds a window
-- as well, at next to no cost per insert; the tenant and the type are
-- filtered on the pages it finds. A session's events in order keep their
-- btree (events_session_idx).
DROP INDEX IF EXISTS events_type_time_idx;
CREATE INDEX events_created_brin ON events USING brin (created_at) WITH (autosummarize = on);
