package normalize_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/ingest"
	"github.com/agentwire/agentwire/internal/natstest"
	"github.com/agentwire/agentwire/internal/normalize"
	"github.com/agentwire/agentwire/pkg/adapters"
	"github.com/agentwire/agentwire/pkg/canonical"
	"github.com/agentwire/agentwire/pkg/canonical/wire"
)

var receivedAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

type session struct {
	key, dialect string
	lines        [][]byte
	backlog      bool      // read from a log after it was written
	writtenBy    time.Time // when that log had been written by
}

func quietLog(t *testing.T) *slog.Logger {
	t.Helper()
	return slog.New(slog.DiscardHandler)
}

// recordings returns the codex-exec recordings and fixtures as sessions.
func recordings(t *testing.T) []session {
	t.Helper()
	paths, err := filepath.Glob("../../testdata/recordings/codex-exec/*.jsonl")
	require.NoError(t, err)
	paths = append(paths, "../../pkg/adapters/codexexec/testdata/inventory.jsonl")
	var out []session
	for _, p := range paths {
		out = append(out, session{key: "file:" + p, dialect: "codex-exec", lines: adaptertest.ReadLines(t, p)})
	}
	require.NotEmpty(t, out)
	return out
}

// expected maps sessions offline, as `agentwire map` does: the events the
// pipeline must deliver, in order per session.
func expected(t *testing.T, tenant string, sessions []session) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, e := range offline(t, tenant, sessions) {
		out[e.SessionID] = append(out[e.SessionID], e.EventID)
	}
	return out
}

// offline is the events of sessions mapped offline, in order per session.
func offline(t *testing.T, tenant string, sessions []session) []canonical.Event {
	t.Helper()
	var out []canonical.Event
	for _, s := range sessions {
		a, err := adapters.Lookup(s.dialect)
		require.NoError(t, err)
		sess := a.NewSession("")
		for i, l := range s.lines {
			f := adaptertest.Frames(s.dialect, s.key, [][]byte{l})[0]
			f.Tenant, f.Ordinal, f.ReceivedAt, f.Backlog, f.WrittenBy = tenant, uint64(i+1), receivedAt, s.backlog, s.writtenBy
			evs, err := sess.Map(f)
			require.NoError(t, err)
			out = append(out, evs...)
		}
	}
	return out
}

func publish(t *testing.T, layout *bus.Layout, tenant string, sessions []session, interleave bool) {
	t.Helper()
	ctx := context.Background()
	p, err := ingest.NewPublisher(layout, tenant, quietLog(t))
	require.NoError(t, err)
	if !interleave {
		for _, s := range sessions {
			for _, l := range s.lines {
				_, err := p.Publish(ctx, ingest.Frame{SessionKey: s.key, Dialect: s.dialect, Bytes: l, ReceivedAt: receivedAt, Backlog: s.backlog, WrittenBy: s.writtenBy})
				require.NoError(t, err)
			}
		}
	} else {
		for i := 0; ; i++ {
			more := false
			for _, s := range sessions {
				if i < len(s.lines) {
					more = true
					_, err := p.Publish(ctx, ingest.Frame{SessionKey: s.key, Dialect: s.dialect, Bytes: s.lines[i], ReceivedAt: receivedAt, Backlog: s.backlog, WrittenBy: s.writtenBy})
					require.NoError(t, err)
				}
			}
			if !more {
				break
			}
		}
	}
	require.NoError(t, p.Flush(ctx))
}

// collect reads RUNTIME until want events arrived (or a timeout), grouped
// by session as the stream stored them.
func collect(t *testing.T, js jetstream.JetStream, want int) (map[string][]string, []canonical.Event) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := js.OrderedConsumer(ctx, bus.RuntimeStream, jetstream.OrderedConsumerConfig{})
	require.NoError(t, err)
	// One iterator for all of them: an ordered consumer's Next is a fetch
	// of one, which makes its consumer anew each time (a JetStream API
	// request per event: 20k of them took TestBadInputFlows a minute).
	it, err := c.Messages()
	require.NoError(t, err)
	defer it.Stop()
	got := map[string][]string{}
	var all []canonical.Event
	for len(all) < want {
		m, err := it.Next(jetstream.NextMaxWait(10 * time.Second))
		if err != nil {
			if raw, serr := js.Stream(context.Background(), bus.RawStream); serr == nil {
				for ci := range raw.ListConsumers(context.Background()).Info() {
					t.Logf("%s: pending %d, ack pending %d, redelivered %d, waiting %d", ci.Name, ci.NumPending, ci.NumAckPending, ci.NumRedelivered, ci.NumWaiting)
				}
			}
		}
		require.NoError(t, err, "received %d of %d events", len(all), want)
		e, err := wire.FromNATS(natsMsg(m))
		require.NoError(t, err)
		all = append(all, e)
		got[e.SessionID] = append(got[e.SessionID], e.EventID)
	}
	// Nothing more may follow.
	_, err = it.Next(jetstream.NextMaxWait(500 * time.Millisecond))
	require.Error(t, err, "more events than expected")
	return got, all
}

