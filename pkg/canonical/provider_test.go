package canonical

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseProvider(t *testing.T) {
	t.Parallel()

	for _, ok := range []string{"codex", "claude", "cursor", "gemini", "claude-code-acp", "agent_2", "x", strings.Repeat("a", 64)} {
		p, err := ParseProvider(ok)
		require.NoError(t, err, ok)
		require.Equal(t, Provider(ok), p)
		require.True(t, p.Valid())
	}
	for _, bad := range []string{"", "co.dex", "codex.*", "*", ">", "co dex", "codex\t", "\ncodex", "Codex", "-codex", "codex-", "über", strings.Repeat("a", 65)} {
		_, err := ParseProvider(bad)
		require.ErrorIs(t, err, ErrInvalidSlug, "%q", bad)
		require.ErrorContains(t, err, "provider", "%q", bad)
		require.False(t, Provider(bad).Valid())
	}
	for _, p := range KnownProviders() {
		require.True(t, p.Valid())
	}
}

func TestValidateTenant(t *testing.T) {
	t.Parallel()

	require.NoError(t, ValidateTenant("default"))
	err := ValidateTenant("a.b")
	require.ErrorIs(t, err, ErrInvalidSlug)
	require.ErrorContains(t, err, `tenant: may only contain a-z, 0-9, '-' and '_' (got "a.b")`)
}

func TestProviderFromName(t *testing.T) {
	t.Parallel()

	tests := map[string]Provider{
		"Claude Code":                     "claude-code",
		"@zed-industries/claude-code-acp": "zed-industries-claude-code-acp",
		"gemini-cli":                      "gemini-cli",
		"  Cursor Agent. v2 ":             "cursor-agent-v2",
		"runtime.*.>":                     "runtime",
		"***":                             "",
		strings.Repeat("ab ", 40):         Provider(strings.TrimRight(strings.Repeat("ab-", 22)[:64], "-")),
	}
	for name, want := range tests {
		got := ProviderFromName(name)
		require.Equal(t, want, got, name)
		if got != "" {
			require.True(t, got.Valid(), name)
		}
	}
}
