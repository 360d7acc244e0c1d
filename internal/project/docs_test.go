package project_test

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/project"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// documented are the files whose SQL examples TestDocumentedSQL runs.
var documented = []string{"../../README.md", "../../migrations/README.md"}

// TestDocumentedSQL runs every SQL example of the README and of
// migrations/README.md, as written, against projected events: a table,
// view or column renamed without its example fails here, not in an
// analyst's terminal. Each block runs in a transaction rolled back
// afterwards; one that says it runs "as agentwire_analyst" runs as that
// role, and must show some rows. Roles belong to the cluster, which other
// tests share: the role an example creates gets a name of this test's own.
func TestDocumentedSQL(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := canonical.IDSpace{Tenant: "acme", Provider: canonical.ProviderCodex, SessionKey: "streaming"}
	e.publish([]recording{fixture("acme"), fixture("globex"),
		streamed(ids, ids.Native(canonical.EntityItem, "th", "call-1"),
			&canonical.ItemStarted{ItemType: canonical.ItemTypeCommandExecution}, output("still running"))}, 1)
	e.start(project.Config{})
	e.waitApplied("")
	ctx := context.Background()

	var blocks []sqlBlock
	for _, path := range documented {
		blocks = append(blocks, sqlBlocks(t, path)...)
	}
	// Two in the README, four in migrations/README.md: fewer means the
	// reader below no longer finds them.
	require.GreaterOrEqual(t, len(blocks), 6)
	role := "awtest_docs_" + e.schema
	for _, b := range blocks {
		t.Run(b.at, func(t *testing.T) {
			t.Parallel()
			tx, err := e.pool.Begin(ctx)
			require.NoError(t, err)
			defer func() { _ = tx.Rollback(ctx) }()
			if b.analyst {
				_, err := tx.Exec(ctx, `SET LOCAL ROLE agentwire_analyst`)
				require.NoError(t, err)
			}
			shown := 0
			for _, stmt := range b.statements {
				stmt = strings.ReplaceAll(stmt, "alice", role)
				if strings.HasPrefix(stmt, "CREATE ROLE") {
					if _, err := tx.Exec(ctx, stmt); err != nil {
						t.Skipf("cannot create a role here: %v", err)
					}
					continue
				}
				rows, err := tx.Query(ctx, stmt)
				require.NoError(t, err, stmt)
				for rows.Next() {
					shown++
				}
				require.NoError(t, rows.Err(), stmt)
			}
			if b.analyst {
				require.Positive(t, shown, "the analyst's examples show nothing on the fixture")
			}
		})
	}
}

// TestViewsDocumented: every view analysts can read has a row in the
// table of views in migrations/README.md, so a new one is explained
// where analysts look.
func TestViewsDocumented(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	doc, err := os.ReadFile("../../migrations/README.md")
	require.NoError(t, err)
	var table []string
	for line := range strings.Lines(string(doc)) {
		if strings.HasPrefix(line, "| `") {
			table = append(table, strings.SplitN(line, " | ", 2)[0])
		}
	}
	rows, err := e.pool.Query(context.Background(), `SELECT viewname::text FROM pg_views
		WHERE schemaname = current_schema() AND has_table_privilege('agentwire_analyst', (quote_ident(schemaname) || '.' || quote_ident(viewname))::regclass, 'SELECT')`)
	require.NoError(t, err)
	views, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NotEmpty(t, views)
	for _, v := range views {
		found := false
		for _, first := range table {
			found = found || strings.Contains(first, "`"+v+"`")
		}
		require.True(t, found, "view %s has no row in the table of views in migrations/README.md", v)
	}
}

// sqlBlock is one fenced SQL example: where it is, its statements, and
// whether it runs as agentwire_analyst.
type sqlBlock struct {
	at         string
	statements []string
	analyst    bool
}

// sqlBlocks reads the ```sql blocks of a Markdown file, split into
// statements at the semicolons that end a line, comments removed.
func sqlBlocks(t *testing.T, path string) []sqlBlock {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	var blocks []sqlBlock
	var cur *sqlBlock
	var stmt strings.Builder
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case cur == nil && line == "```sql":
			cur = &sqlBlock{at: strings.TrimPrefix(path, "../../") + ":" + strconv.Itoa(n)}
		case cur == nil:
		case line == "```":
			require.Empty(t, strings.TrimSpace(stmt.String()), "%s: a statement without its semicolon", cur.at)
			blocks = append(blocks, *cur)
			cur = nil
		default:
			code, comment, _ := strings.Cut(line, "--")
			cur.analyst = cur.analyst || strings.Contains(comment, "as agentwire_analyst")
			stmt.WriteString(code + "\n")
			if s := strings.TrimSpace(code); strings.HasSuffix(s, ";") {
				cur.statements = append(cur.statements, strings.TrimSpace(stmt.String()))
				stmt.Reset()
			}
		}
	}
	require.NoError(t, sc.Err())
	require.Nil(t, cur, "%s: a block not closed", path)
	return blocks
}
