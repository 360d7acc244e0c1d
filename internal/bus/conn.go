package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultURL is the NATS server the services connect to by default.
const DefaultURL = "nats://127.0.0.1:4222"

// Connect connects to NATS for a service and keeps reconnecting forever
// after a server restart, logging each disconnect and reconnect. The
// first connection attempt fails fast with a message naming the URL.
//
// While it reconnects, a publish fails at once rather than wait in a
// reconnect buffer. Every publisher here retries what failed, in order;
// buffered messages went out first thing on reconnecting, ahead of the
// retries of those sent into the dead connection, so a session's frames
// (RAW) or events (RUNTIME) were stored out of order
// (ingest's TestOrderAcrossOutage).
func Connect(ctx context.Context, url, name string, log *slog.Logger) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(url,
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.ReconnectBufSize(-1),
		nats.Timeout(5*time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("disconnected from NATS; reconnecting", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("reconnected to NATS", "url", nc.ConnectedUrlRedacted())
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			log.Warn("NATS error", "subject", subject, "err", err)
		}),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to NATS at %s: %w (start one, run `agentwire up`, or pass --nats-url)", url, err)
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	if err := ctx.Err(); err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// Outage reports whether err is what a call to NATS fails with while the
// server is away or starting again (not connected, no reply in time, no
// JetStream yet): worth retrying until it is back.
func Outage(err error) bool {
	return errors.Is(err, nats.ErrReconnectBufExceeded) || errors.Is(err, nats.ErrDisconnected) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, context.DeadlineExceeded)
}

// WaitOut calls f until it succeeds, fails for another reason than an
// outage, has failed tries times (0: no bound), ctx ends or stop is
// closed (nil: never), with backoff from 100ms to 5s, and returns f's last
// result. The client does not hold requests while it reconnects
// (Connect): a call that must outlast a NATS restart goes through here.
func WaitOut[T any](ctx context.Context, stop <-chan struct{}, tries int, f func() (T, error)) (T, error) {
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		v, err := f()
		if err == nil || !Outage(err) || attempt == tries || ctx.Err() != nil || closed(stop) {
			return v, err
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
		case <-stop:
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Open connects a service to NATS (Connect) and applies the layout
// (Ensure): what every command that publishes or consumes does first. On
// failure nothing is left open.
func Open(ctx context.Context, url, name string, cfg Config, log *slog.Logger) (*nats.Conn, *Layout, error) {
	nc, js, err := Connect(ctx, url, name, log)
	if err != nil {
		return nil, nil, err
	}
	layout, err := Ensure(ctx, js, cfg)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("apply the JetStream layout: %w", err)
	}
	return nc, layout, nil
}
