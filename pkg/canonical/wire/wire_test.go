package wire_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	cenats "github.com/cloudevents/sdk-go/protocol/nats_jetstream/v2"
	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/internal/natstest"
	"github.com/agentwire/agentwire/pkg/canonical"
	"github.com/agentwire/agentwire/pkg/canonical/wire"
)

// fixtures returns one valid event of every kind, from the canonical
// package's reviewed fixtures.
func fixtures(t *testing.T) []canonical.Event {
	t.Helper()
	var out []canonical.Event
	for _, k := range canonical.Kinds() {
		b, err := os.ReadFile(filepath.Join("..", "testdata", string(k)+".json"))
		require.NoError(t, err)
		e, err := canonical.Decode(b)
		require.NoError(t, err)
		// Re-decode the encoded form: the fixtures are pretty-printed and
		// compact JSON is the canonical form of their raw members.
		b, err = canonical.Encode(e)
		require.NoError(t, err)
		e, err = canonical.Decode(b)
		require.NoError(t, err)
		out = append(out, e)
	}
	// One event without thread or mapping version, to cover absent attributes.
	bare := out[0]
	bare.ThreadID, bare.TurnID, bare.ItemID, bare.RequestID, bare.MappingVersion = "", "", "", "", ""
	return append(out, bare)
}

// requireSDKReads checks that the CloudEvent sdk-go decoded carries e's
// attributes, extensions and data.
func requireSDKReads(t *testing.T, e canonical.Event, got *event.Event) {
	t.Helper()
	require.NoError(t, got.Validate())
	require.Equal(t, "1.0", got.SpecVersion())
	require.Equal(t, e.EventID, got.ID())
	require.Equal(t, string(e.Type()), got.Type())
	require.Equal(t, "/tenants/"+e.Tenant+"/providers/"+string(e.Provider)+"/sessions/"+e.SessionID, got.Source())
	require.Equal(t, e.ThreadID, got.Subject())
	require.True(t, e.CreatedAt.Equal(got.Time()), "time %s vs %s", e.CreatedAt, got.Time())
	require.Equal(t, "application/json", got.DataContentType())
	require.Equal(t, canonical.SchemaURI(e.Type()), got.DataSchema())

	want := map[string]string{
		"tenant": e.Tenant, "provider": string(e.Provider), "sessionid": e.SessionID,
		"threadid": e.ThreadID, "turnid": e.TurnID, "itemid": e.ItemID,
		"requestid": e.RequestID, "mappingversion": e.MappingVersion,
	}
	for name, v := range want {
		if v == "" {
			require.NotContains(t, got.Extensions(), name)
			continue
		}
		require.Equal(t, v, got.Extensions()[name], "extension %s", name)
	}
	require.Len(t, got.Extensions(), len(nonEmpty(want)))

	body, err := canonical.Encode(e)
	require.NoError(t, err)
	require.JSONEq(t, string(body), string(got.Data()))
	back, err := canonical.Decode(got.Data())
	require.NoError(t, err)
	require.Equal(t, e, back)
}

func nonEmpty(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

func TestSDKReadsBinaryMode(t *testing.T) {
	t.Parallel()

	for _, e := range fixtures(t) {
		msg, err := wire.ToNATS(e)
		require.NoError(t, err)
		require.Equal(t, "runtime."+string(e.Provider)+"."+string(e.Type()), msg.Subject)
		require.Equal(t, e.EventID, msg.Header.Get("Nats-Msg-Id"))

		m := cenats.NewMessage(msg)
		require.Equal(t, binding.EncodingBinary, m.ReadEncoding())
		got, err := binding.ToEvent(context.Background(), m)
		require.NoError(t, err)
		requireSDKReads(t, e, got)

		back, err := wire.FromNATS(msg)
		require.NoError(t, err)
		require.Equal(t, e, back)
	}
}

func TestSDKReadsStructuredMode(t *testing.T) {
	t.Parallel()

	for _, e := range fixtures(t) {
		b, err := wire.MarshalStructured(e)
		require.NoError(t, err)
		again, err := wire.MarshalStructured(e)
		require.NoError(t, err)
		require.Equal(t, string(b), string(again), "structured encoding must be deterministic")

		got := event.New()
		require.NoError(t, json.Unmarshal(b, &got))
		requireSDKReads(t, e, &got)

		back, err := wire.UnmarshalStructured(b)
		require.NoError(t, err)
		require.Equal(t, e, back)

		// A structured event carried in a NATS message decodes too.
		back, err = wire.FromNATS(&nats.Msg{Subject: "runtime.x", Data: b})
		require.NoError(t, err)
		require.Equal(t, e, back)
	}
}

// TestWeReadWhatSDKWrites goes the other way: events that sdk-go writes, in
// both modes, decode to the same canonical event.
func TestWeReadWhatSDKWrites(t *testing.T) {
	t.Parallel()

	for _, e := range fixtures(t) {
		msg, err := wire.ToNATS(e)
		require.NoError(t, err)
		sdkEvent, err := binding.ToEvent(context.Background(), cenats.NewMessage(msg))
		require.NoError(t, err)

		structured, err := json.Marshal(sdkEvent)
		require.NoError(t, err)
		back, err := wire.UnmarshalStructured(structured)
		require.NoError(t, err)
		require.Equal(t, e, back)

		var body bytes.Buffer
		header, err := cenats.WriteMsg(context.Background(), binding.ToMessage(sdkEvent), &body)
		require.NoError(t, err)
		back, err = wire.FromNATS(&nats.Msg{Subject: msg.Subject, Header: header, Data: body.Bytes()})
		require.NoError(t, err)
		require.Equal(t, e, back)
	}
}

// TestSDKConsumesFromJetStream publishes one event of every type to a real
// JetStream stream and receives them with sdk-go's JetStream consumer: the
// path a subscriber in the field takes.
func TestSDKConsumesFromJetStream(t *testing.T) {
	t.Parallel()

	srv := natstest.Server(t)
	nc := natstest.Conn(t, srv)
	js, err := nc.JetStream()
	require.NoError(t, err)
	_, err = js.AddStream(&nats.StreamConfig{Name: "RUNTIME", Subjects: []string{"runtime.>"}})
	require.NoError(t, err)

	events := fixtures(t)[:len(canonical.Kinds())]
	byID := map[string]canonical.Event{}
	for _, e := range events {
		msg, err := wire.ToNATS(e)
		require.NoError(t, err)
		_, err = js.PublishMsg(msg)
		require.NoError(t, err)
		byID[e.EventID] = e
	}
	// The same event again is dropped by the duplicate window.
	msg, err := wire.ToNATS(events[0])
	require.NoError(t, err)
	ack, err := js.PublishMsg(msg)
	require.NoError(t, err)
	require.True(t, ack.Duplicate)

	consumer, err := cenats.NewConsumerFromConn(nc, "RUNTIME", "runtime.>", nil, []nats.SubOpt{nats.DeliverAll()})
	require.NoError(t, err)
	client, err := cloudevents.NewClient(consumer)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var (
		mu   sync.Mutex
		got  = map[string]event.Event{}
		done = make(chan struct{})
	)
	go func() {
		_ = client.StartReceiver(ctx, func(ev event.Event) {
			mu.Lock()
			defer mu.Unlock()
			got[ev.ID()] = ev
			if len(got) == len(events) {
				close(done)
			}
		})
	}()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("sdk-go received %d of %d events", len(got), len(events))
	}
	cancel()
	mu.Lock()
	defer mu.Unlock()
	for id, e := range byID {
		ev := got[id]
		requireSDKReads(t, e, &ev)
	}
}
