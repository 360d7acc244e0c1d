package ingest_test

import (
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
	srv := natstest.Server(t)
	r := natstest.NewRelay(t, srv.Addr().String())
	f := connectFixtureAt(t, srv, r.URL())
	publish := func(from, to uint64) {
		for o := from; o <= to; o++ {
			require.NoError(t, f.in.Pub.PublishAt(t.Context(), ingest.Frame{SessionKey: "outage", Dialect: "acp",
				Bytes: []byte(`{"n":` + strconv.FormatUint(o, 10) + `}`), ReceivedAt: time.Now()}, o))
		}
	}
	publish(1, 2)
	require.NoError(t, f.in.Pub.Flush(t.Context()))

	r.Lose(true) // the server stops reading
	publish(3, 6)
	r.GoAway(t, f.nc) // and goes away
	publish(7, 10)    // while the client reconnects
	r.Lose(false)
	r.Back()
	require.NoError(t, f.in.Pub.Flush(t.Context()))

	var ordinals []string
	for _, m := range bySession(f.raw(t))["outage"] {
		ordinals = append(ordinals, m.header.Get(bus.HeaderOrdinal))
	}
	require.Equal(t, []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}, ordinals)
}
