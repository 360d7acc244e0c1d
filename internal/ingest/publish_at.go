package ingest

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentwire/agentwire/internal/bus"
)

// PublishAt queues f for publication with the ordinal the caller chose
// (from 1), for sources that number their frames themselves: an HTTP
// client resending a request, a follower resuming a file. The message id
// is the session's and the ordinal's, so publishing the same ordinal of
// the same session again stores nothing new within RAW's duplicate window.
// Later Publish calls of the session continue after the highest ordinal
// seen.
func (p *Publisher) PublishAt(ctx context.Context, f Frame, ordinal uint64) error {
	if ordinal == 0 {
		return errors.New("publish: ordinals count from 1")
	}
	p.mu.Lock()
	if ordinal > p.ordinals[f.SessionKey] {
		p.ordinals[f.SessionKey] = ordinal
	}
	p.mu.Unlock()

	return p.send(ctx, f, ordinal)
}

// Tenant is the tenant the Publisher publishes for.
func (p *Publisher) Tenant() string { return p.tenant }

// Connected reports whether the Publisher's NATS connection is up now.
func (p *Publisher) Connected() bool { return p.layout.JS.Conn().IsConnected() }

// LastOrdinal returns the highest ordinal RAW holds for a session of the
// Publisher's tenant, 0 when it holds none, and makes later Publish calls
// of the session continue after it. A source that restarts without
// numbering its frames calls it before publishing again, so that its new
// frames are not taken for duplicates of the old ones.
func (p *Publisher) LastOrdinal(ctx context.Context, sessionKey string) (uint64, error) {
	stream, err := p.layout.JS.Stream(ctx, bus.RawStream)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", bus.RawStream, err)
	}
	m, err := stream.GetLastMsgForSubject(ctx, bus.RawSessionFilter(p.tenant, sessionKey, p.layout.Config.Partitions))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("last frame of session %s: %w", sessionKey, err)
	}
	// Two sessions may share a subject token only by a hash collision;
	// the header is the truth.
	var last uint64
	if m.Header.Get(bus.HeaderSessionKey) == sessionKey {
		if last, err = strconv.ParseUint(m.Header.Get(bus.HeaderOrdinal), 10, 64); err != nil {
			return 0, fmt.Errorf("last frame of session %s: bad ordinal: %w", sessionKey, err)
		}
	}
	p.mu.Lock()
	if last > p.ordinals[sessionKey] {
		p.ordinals[sessionKey] = last
	}
	p.mu.Unlock()
	return last, nil
}
