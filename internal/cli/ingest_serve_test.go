package cli

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/ingest"
)

func TestIngestTokenHashCommand(t *testing.T) {
	t.Parallel()
	r := runIngest(t, "", "token-hash", "s3cret")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, ingest.HashToken("s3cret")+"\n", r.stdout)
	r = runIngest(t, "s3cret\n", "token-hash")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, ingest.HashToken("s3cret")+"\n", r.stdout)
}

func TestIngestServeUsageErrors(t *testing.T) {
	t.Parallel()
	r := runIngest(t, "", "serve", "--tokens", "x")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, "--http")
	r = runIngest(t, "", "serve", "--http", ":0", "--tokens", "/nonexistent/tokens")
	require.Equal(t, ExitUsage, r.code)
	require.Contains(t, r.stderr, "tokens")
	r = runIngest(t, "", "file", "--follow", "--poll", "0", ".")
	require.Equal(t, ExitUsage, r.code)
}
