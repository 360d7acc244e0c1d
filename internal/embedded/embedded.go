// Package embedded runs the NATS server that `agentwire up` brings along:
// JetStream on local disk, listening where the user says, so that
// `nats sub 'runtime.>'` works against it.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Config configures the embedded server.
type Config struct {
	// Listen is host:port for clients. Default 127.0.0.1:4222.
	Listen string
	// DataDir holds JetStream's store. Default ./.agentwire.
	DataDir string
	// MaxPayload is the largest message, in bytes. Default 8 MiB, so that
	// frames and events up to that size travel as messages (larger frames
	// go to the object store either way).
	MaxPayload int32
}

// ErrPortTaken is wrapped when the listen address is in use.
var ErrPortTaken = errors.New("address in use")

// Start starts the server and waits until it accepts connections.
func Start(ctx context.Context, cfg Config, log *slog.Logger) (*server.Server, error) {
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:4222"
	}
	if cfg.DataDir == "" {
		cfg.DataDir = ".agentwire"
	}
	if cfg.MaxPayload == 0 {
		cfg.MaxPayload = 8 << 20
	}
	host, portStr, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen %q: want host:port: %w", cfg.Listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("--nats-listen %q: port must be a number from 0 to 65535", cfg.Listen)
	}
	if port != 0 {
		// Probe first: the server would only log the failure and exit.
		l, err := (&net.ListenConfig{}).Listen(ctx, "tcp", cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("%s is taken (another NATS server?): %w", cfg.Listen, ErrPortTaken)
		}
		_ = l.Close()
	}
	if port == 0 {
		port = server.RANDOM_PORT // nats-server reads 0 as its default, 4222
	}
	opts := &server.Options{
		ServerName: "agentwire",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   cfg.DataDir,
		MaxPayload: cfg.MaxPayload,
		NoSigs:     true,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS: %w", err)
	}
	srv.SetLoggerV2(&slogAdapter{log: log}, false, false, false)
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		return nil, errors.New("embedded NATS did not become ready in 30s")
	}
	return srv, nil
}

// slogAdapter sends the server's log to slog.
type slogAdapter struct{ log *slog.Logger }

func (a *slogAdapter) Noticef(format string, v ...any) { a.log.Debug(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Warnf(format string, v ...any)   { a.log.Warn(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Fatalf(format string, v ...any)  { a.log.Error(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Errorf(format string, v ...any)  { a.log.Error(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Debugf(format string, v ...any)  { a.log.Debug(fmt.Sprintf(format, v...)) }
func (a *slogAdapter) Tracef(format string, v ...any)  {}
