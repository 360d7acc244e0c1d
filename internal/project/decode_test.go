package project

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/adaptertest"
	"github.com/agentwire/agentwire/pkg/adapters"
	"github.com/agentwire/agentwire/pkg/canonical"
	"github.com/agentwire/agentwire/pkg/canonical/wire"
)

func recordedMsgs(tb testing.TB) []*nats.Msg {
	tb.Helper()
	paths, err := filepath.Glob("../../testdata/recordings/*/*.jsonl")
	require.NoError(tb, err)
	sort.Strings(paths)
	var out []*nats.Msg
	for _, p := range paths {
		set := filepath.Base(filepath.Dir(p))
		dialect := set
		switch {
		case strings.HasPrefix(set, "claude-stream"), set == "claude-control":
			dialect = "claude-stream"
		case strings.HasPrefix(set, "acp-"):
			dialect = "acp"
		}
		a, err := adapters.Lookup(dialect)
		if err != nil {
			continue
		}
		s := a.NewSession("")
		for _, f := range adaptertest.Frames(a.Dialect(), "recordings/"+set+"/"+filepath.Base(p), adaptertest.ReadLines(tb, p)) {
			f.Tenant = "acme"
			evs, err := s.Map(f)
			require.NoError(tb, err)
			for _, e := range evs {
				m, err := wire.ToNATS(e)
				require.NoError(tb, err)
				out = append(out, m)
			}
		}
	}
	require.NotEmpty(tb, out)
	return out
}

// TestDecodeEvent: the projector's decoder reads every recorded event as
// wire.FromNATS does, raw aside.
func TestDecodeEvent(t *testing.T) {
	t.Parallel()
	for _, m := range recordedMsgs(t) {
		want, err := wire.FromNATS(m)
		require.NoError(t, err)
		want.Raw = nil
		got, err := DecodeEvent(m.Subject, m.Header, m.Data)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
}

// TestDecodeEventRejects: what the fast path cannot vouch for fails, as
// wire.FromNATS fails it.
func TestDecodeEventRejects(t *testing.T) {
	t.Parallel()
	m := recordedMsgs(t)[0]
	for name, mutate := range map[string]func(h nats.Header, data string) string{
		"tenant header":     func(h nats.Header, d string) string { h.Set("ce-tenant", "globex"); return d },
		"no session header": func(h nats.Header, d string) string { h.Del("ce-sessionid"); return d },
		"session header": func(h nats.Header, d string) string {
			h.Set("ce-sessionid", "0b4f1c52-5d5c-4c1e-9a53-0f0e8f1a2b3c")
			return d
		},
		"bad id":       func(_ nats.Header, d string) string { return strings.Replace(d, `"eventId":"`, `"eventId":"x`, 1) },
		"no payload":   func(_ nats.Header, d string) string { return strings.Replace(d, `"payload":`, `"payloadx":`, 1) },
		"unknown type": func(_ nats.Header, d string) string { return strings.Replace(d, `"type":"`, `"type":"x`, 1) },
	} {
		h := nats.Header{}
		for k, v := range m.Header {
			h[k] = append([]string(nil), v...)
		}
		data := mutate(h, string(m.Data))
		_, err := DecodeEvent(m.Subject, h, []byte(data))
		require.Error(t, err, name)
	}
}

func BenchmarkDecode(b *testing.B) {
	msgs := recordedMsgs(b)
	b.Run("wire", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			m := msgs[i%len(msgs)]
			if _, err := wire.FromNATS(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("projector", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			m := msgs[i%len(msgs)]
			if _, err := DecodeEvent(m.Subject, m.Header, m.Data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkBatchCPU is the projector's own work on a batch of 256 recorded
// events, without Postgres or NATS: decode every event, fold them, build
// the batch's statements and the event log's COPY rows. The bench's
// project figure shares two cores with Postgres and the embedded NATS
// server and swings with the machine; this one moves only with the code.
func BenchmarkBatchCPU(b *testing.B) {
	msgs := recordedMsgs(b)
	const size = 256
	b.ReportAllocs()
	events := 0
	batch := make([]canonical.Event, size)
	for i := 0; b.Loop(); i++ {
		w := newWrites()
		for j := range size {
			m := msgs[(i*size+j)%len(msgs)]
			ev, err := DecodeEvent(m.Subject, m.Header, m.Data)
			if err != nil {
				b.Fatal(err)
			}
			batch[j] = ev
			w.fold(&batch[j])
		}
		rows := EventSource(size, func(j int) (*canonical.Event, uint64, []byte) { return &batch[j], uint64(j + 1), nil }) //nolint:gosec // j is small
		for rows.Next() {
			if _, err := rows.Values(); err != nil {
				b.Fatal(err)
			}
		}
		w.queue(&pgx.Batch{})
		events += size
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}
