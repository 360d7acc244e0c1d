package normalize_test

import (
	"context"
	"log/slog"
	"sync"
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

// TestPublishOutlastsOutage: an event whose publish fails while NATS is
// away is published once it is back, however long that takes, not
// dead-lettered when the retries run out: a publish fails at once while
// the client reconnects, so counting those failures would spend every
// retry in a second.
func TestPublishOutlastsOutage(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	r := natstest.NewRelay(t, srv.Addr().String())
	log := slog.New(slog.DiscardHandler)
	nc, layout, err := bus.Open(t.Context(), r.URL(), t.Name(), bus.Config{}, log)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	n, err := normalize.New(t.Context(), layout, normalize.Config{PublishRetries: 2}, log)
	require.NoError(t, err)

	r.Down(true)
	r.Cut()
	require.Eventually(t, func() bool { return nc.Status() != nats.CONNECTED }, 5*time.Second, time.Millisecond)
	time.AfterFunc(1500*time.Millisecond, func() { r.Down(false) })
	msg := nats.NewMsg("runtime.codex.turn.started")
	msg.Data = []byte(`{}`)
	require.NoError(t, n.AwaitPublish(t.Context(), msg))
	require.Zero(t, n.Stats().DeadLettered.Load())
	st, err := layout.JS.Stream(t.Context(), bus.RuntimeStream)
	require.NoError(t, err)
	info, err := st.Info(t.Context())
	require.NoError(t, err)
	require.Equal(t, uint64(1), info.State.Msgs, "the event is in RUNTIME")
}

// TestReadOutlastsOutage: a session's saved state read while NATS is away
// is read once it is back, not failed (which stops the partition).
func TestReadOutlastsOutage(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	r := natstest.NewRelay(t, srv.Addr().String())
	log := slog.New(slog.DiscardHandler)
	nc, layout, err := bus.Open(t.Context(), r.URL(), t.Name(), bus.Config{}, log)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	n, err := normalize.New(t.Context(), layout, normalize.Config{}, log)
	require.NoError(t, err)

	r.Down(true)
	r.Cut()
	require.Eventually(t, func() bool { return nc.Status() != nats.CONNECTED }, 5*time.Second, time.Millisecond)
	time.AfterFunc(time.Second, func() { r.Down(false) })
	require.NoError(t, n.LoadSession(t.Context(), "acme", "outage"))
}

// TestDeadLetterOutlastsOutage: a frame dead-lettered while NATS is away
// reaches the dead letters once it is back, not only the log.
func TestDeadLetterOutlastsOutage(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	r := natstest.NewRelay(t, srv.Addr().String())
	log := slog.New(slog.DiscardHandler)
	nc, layout, err := bus.Open(t.Context(), r.URL(), t.Name(), bus.Config{}, log)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	n, err := normalize.New(t.Context(), layout, normalize.Config{}, log)
	require.NoError(t, err)
	sub, err := nc.SubscribeSync(bus.DeadLetterSubject("normalize", "acme"))
	require.NoError(t, err)
	require.NoError(t, nc.Flush())

	r.Down(true)
	r.Cut()
	require.Eventually(t, func() bool { return nc.Status() != nats.CONNECTED }, 5*time.Second, time.Millisecond)
	time.AfterFunc(time.Second, func() { r.Down(false) })
	n.DeadLetter(t.Context(), "acme", []byte(`{"broken":`), "unusable frame headers: test")
	m, err := sub.NextMsg(5 * time.Second)
	require.NoError(t, err)
	require.Equal(t, `{"broken":`, string(m.Data))
}

// TestShutdownDuringOutage: a shutdown does not wait for NATS to come
// back; the event in hand is left (unacked, for redelivery), not
// dead-lettered.
func TestShutdownDuringOutage(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	r := natstest.NewRelay(t, srv.Addr().String())
	log := slog.New(slog.DiscardHandler)
	nc, layout, err := bus.Open(t.Context(), r.URL(), t.Name(), bus.Config{}, log)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	n, err := normalize.New(t.Context(), layout, normalize.Config{}, log)
	require.NoError(t, err)
	stopping := make(chan struct{})
	n.Stopping(stopping)

	r.Down(true)
	r.Cut()
	require.Eventually(t, func() bool { return nc.Status() != nats.CONNECTED }, 5*time.Second, time.Millisecond)
	time.AfterFunc(300*time.Millisecond, func() { close(stopping) })
	start := time.Now()
	msg := nats.NewMsg("runtime.codex.turn.started")
	msg.Data = []byte(`{}`)
	require.Error(t, n.AwaitPublish(t.Context(), msg))
	require.Less(t, time.Since(start), 3*time.Second)
	require.Zero(t, n.Stats().DeadLettered.Load())
	require.ErrorIs(t, n.LoadSession(t.Context(), "acme", "outage"), nats.ErrReconnectBufExceeded)
}

// TestOutageLongerThanABatchWaits: NATS away for longer than a batch waits
// for it (OutageRetries) while a batch is mapped. The batch is left for
// redelivery instead of stopping the normalizer, and every event reaches
// RUNTIME once, in order, none dead-lettered.
func TestOutageLongerThanABatchWaits(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	nc := natstest.Conn(t, srv)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	cfg := bus.Config{AckWait: time.Second, PinnedTTL: time.Second} // redelivered soon after NATS is back
	layout, err := bus.Ensure(t.Context(), js, cfg)
	require.NoError(t, err)
	sessions := recordings(t)
	want := expected(t, "acme", sessions)

	r := natstest.NewRelay(t, srv.Addr().String())
	nnc, nlayout, err := bus.Open(t.Context(), r.URL(), t.Name(), cfg, quietLog(t))
	require.NoError(t, err)
	t.Cleanup(nnc.Close)
	var cut sync.Once
	away := normalize.WithMapHook(normalize.Config{OutageRetries: 2}, func(adapter.Frame) {
		cut.Do(func() {
			r.Down(true)
			r.Cut()
			time.AfterFunc(1500*time.Millisecond, func() { r.Down(false) })
		})
	})
	n, err := normalize.New(t.Context(), nlayout, away, quietLog(t))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	// The frames come once every partition consumes: NATS goes away while
	// a batch is mapped, not while the normalizer starts.
	raw, err := js.Stream(t.Context(), bus.RawStream)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		count := 0
		for range raw.ListConsumers(t.Context()).Info() {
			count++
		}
		return count == layout.Config.Partitions
	}, 10*time.Second, 10*time.Millisecond)
	publish(t, layout, "acme", sessions, false)

	got, _ := collect(t, js, total(want))
	for k := range want {
		require.Equal(t, want[k], got[k], "events of %s in the same order", k)
	}
	require.Zero(t, n.Stats().DeadLettered.Load())
	cancel()
	require.NoError(t, <-done)
}

// TestStartDuringOutage: a normalizer started while NATS is away applies
// its consumers once it is back, and normalizes.
func TestStartDuringOutage(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	nc := natstest.Conn(t, srv)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	layout, err := bus.Ensure(t.Context(), js, bus.Config{})
	require.NoError(t, err)
	sessions := recordings(t)
	want := expected(t, "acme", sessions)

	r := natstest.NewRelay(t, srv.Addr().String())
	nnc, nlayout, err := bus.Open(t.Context(), r.URL(), t.Name(), bus.Config{}, quietLog(t))
	require.NoError(t, err)
	t.Cleanup(nnc.Close)
	n, err := normalize.New(t.Context(), nlayout, normalize.Config{}, quietLog(t))
	require.NoError(t, err)
	r.Down(true)
	r.Cut()
	require.Eventually(t, func() bool { return nnc.Status() != nats.CONNECTED }, 5*time.Second, time.Millisecond)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	time.Sleep(500 * time.Millisecond)
	r.Down(false)
	publish(t, layout, "acme", sessions, false)

	got, _ := collect(t, js, total(want))
	for k := range want {
		require.Equal(t, want[k], got[k], "events of %s in the same order", k)
	}
	cancel()
	require.NoError(t, <-done)
}
