package bus

import (
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Ordered publishes a window of messages asynchronously and keeps their
// order in the stream across an outage. A message whose send fails, or
// that was in flight when the client reconnected (the client then fails
// its ack), is published again only later, when its caller waits for the
// window's acks; a message sent meanwhile, once NATS is back, would be
// stored before it, and a session's frames or events would sit in the
// stream out of order. So once either happened Ordered holds every later
// message, for the caller to publish in order behind the failed ones, and
// Reset opens the next window once they are stored.
//
// It is not safe for concurrent use.
type Ordered struct {
	js jetstream.JetStream
	// since is the connection's reconnect count when the window opened.
	since uint64
	held  bool
}

// NewOrdered returns an Ordered whose window opens now.
func NewOrdered(js jetstream.JetStream) *Ordered {
	o := &Ordered{js: js}
	o.Reset()
	return o
}

// Reset opens a new window: nothing of the last one is in flight or held.
func (o *Ordered) Reset() {
	o.since, o.held = reconnects(o.js.Conn()), false
}

// Held reports whether later messages are held: a send failed, the client
// reconnected since the window opened, or Hold was called.
func (o *Ordered) Held() bool {
	if !o.held && reconnects(o.js.Conn()) != o.since {
		o.held = true
	}
	return o.held
}

// Hold holds the window's later messages: the caller has messages of it
// that are not known stored.
func (o *Ordered) Hold() { o.held = true }

// Publish sends msg asynchronously and returns its ack future, or nil when
// msg was not sent (held, or its send failed, err saying why): the caller
// publishes it again, in order, behind the messages held before it.
func (o *Ordered) Publish(msg *nats.Msg) (jetstream.PubAckFuture, error) {
	if o.Held() {
		return nil, nil
	}
	ack, err := o.js.PublishMsgAsync(msg)
	if ack == nil {
		o.held = true
	}
	return ack, err
}

func reconnects(nc *nats.Conn) uint64 { return nc.Stats().Reconnects }
