package project_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/project"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// streamed is a recording of one session's events about one item.
func streamed(ids canonical.IDSpace, item string, payloads ...canonical.Payload) recording {
	at := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	var evs []canonical.Event
	for i, p := range payloads {
		evs = append(evs, canonical.Event{EventID: ids.Event(uint64(i+1), 0), Tenant: ids.Tenant, Provider: ids.Provider,
			SessionID: ids.IngestSession(), CreatedAt: at.Add(time.Duration(i) * time.Millisecond), ItemID: item,
			MappingVersion: "fixture/1", Payload: p})
	}
	return recording{name: "streamed/" + ids.SessionKey, events: evs}
}

func output(s string) canonical.Payload {
	return &canonical.ContentDelta{StreamKind: canonical.StreamCommandOutput, Delta: s}
}

// itemText is an item's command output as the items table and the
// item_texts view have it.
func (e *env) itemText(item string) (column, view *string) {
	e.t.Helper()
	require.NoError(e.t, e.pool.QueryRow(context.Background(),
		`SELECT i.text_command_output, v.text_command_output FROM items i JOIN item_texts v USING (tenant_id, item_id) WHERE item_id = $1`,
		item).Scan(&column, &view))
	return column, view
}

func (e *env) parts() int {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.pool.QueryRow(context.Background(), `SELECT count(*) FROM item_text_parts`).Scan(&n))
	return n
}

// TestStreamedText: an item's streamed text reads the same through
// item_texts whether its deltas came in one batch or one per batch, while
// it streams and once it completed, with one session or two describing the
// item (in either order); a completed item's column holds it all and its
// parts are gone.
func TestStreamedText(t *testing.T) {
	t.Parallel()
	spaces := []canonical.IDSpace{
		{Tenant: "acme", Provider: canonical.ProviderCodex, SessionKey: "one"},
		{Tenant: "acme", Provider: canonical.ProviderCodex, SessionKey: "two"},
	}
	slices.SortFunc(spaces, func(a, b canonical.IDSpace) int { return strings.Compare(a.IngestSession(), b.IngestSession()) })
	owner, other := spaces[0], spaces[1]
	item := owner.Native(canonical.EntityItem, "th", "call-1")
	command := canonical.ItemTypeCommandExecution
	started := &canonical.ItemStarted{ItemType: command, Command: "ls"}
	completed := &canonical.ItemCompleted{ItemType: command, Status: canonical.ItemStatusCompleted}
	updated := func(text string) canonical.Payload {
		return &canonical.ItemUpdated{ItemType: command, Content: map[canonical.StreamKind]string{canonical.StreamCommandOutput: text}}
	}
	for _, c := range []struct {
		name   string
		owner  []canonical.Payload // of the smaller session
		other  []canonical.Payload // of the larger one
		text   string              // item_texts has
		column string              // items has ("" for NULL)
	}{
		{name: "streaming", owner: []canonical.Payload{started, output("a"), output("b")},
			text: "ab"},
		{name: "completed", owner: []canonical.Payload{started, output("a"), output("b"), completed},
			text: "ab", column: "ab"},
		{name: "completed with its text", owner: []canonical.Payload{started, output("a"), output("b"),
			&canonical.ItemCompleted{ItemType: command, Status: canonical.ItemStatusCompleted,
				Content: map[canonical.StreamKind]string{canonical.StreamCommandOutput: "final"}}},
			text: "final", column: "final"},
		{name: "replaced while streaming", owner: []canonical.Payload{started, output("a"), updated("B"), output("c")},
			text: "Bc", column: "B"},
		{name: "replaced then completed", owner: []canonical.Payload{started, output("a"), updated("B"), output("c"), completed},
			text: "Bc", column: "Bc"},
		{name: "a delta after it completed", owner: []canonical.Payload{started, output("a"), completed, output("z")},
			text: "az", column: "a"},
		{name: "completed again after a delta", owner: []canonical.Payload{started, output("a"), completed, output("z"), completed},
			text: "az", column: "az"},
		{name: "the other session streams", owner: []canonical.Payload{started},
			other: []canonical.Payload{started, output("x"), output("y")},
			text:  "xy"},
		{name: "the other session completes", owner: []canonical.Payload{started},
			other: []canonical.Payload{started, output("x"), output("y"), completed},
			text:  "xy", column: "xy"},
		{name: "both stream", owner: []canonical.Payload{started, output("a"), output("b")},
			other: []canonical.Payload{started, output("x"), output("y")},
			text:  "ab"},
		{name: "both complete", owner: []canonical.Payload{started, output("a"), output("b"), completed},
			other: []canonical.Payload{started, output("x"), output("y"), completed},
			text:  "ab", column: "ab"},
		{name: "the other completes first", owner: []canonical.Payload{started, output("a"), output("b")},
			other: []canonical.Payload{started, output("x"), output("y"), completed},
			text:  "ab", column: "xy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			recs := []recording{streamed(owner, item, c.owner...)}
			if c.other != nil {
				recs = append(recs, streamed(other, item, c.other...))
			}
			var first string
			reversed := slices.Clone(recs)
			slices.Reverse(reversed)
			for _, order := range [][]recording{recs, reversed} {
				for _, batch := range []int{1, 0} {
					e := projectedBy(t, project.Config{Workers: 1, BatchSize: batch}, order...)
					column, view := e.itemText(item)
					require.NotNil(t, view)
					require.Equal(t, c.text, *view, "item_texts, batches of %d", batch)
					if c.column == "" {
						require.Nil(t, column, "items, batches of %d", batch)
					} else {
						require.NotNil(t, column)
						require.Equal(t, c.column, *column, "items, batches of %d", batch)
					}
					if d := e.dump(); first == "" {
						first = d
					} else {
						requireSameDump(t, first, d, "the projection in one order and batching")
					}
				}
			}
		})
	}
}

