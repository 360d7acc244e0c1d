-- What a hook run ran. One configured hook (an event and a matcher, such
-- as PreToolUse:Bash) can run several commands, and Claude Code's logs
-- write a line per command: each is a run of its own (hook.started's
-- command), so the hooks of one event can be told apart.
ALTER TABLE hooks ADD COLUMN command text;
COMMENT ON COLUMN hooks.command IS 'the command the run ran, when the provider says';
