-- Rows several ingest sessions describe (a Codex thread seen through its
-- app-server tap and through its rollout log has one canonical id) merge
-- column by column; see "Rows two sessions describe" in migrations/README.md.
-- session_columns says which columns the row's session (session_id, the
-- smallest that wrote the row) provided itself: bit i is the i-th column
-- the projector merges (internal/project/sql.go). The others were filled
-- in by another session. Rows projected before this migration were each
-- entirely their session's view: every bit set.
ALTER TABLE threads ADD COLUMN session_columns bigint NOT NULL DEFAULT -1;
ALTER TABLE turns ADD COLUMN session_columns bigint NOT NULL DEFAULT -1;
ALTER TABLE items ADD COLUMN session_columns bigint NOT NULL DEFAULT -1;
ALTER TABLE requests ADD COLUMN session_columns bigint NOT NULL DEFAULT -1;
