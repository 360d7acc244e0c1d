package normalize

import (
	"context"

	"github.com/nats-io/nats.go"

	"github.com/agentwire/agentwire/pkg/adapters/adapter"
)

// WithMapHook returns c with a hook run before each frame is mapped.
func WithMapHook(c Config, hook func(adapter.Frame)) Config {
	c.mapHook = hook
	return c
}

// AwaitPublish publishes msg as a worker does an event whose asynchronous
// publish failed: with retries, then to the dead letters.
func (n *Normalizer) AwaitPublish(ctx context.Context, msg *nats.Msg) error {
	w := &partitionWorker{n: n}
	return w.awaitPublish(ctx, pendingEvent{msg: msg})
}

// LoadSession loads the saved state of a session of the codex-exec dialect
// as a worker does for the first frame of a batch.
func (n *Normalizer) LoadSession(ctx context.Context, tenant, sessionKey string) error {
	w := &partitionWorker{n: n, sessions: newSessionCache(8)}
	_, err := w.session(ctx, frameMeta{tenant: tenant, sessionKey: sessionKey, dialect: "codex-exec", ordinal: 1})
	return err
}

// DeadLetter dead-letters data as the normalizer does a frame it cannot use.
func (n *Normalizer) DeadLetter(ctx context.Context, tenant string, data []byte, reason string) {
	n.deadLetter(ctx, tenant, data, nil, reason)
}

// Stopping makes n act as a Normalizer whose Run is shutting down once
// stopping is closed.
func (n *Normalizer) Stopping(stopping <-chan struct{}) { n.stopping = stopping }
