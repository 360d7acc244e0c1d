-- How long a hook run took, as the provider measured it (Claude Code's
-- hookInfos and hook attachments, Codex's hook run summaries): the span
-- between the lines that start and end a run is when the CLI wrote them.
ALTER TABLE hooks ADD COLUMN duration_ms bigint;
COMMENT ON COLUMN hooks.duration_ms IS 'how long the run took, as the provider measured it';
