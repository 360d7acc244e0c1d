-- Long values (the event log's documents, configurations, metadata, item
-- texts, plans and diffs) are compressed with lz4 instead of pglz, the
-- server's default. Projecting the recordings, pglz_compress was a third
-- of Postgres's CPU (perf); lz4 compresses several times faster for about
-- the same size, and decompresses faster for whoever reads them. Rows
-- written before keep pglz: Postgres reads both.
--
-- Every compressible column of this schema's tables is switched, so no
-- long column is left out; a short value is never compressed anyway. A
-- server built without lz4 keeps pglz.
DO $$
DECLARE
    col record;
BEGIN
    IF current_setting('server_version_num')::int < 140000 THEN
        RAISE NOTICE 'Postgres before 14 has one compression method: keeping pglz';
        RETURN;
    END IF;
    FOR col IN
        SELECT c.relname, a.attname
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
          AND a.attnum > 0 AND NOT a.attisdropped AND a.attstorage IN ('x', 'm')
        ORDER BY c.relname, a.attnum
    LOOP
        EXECUTE format('ALTER TABLE %I ALTER COLUMN %I SET COMPRESSION lz4', col.relname, col.attname);
    END LOOP;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'this server was built without lz4: keeping pglz';
END
$$;
