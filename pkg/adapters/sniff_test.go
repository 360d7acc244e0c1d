package adapters_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/pkg/adapters"
)

// recordingSets maps the directories of testdata/recordings to the dialect
// their files are in.
var recordingSets = map[string]string{
	"codex-exec":            adapters.DialectCodexExec,
	"codex-app-server":      adapters.DialectCodexAppServer,
	"codex-rollout":         adapters.DialectCodexRollout,
	"claude-stream":         adapters.DialectClaudeStream,
	"claude-stream-partial": adapters.DialectClaudeStream,
	"claude-control":        adapters.DialectClaudeStream,
	"claude-log":            adapters.DialectClaudeLog,
	"gemini-stream":         adapters.DialectGeminiStream,
	"acp-gemini":            adapters.DialectACP,
	"acp-claude-code":       adapters.DialectACP,
}

func TestSniffRecordings(t *testing.T) {
	t.Parallel()

	root := filepath.Join("..", "..", "testdata", "recordings")
	dirs, err := os.ReadDir(root)
	require.NoError(t, err)
	seen := 0
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		want, ok := recordingSets[d.Name()]
		require.True(t, ok, "recording set %s has no expected dialect in this test", d.Name())
		files, err := filepath.Glob(filepath.Join(root, d.Name(), "*.jsonl"))
		require.NoError(t, err)
		for _, f := range files {
			lines := readLines(t, f)
			got, ok := adapters.Sniff(lines)
			require.True(t, ok, f)
			require.Equal(t, want, got, f)
			// The first frame alone is enough (stdin buffers only it).
			got, ok = adapters.Sniff(lines[:1])
			require.True(t, ok, f)
			require.Equal(t, want, got, "%s, first line only", f)
			seen++
		}
	}
	require.Greater(t, seen, 50)
}

// corpusDialects maps the corpus's dialect column to ours.
var corpusDialects = map[string]string{
	"claude-sessionlog": adapters.DialectClaudeLog,
}

func TestSniffCorpus(t *testing.T) {
	t.Parallel()

	root := filepath.Join("..", "..", "..", "shared", "corpus")
	manifest, err := os.ReadFile(filepath.Join(root, "MANIFEST.tsv"))
	if os.IsNotExist(err) {
		t.Skip("no shared corpus next to the checkout")
	}
	require.NoError(t, err)
	rows := strings.Split(strings.TrimSpace(string(manifest)), "\n")[1:]
	require.NotEmpty(t, rows)
	for _, row := range rows {
		cols := strings.Split(row, "\t")
		require.GreaterOrEqual(t, len(cols), 2, row)
		file, want := cols[0], cols[1]
		if d, ok := corpusDialects[want]; ok {
			want = d
		}
		got, ok := adapters.Sniff(readLines(t, filepath.Join(root, filepath.FromSlash(file))))
		if !strings.HasSuffix(file, ".jsonl") {
			// A single pretty-printed JSON document (gemini --output-format
			// json) is not a line-per-frame dialect: nothing to sniff.
			require.False(t, ok, "%s sniffed as %s", file, got)
			continue
		}
		require.True(t, ok, file)
		require.Equal(t, want, got, file)
	}
}

func TestSniffLines(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"empty", nil, ""},
		{"not json", []string{"hello", "[1,2]", `{"broken`}, ""},
		{"bare error is ambiguous", []string{`{"type":"error","message":"x"}`}, ""},
		{"skips undecided lines", []string{"", "garbage", `{"type":"error"}`, `{"type":"turn.started"}`}, adapters.DialectCodexExec},
		{"acp request", []string{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`}, adapters.DialectACP},
		{"acp tap", []string{`{"dir":"agent","msg":{"jsonrpc":"2.0","method":"session/update","params":{}}}`}, adapters.DialectACP},
		{"codex app-server tap", []string{`{"dir":"client","msg":{"method":"initialized"}}`}, adapters.DialectCodexAppServer},
		{"codex app-server bare", []string{`{"id":3,"result":{}}`}, adapters.DialectCodexAppServer},
		{"claude control tap", []string{`{"dir":"client","msg":{"type":"control_request","request_id":"1","request":{}}}`}, adapters.DialectClaudeStream},
		{"claude result", []string{`{"type":"result","subtype":"success","session_id":"s"}`}, adapters.DialectClaudeStream},
		{"gemini result", []string{`{"type":"result","timestamp":"t","status":"success"}`}, adapters.DialectGeminiStream},
		{"claude log summary", []string{`{"type":"summary","summary":"x","leafUuid":"u"}`}, adapters.DialectClaudeLog},
		{"claude log user", []string{`{"type":"user","sessionId":"s","uuid":"u","timestamp":"t"}`}, adapters.DialectClaudeLog},
		{"rollout", []string{`{"timestamp":"t","type":"event_msg","payload":{}}`}, adapters.DialectCodexRollout},
	}
	for _, tt := range tests {
		var lines [][]byte
		for _, l := range tt.lines {
			lines = append(lines, []byte(l))
		}
		got, ok := adapters.Sniff(lines)
		require.Equal(t, tt.want != "", ok, tt.name)
		require.Equal(t, tt.want, got, tt.name)
	}
}

func TestKnownDialects(t *testing.T) {
	t.Parallel()

	for _, d := range adapters.Dialects() {
		require.True(t, adapters.IsKnownDialect(d), d)
	}
	require.True(t, adapters.IsKnownDialect("claude-log"))
	require.False(t, adapters.IsKnownDialect("auto"))
}
