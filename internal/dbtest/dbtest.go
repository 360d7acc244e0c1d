package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultURL is tried when neither TEST_DATABASE_URL nor DATABASE_URL is set.
// It matches what scripts/ensure-postgres prints for a stock local server.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

const (
	// probeTimeout keeps a machine without a local server from stalling
	// every test on connection attempts.
	probeTimeout = 2 * time.Second
	// cleanupTimeout bounds teardown, which runs after the test's own
	// context is cancelled.
	cleanupTimeout = 30 * time.Second
	hint           = "run scripts/ensure-postgres and export its output as DATABASE_URL, or set DATABASE_URL"
)

// defaultAnswers probes DefaultURL once per test binary: the answer does not
// change between tests, and parallel tests would otherwise each pay for it.
var defaultAnswers = sync.OnceValue(func() error {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()

	return ping(ctx, DefaultURL)
})

// URL returns the connection URL tests should use: TEST_DATABASE_URL, else
// DATABASE_URL, else DefaultURL if a server answers there within two
// seconds. It fails the test when there is none.
func URL(tb testing.TB) string {
	tb.Helper()

	if u, ok := envURL(os.LookupEnv); ok {
		return u
	}
	if err := defaultAnswers(); err != nil {
		tb.Fatalf("dbtest: no Postgres for tests: TEST_DATABASE_URL and DATABASE_URL are unset and %s does not answer (%v); %s",
			DefaultURL, err, hint)
	}

	return DefaultURL
}

// envURL picks the URL from the environment. An empty variable counts as
// unset so that `DATABASE_URL= go test` means "not configured".
func envURL(lookup func(string) (string, bool)) (string, bool) {
	for _, name := range []string{"TEST_DATABASE_URL", "DATABASE_URL"} {
		if u, ok := lookup(name); ok && u != "" {
			return u, true
		}
	}

	return "", false
}

// Pool returns a pool connected to URL, closed when the test ends.
func Pool(tb testing.TB) *pgxpool.Pool {
	tb.Helper()

	return open(tb, parseConfig(tb))
}

// Schema creates a uniquely named, empty schema and returns a pool whose
// connections have search_path set to it, so unqualified names resolve
// there. The schema is dropped with everything in it when the test ends.
func Schema(tb testing.TB) (pool *pgxpool.Pool, schema string) {
	tb.Helper()

	cfg := parseConfig(tb)
	schema = "test_" + randomHex(8)
	ident := pgx.Identifier{schema}.Sanitize()

	if err := execOnce(tb.Context(), cfg, "CREATE SCHEMA "+ident); err != nil {
		tb.Fatalf("dbtest: create schema %s on %s: %v", schema, describe(cfg), err)
	}
	// Registered before the pool so that it runs after the pool is closed:
	// DROP SCHEMA would otherwise wait on locks held by idle connections.
	tb.Cleanup(func() {
		ctx, cancel := cleanupContext(tb.Context())
		defer cancel()

		if err := execOnce(ctx, cfg, "DROP SCHEMA IF EXISTS "+ident+" CASCADE"); err != nil {
			tb.Errorf("dbtest: drop schema %s: %v", schema, err)
		}
	})

	scoped := cfg.Copy()
	// Set at connection startup rather than with SET so that it survives
	// DISCARD ALL and applies to every connection the pool ever opens.
	scoped.ConnConfig.RuntimeParams["search_path"] = ident

	return open(tb, scoped), schema
}

// Tx begins a transaction on a dedicated connection and rolls it back when
// the test ends, discarding whatever the test wrote. Committing it is
// allowed; the rollback then does nothing.
func Tx(tb testing.TB) pgx.Tx {
	tb.Helper()

	cfg := parseConfig(tb)
	conn, err := pgx.ConnectConfig(tb.Context(), cfg.ConnConfig)
	if err != nil {
		tb.Fatalf("dbtest: connect to %s: %v; %s", describe(cfg), err, hint)
	}
	tb.Cleanup(func() {
		ctx, cancel := cleanupContext(tb.Context())
		defer cancel()

		if err := conn.Close(ctx); err != nil {
			tb.Errorf("dbtest: close connection: %v", err)
		}
	})

	tx, err := conn.Begin(tb.Context())
	if err != nil {
		tb.Fatalf("dbtest: begin transaction: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := cleanupContext(tb.Context())
		defer cancel()

		if err := tx.Rollback(ctx); err != nil && !errors.Is(err, pgx.ErrTxClosed) {
			tb.Errorf("dbtest: roll back transaction: %v", err)
		}
	})

	return tx
}

func parseConfig(tb testing.TB) *pgxpool.Config {
	tb.Helper()

	cfg, err := pgxpool.ParseConfig(URL(tb))
	if err != nil {
		// The URL may carry a password, so it is not echoed.
		tb.Fatalf("dbtest: parse database URL: %v", err)
	}

	return cfg
}

func open(tb testing.TB, cfg *pgxpool.Config) *pgxpool.Pool {
	tb.Helper()

	pool, err := pgxpool.NewWithConfig(tb.Context(), cfg)
	if err != nil {
		tb.Fatalf("dbtest: create pool for %s: %v", describe(cfg), err)
	}
	tb.Cleanup(pool.Close)

	// The pool connects lazily; ping so an unreachable server fails here,
	// with a hint, rather than in the middle of the code under test.
	if err := pool.Ping(tb.Context()); err != nil {
		tb.Fatalf("dbtest: %s does not answer: %v; %s", describe(cfg), err, hint)
	}

	return pool
}

func ping(ctx context.Context, connString string) error {
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()

	if err := conn.Ping(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}

	return nil
}

// execOnce runs sql on a short-lived connection, so that creating and
// dropping schemas does not keep a connection open for the whole test.
func execOnce(ctx context.Context, cfg *pgxpool.Config, sql string) error {
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()

	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("exec: %w", err)
	}

	return nil
}

// cleanupContext outlives the test's own context, which testing cancels
// just before cleanups run.
func cleanupContext(testCtx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(testCtx), cleanupTimeout)
}

// describe names the server without credentials, for error messages.
func describe(cfg *pgxpool.Config) string {
	c := cfg.ConnConfig
	u := url.URL{
		Scheme: "postgres",
		User:   url.User(c.User),
		Host:   net.JoinHostPort(c.Host, strconv.Itoa(int(c.Port))),
		Path:   "/" + c.Database,
	}

	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	// crypto/rand.Read never fails since Go 1.24; it crashes the program
	// instead of returning an error.
	_, _ = rand.Read(b)

	return hex.EncodeToString(b)
}
