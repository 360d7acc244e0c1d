-- turn_failures grouped failures by their exact message, and providers
-- put what differs on every call into it: Codex's "exceeded retry limit,
-- last status: 401 Unauthorized, request id: 99cdbe04acfb0b34-AMS" made
-- thirty rows of one failure among the public transcripts. failure_reason
-- masks what names one occurrence (request ids, UUIDs, long hex ids, a
-- local port, times and timestamps, a retry delay) and keeps the rest
-- (status codes, error names, the provider's words). The view groups by it
-- and shows one message of each group as it was (example). Analysts may
-- call the function in their own queries.
CREATE FUNCTION failure_reason(message text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(message,
    '\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?', '<time>', 'g'),
    '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}', '<id>', 'g'),
    '(req(uest)?[ _-]?id\W{1,3})[A-Za-z0-9_.:-]+', '\1<id>', 'gi'),
    '\m[0-9a-fA-F]{16,}\M', '<id>', 'g'),
    '((\d{1,3}\.){3}\d{1,3}|localhost):\d{2,5}\M', '\1:<port>', 'g'),
    '\m\d{1,2}:\d{2}(:\d{2})?(\s?[AaPp][Mm]\M)?', '<time>', 'g'),
    '\m\d+(\.\d+)?\s?(ms|s|secs?|seconds?|mins?|minutes?|h|hours?)\M', '<duration>', 'g')
$$;

CREATE OR REPLACE VIEW turn_failures WITH (security_invoker = true) AS
SELECT tenant_id, provider, state, coalesce(error_class, '') AS error_class,
       failure_reason(coalesce(error_message, stop_reason, '')) AS reason,
       count(*) AS turns, max(ended_at) AS last_seen,
       min(coalesce(error_message, stop_reason, '')) AS example
FROM turns_once
WHERE state NOT IN ('completed', 'in_progress') OR error_message IS NOT NULL
GROUP BY 1, 2, 3, 4, 5;
