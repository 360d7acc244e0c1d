package natstest

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const (
	host = "127.0.0.1"
	// readyTimeout is generous because JetStream recovers streams from disk
	// before the server accepts connections, and -race slows that down.
	readyTimeout = 10 * time.Second
)

// identity is what Restart needs to bring a server back as "the same" one.
type identity struct {
	port     int
	storeDir string
}

// started remembers how each live server was started, so that Restart can
// take just the *server.Server that callers already hold.
var started sync.Map // *server.Server -> identity

// Server starts an embedded NATS server with JetStream on a random port of
// 127.0.0.1, storing its data in a fresh temporary directory. It is shut down
// when the test ends.
func Server(tb testing.TB) *server.Server {
	tb.Helper()

	return start(tb, identity{port: server.RANDOM_PORT, storeDir: tb.TempDir()})
}

// Restart shuts srv down and starts a new server on the same port with the
// same JetStream store directory, which it returns. Clients connected to srv
// see a disconnect and, if they keep reconnecting, find the new server.
// srv must have been returned by Server or Restart.
func Restart(tb testing.TB, srv *server.Server) *server.Server {
	tb.Helper()

	v, ok := started.Load(srv)
	if !ok {
		tb.Fatalf("natstest: Restart: server %s was not started by natstest or was already restarted", srv.ID())
	}
	id, _ := v.(identity)
	stop(srv)

	return start(tb, id)
}

// Conn connects a client to srv, closed when the test ends. opts are applied
// after natstest's own, so they win.
func Conn(tb testing.TB, srv *server.Server, opts ...nats.Option) *nats.Conn {
	tb.Helper()

	nc, err := nats.Connect(srv.ClientURL(), append([]nats.Option{nats.Name(tb.Name())}, opts...)...)
	if err != nil {
		tb.Fatalf("natstest: connect to %s: %v", srv.ClientURL(), err)
	}
	tb.Cleanup(nc.Close)

	return nc
}

// JetStream starts a server, connects a client to it and returns the
// client's JetStream context along with both.
func JetStream(tb testing.TB) (jetstream.JetStream, *nats.Conn, *server.Server) {
	tb.Helper()

	srv := Server(tb)
	nc := Conn(tb, srv)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatalf("natstest: JetStream context: %v", err)
	}

	return js, nc, srv
}

func start(tb testing.TB, id identity) *server.Server {
	tb.Helper()

	opts := &server.Options{
		Host:      host,
		Port:      id.port,
		JetStream: true,
		StoreDir:  id.storeDir,
		// Tests share the process; signal handlers would let one test's
		// server react to signals meant for the test binary.
		NoSigs: true,
		NoLog:  true,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		tb.Fatalf("natstest: configure server: %v", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(readyTimeout) {
		stop(srv)
		tb.Fatalf("natstest: server on %s:%d not ready after %s (port taken?)", host, id.port, readyTimeout)
	}

	addr, ok := srv.Addr().(*net.TCPAddr)
	if !ok {
		stop(srv)
		tb.Fatalf("natstest: server listens on %v, want a TCP address", srv.Addr())
	}
	id.port = addr.Port
	started.Store(srv, id)
	tb.Cleanup(func() { stop(srv) })

	return srv
}

// stop is idempotent, so the cleanup of a server that Restart already
// stopped is harmless.
func stop(srv *server.Server) {
	started.Delete(srv)
	srv.Shutdown()
	srv.WaitForShutdown()
}
