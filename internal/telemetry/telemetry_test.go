package telemetry_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/telemetry"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestServe(t *testing.T) {
	t.Parallel()

	reg := telemetry.NewRegistry()
	var frames atomic.Uint64
	frames.Store(42)
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "agentwire_test_frames_total", Help: "x"}, func() float64 { return float64(frames.Load()) }))
	var healthy atomic.Bool
	s, err := telemetry.Start(context.Background(), "127.0.0.1:0", reg, func() error {
		if healthy.Load() {
			return nil
		}
		return errors.New("NATS is disconnected")
	}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop(context.Background()) })

	code, body := get(t, "http://"+s.Addr()+"/healthz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "NATS is disconnected")
	healthy.Store(true)
	code, _ = get(t, "http://"+s.Addr()+"/healthz")
	require.Equal(t, http.StatusOK, code)

	code, body = get(t, "http://"+s.Addr()+"/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "agentwire_test_frames_total 42")
	require.Contains(t, body, "go_goroutines")

	_, err = telemetry.Start(context.Background(), s.Addr(), reg, func() error { return nil }, slog.New(slog.DiscardHandler))
	require.ErrorIs(t, err, telemetry.ErrAddrInUse)
}
