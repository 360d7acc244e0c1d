package bus_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/internal/bus"
	"github.com/agentwire/agentwire/internal/natstest"
)

// TestEnsureProjectConsumerDropsTheFilter: a projector consumer created by
// an earlier version, filtered on runtime.>, loses its filter when the
// projector starts, and keeps its place in the stream.
func TestEnsureProjectConsumerDropsTheFilter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	js, _, _ := natstest.JetStream(t)
	layout, err := bus.Ensure(ctx, js, bus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := js.Publish(ctx, "runtime.codex.turn.started", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	old := layout.ProjectConsumerConfig("project", 0)
	old.FilterSubject = "runtime.>"
	c, err := js.CreateConsumer(ctx, bus.RuntimeStream, old)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := c.FetchNoWait(2)
	if err != nil {
		t.Fatal(err)
	}
	for m := range batch.Messages() {
		if err := m.DoubleAck(ctx); err != nil {
			t.Fatal(err)
		}
	}

	c, err = layout.EnsureProjectConsumer(ctx, "project", 0)
	if err != nil {
		t.Fatal(err)
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
	if info.Config.AckPolicy != jetstream.AckExplicitPolicy {
		t.Errorf("ack policy %v", info.Config.AckPolicy)
	}
}
