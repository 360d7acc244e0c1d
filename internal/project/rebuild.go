package project

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/internal/bus"
)

// Tables are every table the projector writes: the event log, the
// projections and the checkpoints. A rebuild empties exactly these.
var Tables = []string{
	"events", "sessions", "threads", "turns", "items", "requests", "tasks", "hooks",
	"item_text_parts", "rate_limit_observations", "usage_ledger", "unmapped_kinds", "projector_checkpoints",
}

// KeptTables are the tables of the schema that a rebuild leaves alone:
// the lease, whose generations must only grow (a projector that lost its
// lock would commit again under a generation counted anew), and what an
// operator wrote and no event rebuilds: the analysts' tenant bindings and
// the model prices.
var KeptTables = []string{"projector_leases", "tenant_members", "model_prices"}

// ErrRuntimeIncomplete is returned by PrepareRebuild when RUNTIME no
// longer holds its first events.
var ErrRuntimeIncomplete = errors.New("RUNTIME no longer holds every event")

// PrepareRebuild makes the next Run rebuild the event log and the
// projections from RUNTIME's first event: after a projector fix, rows
// written before it are rebuilt as the fixed projector writes them.
// Every projection row is a function of RUNTIME's events in order, so the
// result equals what a projector that always had the fix would have
// written.
//
// It waits until no projector is active (it takes their lock), refuses
// when RUNTIME has lost events (aged out by --runtime-max-age, or
// purged): what they built would be lost for good. Then it deletes the
// projector's consumer and empties Tables, in that order: a crash between
// the two leaves the checkpoints in place, and the consumer made anew
// replays RUNTIME into tables that skip what they hold. It returns
// RUNTIME's last sequence, which the rebuild has reached when the
// consumer's ack floor (AckFloor) has.
func (p *Projector) PrepareRebuild(ctx context.Context) (uint64, error) {
	last, err := p.prepareRebuild(ctx)
	if err != nil && ctx.Err() == nil {
		p.stopped.Store(&err) // what was asked for cannot be done: say so in Health
	}
	return last, err
}

func (p *Projector) prepareRebuild(ctx context.Context) (uint64, error) {
	lock, err := p.takeLock(ctx, "waiting for it to stop to rebuild")
	if err != nil {
		return 0, err
	}
	defer func() { _ = lock.Close(context.WithoutCancel(ctx)) }()
	// A projector that lost the lock to this one must not write into the
	// tables emptied below.
	if _, _, err := p.takeOver(ctx, lock); err != nil {
		return 0, err
	}

	st, err := p.layout.JS.Stream(ctx, bus.RuntimeStream)
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", bus.RuntimeStream, err)
	}
	state := st.CachedInfo().State
	if state.FirstSeq > 1 {
		return 0, fmt.Errorf("%w: it starts at sequence %d, and what the events before it built would be lost; nothing was changed",
			ErrRuntimeIncomplete, state.FirstSeq)
	}
	if err := p.layout.JS.DeleteConsumer(ctx, bus.RuntimeStream, p.cfg.Consumer); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return 0, fmt.Errorf("delete consumer %s: %w", p.cfg.Consumer, err)
	}
	if _, err := lock.Exec(ctx, "TRUNCATE "+strings.Join(Tables, ", ")); err != nil {
		return 0, classify(fmt.Errorf("empty the projections: %w", err))
	}
	p.log.Info("emptied the event log and the projections; rebuilding them from RUNTIME",
		"consumer", p.cfg.Consumer, "events", state.Msgs)
	return state.LastSeq, nil
}

// AckFloor is the last RUNTIME sequence up to which every event has been
// applied (or skipped, or dead-lettered) and acked.
func (p *Projector) AckFloor(ctx context.Context) (uint64, error) {
	c, err := p.layout.JS.Consumer(ctx, bus.RuntimeStream, p.cfg.Consumer)
	if err != nil {
		return 0, fmt.Errorf("consumer %s: %w", p.cfg.Consumer, err)
	}
	return c.CachedInfo().AckFloor.Stream, nil
}
