package project_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/project"
)

// TestThreadPreview: a thread the provider does not name keeps the start
// of the first message the user wrote in it, not a message the CLI
// injected before it, nor a later one, also when the later one is applied
// in another batch; cut at 200 characters, not bytes.
func TestThreadPreview(t *testing.T) {
	t.Parallel()
	first := strings.Repeat("é", 150) + strings.Repeat("x", 100) // 250 characters, 400 bytes
	log := []string{
		`{"type":"user","isMeta":true,"message":{"role":"user","content":"Caveat: the CLI says this"},"uuid":"u0","sessionId":"s1","timestamp":"2026-03-10T09:00:00Z"}`,
		`{"type":"user","message":{"role":"user","content":"` + first + `"},"uuid":"u1","sessionId":"s1","timestamp":"2026-03-10T09:00:01Z"}`,
		`{"type":"assistant","message":{"id":"m1","model":"m","role":"assistant","stop_reason":"end_turn","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":1,"output_tokens":1}},"uuid":"a1","sessionId":"s1","timestamp":"2026-03-10T09:00:02Z"}`,
		`{"type":"user","message":{"role":"user","content":"and then this"},"uuid":"u2","sessionId":"s1","timestamp":"2026-03-10T09:00:03Z"}`,
	}
	path := filepath.Join(t.TempDir(), "log.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(log, "\n")+"\n"), 0o600))
	rec, ok := mapAs(t, "claude-log", "acme", path, "")
	require.True(t, ok)
	// A batch of two events: the second prompt comes in a batch of its own.
	e := projectedBy(t, project.Config{Workers: 1, BatchSize: 2}, rec)

	var preview *string
	var threads int
	require.NoError(t, e.pool.QueryRow(context.Background(), `SELECT count(*), max(preview) FROM threads`).Scan(&threads, &preview))
	require.Equal(t, 1, threads)
	require.NotNil(t, preview)
	require.True(t, utf8.ValidString(*preview))
	require.Equal(t, 200, utf8.RuneCountInString(*preview))
	require.Equal(t, first[:len(strings.Repeat("é", 150))+50], *preview)
}
