package natstest

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// Relay forwards TCP connections to a NATS server and can stand for its
// outage, under the test's control: lose what clients send (a server that
// died before reading it), cut the connections, refuse new ones.
type Relay struct {
	ln   net.Listener
	mu   sync.Mutex
	open []net.Conn
	lose bool
	down bool
}

// NewRelay starts a relay to the server at addr (host:port), closed when
// the test ends.
func NewRelay(tb testing.TB, addr string) *Relay {
	tb.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(tb.Context(), "tcp", host+":0")
	if err != nil {
		tb.Fatalf("natstest: relay: %v", err)
	}
	r := &Relay{ln: ln}
	tb.Cleanup(func() { _ = ln.Close(); r.Cut() })
	go r.accept(tb.Context(), addr)
	return r
}

// URL is the relay's address for NATS clients.
func (r *Relay) URL() string { return "nats://" + r.ln.Addr().String() }

func (r *Relay) accept(ctx context.Context, addr string) {
	var d net.Dialer
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		down := r.down
		r.mu.Unlock()
		var s net.Conn
		if !down {
			s, err = d.DialContext(ctx, "tcp", addr)
		}
		if down || err != nil {
			_ = c.Close()
			continue
		}
		r.mu.Lock()
		r.open = append(r.open, c, s)
		r.mu.Unlock()
		go func() { _, _ = io.Copy(c, s) }()
		go r.forward(s, c)
	}
}

// forward copies what the client sends to the server, unless it is lost.
func (r *Relay) forward(server, client net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := client.Read(buf)
		if err != nil {
			return
		}
		r.mu.Lock()
		lose := r.lose
		r.mu.Unlock()
		if lose {
			continue
		}
		if _, err := server.Write(buf[:n]); err != nil {
			return
		}
	}
}

// Lose makes the relay drop what clients send from now on (true), or
// forward it again (false).
func (r *Relay) Lose(lose bool) {
	r.mu.Lock()
	r.lose = lose
	r.mu.Unlock()
}

// Down makes the relay refuse new connections (true), or accept them
// again (false).
func (r *Relay) Down(down bool) {
	r.mu.Lock()
	r.down = down
	r.mu.Unlock()
}

// Cut closes every connection the relay holds.
func (r *Relay) Cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.open {
		_ = c.Close()
	}
	r.open = nil
}

// Away takes the server away from the relay's clients: new connections
// are refused, open ones cut.
func (r *Relay) Away() {
	r.Down(true)
	r.Cut()
}

// GoAway takes the server away (Away) and returns once nc has noticed.
func (r *Relay) GoAway(tb testing.TB, nc *nats.Conn) {
	tb.Helper()
	r.Away()
	deadline := time.Now().Add(5 * time.Second)
	for nc.Status() == nats.CONNECTED {
		if time.Now().After(deadline) {
			tb.Fatalf("natstest: relay: the client did not notice the server go away")
		}
		time.Sleep(time.Millisecond)
	}
}

// Back lets the relay's clients connect again.
func (r *Relay) Back() { r.Down(false) }

// ComeBack lets the clients connect again (Back) and returns once nc has
// reconnected.
func (r *Relay) ComeBack(tb testing.TB, nc *nats.Conn) {
	tb.Helper()
	r.Back()
	deadline := time.Now().Add(10 * time.Second)
	for !nc.IsConnected() {
		if time.Now().After(deadline) {
			tb.Fatalf("natstest: relay: the client did not reconnect")
		}
		time.Sleep(time.Millisecond)
	}
}
