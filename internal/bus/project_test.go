package bus_test

import (
	"context"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/natstest"
)

// runtimeWith returns a JetStream with the layout applied and n events in
// RUNTIME.
func runtimeWith(t *testing.T, n int) (jetstream.JetStream, *bus.Layout) {
	t.Helper()
	js, _, _ := natstest.JetStream(t)
	layout, err := bus.Ensure(context.Background(), js, bus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, err := js.Publish(context.Background(), "runtime.codex.turn.started", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	return js, layout
}

// oldConsumer makes the projector's consumer "project" as an earlier
// version did (the current configuration, changed by earlier), has it
// fetch the first n events, and acks those at the stream sequences acked.
func oldConsumer(t *testing.T, layout *bus.Layout, earlier func(*jetstream.ConsumerConfig), n int, acked ...uint64) {
	t.Helper()
	ctx := t.Context()
	cfg := layout.ProjectConsumerConfig("project", 0)
	earlier(&cfg)
	c, err := layout.JS.CreateConsumer(ctx, bus.RuntimeStream, cfg)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.FetchNoWait(n)
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		md, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(acked, md.Sequence.Stream) {
			if err := m.DoubleAck(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestEnsureProjectConsumerDropsTheFilter: a projector consumer created by
// an earlier version, filtered on runtime.>, loses its filter when the
// projector starts, and keeps its place in the stream.
func TestEnsureProjectConsumerDropsTheFilter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, layout := runtimeWith(t, 3)
	oldConsumer(t, layout, func(c *jetstream.ConsumerConfig) { c.FilterSubject = "runtime.>" }, 2, 1, 2)

	c, remade, err := layout.EnsureProjectConsumer(ctx, "project", 0)
	if err != nil || remade != 0 {
		t.Fatal(remade, err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.FilterSubject != "" || len(info.Config.FilterSubjects) != 0 {
		t.Errorf("filter %q %v, want none", info.Config.FilterSubject, info.Config.FilterSubjects)
	}
	if info.AckFloor.Stream != 2 || info.NumPending != 1 {
		t.Errorf("ack floor %d, %d pending; want 2 and 1", info.AckFloor.Stream, info.NumPending)
	}
	if info.Config.AckPolicy != jetstream.AckAllPolicy {
		t.Errorf("ack policy %v", info.Config.AckPolicy)
	}
}

// TestEnsureProjectConsumerCumulativeAcks: a projector consumer of an
// earlier version, which acked every event, is made anew with cumulative
// acks from its ack floor: events past the floor come again (those it had
// acked out of order too; the projector's checkpoints skip them), none
// before it. It keeps that start when the projector starts again.
func TestEnsureProjectConsumerCumulativeAcks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	js, layout := runtimeWith(t, 6)
	oldConsumer(t, layout, func(c *jetstream.ConsumerConfig) { c.AckPolicy = jetstream.AckExplicitPolicy }, 5, 1, 2, 4)

	for run := range 2 {
		c, remade, err := layout.EnsureProjectConsumer(ctx, "project", 0)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[int]uint64{0: 3, 1: 0}[run]; remade != want {
			t.Errorf("run %d: made anew from %d, want %d", run, remade, want)
		}
		info, err := c.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.Config.AckPolicy != jetstream.AckAllPolicy || info.NumPending != 4 {
			t.Fatalf("run %d: ack policy %v, %d pending; want cumulative acks and 4 (3 to 6)", run, info.Config.AckPolicy, info.NumPending)
		}
	}
	c, err := js.Consumer(ctx, bus.RuntimeStream, "project")
	if err != nil {
		t.Fatal(err)
	}
	next, err := c.FetchNoWait(1)
	if err != nil {
		t.Fatal(err)
	}
	for m := range next.Messages() {
		if md, err := m.Metadata(); err != nil || md.Sequence.Stream != 3 {
			t.Errorf("first delivery %+v (%v), want stream sequence 3", md, err)
		}
	}
}
