-- The log's time index (012) is summarized by VACUUM instead of a request
-- to autovacuum for every range that fills.
--
-- With autosummarize, each full range (128 pages, about 1 MB of log)
-- queued a work item for autovacuum. The server holds 256 of them, for all
-- its databases, until autovacuum next visits the database (once a minute
-- by default). A projector logging more than about 2000 events per second
-- fills them, and every request lost wrote "request for BRIN range
-- summarization for index ... was not recorded" to the server's log: 16k
-- such lines in an hour of the bench and the tests on one machine. The
-- ranges those requests named stayed unsummarized until the next VACUUM
-- anyway.
--
-- VACUUM summarizes every range not summarized yet. Autovacuum runs it on
-- a table that only grows once inserts pass a share of its rows (Postgres
-- 13 and later): here 2 % instead of the default 20 %, so the tail a time
-- window must read whole (a BRIN takes an unsummarized range for a match)
-- stays small. Those vacuums read only the pages added since the last one.
ALTER INDEX events_created_brin SET (autosummarize = off);

DO $$
BEGIN
    IF current_setting('server_version_num')::int >= 130000 THEN
        ALTER TABLE events SET (autovacuum_vacuum_insert_scale_factor = 0.02);
    END IF;
END
$$;
