package bus_test

import (
	"log/slog"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/natstest"
)

// TestOrderedHolds: an Ordered window sends until a send fails or the
// client reconnects, holds every later message until Reset, and a
// reconnect counts even when no send failed (the messages in flight then
// are lost unnoticed, their acks failed).
func TestOrderedHolds(t *testing.T) {
	t.Parallel()
	srv := natstest.Server(t)
	r := natstest.NewRelay(t, srv.Addr().String())
	nc, js, err := bus.Connect(t.Context(), r.URL(), t.Name(), slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	_, err = js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "ORDERED", Subjects: []string{"ordered.>"}})
	require.NoError(t, err)
	msg := func() *nats.Msg { return nats.NewMsg("ordered.x") }
	back := func() {
		t.Helper()
		r.ComeBack(t, nc)
	}
	sent := func(o *bus.Ordered) bool {
		t.Helper()
		ack, _ := o.Publish(msg())
		return ack != nil
	}

	o := bus.NewOrdered(js)
	require.True(t, sent(o))
	r.GoAway(t, nc)
	ack, err := o.Publish(msg())
	require.Nil(t, ack)
	require.Error(t, err, "a send while the client reconnects fails")
	ack, err = o.Publish(msg())
	require.Nil(t, ack)
	require.NoError(t, err, "held: not tried")
	back()
	require.False(t, sent(o), "held until Reset, though NATS is back")
	require.True(t, o.Held())
	o.Reset()
	require.True(t, sent(o))

	// Lost unnoticed: only the reconnect tells.
	r.Lose(true)
	require.True(t, sent(o))
	r.GoAway(t, nc)
	r.Lose(false)
	back()
	require.True(t, o.Held(), "the client reconnected since the window opened")
	require.False(t, sent(o))
	o.Hold()
	o.Reset()
	require.False(t, o.Held())
	require.True(t, sent(o))
}
