package wire_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	cenats "github.com/cloudevents/sdk-go/protocol/nats_jetstream/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/agentwire/agentwire/pkg/adapters"
	"github.com/agentwire/agentwire/pkg/adapters/adapter"
	"github.com/agentwire/agentwire/pkg/canonical"
	"github.com/agentwire/agentwire/pkg/canonical/wire"
)

func canonicalFixture(k canonical.Kind) ([]byte, error) {
	return os.ReadFile(filepath.Join("..", "testdata", string(k)+".json"))
}

func benchEvent(b *testing.B) canonical.Event {
	b.Helper()
	raw, err := canonicalFixture(canonical.KindContentDelta)
	if err != nil {
		b.Fatal(err)
	}
	e, err := canonical.Decode(raw)
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkEncodeBinary is our hot path: a canonical event to a NATS message.
func BenchmarkEncodeBinary(b *testing.B) {
	e := benchEvent(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wire.ToNATS(e); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeBinarySDK is the baseline: the same message built by
// sdk-go from a CloudEvent holding the same data.
func BenchmarkEncodeBinarySDK(b *testing.B) {
	e := benchEvent(b)
	data, err := canonical.Encode(e)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ev := event.New()
		ev.SetID(e.EventID)
		ev.SetType(string(e.Type()))
		ev.SetSource(wire.Source(e))
		ev.SetSubject(e.ThreadID)
		ev.SetTime(e.CreatedAt)
		ev.SetDataSchema(canonical.SchemaURI(e.Type()))
		for name, v := range map[string]string{"tenant": e.Tenant, "provider": string(e.Provider), "threadid": e.ThreadID, "turnid": e.TurnID, "itemid": e.ItemID, "mappingversion": e.MappingVersion} {
			ev.SetExtension(name, v)
		}
		if err := ev.SetData("application/json", data); err != nil {
			b.Fatal(err)
		}
		var body bytes.Buffer
		if _, err := cenats.WriteMsg(context.Background(), binding.ToMessage(&ev), &body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeBinary decodes and validates a message.
func BenchmarkDecodeBinary(b *testing.B) {
	msg, err := wire.ToNATS(benchEvent(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := wire.FromNATS(msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeBinarySDK is the baseline: sdk-go reading the same message
// into a CloudEvent (without decoding the canonical payload).
func BenchmarkDecodeBinarySDK(b *testing.B) {
	msg, err := wire.ToNATS(benchEvent(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := binding.ToEvent(context.Background(), cenats.NewMessage(msg)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeRecordings encodes what the adapters make of every
// recording: the normalizer's mix of events, raw frames included.
func BenchmarkEncodeRecordings(b *testing.B) {
	events := recordedEvents(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, e := range events {
			if _, err := wire.ToNATS(e); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(events))/b.Elapsed().Seconds(), "events/s")
}

func recordedEvents(b *testing.B) []canonical.Event {
	b.Helper()
	paths, err := filepath.Glob("../../../testdata/recordings/*/*.jsonl")
	if err != nil || len(paths) == 0 {
		b.Fatalf("no recordings: %v", err)
	}
	var events []canonical.Event
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		d, ok := adapters.Sniff(bytes.Split(data, []byte("\n")))
		if !ok {
			continue
		}
		a, err := adapters.Lookup(d)
		if err != nil {
			continue
		}
		s := a.NewSession("")
		var ordinal uint64
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			ordinal++
			evs, err := s.Map(adapter.Frame{Bytes: line, Dialect: d, Tenant: "bench", SessionKey: "bench/" + strconv.Itoa(i), Ordinal: ordinal, ReceivedAt: time.Unix(1, 0)})
			if err != nil {
				b.Fatal(err)
			}
			events = append(events, evs...)
		}
	}
	return events
}
