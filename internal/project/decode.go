package project

import (
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/agentwire/agentwire/pkg/canonical"
	"github.com/agentwire/agentwire/pkg/canonical/wire"
)

// DecodeEvent decodes a RUNTIME message into the event the projector folds:
// the envelope and the typed payload, validated, without raw. The event
// log keeps the document as it came (Postgres checks that it is JSON when
// it stores it as jsonb) and no projection reads the provider's frame;
// decoding raw was most of what decoding an event cost. The bench's decoded
// floor decodes with it, to pay what the projector pays.
func DecodeEvent(subject string, h nats.Header, data []byte) (canonical.Event, error) {
	e, err := wire.FromNATSEnvelope(&nats.Msg{Subject: subject, Header: h, Data: data})
	if err != nil {
		return e, err
	}
	// The dispatcher routes by these headers and the checkpoints are kept
	// by the document's values. wire holds the headers to the document
	// when they are there, but lets a router strip extensions; here they
	// must be there, or a session's events could be applied out of order.
	if h.Get("ce-specversion") != "" && (h.Get("ce-tenant") == "" || h.Get("ce-sessionid") == "") {
		return e, fmt.Errorf("decode event: no ce-tenant or ce-sessionid header: %w", wire.ErrMismatch)
	}
	return e, nil
}
