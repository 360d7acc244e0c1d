package wire_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/agentwire/agentwire/pkg/canonical"
	"github.com/agentwire/agentwire/pkg/canonical/wire"
)

func TestFromNATSRejectsDisagreement(t *testing.T) {
	t.Parallel()

	e := fixtures(t)[14] // turn.completed
	tests := []struct {
		name   string
		mutate func(m *nats.Msg)
		err    error
	}{
		{"rewritten id", func(m *nats.Msg) { m.Header.Set("ce-id", "00000000-0000-5000-8000-000000000000") }, wire.ErrMismatch},
		{"rewritten type", func(m *nats.Msg) { m.Header.Set("ce-type", "turn.started") }, wire.ErrMismatch},
		{"rewritten tenant", func(m *nats.Msg) { m.Header.Set("ce-tenant", "other") }, wire.ErrMismatch},
		{"rewritten source", func(m *nats.Msg) { m.Header.Set("ce-source", "/tenants/other") }, wire.ErrMismatch},
		{"other time", func(m *nats.Msg) { m.Header.Set("ce-time", "2020-01-01T00:00:00Z") }, wire.ErrMismatch},
		{"bad time", func(m *nats.Msg) { m.Header.Set("ce-time", "yesterday") }, wire.ErrMismatch},
		{"wrong spec version", func(m *nats.Msg) { m.Header.Set("ce-specversion", "0.3") }, wire.ErrMismatch},
		{"missing id", func(m *nats.Msg) { m.Header.Del("ce-id") }, wire.ErrMismatch},
		{"other content type", func(m *nats.Msg) { m.Header.Set("content-type", "text/plain") }, wire.ErrMismatch},
		{"body not an event", func(m *nats.Msg) { m.Data = []byte(`{"hello":1}`) }, canonical.ErrInvalidEvent},
		{"body invalid", func(m *nats.Msg) { m.Data = bytes.Replace(m.Data, []byte(`"failed"`), []byte(`"done"`), 1) }, canonical.ErrInvalidEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			msg, err := wire.ToNATS(e)
			require.NoError(t, err)
			tt.mutate(msg)
			_, err = wire.FromNATS(msg)
			require.ErrorIs(t, err, tt.err)
		})
	}

	// Extensions a router stripped are tolerated: data is authoritative.
	msg, err := wire.ToNATS(e)
	require.NoError(t, err)
	msg.Header.Del("ce-turnid")
	msg.Header.Del("ce-mappingversion")
	back, err := wire.FromNATS(msg)
	require.NoError(t, err)
	require.Equal(t, e, back)
}

func TestUnmarshalStructuredRejects(t *testing.T) {
	t.Parallel()

	b, err := wire.MarshalStructured(fixtures(t)[0])
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc))
	mutated := func(f func(map[string]any)) []byte {
		d := maps.Clone(doc)
		f(d)
		out, err := json.Marshal(d)
		require.NoError(t, err)
		return out
	}
	for name, in := range map[string][]byte{
		"not JSON":       []byte(`{`),
		"no data":        mutated(func(d map[string]any) { delete(d, "data") }),
		"data_base64":    mutated(func(d map[string]any) { delete(d, "data"); d["data_base64"] = "e30=" }),
		"id not string":  mutated(func(d map[string]any) { d["id"] = 7 }),
		"other provider": mutated(func(d map[string]any) { d["provider"] = "claude" }),
		"data invalid":   mutated(func(d map[string]any) { d["data"] = map[string]any{"type": "nope"} }),
	} {
		_, err := wire.UnmarshalStructured(in)
		require.Error(t, err, name)
	}
}

func TestToNATSRejectsInvalidEvents(t *testing.T) {
	t.Parallel()

	e := fixtures(t)[0]
	e.Provider = "co.dex"
	_, err := wire.ToNATS(e)
	require.ErrorIs(t, err, canonical.ErrInvalidSlug)
	_, err = wire.MarshalStructured(e)
	require.ErrorIs(t, err, canonical.ErrInvalidSlug)
}

// FuzzFromNATS decodes arbitrary bodies under arbitrary headers: never a
// panic, and whatever decodes re-encodes to a message that decodes equal.
func FuzzFromNATS(f *testing.F) {
	for _, k := range []canonical.Kind{canonical.KindTurnCompleted, canonical.KindContentDelta, canonical.KindRuntimeError} {
		b, err := canonicalFixture(k)
		if err != nil {
			f.Fatal(err)
		}
		e, err := canonical.Decode(b)
		if err != nil {
			f.Fatal(err)
		}
		msg, err := wire.ToNATS(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(msg.Data, msg.Header.Get("ce-id"), msg.Header.Get("ce-time"), true)
		s, err := wire.MarshalStructured(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(s, "", "", false)
	}
	f.Fuzz(func(t *testing.T, body []byte, id, at string, binary bool) {
		msg := nats.NewMsg("runtime.x.y")
		msg.Data = body
		if binary {
			msg.Header.Set("ce-specversion", "1.0")
			msg.Header.Set("ce-id", id)
			msg.Header.Set("ce-time", at)
		}
		e, err := wire.FromNATS(msg)
		if err != nil {
			return
		}
		out, err := wire.ToNATS(e)
		if err != nil {
			t.Fatalf("a decoded event does not encode: %v", err)
		}
		back, err := wire.FromNATS(out)
		if err != nil {
			t.Fatalf("a re-encoded event does not decode: %v", err)
		}
		a, _ := canonical.Encode(e)
		b, _ := canonical.Encode(back)
		if !bytes.Equal(a, b) {
			t.Fatalf("round trip changed the event:\n%s\n%s", a, b)
		}
	})
}