// TestStreamedTextWrittenOnce: a long output streamed one delta per batch
// (a live agent: the projector applies each delta as it comes) is written
// a bounded number of times, not once per delta. Postgres rewrites a whole
// value to change it, and keeps each version until a vacuum: appending
// every delta to the column left 200 versions of a growing text behind,
// 105 times the text's size (85 MB for 800 kB), where storing the deltas
// as parts and folding them in once leaves under three times its size.
func TestStreamedTextWrittenOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	for _, table := range []string{"items", "item_text_parts"} {
		_, err := e.pool.Exec(ctx, `ALTER TABLE `+table+` SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)`)
		require.NoError(t, err)
	}
	ids := canonical.IDSpace{Tenant: "acme", Provider: canonical.ProviderCodex, SessionKey: "long-output"}
	item := ids.Native(canonical.EntityItem, "th", "call-1")
	const deltas, size = 200, 4096
	events := []canonical.Payload{&canonical.ItemStarted{ItemType: canonical.ItemTypeCommandExecution, Command: "make"}}
	var want strings.Builder
	for range deltas {
		chunk := make([]byte, size*3/4)
		_, _ = rand.Read(chunk) // incompressible: what is stored is what was written
		s := base64.StdEncoding.EncodeToString(chunk)
		want.WriteString(s)
		events = append(events, output(s))
	}
	half := len(events) / 2
	e.publish([]recording{streamed(ids, item, events[:half]...)}, 1)
	e.start(project.Config{BatchSize: 1})
	e.waitApplied("")
	column, view := e.itemText(item)
	require.Nil(t, column, "the text of an item that streams is in its parts")
	require.NotNil(t, view)
	require.Equal(t, want.String()[:(half-1)*size], *view, "item_texts while the item streams")

	// The rest, numbered on from the first half.
	all := streamed(ids, item, append(events, &canonical.ItemCompleted{ItemType: canonical.ItemTypeCommandExecution, Status: canonical.ItemStatusCompleted})...)
	e.publish([]recording{{name: all.name, events: all.events[half:]}}, 1)
	e.waitApplied("")
	column, view = e.itemText(item)
	require.NotNil(t, column)
	require.Equal(t, want.String(), *column, "the completed item's column")
	require.Equal(t, want.String(), *view)
	require.Zero(t, e.parts(), "the parts of a completed item are folded in")

	var stored int64
	require.NoError(t, e.pool.QueryRow(ctx,
		`SELECT pg_total_relation_size('items') + pg_total_relation_size('item_text_parts')`).Scan(&stored))
	require.Less(t, stored, int64(4*deltas*size), "bytes stored for %d bytes of text", deltas*size)
}
