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

// TestWaitOut: a call failing with an outage is retried, up to its tries
// or until stop closes; any other failure, or success, ends it at once.
func TestWaitOut(t *testing.T) {
	t.Parallel()
	calls := 0
	failing := func(err error, until int) func() (int, error) {
		calls = 0
		return func() (int, error) {
			calls++
			if calls < until {
				return 0, err
			}
			return calls, nil
		}
	}
	v, err := bus.WaitOut(t.Context(), nil, 0, failing(nats.ErrReconnectBufExceeded, 3))
	require.NoError(t, err)
	require.Equal(t, 3, v, "two outage failures waited out")

	_, err = bus.WaitOut(t.Context(), nil, 2, failing(nats.ErrReconnectBufExceeded, 5))
	require.ErrorIs(t, err, nats.ErrReconnectBufExceeded)
	require.Equal(t, 2, calls, "tries bound the calls")

	_, err = bus.WaitOut(t.Context(), nil, 0, failing(jetstream.ErrBucketNotFound, 5))
	require.ErrorIs(t, err, jetstream.ErrBucketNotFound)
	require.Equal(t, 1, calls, "not an outage: not retried")

	stop := make(chan struct{})
	close(stop)
	_, err = bus.WaitOut(t.Context(), stop, 0, failing(nats.ErrReconnectBufExceeded, 5))
	require.ErrorIs(t, err, nats.ErrReconnectBufExceeded)
	require.Equal(t, 1, calls, "stop ends the wait")
}
