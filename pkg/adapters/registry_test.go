package adapters

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite docs/mapping")

// intros say in a sentence what each dialect is, above its table.
var intros = map[string]string{
	"codex-exec": "`codex exec --json`: the Codex SDK's ThreadEvent stream, one JSON event per line (raw source `codex.sdk.thread-event`). See the package documentation of `pkg/adapters/codexexec` for ids, usage and errors.",
}

// TestMappingDocs keeps docs/mapping/<dialect>.md equal to the adapters'
// rule tables, so the mapping can be reviewed without reading Go.
// `go test ./pkg/adapters -update` (make generate) rewrites them.
func TestMappingDocs(t *testing.T) {
	t.Parallel()

	for _, d := range Dialects() {
		a, err := Lookup(d)
		require.NoError(t, err)
		require.Equal(t, d, a.Dialect())
		intro, ok := intros[d]
		require.True(t, ok, "write an intro for %s", d)
		want := a.Rules().Markdown(d, intro)
		path := filepath.Join("..", "..", "docs", "mapping", d+".md")
		if *update {
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o750))
			require.NoError(t, os.WriteFile(path, []byte(want), 0o644)) //nolint:gosec // a reviewed document
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "run make generate")
		require.Equal(t, want, string(got), "docs/mapping/%s.md is stale: run make generate", d)
	}
}

func TestLookupUnknown(t *testing.T) {
	t.Parallel()

	_, err := Lookup("codex")
	require.ErrorContains(t, err, `unknown dialect "codex" (known: codex-exec`)
}
