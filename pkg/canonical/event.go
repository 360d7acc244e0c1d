package canonical

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentwire/agentwire/internal/jsonscan"

	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Event is one canonical runtime event (EVENTS.md §1.1). Every id field
// holds an agentwire id (see IDSpace); provider ids go in ProviderRefs only.
type Event struct {
	// EventID identifies the event; deterministic, so a re-mapped frame
	// yields the same id.
	EventID string `json:"eventId" canonical:"uuid"`
	// Tenant owns the event.
	Tenant string `json:"tenant" canonical:"slug"`
	// Provider is the runtime that emitted the frame.
	Provider Provider `json:"provider" canonical:"slug"`
	// SessionID identifies the provider session.
	SessionID string `json:"sessionId" canonical:"uuid"`
	// CreatedAt is when the frame was emitted (the provider's timestamp) or,
	// when it has none, received. Encoded in UTC.
	CreatedAt time.Time `json:"createdAt"`
	// CreatedAtIngested says CreatedAt is when ingest read a frame that
	// states no time of its own, from a log written before it was read (a
	// file ingested after the fact), or the time ingest knew that log had
	// been written by (its file's modification time): not when the frame
	// was written. The span between two such times is how fast the log
	// was read, or nothing, not how long anything took.
	CreatedAtIngested bool `json:"createdAtIngested,omitempty"`
	// ThreadID identifies the thread, when the event belongs to one.
	ThreadID string `json:"threadId,omitempty" canonical:"uuid"`
	// TurnID identifies the turn, when the event belongs to one.
	TurnID string `json:"turnId,omitempty" canonical:"uuid"`
	// ItemID identifies the item, when the event belongs to one.
	ItemID string `json:"itemId,omitempty" canonical:"uuid"`
	// RequestID identifies the request, when the event belongs to one.
	RequestID string `json:"requestId,omitempty" canonical:"uuid"`
	// ProviderRefs keeps the provider's own ids for correlation.
	ProviderRefs ProviderRefs `json:"providerRefs,omitzero"`
	// MappingVersion names the adapter mapping that produced the event, so a
	// replay after a mapping fix can tell old events from new ones.
	MappingVersion string `json:"mappingVersion,omitempty"`
	// Payload is the typed body; its Kind is the event's type.
	Payload Payload `json:"-"`
	// Raw is the frame the event was mapped from.
	Raw *Raw `json:"-"`
}

// ProviderRefs are provider-native ids, preserved for correlation and
// debugging; they never appear in the canonical id fields.
type ProviderRefs struct {
	// ProviderSessionID is the provider's session id.
	ProviderSessionID string `json:"providerSessionId,omitempty"`
	// ProviderThreadID is the provider's thread or conversation id.
	ProviderThreadID string `json:"providerThreadId,omitempty"`
	// ProviderTurnID is the provider's turn id.
	ProviderTurnID string `json:"providerTurnId,omitempty"`
	// ProviderItemID is the provider's item, block or tool-call id.
	ProviderItemID string `json:"providerItemId,omitempty"`
	// ProviderRequestID is the provider's request id (a JSON-RPC id as text).
	ProviderRequestID string `json:"providerRequestId,omitempty"`
}

// Type is the event's Kind, taken from its payload ("" without a payload).
func (e Event) Type() Kind {
	if e.Payload == nil {
		return ""
	}
	return e.Payload.Kind()
}

// eventAlias has Event's fields without its methods, so that the JSON
// methods below can use the default encoding for the envelope.
type eventAlias Event

type eventOut struct {
	*eventAlias
	Type    Kind    `json:"type"`
	Payload Payload `json:"payload"`
	Raw     *Raw    `json:"raw,omitempty"`
}

type eventIn struct {
	*eventAlias
	Type    *string         `json:"type"`
	Payload json.RawMessage `json:"payload"`
	Raw     *Raw            `json:"raw"`
}

// MarshalJSON encodes the event as its JSON document: the envelope, then
// type, payload and raw. Its output is deterministic (UTC time, sorted map
// keys) and not HTML-escaped, so raw JSON frames keep their bytes; note that
// json.Marshal re-escapes `<`, `>` and `&` in what MarshalJSON returns, which
// keeps the JSON equal but not byte-identical.
func (e Event) MarshalJSON() ([]byte, error) {
	if e.Payload == nil {
		return nil, &FieldError{Field: "payload", Rule: "is required"}
	}
	a := eventAlias(e)
	a.CreatedAt = a.CreatedAt.UTC()
	// encoding/json's rules (v1 options) without HTML escaping, into a
	// pooled buffer copied out once at its size: an event is encoded for
	// every event published, and a growing buffer was half its garbage.
	b, err := jsonv2.Marshal(eventOut{eventAlias: &a, Type: e.Payload.Kind(), Payload: e.Payload, Raw: e.Raw}, encodeOptions)
	if err != nil {
		return nil, fmt.Errorf("encode %s event: %w", e.Payload.Kind(), err)
	}
	return b, nil
}

var encodeOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsontext.EscapeForHTML(false))

// UnmarshalJSON decodes an event document, choosing the payload type by the
// `type` member. It checks the document's shape, not its rules: call
// Validate for those. Unknown members are ignored, so that subscribers keep
// working when a later version adds optional fields.
func (e *Event) UnmarshalJSON(b []byte) error { return e.unmarshal(b, true) }

// envelopeKeys are the members unmarshalEnvelopeFast reads, as the
// encoder writes them; bit i of a seen set is envelopeKeys[i].
var envelopeKeys = [...]string{"eventId", "tenant", "provider", "sessionId", "createdAt", "threadId", "turnId", "itemId",
	"requestId", "providerRefs", "mappingVersion", "type", "payload", "raw", "createdAtIngested"}

