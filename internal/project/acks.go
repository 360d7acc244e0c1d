package project

import (
	"log/slog"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// acks keeps the run's deliveries and acks them cumulatively (the AckAll
// policy of the consumer): an ack of one delivery acks every earlier one, so it may be
// sent only once every delivery before it is finished, and the workers
// finish theirs out of order. Deliveries are tracked in the order the
// dispatcher receives them; finishing some acks the last of those
// finished in a row from the oldest.
//
// A delivery is finished when the transaction that applied (or skipped)
// it has committed, or when it was dead-lettered. One that is never
// finished holds back the acks of every later one: a run finishes all it
// tracks, or ends (lost, or shut down), and the next run rewinds the
// consumer to its ack floor. Those later deliveries then come again, and
// the checkpoints skip them.
//
// A delivery is tracked by its ack subject alone, not the message: a
// finished one waiting for the slowest worker's oldest delivery holds
// nothing of the event in the heap.
type acks struct {
	nc   *nats.Conn
	mu   sync.Mutex
	q    []*tracked // tracked, oldest first, from head
	head int
	log  *slog.Logger
}

// tracked is a delivery the run holds until it is finished.
type tracked struct {
	reply    string // where its ack goes
	finished bool
}

func newAcks(nc *nats.Conn, log *slog.Logger) *acks { return &acks{nc: nc, log: log} }

// ackBody is JetStream's ack: sent to a delivery's reply subject, it acks
// it, and every earlier one under cumulative acks (jetstream.Msg.Ack
// sends the same; the message itself is not kept to call it).
var ackBody = []byte("+ACK")

// track tracks the run's next delivery.
func (a *acks) track(m jetstream.Msg) *tracked {
	t := &tracked{reply: m.Reply()}
	a.mu.Lock()
	a.q = append(a.q, t)
	a.mu.Unlock()
	return t
}

// finish finishes deliveries and acks the last one of the oldest run of
// finished ones, if that moved.
func (a *acks) finish(ts ...*tracked) {
	a.mu.Lock()
	for _, t := range ts {
		t.finished = true
	}
	var last *tracked
	for a.head < len(a.q) && a.q[a.head].finished {
		last, a.q[a.head] = a.q[a.head], nil
		a.head++
	}
	// The acked part is dropped when nothing is left, or moved out once it
	// is most of the queue (and more than a few copies' worth): the queue
	// stays within twice what is tracked, which the ack limit bounds.
	switch {
	case a.head == len(a.q):
		a.q, a.head = a.q[:0], 0
	case a.head >= 1024 && a.head >= len(a.q)/2:
		n := copy(a.q, a.q[a.head:])
		clear(a.q[n:])
		a.q, a.head = a.q[:n], 0
	}
	a.mu.Unlock()
	if last == nil {
		return
	}
	// Acks sent by two workers may reach the server in either order; one
	// below the floor already acked changes nothing. One lost is harmless
	// too: the next covers it, and a redelivery is skipped by the
	// checkpoints.
	if err := a.nc.Publish(last.reply, ackBody); err != nil {
		a.log.Debug("ack failed", "err", err)
	}
}
