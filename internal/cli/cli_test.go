package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/pkg/canonical"
)

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Exec(context.Background(), "agentwire", Agentwire, args, &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

func TestSchemaList(t *testing.T) {
	t.Parallel()

	r := run(t, "schema", "--list")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var want strings.Builder
	for _, k := range canonical.Kinds() {
		want.WriteString(string(k) + "\n")
	}
	require.Equal(t, want.String(), r.stdout)
	require.Empty(t, r.stderr)
}

func TestSchemaType(t *testing.T) {
	t.Parallel()

	r := run(t, "schema", "turn.completed")
	require.Equal(t, ExitOK, r.code, r.stderr)
	want, err := canonical.Schema(canonical.KindTurnCompleted)
	require.NoError(t, err)
	require.Equal(t, string(want), r.stdout)
}

func TestSchemaOut(t *testing.T) {
	t.Parallel()

	dir := filepath.Join(t.TempDir(), "nested", "schemas")
	r := run(t, "schema", "--out", dir)
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Contains(t, r.stderr, "wrote 45 schemas to")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 45)
	for _, k := range canonical.Kinds() {
		got, err := os.ReadFile(filepath.Join(dir, string(k)+".json"))
		require.NoError(t, err)
		committed, err := os.ReadFile(filepath.Join("..", "..", "pkg", "canonical", "schemas", string(k)+".json"))
		require.NoError(t, err)
		require.Equal(t, string(committed), string(got), k)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()

	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"schema", "message.delta"}, ExitUsage, `agentwire: schema: unknown event type "message.delta"; ` + "`agentwire schema --list`"},
		{[]string{"schema"}, ExitUsage, "give exactly one of TYPE, --list or --out DIR"},
		{[]string{"schema", "--list", "turn.started"}, ExitUsage, "give exactly one of"},
		{[]string{"schema", "a", "b"}, ExitUsage, "takes at most one TYPE"},
		{[]string{"schema", "--bogus"}, ExitUsage, "unknown flag: --bogus"},
		{[]string{"frobnicate"}, ExitUsage, `unknown command "frobnicate"`},
		{[]string{"version", "extra"}, ExitUsage, "unknown command"},
		{[]string{"schema", "--out", "/dev/null/x"}, ExitError, "write schemas"},
		{[]string{"up", "--duplicate-window", "-1s"}, ExitUsage, "--duplicate-window must not be negative, got -1s"},
		{[]string{"normalize", "--memory-limit", "1.5GiB"}, ExitUsage, `--memory-limit "1.5GiB": use a whole number`},
		{[]string{"project", "--project-workers", "0"}, ExitUsage, "--project-workers must be between 1 and 64, got 0"},
		{[]string{"up", "--project-workers", "100"}, ExitUsage, "--project-workers must be between 1 and 64, got 100"},
		// Partitions are pinned to normalizer workers: nothing the projector has.
		{[]string{"project", "--pinned-ttl", "5s"}, ExitUsage, "unknown flag: --pinned-ttl"},
		{[]string{"up", "--ack-wait", "-1s"}, ExitUsage, "--ack-wait must not be negative, got -1s"},
		{[]string{"normalize", "--pinned-ttl", "-1s"}, ExitUsage, "--pinned-ttl must not be negative, got -1s"},
		{[]string{"normalize", "--replicas", "7"}, ExitUsage, "--replicas must be between 1 and 5, got 7"},
		{[]string{"up", "--partitions", "101"}, ExitUsage, "--partitions must be between 1 and 100, got 101"},
		{[]string{"project", "--raw-max-age", "-1h"}, ExitUsage, "--raw-max-age must not be negative, got -1h0m0s"},
		{[]string{"normalize", "--runtime-max-age", "-1h"}, ExitUsage, "--runtime-max-age must not be negative, got -1h0m0s"},
		// Refused before NATS is dialled (nothing listens at its default here).
		{[]string{"project", "--database-url", "garbage", "--nats-url", "nats://127.0.0.1:1"}, ExitUsage, "--database-url: cannot parse"},
	}
	for _, tt := range tests {
		r := run(t, tt.args...)
		require.Equal(t, tt.code, r.code, "%v: %s", tt.args, r.stderr)
		require.Contains(t, r.stderr, tt.msg, tt.args)
		require.Equal(t, 1, strings.Count(r.stderr, "\n"), "errors are one line: %q", r.stderr)
		require.Empty(t, r.stdout)
	}

	// A Postgres that does not answer: pgx says why each attempt failed on
	// a line of its own, up says it in its last line (after the lines that
	// say where its NATS server listens).
	r := run(t, "up", "--nats-listen", "127.0.0.1:0", "--metrics-listen", "", "--data-dir", t.TempDir(),
		"--database-url", "postgres://nobody@127.0.0.1:1/x?connect_timeout=5")
	require.Equal(t, ExitError, r.code, r.stderr)
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	require.Regexp(t, "^agentwire: connect to Postgres at 127.0.0.1:1: failed to connect to `user=nobody database=x`: "+
		`127.0.0.1:1 \(127.0.0.1\): dial error: .* \(check --database-url or DATABASE_URL\)$`, lines[len(lines)-1])
	require.Contains(t, lines[0], "agentwire: NATS with JetStream on", "what came before the error")
}

// TestServiceFlagHelp: a flag the services share says what it does in
// the command at hand.
func TestServiceFlagHelp(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string][]string{
		"normalize": {"frames a normalizer partition fetches at a time", "a delivered frame waits", "--pinned-ttl", "127.0.0.1:9464"},
		"project":   {"events the projector applies in one transaction", "a delivered event waits", "127.0.0.1:9465"},
		"up":        {"frames a normalizer partition fetches at a time, and events the projector applies", "a delivered frame or event waits", "--pinned-ttl"},
	} {
		r := run(t, cmd, "--help")
		require.Zero(t, r.code, cmd)
		for _, w := range want {
			require.Contains(t, r.stdout, w, cmd)
		}
		if cmd == "project" {
			require.NotContains(t, r.stdout, "normalizer partition")
		}
	}
}

// TestBusFlags: every field of bus.Config has a flag in busFlags, and
// up offers it, so a bad value is reported under the flag's name.
func TestBusFlags(t *testing.T) {
	t.Parallel()
	help := run(t, "up", "--help").stdout
	for field := range reflect.TypeFor[bus.Config]().Fields() {
		flag, ok := busFlags[field.Name]
		require.True(t, ok, field.Name)
		require.Contains(t, help, "--"+flag+" ", field.Name)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()

	r := run(t, "version")
	require.Equal(t, ExitOK, r.code)
	require.Regexp(t, `^agentwire \S+.* \(go1\.\d+.*\)\n$`, r.stdout)
}