// unmarshalEnvelopeFast is unmarshal without raw for the documents the
// encoder writes, which is nearly all of them: one validating pass over
// the whole document (jsonscan, several times faster than a decoder's),
// the envelope read member by member, the payload decoded once from its
// own bytes, raw passed over. The general decoder read raw through its
// tokenizer and the payload twice (captured, then decoded), most of what
// decoding an event cost a consumer that never reads raw. It reports
// false, having decided nothing, for whatever it is not sure to read as
// the general decoder does (invalid JSON, a key spelled another way or
// repeated, a value of another type, a payload that does not decode):
// the caller decodes those the general way, which also words the error.
func (e *Event) unmarshalEnvelopeFast(b []byte) bool {
	var buf [len(envelopeKeys) + 2]jsonscan.Member
	info, members := jsonscan.CheckObject(b, buf[:0])
	if !info.Valid {
		return false
	}
	var (
		seen      uint32
		typ, body []byte
		// The string members, indexed like envelopeKeys.
		strs = [...]*string{&e.EventID, &e.Tenant, (*string)(&e.Provider), &e.SessionID, nil, &e.ThreadID, &e.TurnID, &e.ItemID, &e.RequestID, nil, &e.MappingVersion}
		fine = true
	)
	object := objectStart(b)
	for _, m := range members {
		if !fine {
			break
		}
		key, v := b[m.KeyStart:m.KeyEnd], b[m.Start:m.End]
		i := envelopeKey(key)
		if i == -2 {
			continue
		}
		if i < 0 || seen&(1<<i) != 0 {
			fine = false
			break
		}
		seen |= 1 << i
		switch envelopeKeys[i] {
		case "createdAt":
			fine = jsonscan.Unmarshal(v, &e.CreatedAt) == nil
		case "createdAtIngested":
			e.CreatedAtIngested, fine = jsonscan.Bool(v)
		case "providerRefs":
			fine = jsonscan.Unmarshal(v, &e.ProviderRefs) == nil
		case "type":
			typ = v
		case "payload":
			body = v
		case "raw":
		default:
			*strs[i], fine = jsonscan.String(v)
		}
	}
	if !object || !fine || typ == nil || len(typ) < 2 || typ[0] != '"' {
		return false
	}
	t, ok := jsonscan.String(typ)
	if !ok {
		return false
	}
	p, err := NewPayload(Kind(t))
	if err != nil || len(body) == 0 || string(body) == "null" || jsonscan.Unmarshal(body, p) != nil {
		return false
	}
	e.Payload = p
	return true
}

var looseKey = strings.NewReplacer("_", "", "-", "")

// objectStart reports whether the JSON document b is an object.
func objectStart(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '{'
	}
	return false
}

// envelopeKey is the index of key in envelopeKeys; -1 for a key the
// general decoder might match to a member another way (escaped, or equal
// but for case, dashes or underscores), and -2 for a key it ignores.
func envelopeKey(key []byte) int {
	for i, k := range envelopeKeys {
		if string(key) == k {
			return i
		}
	}
	if !jsonscan.PlainKey(key) {
		return -1
	}
	loose := looseKey.Replace(string(key))
	for _, k := range envelopeKeys {
		if strings.EqualFold(loose, k) {
			return -1
		}
	}
	return -2
}

// envelopeIn is eventIn without raw: decoding skips the member, which is
// most of an event's bytes.
type envelopeIn struct {
	*eventAlias
	Type    *string         `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

func (e *Event) unmarshal(b []byte, withRaw bool) error {
	var (
		a    eventAlias
		typ  *string
		body json.RawMessage
		raw  *Raw
	)
	if withRaw {
		in := eventIn{eventAlias: &a}
		if err := jsonscan.Unmarshal(b, &in); err != nil {
			return fmt.Errorf("decode event: %w", err)
		}
		typ, body, raw = in.Type, in.Payload, in.Raw
	} else {
		in := envelopeIn{eventAlias: &a}
		if err := jsonscan.Unmarshal(b, &in); err != nil {
			return fmt.Errorf("decode event: %w", err)
		}
		typ, body = in.Type, in.Payload
	}
	if typ == nil {
		return &FieldError{Field: "type", Rule: "is required"}
	}
	p, err := NewPayload(Kind(*typ))
	if err != nil {
		return fmt.Errorf("decode event: %w", err)
	}
	if len(body) == 0 || string(body) == "null" {
		return &FieldError{Field: "payload", Rule: "is required"}
	}
	if err := jsonscan.Unmarshal(body, p); err != nil {
		return fmt.Errorf("decode %s payload: %w", p.Kind(), err)
	}
	if raw != nil {
		if err := raw.normalize(); err != nil {
			return fmt.Errorf("decode raw payload: %w", err)
		}
	}
	*e = Event(a)
	e.Payload = p
	e.Raw = raw
	return nil
}

// Encode returns the event's canonical JSON document (see MarshalJSON).
func Encode(e Event) ([]byte, error) { return e.MarshalJSON() }

// Decode decodes and validates an event document.
func Decode(b []byte) (Event, error) { return decode(b, true) }

// DecodeEnvelope is Decode without raw: the envelope and the typed payload,
// validated, and Raw nil. It is for consumers that never read the
// provider's frame (the projector keeps the document as it came): raw is
// most of a document's bytes, and decoding it most of the cost.
func DecodeEnvelope(b []byte) (Event, error) { return decode(b, false) }

func decode(b []byte, withRaw bool) (Event, error) {
	var e Event
	if withRaw || !e.unmarshalEnvelopeFast(b) {
		e = Event{}
		if err := e.unmarshal(b, withRaw); err != nil {
			return Event{}, err
		}
	}
	if err := Validate(e); err != nil {
		return Event{}, err
	}
	return e, nil
}
