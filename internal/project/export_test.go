package project

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/agentwire/agentwire/pkg/canonical"
)

// WithFoldHook returns c with a hook run before each event is folded.
func WithFoldHook(c Config, hook func(*canonical.Event)) Config {
	c.foldHook = hook
	return c
}

// DeliveryGap reports whether deliveries numbered so make the projector
// start over.
func DeliveryGap(delivered ...uint64) bool {
	var d deliveryOrder
	for _, n := range delivered {
		if d.next(n) != nil {
			return true
		}
	}
	return false
}

// TakeOver starts a new generation of p's lease on conn, as a projector
// taking over does, and returns once no batch of an earlier one can commit.
func TakeOver(ctx context.Context, p *Projector, conn *pgx.Conn) error {
	_, _, err := p.takeOver(ctx, conn)
	return err
}

// WorkerOf is the worker of n that applies a session's events.
func WorkerOf(tenant, session string, n int) int { return workerOf(tenant, session, n) }
