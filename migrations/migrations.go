// Package migrations holds agentwire's Postgres schema as plain SQL files,
// NNN_name.up.sql, embedded in the binary, and applies them forward-only.
//
// The runner is small on purpose (no migration library): migrations are
// forward-only and few, and applying them needs nothing a library adds
// over one advisory lock, one schema_migrations table and one transaction
// per file. Names are checked when the files are loaded (as river does), so
// a misnamed or duplicate file fails every run, not only the one that would
// have applied it.
package migrations

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed *.up.sql
var files embed.FS

// Migration is one SQL file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

var nameRE = regexp.MustCompile(`^([0-9]{3})_([a-z0-9_]+)\.up\.sql$`)

// All returns the embedded migrations in version order. Versions must be
// 1, 2, 3, ... without gaps or duplicates.
func All() ([]Migration, error) { return load(files) }

func load(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, n := range names {
		m := nameRE.FindStringSubmatch(n)
		if m == nil {
			return nil, fmt.Errorf("migration %q: name must be NNN_name.up.sql (lower case, digits, _)", n)
		}
		v, _ := strconv.Atoi(m[1])
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: m[2], SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %03d_%s: versions must run 1, 2, 3, ... without gaps or duplicates", m.Version, m.Name)
		}
	}
	return out, nil
}

// Conn is what Up needs of one connection (a *pgx.Conn or a
// *pgxpool.Conn): the advisory lock belongs to the connection.
type Conn interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Begin(ctx context.Context) (pgx.Tx, error)
}

// ErrNewerSchema is returned when the database has migrations this binary
// does not know: it is older than the schema.
var ErrNewerSchema = errors.New("the database schema is newer than this program")

// MinServerVersion is the oldest PostgreSQL the schema runs on, as
// server_version_num: the views read the tables with the rights of the
// role that queries them (security_invoker, from PostgreSQL 15 on), so
// that an analyst's row-level security holds through them. An older
// server failed the first migration with "unrecognized parameter".
const MinServerVersion = 150000

// ErrServerTooOld is what Up fails with on a server older than
// MinServerVersion.
var ErrServerTooOld = fmt.Errorf("upgrade PostgreSQL to %d or newer", MinServerVersion/10000)

// Up applies the migrations the database (its current schema, the first
// of search_path) lacks, each in its own transaction, under an advisory lock
// so that services starting together apply each once. It returns the
// versions it applied.
func Up(ctx context.Context, conn Conn) ([]int, error) { return upTo(ctx, conn, 0) }

// upTo is Up, stopping after version last (0: the newest), so that a test
// can put rows in the schema a migration finds.
func upTo(ctx context.Context, conn Conn, last int) ([]int, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	if last > 0 {
		all = all[:min(last, len(all))]
	}
	if err := checkServer(ctx, conn, MinServerVersion); err != nil {
		return nil, err
	}
	const key = `hashtext('agentwire.migrate.' || current_schema())`
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(`+key+`)`); err != nil {
		return nil, fmt.Errorf("migrate: lock: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(`+key+`)`) }()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("migrate: schema_migrations: %w", err)
	}
	var current int
	if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return nil, fmt.Errorf("migrate: read version: %w", err)
	}
	if current > len(all) {
		return nil, fmt.Errorf("%w: it is at version %d, this program knows %d", ErrNewerSchema, current, len(all))
	}
	var applied []int
	for _, m := range all[current:] {
		if err := apply(ctx, conn, m); err != nil {
			return applied, err
		}
		applied = append(applied, m.Version)
	}
	return applied, nil
}

// checkServer fails with ErrServerTooOld when the server's
// server_version_num is below least.
func checkServer(ctx context.Context, conn Conn, least int) error {
	var num int
	var version string
	if err := conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int, current_setting('server_version')`).Scan(&num, &version); err != nil {
		return fmt.Errorf("migrate: server version: %w", err)
	}
	if num < least {
		return fmt.Errorf("migrate: the database runs PostgreSQL %s, and agentwire's views need %d or newer to read with the querying role's rights (security_invoker), which its row-level security relies on: %w",
			version, least/10000, ErrServerTooOld)
	}
	return nil
}

func apply(ctx context.Context, conn Conn, m Migration) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("migration %03d_%s: %w", m.Version, m.Name, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, m.SQL); err != nil {
		return fmt.Errorf("migration %03d_%s: %w", m.Version, m.Name, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
		return fmt.Errorf("migration %03d_%s: record: %w", m.Version, m.Name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("migration %03d_%s: commit: %w", m.Version, m.Name, err)
	}
	return nil
}

// UpPool runs Up on a connection of pool.
func UpPool(ctx context.Context, pool *pgxpool.Pool) ([]int, error) {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: connect: %w", err)
	}
	defer c.Release()
	return Up(ctx, c)
}