func total(m map[string][]string) int {
	n := 0
	for _, ids := range m {
		n += len(ids)
	}
	return n
}

func startNormalizers(t *testing.T, url string, n int, cfg bus.Config) context.CancelFunc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range n {
		nc, js, err := bus.Connect(ctx, url, fmt.Sprintf("normalizer-%d", i), quietLog(t))
		require.NoError(t, err)
		layout, err := bus.Ensure(ctx, js, cfg)
		require.NoError(t, err)
		norm, err := normalize.New(ctx, layout, normalize.Config{}, quietLog(t))
		require.NoError(t, err)
		wg.Go(func() {
			defer nc.Close()
			if err := norm.Run(ctx); err != nil {
				t.Errorf("normalizer %d stopped: %v", i, err)
			}
		})
	}
	stop := func() {
		cancel()
		wg.Wait()
	}
	t.Cleanup(stop)
	return stop
}

// TestShutdownWhileStarting: a normalizer stopped while it applies its
// partitions' consumers (agentwire up cancelled just after it started)
// stops cleanly; it used to return the consumer's "context canceled" as
// its error, leaving the partitions it had started running.
func TestShutdownWhileStarting(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	ctx := context.Background()
	nc, js, err := bus.Connect(ctx, srv.ClientURL(), "normalizer", quietLog(t))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	layout, err := bus.Ensure(ctx, js, bus.Config{})
	require.NoError(t, err)
	norm, err := normalize.New(ctx, layout, normalize.Config{}, quietLog(t))
	require.NoError(t, err)
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	require.NoError(t, norm.Run(stopped))
}

func TestEndToEndMatchesOfflineMapping(t *testing.T) {
	t.Parallel()

	srv := natstest.Server(t)
	nc := natstest.Conn(t, srv)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	layout, err := bus.Ensure(context.Background(), js, bus.Config{})
	require.NoError(t, err)

	sessions := recordings(t)
	// Half of them read from their logs after the fact: codex-exec lines
	// state no time, so their events are timed when they were read, or
	// when their log was written, where ingest knows it (all but one).
	writtenBy := receivedAt.Add(-50 * time.Hour)
	for i := range sessions {
		sessions[i].backlog = i%2 == 0
		if i%4 == 0 {
			sessions[i].writtenBy = writtenBy
		}
	}
	want := expected(t, "acme", sessions)
	offlineEvents := map[string]canonical.Event{}
	for _, e := range offline(t, "acme", sessions) {
		offlineEvents[e.EventID] = e
	}
	startNormalizers(t, srv.ClientURL(), 1, bus.Config{})
	publish(t, layout, "acme", sessions, false)
	var flagged, written int
	for _, e := range requireDelivered(t, js, want) {
		require.Equal(t, "acme", e.Tenant)
		o := offlineEvents[e.EventID]
		require.Equal(t, o.CreatedAtIngested, e.CreatedAtIngested, "%s %s", e.EventID, e.Type())
		require.True(t, o.CreatedAt.Equal(e.CreatedAt), "%s %s at %s, offline at %s", e.EventID, e.Type(), e.CreatedAt, o.CreatedAt)
		if e.CreatedAtIngested {
			flagged++
		}
		if e.CreatedAt.Equal(writtenBy) {
			written++
		}
	}
	require.Positive(t, flagged)
	require.Less(t, flagged, len(offlineEvents))
	require.Positive(t, written, "no event took the time its log was written by")
	require.Less(t, written, flagged, "only the sessions whose log's time is known take it")

	// Ingesting the same frames again stores nothing: the duplicate window
	// drops them, so nothing new reaches the normalizer either.
	raw, err := js.Stream(context.Background(), bus.RawStream)
	require.NoError(t, err)
	before := raw.CachedInfo().State.Msgs
	publish(t, layout, "acme", sessions, false)
	info, err := raw.Info(context.Background())
	require.NoError(t, err)
	require.Equal(t, before, info.State.Msgs)
}

// requireDelivered waits for want's events in RUNTIME, each session's in
// its order and nothing more, and returns them in stream order.
func requireDelivered(t *testing.T, js jetstream.JetStream, want map[string][]string) []canonical.Event {
	t.Helper()
	got, events := collect(t, js, total(want))
	require.Equal(t, keysOf(want), keysOf(got))
	for k := range want {
		require.Equal(t, want[k], got[k], "events of %s in the same order", k)
	}
	return events
}

func natsMsg(m jetstream.Msg) *nats.Msg {
	return &nats.Msg{Subject: m.Subject(), Header: m.Headers(), Data: m.Data()}
}

func keysOf(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return slices.Sorted(slices.Values(out))
}
