package normalize_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/natstest"
	"github.com/agentwire/agentwire/internal/normalize"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
)

// relayed is a normalizer that reaches its NATS server through a relay,
// so that the test can take NATS away from it, and a direct connection to
// the same server.
type relayed struct {
	relay  *natstest.Relay
	nc     *nats.Conn  // the normalizer's
	layout *bus.Layout // the normalizer's
	js     jetstream.JetStream
	direct *bus.Layout
	n      *normalize.Normalizer
}

func newRelayed(t *testing.T, cfg normalize.Config, layout bus.Config) *relayed {
	t.Helper()
	srv := natstest.Server(t)
	x := &relayed{relay: natstest.NewRelay(t, srv.Addr().String())}
	var err error
	x.js, err = jetstream.New(natstest.Conn(t, srv))
	require.NoError(t, err)
	x.direct, err = bus.Ensure(t.Context(), x.js, layout)
	require.NoError(t, err)
	x.nc, x.layout, err = bus.Open(t.Context(), x.relay.URL(), t.Name(), layout, quietLog(t))
	require.NoError(t, err)
	t.Cleanup(x.nc.Close)
	x.n, err = normalize.New(t.Context(), x.layout, cfg, quietLog(t))
	require.NoError(t, err)
	return x
}

// away takes NATS away from the normalizer, and gives it back after back
// (never, if back is 0).
func (x *relayed) away(t *testing.T, back time.Duration) {
	t.Helper()
	x.relay.GoAway(t, x.nc)
	if back > 0 {
		time.AfterFunc(back, x.relay.Back)
	}
}

// run runs the normalizer until the test ends, and checks it then stops
// cleanly.
func (x *relayed) run(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- x.n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
}

func runtimeEvent() *nats.Msg {
	msg := nats.NewMsg("runtime.codex.turn.started")
	msg.Data = []byte(`{}`)
	return msg
}

// TestPublishOutlastsOutage: an event whose publish fails while NATS is
// away is published once it is back, however long that takes, not
// dead-lettered when the retries run out: a publish fails at once while
// the client reconnects, so counting those failures would spend every
// retry in a second.
func TestPublishOutlastsOutage(t *testing.T) {
	t.Parallel()
	x := newRelayed(t, normalize.Config{PublishRetries: 2}, bus.Config{})
	x.away(t, 1500*time.Millisecond)
	require.NoError(t, x.n.AwaitPublish(t.Context(), runtimeEvent()))
	require.Zero(t, x.n.Stats().DeadLettered.Load())
	st, err := x.js.Stream(t.Context(), bus.RuntimeStream)
	require.NoError(t, err)
	info, err := st.Info(t.Context())
	require.NoError(t, err)
	require.Equal(t, uint64(1), info.State.Msgs, "the event is in RUNTIME")
}

// TestReadOutlastsOutage: a session's saved state read while NATS is away
// is read once it is back, not failed (which stops the partition).
func TestReadOutlastsOutage(t *testing.T) {
	t.Parallel()
	x := newRelayed(t, normalize.Config{}, bus.Config{})
	x.away(t, time.Second)
	require.NoError(t, x.n.LoadSession(t.Context(), "acme", "outage"))
}

// TestDeadLetterOutlastsOutage: a frame dead-lettered while NATS is away
// reaches the dead letters once it is back, not only the log.
func TestDeadLetterOutlastsOutage(t *testing.T) {
	t.Parallel()
	x := newRelayed(t, normalize.Config{}, bus.Config{})
	sub, err := x.nc.SubscribeSync(bus.DeadLetterSubject("normalize", "acme"))
	require.NoError(t, err)
	require.NoError(t, x.nc.Flush())
	x.away(t, time.Second)
	x.n.DeadLetter(t.Context(), "acme", []byte(`{"broken":`), "unusable frame headers: test")
	m, err := sub.NextMsg(5 * time.Second)
	require.NoError(t, err)
	require.Equal(t, `{"broken":`, string(m.Data))
}

// TestShutdownDuringOutage: a shutdown does not wait for NATS to come
// back; the event in hand is left (unacked, for redelivery), not
// dead-lettered.
func TestShutdownDuringOutage(t *testing.T) {
	t.Parallel()
	x := newRelayed(t, normalize.Config{}, bus.Config{})
	stopping := make(chan struct{})
	x.n.Stopping(stopping)
	x.away(t, 0)
	time.AfterFunc(300*time.Millisecond, func() { close(stopping) })
	start := time.Now()
	require.Error(t, x.n.AwaitPublish(t.Context(), runtimeEvent()))
	require.Less(t, time.Since(start), 3*time.Second)
	require.Zero(t, x.n.Stats().DeadLettered.Load())
	require.ErrorIs(t, x.n.LoadSession(t.Context(), "acme", "outage"), nats.ErrReconnectBufExceeded)
}

