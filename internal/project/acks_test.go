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

// TestAcksInOrder: deliveries finished out of order are acked only up to
// the first one not finished, on a real consumer with cumulative acks: an
// ack sent early would ack an event no transaction has applied, and a
// crash then would lose it.
func TestAcksInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	js, nc, _ := natstest.JetStream(t)
	layout, err := bus.Ensure(ctx, js, bus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		if _, err := js.Publish(ctx, "runtime.codex.turn.started", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	cons, _, err := layout.EnsureProjectConsumer(ctx, "project", 0)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.Fetch(6, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	a := newAcks(nc, slog.New(slog.DiscardHandler))
	var ts []*tracked
	for m := range batch.Messages() {
		ts = append(ts, a.track(m))
	}
	if len(ts) != 6 {
		t.Fatalf("fetched %d of 6", len(ts))
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
	for _, step := range []struct {
		finish []int // stream sequences
		floor  uint64
	}{
		{[]int{3, 5}, 0},
		{[]int{1}, 1},
		{[]int{2}, 3},
		{[]int{6}, 3},
		{[]int{4}, 6},
	} {
		var done []*tracked
		for _, s := range step.finish {
			done = append(done, ts[s-1])
		}
		a.finish(done...)
		got := floor()
		for deadline := time.Now().Add(5 * time.Second); got < step.floor && time.Now().Before(deadline); got = floor() {
			time.Sleep(10 * time.Millisecond)
		}
		if got != step.floor {
			t.Fatalf("after finishing %v: ack floor %d, want %d", step.finish, got, step.floor)
		}
	}
	if len(a.q) != 0 || a.head != 0 {
		t.Errorf("%d tracked from %d after all were acked, want none", len(a.q), a.head)
	}
}
