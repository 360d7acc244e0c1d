package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/pkg/canonical"
	"github.com/agentwire/agentwire/pkg/canonical/wire"
)

const mapInput = "../../pkg/adapters/codexexec/testdata/inventory.jsonl"

func TestMapPrintsCloudEvents(t *testing.T) {
	t.Parallel()

	first := run(t, "map", "--dialect", "codex-exec", "--tenant", "acme", mapInput)
	require.Equal(t, ExitOK, first.code, first.stderr)
	second := run(t, "map", "--dialect", "codex-exec", "--tenant", "acme", mapInput)
	require.Equal(t, first.stdout, second.stdout, "mapping the same file twice prints the same bytes")

	sc := bufio.NewScanner(strings.NewReader(first.stdout))
	sc.Buffer(nil, 1<<24)
	n := 0
	kinds := map[canonical.Kind]bool{}
	for sc.Scan() {
		e, err := wire.UnmarshalStructured(sc.Bytes())
		require.NoError(t, err, "line %d", n+1)
		require.Equal(t, "acme", e.Tenant)
		require.Equal(t, canonical.ProviderCodex, e.Provider)
		require.True(t, e.CreatedAtIngested, "codex exec states no times: a file's are when it was read")
		kinds[e.Type()] = true
		n++
	}
	require.Greater(t, n, 30)
	// The input's bad lines are events too, not failures.
	require.True(t, kinds[canonical.KindRuntimeError])
	require.True(t, kinds[canonical.KindTurnCompleted])
}

func TestMapSessionKeyAndProvider(t *testing.T) {
	t.Parallel()

	a := run(t, "map", "--dialect", "codex-exec", "--session", "one", mapInput)
	b := run(t, "map", "--dialect", "codex-exec", "--session", "two", mapInput)
	require.Equal(t, ExitOK, a.code, a.stderr)
	require.NotEqual(t, a.stdout, b.stdout, "the session key is part of every derived id")

	c := run(t, "map", "--dialect", "codex-exec", "--provider", "my-agent", mapInput)
	require.Equal(t, ExitOK, c.code, c.stderr)
	require.Contains(t, c.stdout, `"provider":"my-agent"`)
}

func TestMapErrors(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))

	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"map", mapInput}, ExitUsage, "--dialect is required (one of acp, claude-log"},
		{[]string{"map", "--dialect", "codex", mapInput}, ExitUsage, `unknown dialect "codex"`},
		{[]string{"map", "--dialect", "codex-exec", "--provider", "a.b", mapInput}, ExitUsage, "--provider"},
		{[]string{"map", "--dialect", "codex-exec", "--tenant", "A B", mapInput}, ExitUsage, "--tenant"},
		{[]string{"map", "--dialect", "codex-exec", "--session", "s", mapInput, mapInput}, ExitUsage, "--session names one session"},
		{[]string{"map", "--dialect", "codex-exec", filepath.Join(dir, "missing.jsonl")}, ExitError, "no such file"},
		{[]string{"map", "--dialect", "codex-exec", dir}, ExitError, "is a directory"},
	}
	for _, tt := range tests {
		r := run(t, tt.args...)
		require.Equal(t, tt.code, r.code, "%v: %s", tt.args, r.stderr)
		require.Contains(t, r.stderr, tt.msg, tt.args)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
	}
	r := run(t, "map", "--dialect", "codex-exec", empty)
	require.Equal(t, ExitOK, r.code)
	require.Empty(t, r.stdout)
}
