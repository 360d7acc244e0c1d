package project

import (
	"log/slog"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Acks keeps the run's deliveries and acks them cumulatively (the AckAll
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
// nothing of the event in the heap. It is named by its position in the
// run (0, 1, 2, ...), kept by value in q: nothing is allocated per event.
type Acks struct {
	nc   *nats.Conn
	mu   sync.Mutex
	q    []tracked // oldest first; those before head are acked
	head int
	base uint64 // the position of q[0]
	log  *slog.Logger
}

// tracked is a delivery the run holds until it is finished.
type tracked struct {
	reply    string // where its ack goes
	finished bool
}

// NewAcks tracks deliveries of a consumer with cumulative acks, acking
// through nc. The bench's floors ack with it too, as the projector does.
func NewAcks(nc *nats.Conn, log *slog.Logger) *Acks { return &Acks{nc: nc, log: log} }

// ackBody is JetStream's ack: sent to a delivery's reply subject, it acks
// it, and every earlier one under cumulative acks (jetstream.Msg.Ack
// sends the same; the message itself is not kept to call it).
var ackBody = []byte("+ACK")

// Track tracks the run's next delivery and returns its position.
func (a *Acks) Track(m jetstream.Msg) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.q = append(a.q, tracked{reply: m.Reply()})
	return a.base + uint64(len(a.q)-1) //nolint:gosec // a length is non-negative
}

// Finish finishes the deliveries at these positions and acks the last one
// of the oldest run of finished ones, if that moved.
func (a *Acks) Finish(positions ...uint64) {
	a.mu.Lock()
	for _, pos := range positions {
		a.q[pos-a.base].finished = true
	}
	var last string
	for a.head < len(a.q) && a.q[a.head].finished {
		last = a.q[a.head].reply
		a.head++
	}
	// The acked part is dropped when nothing is left, or moved out once it
	// is most of the queue (and more than a few copies' worth): the queue
	// stays within twice what is tracked, which the ack limit bounds.
	if a.head == len(a.q) || (a.head >= 1024 && a.head >= len(a.q)/2) {
		n := copy(a.q, a.q[a.head:])
		clear(a.q[n:])
		a.q, a.base, a.head = a.q[:n], a.base+uint64(a.head), 0 //nolint:gosec // head is non-negative
	}
	a.mu.Unlock()
	if last == "" {
		return
	}
	// Acks sent by two workers may reach the server in either order; one
	// below the floor already acked changes nothing. One lost is harmless
	// too: the next covers it, and a redelivery is skipped by the
	// checkpoints.
	if err := a.nc.Publish(last, ackBody); err != nil {
		a.log.Debug("ack failed", "err", err)
	}
}
