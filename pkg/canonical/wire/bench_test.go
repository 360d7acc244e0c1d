package wire_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	cenats "github.com/cloudevents/sdk-go/protocol/nats_jetstream/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"

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
