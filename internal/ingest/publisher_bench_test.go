package ingest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/ingest"
	"github.com/agentwire/agentwire/internal/natstest"
)

// BenchmarkPublish publishes frames of one session to RAW on an embedded
// server, as `ingest file` does, and flushes once at the end.
func BenchmarkPublish(b *testing.B) {
	pub := connectFixture(b, natstest.Server(b)).in.Pub
	frame := fmt.Appendf(nil, `{"type":"item.updated","pad":"%0300d"}`, 0)
	now := time.Now()
	b.SetBytes(int64(len(frame)))
	var n uint64
	for b.Loop() {
		n++
		require.NoError(b, pub.PublishAt(b.Context(), ingest.Frame{SessionKey: "bench", Dialect: "codex-exec", Bytes: frame, ReceivedAt: now}, n))
	}
	require.NoError(b, pub.Flush(b.Context()))
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}
