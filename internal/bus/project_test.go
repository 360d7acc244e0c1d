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

// fetchSeqs fetches up to n deliveries of c and returns their stream
// sequences, acking the one at ackAt (cumulatively) if it comes, and
// checking that the deliveries are numbered on from firstDelivery.
func fetchSeqs(t *testing.T, c jetstream.Consumer, n int, ackAt, firstDelivery uint64) []uint64 {
	t.Helper()
	batch, err := c.FetchNoWait(n)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	for m := range batch.Messages() {
		md, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		if want := firstDelivery + uint64(len(seqs)); md.Sequence.Consumer != want {
			t.Errorf("stream sequence %d is delivery %d, want %d", md.Sequence.Stream, md.Sequence.Consumer, want)
		}
		seqs = append(seqs, md.Sequence.Stream)
		if md.Sequence.Stream == ackAt {
			if err := m.DoubleAck(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	return seqs
}

// TestRewindProjectConsumer: what a previous life of the projector was
// delivered and did not ack comes again at once, in stream order, after
// its ack floor; nothing before it; and the deliveries are numbered from 1
// again, which the projector checks. The server resets the consumer where
// it can (2.14 on); an older one has it made anew, with its configuration.
func TestRewindProjectConsumer(t *testing.T) {
	t.Parallel()
	for name, rewind := range map[string]func(*bus.Layout, context.Context, jetstream.Consumer) (jetstream.Consumer, error){
		"reset":  (*bus.Layout).RewindProjectConsumer,
		"remake": bus.RemakeFromAckFloor,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			js, layout := runtimeWith(t, 6)
			c, _, err := layout.EnsureProjectConsumer(ctx, "project", 100)
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := c.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if c, err = rewind(layout, ctx, c); err != nil {
				t.Fatal(err)
			}
			if got := fetchSeqs(t, c, 4, 2, 1); !slices.Equal(got, []uint64{1, 2, 3, 4}) {
				t.Fatalf("first life got %v", got)
			}
			if info, err := c.Info(ctx); err != nil || !info.Created.Equal(fresh.Created) {
				t.Errorf("a consumer that never delivered was made anew (%v)", err)
			}

			c, err = rewind(layout, ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if got := fetchSeqs(t, c, 10, 6, 1); !slices.Equal(got, []uint64{3, 4, 5, 6}) {
				t.Errorf("after the rewind got %v, want 3 to 6: what was in flight again, in order, then the rest", got)
			}
			info, err := c.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := layout.ProjectConsumerConfig("project", 100)
			if cfg := info.Config; cfg.AckPolicy != want.AckPolicy || cfg.MaxAckPending != want.MaxAckPending ||
				cfg.Description != want.Description || cfg.AckWait != want.AckWait || cfg.FilterSubject != "" {
				t.Errorf("configuration after the rewind %+v, want that of %+v", cfg, want)
			}

			// Nothing in flight: the next event is the first delivery.
			if _, err := js.Publish(ctx, "runtime.codex.turn.started", []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			if c, err = rewind(layout, ctx, c); err != nil {
				t.Fatal(err)
			}
			if got := fetchSeqs(t, c, 10, 0, 1); !slices.Equal(got, []uint64{7}) {
				t.Errorf("after a rewind with nothing in flight got %v, want 7", got)
			}
		})
	}
}
