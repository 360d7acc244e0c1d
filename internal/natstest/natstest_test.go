package natstest_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/natstest"
)

const waitTimeout = 10 * time.Second

func TestServer(t *testing.T) {
	t.Parallel()

	srv := natstest.Server(t)
	require.True(t, srv.JetStreamEnabled())

	addr, ok := srv.Addr().(*net.TCPAddr)
	require.True(t, ok)
	require.Equal(t, "127.0.0.1", addr.IP.String())
	require.NotZero(t, addr.Port)

	nc := natstest.Conn(t, srv)
	require.True(t, nc.IsConnected())
}

func TestServersAreIndependent(t *testing.T) {
	t.Parallel()

	a, b := natstest.Server(t), natstest.Server(t)
	require.NotEqual(t, a.ClientURL(), b.ClientURL())
	require.NotEqual(t, a.StoreDir(), b.StoreDir())
}

func TestJetStreamPublishConsume(t *testing.T) {
	t.Parallel()

	js, _, _ := natstest.JetStream(t)
	ctx := t.Context()

	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FRAMES", Subjects: []string{"frames.>"}})
	require.NoError(t, err)
	_, err = js.Publish(ctx, "frames.a", []byte("hello"))
	require.NoError(t, err)

	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	require.NoError(t, err)
	msg, err := cons.Next(jetstream.FetchMaxWait(waitTimeout))
	require.NoError(t, err)
	require.Equal(t, "hello", string(msg.Data()))
}

func TestRestartKeepsStreamsAndReconnects(t *testing.T) {
	t.Parallel()

	srv := natstest.Server(t)
	before := port(t, srv)
	storeDir := srv.StoreDir()

	reconnected := make(chan struct{}, 1)
	nc := natstest.Conn(t, srv,
		nats.MaxReconnects(-1),
		// The default two-second wait would dominate the test's run time.
		nats.ReconnectWait(20*time.Millisecond),
		nats.ReconnectHandler(func(*nats.Conn) {
			select {
			case reconnected <- struct{}{}:
			default:
			}
		}),
	)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx := t.Context()

	_, err = js.CreateStream(ctx, jetstream.StreamConfig{
		Name:     "FRAMES",
		Subjects: []string{"frames.>"},
		Storage:  jetstream.FileStorage,
	})
	require.NoError(t, err)
	const published = 3
	for i := range published {
		_, err := js.Publish(ctx, "frames.a", fmt.Appendf(nil, "frame %d", i))
		require.NoError(t, err)
	}

	srv = natstest.Restart(t, srv)
	require.Equal(t, before, port(t, srv), "restarted server must listen on the same port")
	require.Equal(t, storeDir, srv.StoreDir(), "restarted server must use the same store")

	select {
	case <-reconnected:
	case <-time.After(waitTimeout):
		t.Fatalf("client did not reconnect within %s", waitTimeout)
	}
	require.True(t, nc.IsConnected())

	stream, err := js.Stream(ctx, "FRAMES")
	require.NoError(t, err)
	info, err := stream.Info(ctx)
	require.NoError(t, err)
	require.EqualValues(t, published, info.State.Msgs)

	for seq := uint64(1); seq <= published; seq++ {
		msg, err := stream.GetMsg(ctx, seq)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("frame %d", seq-1), string(msg.Data))
	}

	// The reconnected client can keep writing to the recovered stream.
	ack, err := js.Publish(ctx, "frames.a", []byte("after restart"))
	require.NoError(t, err)
	require.EqualValues(t, published+1, ack.Sequence)
}

func TestRestartTwice(t *testing.T) {
	t.Parallel()

	js, _, srv := natstest.JetStream(t)
	ctx := t.Context()
	_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "FRAMES", Subjects: []string{"frames.>"}})
	require.NoError(t, err)

	srv = natstest.Restart(t, srv)
	srv = natstest.Restart(t, srv)

	// A fresh client, so the check does not depend on reconnect timing.
	js2, err := jetstream.New(natstest.Conn(t, srv))
	require.NoError(t, err)
	_, err = js2.Stream(ctx, "FRAMES")
	require.NoError(t, err)
}

func port(t *testing.T, srv *server.Server) int {
	t.Helper()

	addr, ok := srv.Addr().(*net.TCPAddr)
	require.True(t, ok, "server address %v is not TCP", srv.Addr())

	return addr.Port
}
