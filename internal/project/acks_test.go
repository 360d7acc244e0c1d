package project

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/natstest"
)

// span is the stream sequences from to to, in that order (down when to is
// smaller).
func span(from, to int) []int {
	var out []int
	for s := from; ; {
		out = append(out, s)
		if s == to {
			return out
		}
		if to > from {
			s++
		} else {
			s--
		}
	}
}

// TestAcksInOrder: deliveries finished out of order are acked only up to
// the first one not finished, on a real consumer with cumulative acks: an
// ack sent early would ack an event no transaction has applied, and a
// crash then would lose it. The long case moves the acked part out of the
// queue while most of it is still tracked.
func TestAcksInOrder(t *testing.T) {
	t.Parallel()
	type step struct {
		finish []int // stream sequences
		floor  uint64
	}
	for _, tt := range []struct {
		name  string
		n     int
		steps []step
	}{
		{"short", 6, []step{{[]int{3, 5}, 0}, {[]int{1}, 1}, {[]int{2}, 3}, {[]int{6}, 3}, {[]int{4}, 6}}},
		{"long", 3000, []step{{span(2, 2000), 0}, {[]int{1}, 2000}, {span(3000, 2002), 2000}, {[]int{2001}, 3000}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			js, nc, _ := natstest.JetStream(t)
			layout, err := bus.Ensure(ctx, js, bus.Config{})
			if err != nil {
				t.Fatal(err)
			}
			for range tt.n {
				if _, err := js.PublishAsync("runtime.codex.turn.started", []byte(`{}`)); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case <-js.PublishAsyncComplete():
			case <-time.After(10 * time.Second):
				t.Fatal("publishing timed out")
			}
			cons, _, err := layout.EnsureProjectConsumer(ctx, "project", 0)
			if err != nil {
				t.Fatal(err)
			}
			batch, err := cons.Fetch(tt.n, jetstream.FetchMaxWait(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			a := NewAcks(nc, slog.New(slog.DiscardHandler))
			var pos []uint64
			for m := range batch.Messages() {
				pos = append(pos, a.Track(m))
			}
			if len(pos) != tt.n {
				t.Fatalf("fetched %d of %d", len(pos), tt.n)
			}
			floor := func() uint64 {
				t.Helper()
				if err := nc.Flush(); err != nil {
					t.Fatal(err)
				}
				info, err := cons.Info(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return info.AckFloor.Stream
			}
			for _, st := range tt.steps {
				var done []uint64
				for _, s := range st.finish {
					done = append(done, pos[s-1])
				}
				a.Finish(done...)
				got := floor()
				for deadline := time.Now().Add(5 * time.Second); got < st.floor && time.Now().Before(deadline); got = floor() {
					time.Sleep(10 * time.Millisecond)
				}
				if got != st.floor {
					t.Fatalf("after finishing %d deliveries from %d: ack floor %d, want %d", len(st.finish), st.finish[0], got, st.floor)
				}
			}
			if len(a.q) != 0 || a.head != 0 || a.base != uint64(tt.n) { //nolint:gosec // a count
				t.Errorf("%d tracked from %d (base %d) after all %d were acked, want none from 0", len(a.q), a.head, a.base, tt.n)
			}
		})
	}
}
