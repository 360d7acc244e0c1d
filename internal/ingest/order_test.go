package ingest_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/ingest"
	"github.com/agentwire/agentwire/internal/natstest"
)

// TestOrderAcrossOutage: frames sent into a connection the server no
// longer reads are lost; frames published while the client reconnects
// must not be stored before them. They were: the client kept those in
// its reconnect buffer and sent them first thing on reconnecting, while
// the lost ones were published again only by the flush that followed, so
// RAW held a session's frames out of order.
func TestOrderAcrossOutage(t *testing.T) {
	t.Parallel()
	r, f, publish := outageFixture(t)

	r.Lose(true) // the server stops reading
	publish(3, 6)
	r.GoAway(t, f.nc) // and goes away
	publish(7, 10)    // while the client reconnects
	r.Lose(false)
	r.Back()
	require.NoError(t, f.in.Pub.Flush(t.Context()))
	requireStoredInOrder(t, f, 10)
}

// TestOrderAfterReconnect: frames published while the client reconnects
// fail at once; frames published after it reconnected, before the flush
// that retries those, must not be stored before them. They were: they went
// out at once, and the flush then stored the earlier ones after them (seen
// as a proxy resuming its buffer while the client reconnected).
func TestOrderAfterReconnect(t *testing.T) {
	t.Parallel()
	r, f, publish := outageFixture(t)

	r.GoAway(t, f.nc)
	publish(3, 6) // while the client reconnects
	r.ComeBack(t, f.nc)
	publish(7, 10) // once it is back
	// Stored with no Flush: a live tap flushes only when its agent exits,
	// and the frames after an outage must not wait for that.
	requireStoredInOrder(t, f, 10)

	// Stored in order, the Publisher sends at once again.
	publish(11, 12)
	requireStoredInOrder(t, f, 12)
	require.NoError(t, f.in.Pub.Flush(t.Context()))
}

// TestOrderAcrossQuietOutage: frames sent into a connection the server no
// longer reads are lost, and nothing is published while the client
// reconnects. The frames published once it is back must not be stored
// before the lost ones (which only the reconnect's failing of their acks
// tells), nor leave those lost until the next Flush.
func TestOrderAcrossQuietOutage(t *testing.T) {
	t.Parallel()
	r, f, publish := outageFixture(t)

	r.Lose(true)
	publish(3, 4)
	r.GoAway(t, f.nc)
	r.Lose(false)
	r.ComeBack(t, f.nc)
	publish(5, 6)
	requireStoredInOrder(t, f, 6)
	require.NoError(t, f.in.Pub.Flush(t.Context()))
}

// TestFlushEndedEarlyKeepsFrames: a Flush whose context ends while NATS is
// away keeps the frames it did not store, and the next Flush stores them.
// It dropped them: a caller that flushes again after a timeout (a live
// source's release, a proxy's next run) lost them.
func TestFlushEndedEarlyKeepsFrames(t *testing.T) {
	t.Parallel()
	r, f, publish := outageFixture(t)
	r.GoAway(t, f.nc)
	publish(3, 4)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, f.in.Pub.Flush(ctx), context.DeadlineExceeded)
	r.ComeBack(t, f.nc)
	require.NoError(t, f.in.Pub.Flush(t.Context()))
	requireStoredInOrder(t, f, 4)
}

// outageFixture is a fixture whose client reaches its server through a
// relay, the test's to take away, with the frames 1 and 2 of the session
// "outage" stored; publish publishes the frames from..to of the session,
// each with its ordinal, without flushing.
func outageFixture(t *testing.T) (r *natstest.Relay, f *fixture, publish func(from, to uint64)) {
	t.Helper()
	srv := natstest.Server(t)
	r = natstest.NewRelay(t, srv.Addr().String())
	f = connectFixtureAt(t, srv, r.URL())
	publish = func(from, to uint64) {
		t.Helper()
		for o := from; o <= to; o++ {
			require.NoError(t, f.in.Pub.PublishAt(t.Context(), ingest.Frame{SessionKey: "outage", Dialect: "acp",
				Bytes: []byte(`{"n":` + strconv.FormatUint(o, 10) + `}`), ReceivedAt: time.Now()}, o))
		}
	}
	publish(1, 2)
	require.NoError(t, f.in.Pub.Flush(t.Context()))
	return r, f, publish
}

// requireStoredInOrder waits until RAW holds the frames 1..n of the
// session "outage", then requires them in that order.
func requireStoredInOrder(t *testing.T, f *fixture, n int) {
	t.Helper()
	want := make([]string, n)
	for i := range want {
		want[i] = strconv.Itoa(i + 1)
	}
	var ordinals []string
	require.Eventually(t, func() bool {
		ordinals = ordinals[:0]
		for _, m := range bySession(f.raw(t))["outage"] {
			ordinals = append(ordinals, m.header.Get(bus.HeaderOrdinal))
		}
		return len(ordinals) >= n
	}, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, want, ordinals, "the session's ordinals in RAW, in stream order")
}
