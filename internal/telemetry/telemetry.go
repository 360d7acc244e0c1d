// Package telemetry serves what operators watch: /healthz (200 while the
// service's dependencies answer, 503 with the reason otherwise) and
// /metrics in the Prometheus text format.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ErrAddrInUse is wrapped when the listen address is taken.
var ErrAddrInUse = errors.New("address in use")

// NewRegistry returns a registry with the Go runtime and process metrics.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Server is a started telemetry endpoint.
type Server struct {
	srv  *http.Server
	addr net.Addr
	done chan error
}

// Start listens on addr and serves until Stop. health reports why the
// service is unhealthy, or nil.
func Start(ctx context.Context, addr string, reg *prometheus.Registry, health func() error, log *slog.Logger) (*Server, error) {
	l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics and health on %s: %w: %w", addr, ErrAddrInUse, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if err := health(); err != nil {
			http.Error(w, "unhealthy: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, addr: l.Addr(), done: make(chan error, 1)}
	go func() { s.done <- s.srv.Serve(l) }()
	log.Info("metrics and health", "url", "http://"+l.Addr().String()+"/metrics")
	return s, nil
}

// Addr is where the server listens.
func (s *Server) Addr() string { return s.addr.String() }

// Stop shuts the server down, waiting for requests in flight.
func (s *Server) Stop(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}
