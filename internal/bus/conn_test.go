package bus_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/bus"
)

// TestOutage: what a call fails with while NATS is away is retried; what
// retrying cannot mend is not.
func TestOutage(t *testing.T) {
	t.Parallel()
	for _, err := range []error{nats.ErrReconnectBufExceeded, nats.ErrDisconnected, nats.ErrTimeout, nats.ErrNoResponders,
		fmt.Errorf("put: %w", nats.ErrConnectionReconnecting)} {
		require.True(t, bus.Outage(err), "%v", err)
	}
	for _, err := range []error{nil, jetstream.ErrBucketNotFound, nats.ErrMaxPayload, nats.ErrConnectionClosed, errors.New("other")} {
		require.False(t, bus.Outage(err), "%v", err)
	}
}
