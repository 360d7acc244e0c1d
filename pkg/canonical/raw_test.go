package canonical

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRawKeepsFramesExactly(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name     string
		frame    string
		encoding RawEncoding
	}{
		{"compact JSON", `{"method":"turn/started","params":{"turn":{"id":"t1"}}}`, RawJSON},
		{"JSON with HTML characters", `{"cmd":"a && b < c > d"}`, RawJSON},
		{"JSON with unicode escapes", `{"s":"\u00e9\u2028"}`, RawJSON},
		{"JSON with spacing", `{"a": 1}`, RawText},
		{"JSON with trailing CR", "{\"a\":1}\r", RawText},
		{"not JSON", `{"method":"turn/star`, RawText},
		{"stderr line", "warning: something <odd> & \"quoted\"", RawText},
		{"empty", "", RawText},
		{"JSON null, which as JSON would read as no payload", "null", RawText},
		{"invalid UTF-8", "{\"a\":\"\xff\xfe\"}", RawBase64},
		{"binary", "\x00\x01\x02\x80", RawBase64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw := NewRaw("codex.app-server.notification", "m", "", []byte(tt.frame))
			require.Equal(t, tt.encoding, raw.Encoding)
			got, err := raw.Frame()
			require.NoError(t, err)
			require.Equal(t, tt.frame, string(got))

			// Through a whole event document and back.
			e := Event{
				EventID: IDSpace{Tenant: "t", Provider: ProviderCodex, SessionKey: "k"}.Event(1, 0),
				Tenant:  "t", Provider: ProviderCodex,
				SessionID: IDSpace{Tenant: "t", Provider: ProviderCodex, SessionKey: "k"}.IngestSession(),
				CreatedAt: time.Unix(1, 0),
				Payload:   &RuntimeWarning{Message: "m"},
				Raw:       &raw,
			}
			doc, err := Encode(e)
			require.NoError(t, err)
			back, err := Decode(doc)
			require.NoError(t, err)
			got, err = back.Raw.Frame()
			require.NoError(t, err)
			require.Equal(t, tt.frame, string(got))
		})
	}
}

func TestEncodeNormalizesTime(t *testing.T) {
	t.Parallel()

	ids := IDSpace{Tenant: "t", Provider: ProviderCodex, SessionKey: "k"}
	at := time.Date(2026, 11, 30, 10, 0, 0, 500, time.FixedZone("CET", 3600))
	e := Event{EventID: ids.Event(1, 0), Tenant: "t", Provider: ProviderCodex, SessionID: ids.IngestSession(), CreatedAt: at, Payload: &TurnStarted{}}
	doc, err := Encode(e)
	require.NoError(t, err)
	require.Contains(t, string(doc), `"createdAt":"2026-11-30T09:00:00.0000005Z"`)
	back, err := Decode(doc)
	require.NoError(t, err)
	require.True(t, at.Equal(back.CreatedAt))
	require.Equal(t, "runtime.codex.turn.started", back.Subject())
}

func TestRawReference(t *testing.T) {
	t.Parallel()

	ids := IDSpace{Tenant: "t", Provider: ProviderCodex, SessionKey: "k"}
	r := NewRaw("codex.sdk.thread-event", "", "", []byte(`{"type":"turn.started"}`)).
		Referenced(RawReference{Bucket: "RAW_OBJECTS", Object: "abc-7", Bytes: 5 << 20, SHA256: "00ff"})
	_, err := r.Frame()
	require.ErrorIs(t, err, ErrRawReferenced)
	e := Event{EventID: ids.Event(1, 0), Tenant: "t", Provider: ProviderCodex, SessionID: ids.IngestSession(), CreatedAt: time.Unix(1, 0), Payload: &TurnStarted{}, Raw: &r}
	doc, err := Encode(e)
	require.NoError(t, err)
	back, err := Decode(doc)
	require.NoError(t, err)
	ref, err := back.Raw.Reference()
	require.NoError(t, err)
	require.Equal(t, "abc-7", ref.Object)

	bad := r
	bad.Payload = []byte(`{"bytes":1}`)
	e.Raw = &bad
	require.ErrorIs(t, Validate(e), ErrInvalidEvent, "a reference must say where")
}

func TestRawKeepsDeepJSONAsText(t *testing.T) {
	t.Parallel()

	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	r := NewRaw("s", "", "", []byte(deep))
	require.Equal(t, RawText, r.Encoding, "a decoder could not read the event otherwise")
	ok := strings.Repeat(`{"a":`, 100) + `"[[[[\"]]"` + strings.Repeat("}", 100)
	require.Equal(t, RawJSON, NewRaw("s", "", "", []byte(ok)).Encoding)
	atLimit := strings.Repeat("[", MaxRawJSONDepth) + strings.Repeat("]", MaxRawJSONDepth)
	require.Equal(t, RawJSON, NewRaw("s", "", "", []byte(atLimit)).Encoding)
	require.Equal(t, RawText, NewRaw("s", "", "", []byte("["+atLimit+"]")).Encoding, "one level past the limit")
}
