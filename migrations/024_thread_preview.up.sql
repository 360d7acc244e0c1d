-- What a thread is about when the provider names it not: most do not
-- (Claude Code logs name a conversation only by a custom title or a summary
-- of their own, codex exec never). Like Codex's own thread preview, the
-- start of the first message the user wrote in it, not one the CLI
-- injected.
ALTER TABLE threads ADD COLUMN preview text;
COMMENT ON COLUMN threads.preview IS 'the first 200 characters of the first message the user wrote in the thread';
