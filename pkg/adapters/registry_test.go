package adapters

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/pkg/adapters/acp"
	"github.com/agentwire/agentwire/pkg/adapters/claudelog"
	"github.com/agentwire/agentwire/pkg/adapters/claudestream"
	"github.com/agentwire/agentwire/pkg/adapters/codexappserver"
	"github.com/agentwire/agentwire/pkg/adapters/codexexec"
	"github.com/agentwire/agentwire/pkg/adapters/codexrollout"
	"github.com/agentwire/agentwire/pkg/adapters/geministream"
)

var update = flag.Bool("update", false, "rewrite docs/mapping")

// intros say in a paragraph what each dialect is, above its table; each
// adapter package keeps its own.
var intros = map[string]string{
	acp.Dialect:            acp.Intro,
	claudelog.Dialect:      claudelog.Intro,
	claudestream.Dialect:   claudestream.Intro,
	codexappserver.Dialect: codexappserver.Intro,
	codexexec.Dialect:      codexexec.Intro,
	codexrollout.Dialect:   codexrollout.Intro,
	geministream.Dialect:   geministream.Intro,
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
	require.ErrorContains(t, err, `unknown dialect "codex" (known: acp, claude-log, claude-stream, codex-app-server, codex-exec, codex-rollout, gemini-stream)`)
}
