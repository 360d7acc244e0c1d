package bus

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// ProjectConsumer is the durable consumer name of the projector.
const ProjectConsumer = "project"

// ProjectConsumerConfig is the projector's durable pull consumer on
// RUNTIME: every event, explicit acks (an event is acked after the
// transaction that applied it commits), up to maxAckPending in flight.
// RUNTIME subjects carry no session partition, so one consumer serves all
// sessions; the projector fans them out to parallel workers by session.
// It has no subject filter: every RUNTIME subject is the projector's, and
// a filter, even one equal to the stream's subjects, makes the server
// match each message's subject against it before delivering it.
func (l *Layout) ProjectConsumerConfig(name string, maxAckPending int) jetstream.ConsumerConfig {
	if maxAckPending <= 0 {
		maxAckPending = 8192
	}
	return jetstream.ConsumerConfig{
		Durable:       name,
		Description:   "agentwire projector: RUNTIME into Postgres",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       l.Config.AckWait,
		MaxAckPending: maxAckPending,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		Replicas:      l.Config.Replicas,
	}
}

// EnsureProjectConsumer creates or updates the projector's durable
// consumer and returns it.
func (l *Layout) EnsureProjectConsumer(ctx context.Context, name string, maxAckPending int) (jetstream.Consumer, error) {
	c, err := l.JS.CreateOrUpdateConsumer(ctx, RuntimeStream, l.ProjectConsumerConfig(name, maxAckPending))
	if err != nil {
		return nil, fmt.Errorf("apply consumer %s: %w", name, err)
	}
	return c, nil
}

// DeadLetterProjectSubject is where the projector puts an event it cannot
// apply: deadletter.project.<tenant>.
func DeadLetterProjectSubject(tenant string) string { return DeadLetterSubject("project", tenant) }
