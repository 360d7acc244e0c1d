package adapters_test

import (
	"bufio"
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/pkg/adapters"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
)

// mapSession maps lines as one session of dialect, the i-th (from 0)
// arriving i seconds after start, and returns each line's events. Every
// event must validate and encode: the normalizer publishes what adapters
// make without validating it again.
func mapSession[L string | []byte](t *testing.T, dialect string, start time.Time, lines ...L) [][]canonical.Event {
	t.Helper()
	a, err := adapters.Lookup(dialect)
	require.NoError(t, err)
	s := a.NewSession("")
	out := make([][]canonical.Event, 0, len(lines))
	for i, l := range lines {
		evs, err := s.Map(adapter.Frame{Bytes: []byte(l), Dialect: dialect, Tenant: "acme", SessionKey: "k",
			Ordinal: uint64(i + 1), ReceivedAt: start.Add(time.Duration(i) * time.Second)})
		require.NoError(t, err)
		for _, e := range evs {
			require.NoError(t, canonical.Validate(e), "%s frame %d: %s", dialect, i+1, e.Type())
			_, err := canonical.Encode(e)
			require.NoError(t, err, "%s frame %d: %s", dialect, i+1, e.Type())
		}
		out = append(out, evs)
	}
	return out
}

// readLines is the frames of a file, one a line, blank lines left out as
// ingest leaves them.
func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) > 0 {
			lines = append(lines, bytes.Clone(sc.Bytes()))
		}
	}
	require.NoError(t, sc.Err(), path)
	return lines
}
