package adaptertest

import (
	"testing"

	"github.com/agentwire/agentwire/pkg/adapters/adapter"
)

// Bench maps lines as one session per iteration and reports frames/s, the
// figure each adapter's package documentation quotes.
func Bench(b *testing.B, a adapter.Adapter, lines [][]byte) {
	b.Helper()
	frames := Frames(a.Dialect(), "bench", lines)
	var bytes int64
	for _, l := range lines {
		bytes += int64(len(l))
	}
	b.SetBytes(bytes)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		s := a.NewSession("")
		for _, f := range frames {
			if _, err := s.Map(f); err != nil {
				b.Fatal(err)
			}
		}
		n++
	}
	b.ReportMetric(float64(n*len(frames))/b.Elapsed().Seconds(), "frames/s")
}