// TestOutageLongerThanABatchWaits: NATS away for longer than a batch waits
// for it (OutageRetries) while a batch is mapped. The batch is left for
// redelivery instead of stopping the normalizer, and every event reaches
// RUNTIME once, in order, none dead-lettered.
func TestOutageLongerThanABatchWaits(t *testing.T) {
	t.Parallel()
	var cut sync.Once
	var x *relayed
	away := normalize.WithMapHook(normalize.Config{OutageRetries: 2}, func(adapter.Frame) {
		cut.Do(func() { // in the partition's goroutine: no waiting here
			x.relay.Away()
			time.AfterFunc(1500*time.Millisecond, x.relay.Back)
		})
	})
	// Redelivered soon after NATS is back.
	x = newRelayed(t, away, bus.Config{AckWait: time.Second, PinnedTTL: time.Second})
	x.run(t)
	// The frames come once every partition consumes: NATS goes away while
	// a batch is mapped, not while the normalizer starts.
	raw, err := x.js.Stream(t.Context(), bus.RawStream)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		count := 0
		for range raw.ListConsumers(t.Context()).Info() {
			count++
		}
		return count == x.direct.Config.Partitions
	}, 10*time.Second, 10*time.Millisecond)
	sessions := recordings(t)
	publish(t, x.direct, "acme", sessions, false)
	requireDelivered(t, x.js, expected(t, "acme", sessions))
	require.Zero(t, x.n.Stats().DeadLettered.Load())
}

// TestOutageMidBatchKeepsOrder: NATS goes away while a frame is mapped
// and is back for the next one of the same batch. The events of the
// second frame must not be stored before those of the first, which are
// published again only when the batch waits for its acks. They were: they
// went out at once, and RUNTIME held a session's events out of order.
// Either the first frame's events fail at once (the client noticed and
// reconnects), or they are lost unnoticed (the server stopped reading)
// and only the reconnect's failing of their acks tells.
func TestOutageMidBatchKeepsOrder(t *testing.T) {
	t.Parallel()
	for _, quiet := range []bool{false, true} {
		t.Run(map[bool]string{false: "reconnecting", true: "lost"}[quiet], func(t *testing.T) {
			t.Parallel()
			var x *relayed
			var mapped atomic.Int64
			const at = 3
			hook := normalize.WithMapHook(normalize.Config{}, func(adapter.Frame) {
				// One partition: this runs in its goroutine, between two frames.
				switch mapped.Add(1) {
				case at:
					if quiet {
						x.relay.Lose(true)
					} else {
						x.relay.GoAway(t, x.nc)
					}
				case at + 1:
					if quiet {
						x.relay.GoAway(t, x.nc)
						x.relay.Lose(false)
					}
					x.relay.Back()
					deadline := time.Now().Add(10 * time.Second)
					for !x.nc.IsConnected() && time.Now().Before(deadline) {
						time.Sleep(time.Millisecond)
					}
				}
			})
			x = newRelayed(t, hook, bus.Config{Partitions: 1})
			sessions := recordings(t)[:1]
			require.Greater(t, len(sessions[0].lines), at+1)
			// Published before the normalizer runs: the frames come in one batch.
			publish(t, x.direct, "acme", sessions, false)
			x.run(t)
			requireDelivered(t, x.js, expected(t, "acme", sessions))
			require.Greater(t, mapped.Load(), int64(at+1), "NATS went away inside the batch")
			require.True(t, x.nc.IsConnected())
			require.Zero(t, x.n.Stats().DeadLettered.Load())
		})
	}
}

// TestStartDuringOutage: a normalizer started while NATS is away applies
// its consumers once it is back, and normalizes.
func TestStartDuringOutage(t *testing.T) {
	t.Parallel()
	x := newRelayed(t, normalize.Config{}, bus.Config{})
	x.away(t, 500*time.Millisecond)
	x.run(t)
	sessions := recordings(t)
	publish(t, x.direct, "acme", sessions, false)
	requireDelivered(t, x.js, expected(t, "acme", sessions))
}
