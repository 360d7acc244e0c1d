package canonical

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/agentwire/agentwire/internal/jsonscan"
)

// FuzzDecode feeds arbitrary documents to Decode. It passes when Decode
// never panics, rejects only with errors that wrap ErrInvalidEvent or a
// JSON error, every accepted document survives encode→decode→encode
// byte for byte, and DecodeEnvelope agrees with it but for raw.
func FuzzDecode(f *testing.F) {
	for _, k := range Kinds() {
		b, err := readFixtureFile(k)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"type":"turn.started","payload":{}}`))
	f.Add([]byte(`{"type":"turn.started","payload":{},"createdAtIngested":true}`))
	f.Add([]byte(`{"type":"turn.started","payload":{},"createdAtIngested":"yes"}`))
	f.Add([]byte(`{"raw":{"encoding":"base64","payload":"AAEC","source":"s"}}`))
	f.Add([]byte(`{"type":"turn.started","payload":{},"EventID":"x","event_id":"y","tenant":"a","tenant":"b","x":1}`))

	f.Fuzz(func(t *testing.T, doc []byte) {
		// The envelope's fast path decides exactly as the general decoder
		// does, or leaves the document to it.
		var fast Event
		if fast.unmarshalEnvelopeFast(doc) {
			var general Event
			if err := general.unmarshal(doc, false); err != nil {
				t.Fatalf("the fast path reads what the general decoder rejects (%v)", err)
			}
			if !reflect.DeepEqual(fast, general) {
				t.Fatalf("fast path %+v, general decoder %+v", fast, general)
			}
		}
		e, err := Decode(doc)
		if err != nil {
			return
		}
		// DecodeEnvelope reads the same event, raw aside (it may accept a
		// document whose raw alone is broken).
		env, err := DecodeEnvelope(doc)
		if err != nil {
			t.Fatalf("Decode accepts what DecodeEnvelope rejects: %v", err)
		}
		withoutRaw := e
		withoutRaw.Raw = nil
		if !reflect.DeepEqual(env, withoutRaw) {
			t.Fatalf("DecodeEnvelope %+v, Decode %+v", env, withoutRaw)
		}
		enc, err := Encode(e)
		if err != nil {
			t.Fatalf("an accepted event does not encode: %v", err)
		}
		back, err := Decode(enc)
		if err != nil {
			t.Fatalf("an encoded event does not decode: %v\n%s", err, enc)
		}
		enc2, err := Encode(back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("encode→decode→encode changed the document:\n%s\n%s", enc, enc2)
		}
		if e.Raw != nil {
			a, errA := e.Raw.Frame()
			b, errB := back.Raw.Frame()
			if (errA == nil) != (errB == nil) || !bytes.Equal(a, b) {
				t.Fatalf("raw frame changed across a round trip: %q vs %q", a, b)
			}
		}
	})
}

// FuzzNewRaw checks that any frame comes back byte for byte, in an event
// that validates.
func FuzzNewRaw(f *testing.F) {
	f.Add([]byte(`{"a":1}`))
	f.Add([]byte(`{"a": 1}`))
	f.Add([]byte("\xff"))
	f.Add([]byte("null"))
	f.Fuzz(func(t *testing.T, frame []byte) {
		r := NewRaw("s", "", "", frame)
		got, err := r.Frame()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, frame) {
			t.Fatalf("frame %q came back as %q (encoding %q)", frame, got, r.Encoding)
		}
		// Given the check an adapter ran, NewRawChecked keeps it the same way.
		if c := NewRawChecked("s", "", "", frame, jsonscan.Check(frame)); !reflect.DeepEqual(c, r) {
			t.Fatalf("frame %q: NewRawChecked gives %+v, NewRaw %+v", frame, c, r)
		}
		// Whatever the frame, the event that carries it is valid.
		ids := IDSpace{Tenant: "t", Provider: ProviderCodex, SessionKey: "k"}
		e := Event{EventID: ids.Event(1, 0), Tenant: "t", Provider: ProviderCodex, SessionID: ids.IngestSession(),
			CreatedAt: time.Unix(1, 0), Payload: &RuntimeWarning{Message: "m"}, Raw: &r}
		if err := Validate(e); err != nil {
			t.Fatalf("frame %q kept as %+v: %v", frame, r, err)
		}
	})
}

// FuzzFoldUsage checks FoldUsage never panics and never returns negative
// counts, and that its scan of the members is decoding into a map.
func FuzzFoldUsage(f *testing.F) {
	f.Add([]byte(`{"input_tokens":5,"cached_input_tokens":9,"output_tokens":1}`), 2)
	f.Add([]byte(`{"input_tokens":5,"input_tokens":7.0,"\u006fut":1e2}`), 1)
	f.Fuzz(func(t *testing.T, raw []byte, conv int) {
		var want map[string]json.RawMessage
		if json.Unmarshal(raw, &want) == nil {
			got, err := usageFields(raw)
			if err != nil || len(got) != len(want) {
				t.Fatalf("usageFields = %q, %v; decoded %q", got, err, want)
			}
			for k, v := range want {
				if !bytes.Equal(bytes.TrimSpace(got[k]), bytes.TrimSpace(v)) {
					t.Fatalf("member %q: scanned %q, decoded %q", k, got[k], v)
				}
			}
		}
		u, err := FoldUsage(raw, UsageConvention(conv))
		if err != nil {
			return
		}
		if u.InputTokens < 0 || u.CachedInputTokens < 0 || u.CacheWriteInputTokens < 0 || u.OutputTokens < 0 || u.ReasoningOutputTokens < 0 {
			t.Fatalf("negative count in %+v", u)
		}
	})
}
