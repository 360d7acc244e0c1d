package migrations_test

import (
	"context"
	"testing"

	"github.com/agentwire/agentwire/internal/dbtest"
	"github.com/agentwire/agentwire/migrations"
)

// TestUp applies every migration to an empty schema, then again (nothing
// left to apply), and checks what the lz4 migration promises: long columns
// of the event log and the projections compress with lz4 when the server
// has it.
func TestUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, _ := dbtest.Schema(t)
	all, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	applied, err := migrations.UpPool(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != len(all) {
		t.Fatalf("applied %v, want all %d", applied, len(all))
	}
	again, err := migrations.UpPool(ctx, pool)
	if err != nil || len(again) != 0 {
		t.Fatalf("second run applied %v (%v), want nothing", again, err)
	}

	var lz4 bool
	if err := pool.QueryRow(ctx, `SELECT count(*) = 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)`).Scan(&lz4); err != nil {
		t.Fatal(err)
	}
	if !lz4 {
		t.Skip("this server has no lz4")
	}
	for _, col := range []struct{ table, column string }{
		{"events", "data"}, {"sessions", "config"}, {"threads", "metadata"}, {"turns", "diff"}, {"items", "text_assistant"},
	} {
		var method string
		err := pool.QueryRow(ctx, `SELECT coalesce(nullif(attcompression, ''), '-') FROM pg_attribute
			WHERE attrelid = to_regclass($1) AND attname = $2`, col.table, col.column).Scan(&method)
		if err != nil {
			t.Fatalf("%s.%s: %v", col.table, col.column, err)
		}
		if method != "l" {
			t.Errorf("%s.%s compresses with %q, want lz4 (l)", col.table, col.column, method)
		}
	}
}
